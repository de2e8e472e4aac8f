"""JSON view: the stable contract (``schema_version`` 1) that scripts and CI read."""

from __future__ import annotations

import json

from ..diagnosis import Diagnosis

# The compact form (pipes, files, scripts): one encoder for every report. ``json.dumps`` with options makes a
# new one per call, and its closures are reference cycles left for the collector; a report is a tree, so
# the circular-reference check only costs time (~3 ms of a 3.4 MB report).
_COMPACT = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def render_json(diagnosis: Diagnosis, indent: int | None = 2) -> str:
    if indent is None:
        return _COMPACT.encode(diagnosis.to_json())
    return json.dumps(diagnosis.to_json(), indent=indent, ensure_ascii=False)
