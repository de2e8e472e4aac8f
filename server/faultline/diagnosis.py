"""The diagnosis of a run and its stable JSON form (``schema_version`` 1)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .library import Signature, SignatureLibrary
from .masking import mask_secrets
from .model import Event, FileSummary, RankState, Reason, Suspect, Verdict

SCHEMA_VERSION = 1


@dataclass
class Diagnosis:
    verdict: Verdict
    initiating_rank: int | None = None
    root_cause: Event | None = None
    root_signature: Signature | None = None
    collateral: list[Event] = field(default_factory=list)
    competing: list[Event] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    suspicious: list[Suspect] = field(default_factory=list)
    confidence: float = 0.0
    reasons: list[Reason] = field(default_factory=list)
    ranks: dict[int, RankState] = field(default_factory=dict)
    files: list[FileSummary] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    library: SignatureLibrary | None = None

    def signature_of(self, event: Event) -> Signature | None:
        return self.library.get(event.signature_id) if self.library else None

    def to_json(self) -> dict[str, Any]:
        """The stable machine-readable form; every string passes through secret masking."""
        sig = self.root_signature
        data: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "verdict": self.verdict.value,
            "initiating_rank": self.initiating_rank,
            "root_cause": _root_json(self.root_cause) if self.root_cause else None,
            "collateral": [_collateral_json(e) for e in self.collateral],
            "competing_causes": [_root_json(e) for e in self.competing],
            "fix": _fix_json(sig) if sig else None,
            "verification": ({"command": sig.verification.command, "expect": sig.verification.expect}
                             if sig else None),
            "explanation": sig.explanation if sig else None,
            "confidence": round(self.confidence, 2),
            "reasons": [{"kind": r.kind, "text": r.text} for r in self.reasons],
            "ranks": {str(rank): _rank_json(state) for rank, state in sorted(self.ranks.items())},
            "related": list(sig.related) if sig else [],
            "references": list(sig.references) if sig else [],
            "suspicious_lines": [
                {"file": s.file, "line": s.line, "rank": s.rank, "text": s.text, "score": round(s.score, 2),
                 "reason": s.reason} for s in self.suspicious
            ],
            "events": [_event_json(e) for e in self.events],
            "inputs": [
                {"file": f.path, "lines": f.lines, "bytes": f.bytes, "truncated_lines": f.truncated_lines,
                 **({"error": f.error} if f.error else {})} for f in self.files
            ],
            "notes": list(self.notes),
        }
        # Event, suspect and file texts were masked when they were read (scanner.py); everything else
        # (notes, paths, messages assembled here) is masked now.
        events = {key: data.pop(key) for key in _PREMASKED}
        masked: dict[str, Any] = _masked(data)
        masked.update(events)
        return masked


_PREMASKED = ("collateral", "events", "suspicious_lines")


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _time(event: Event) -> str | None:
    return event.time.text if event.time else None


def _root_json(event: Event) -> dict[str, Any]:
    return {
        "signature_id": event.signature_id, "title": event.title, "category": event.category,
        "rank": event.rank, "host": event.host, "file": event.file, "line": event.line, "text": event.text,
        "time": _time(event), "message": event.message, "fields": dict(event.fields),
    }


def _collateral_json(event: Event) -> dict[str, Any]:
    cause = event.caused_by
    return {
        "signature_id": event.signature_id, "title": event.title, "rank": event.rank, "host": event.host,
        "file": event.file, "line": event.line, "text": event.text, "time": _time(event),
        "message": event.message, "note": event.note,
        "caused_by": {"rank": cause.rank, "file": cause.file, "line": cause.line} if cause else None,
    }


def _event_json(event: Event) -> dict[str, Any]:
    return {
        "signature_id": event.signature_id, "category": event.category, "role": event.role.value,
        "rank": event.rank, "host": event.host, "file": event.file, "line": event.line, "time": _time(event),
        "message": event.message,
    }


def _fix_json(sig: Signature) -> dict[str, Any]:
    return {
        "summary": sig.fix.summary,
        "steps": list(sig.fix.steps),
        "env": [{"name": e.name, "value": e.value, "note": e.note} for e in sig.fix.env],
    }


def _rank_json(state: RankState) -> dict[str, Any]:
    first = state.first_event
    return {
        "state": state.state,
        "hosts": sorted(state.hosts),
        "exitcode": state.exitcode,
        "events": state.events,
        "first_event": {"signature_id": first.signature_id, "file": first.file, "line": first.line}
        if first else None,
    }
