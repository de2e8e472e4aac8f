"""JSON view: the stable contract (``schema_version`` 1) that scripts and CI read."""

from __future__ import annotations

import json
from typing import Any

from ..diagnosis import Diagnosis
from ..library import Signature
from ..model import Event, Frame, RankState
from . import RenderOptions
from .common import summary_line

SCHEMA_VERSION = 1
# The most ``events`` and ``collateral`` entries a report lists (``--all-events``: every one the diagnosis kept);
# ``events_total`` and ``collateral_total`` count them all, near-identical repeats included (scan/aggregate.py).
MAX_LISTED_EVENTS = 1000

# The compact form (pipes, files, scripts): one encoder for every report. ``json.dumps`` with options makes a
# new one per call, and its closures are reference cycles left for the collector; a report is a tree, so
# the circular-reference check only costs time (~3 ms of a 3.4 MB report).
_COMPACT = json.JSONEncoder(ensure_ascii=False, check_circular=False)


def render_json(diagnosis: Diagnosis, indent: int | None = 2, all_events: bool = False) -> str:
    if indent is None:
        return _COMPACT.encode(diagnosis_json(diagnosis, all_events))
    return json.dumps(diagnosis_json(diagnosis, all_events), indent=indent, ensure_ascii=False)


def diagnosis_json(diagnosis: Diagnosis, all_events: bool = False) -> dict[str, Any]:
    """The stable machine-readable form, key by key in the documented order (the diagnosis is masked).
    ``events`` and ``collateral`` list at most ``MAX_LISTED_EVENTS`` entries each unless ``all_events``."""
    sig = diagnosis.root_signature
    cap = None if all_events else MAX_LISTED_EVENTS
    events, collateral = diagnosis.events[:cap], diagnosis.collateral[:cap]
    root = diagnosis.root_cause
    # A root line's own repeats would each have been collateral: a failure of its own, after the root cause.
    collateral_total = sum(1 + e.repeats for e in diagnosis.collateral) + (root.repeats if root is not None else 0)
    repeats_of_rank: dict[int, int] = {}
    for e in diagnosis.events:
        if e.repeats and e.rank is not None:
            repeats_of_rank[e.rank] = repeats_of_rank.get(e.rank, 0) + e.repeats
    return {
        "schema_version": SCHEMA_VERSION,
        "verdict": diagnosis.verdict.value,
        "summary": summary_line(diagnosis),
        "initiating_rank": diagnosis.initiating_rank,
        "root_cause": ({**_root_json(diagnosis.root_cause), "frames": _frames_json(diagnosis),
                        "step": diagnosis.step, "run_time_s": diagnosis.run_time_s}
                       if diagnosis.root_cause else None),
        "first_failure": (_root_json(diagnosis.first_failure)
                          if diagnosis.first_failure is not None and diagnosis.root_cause is None else None),
        "competing_causes": [_root_json(e) for e in diagnosis.competing],
        "fix": _fix_json(sig) if sig else None,
        "verification": ({"command": sig.verification.command, "expect": sig.verification.expect}
                         if sig else None),
        "explanation": sig.explanation if sig else None,
        "confidence": round(diagnosis.confidence, 2),
        "reasons": [{"kind": r.kind, "text": r.text} for r in diagnosis.reasons],
        "ranks": {str(rank): _rank_json(state, repeats_of_rank.get(rank, 0))
                  for rank, state in sorted(diagnosis.ranks.items())},
        "related": list(sig.related) if sig else [],
        "references": list(sig.references) if sig else [],
        "inputs": [
            {"file": f.path, "lines": f.lines, "bytes": f.bytes, "truncated_lines": f.truncated_lines,
             **({"error": f.error} if f.error else {})} for f in diagnosis.files
        ],
        "notes": list(diagnosis.notes),
        "collateral": [_collateral_json(e) for e in collateral],
        "collateral_total": collateral_total,
        "events": [_event_json(e) for e in events],
        "events_total": sum(1 + e.repeats for e in diagnosis.events),
        "truncated": len(events) < len(diagnosis.events) or len(collateral) < len(diagnosis.collateral),
        "suspicious_lines": [
            {"file": s.file, "line": s.line, "rank": s.rank, "text": s.text, "score": round(s.score, 2),
             "reason": s.reason} for s in diagnosis.suspicious
        ],
        "considered_lines": [
            {"file": s.file, "line": s.line, "rank": s.rank, "text": s.text, "why_harmless": s.reason}
            for s in diagnosis.considered
        ],
    }


def _time(event: Event) -> str | None:
    return event.time.text if event.time else None


def _root_json(event: Event) -> dict[str, Any]:
    return {
        "signature_id": event.signature_id, "title": event.title, "category": event.category,
        "rank": event.rank, "host": event.host, "file": event.file, "line": event.line, "text": event.text,
        "time": _time(event), "message": event.message, "fields": dict(event.fields),
    }


def _frames_json(diagnosis: Diagnosis) -> dict[str, Any] | None:
    """The traceback above the root cause: the frame that raised it, the deepest frame of the user's own code
    and of library code (each null when the traceback has none)."""
    site = diagnosis.frames
    if site is None:
        return None

    def frame(f: Frame | None) -> dict[str, Any] | None:
        return None if f is None else {"path": f.path, "line": f.line, "function": f.function, "package": f.package}

    return {"raised": frame(site.deepest), "user": frame(site.own), "library": frame(site.library)}


def _collateral_json(event: Event) -> dict[str, Any]:
    cause = event.caused_by
    return {
        "signature_id": event.signature_id, "title": event.title, "rank": event.rank, "host": event.host,
        "file": event.file, "line": event.line, "text": event.text, "time": _time(event),
        "message": event.message, "note": event.note,
        "caused_by": {"rank": cause.rank, "file": cause.file, "line": cause.line} if cause else None,
        "repeats": event.repeats,
    }


def _event_json(event: Event) -> dict[str, Any]:
    return {
        "signature_id": event.signature_id, "category": event.category, "role": event.role.value,
        "rank": event.rank, "host": event.host, "file": event.file, "line": event.line, "time": _time(event),
        "message": event.message, "repeats": event.repeats,
    }


def _fix_json(sig: Signature) -> dict[str, Any]:
    return {
        "summary": sig.fix.summary,
        "steps": list(sig.fix.steps),
        "env": [{"name": e.name, "value": e.value, "note": e.note} for e in sig.fix.env],
    }


def _rank_json(state: RankState, repeats: int = 0) -> dict[str, Any]:
    """``repeats``: the rank's events that were counted but not kept (their near-identical kept one is listed)."""
    first = state.first_event
    return {
        "state": state.state,
        "hosts": sorted(state.hosts),
        "exitcode": state.exitcode,
        "events": state.events + repeats,
        "first_event": {"signature_id": first.signature_id, "file": first.file, "line": first.line}
        if first else None,
    }


def render(diagnosis: Diagnosis, options: RenderOptions) -> str:
    return render_json(diagnosis, indent=2 if options.pretty else None, all_events=options.all_events) + "\n"
