"""JSON view: the stable contract (``schema_version`` 1) that scripts and CI read."""

from __future__ import annotations

import json

from ..diagnosis import Diagnosis


def render_json(diagnosis: Diagnosis, indent: int | None = 2) -> str:
    return json.dumps(diagnosis.to_json(), indent=indent, ensure_ascii=False)
