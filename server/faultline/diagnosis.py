"""The diagnosis of a run: the verdict, the initiating rank, the root cause, the collateral and the evidence."""

from __future__ import annotations

from dataclasses import dataclass, field

from .library import Signature, SignatureLibrary
from .model import Event, FileSummary, RankState, Reason, Suspect, Verdict


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
