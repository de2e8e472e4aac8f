"""The diagnosis of a run: the verdict, the initiating rank, the root cause, the collateral and the evidence.

Every string a view shows is masked before a view sees it: lines when they are read (lines/reading.py), a
signature's texts when the diagnosis hands it out (:meth:`Diagnosis.signature_of`), and the rest (notes,
reasons, file names) by :func:`mask_diagnosis`, the engine's last step. Views render; none of them masks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from .library import EnvVar, Fix, Signature, SignatureLibrary, Verification
from .masking import mask_secrets
from .model import Event, FileSummary, RaiseSite, RankState, Reason, Suspect, Verdict


@dataclass
class Diagnosis:
    verdict: Verdict
    initiating_rank: int | None = None
    root_cause: Event | None = None
    root_signature: Signature | None = None  # masked, as signature_of gives it
    first_failure: Event | None = None  # unknown cause: the first failure the logs show, a symptom of it
    frames: RaiseSite | None = None  # the traceback frames above the root line (reasoning/frames.py)
    step: str | None = None  # the training step the root line's rank was at ("1200" or "1200/5000")
    run_time_s: float | None = None  # how long its log had been going at the root line (reasoning/timing.py)
    collateral: list[Event] = field(default_factory=list)
    competing: list[Event] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    suspicious: list[Suspect] = field(default_factory=list)
    considered: list[Suspect] = field(default_factory=list)  # for no_failure: the scary lines, and why harmless
    confidence: float = 0.0
    reasons: list[Reason] = field(default_factory=list)
    ranks: dict[int, RankState] = field(default_factory=dict)
    files: list[FileSummary] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    library: SignatureLibrary | None = None
    _signatures: dict[str, Signature | None] = field(default_factory=dict, repr=False, compare=False)

    def signature_of(self, event: Event | str) -> Signature | None:
        """The signature of an event (or by id), with its texts masked, as every view shows it."""
        signature_id = event if isinstance(event, str) else event.signature_id
        if signature_id not in self._signatures:
            found = self.library.get(signature_id) if self.library else None
            self._signatures[signature_id] = masked_signature(found) if found is not None else None
        return self._signatures[signature_id]


def masked_signature(signature: Signature) -> Signature:
    """A copy of a signature whose texts a person reads are secret-masked (a user's signature file is
    shown as it is written, and nothing may leak through it)."""
    fix, check = signature.fix, signature.verification
    return replace(
        signature, title=mask_secrets(signature.title), message=mask_secrets(signature.message),
        explanation=mask_secrets(signature.explanation),
        fix=Fix(mask_secrets(fix.summary), tuple(mask_secrets(step) for step in fix.steps),
                tuple(EnvVar(env.name, mask_secrets(env.value), mask_secrets(env.note), env.when) for env in fix.env),
                fix.step_when),
        verification=Verification(mask_secrets(check.command), mask_secrets(check.expect)),
        references=tuple(mask_secrets(reference) for reference in signature.references),
    )


def mask_diagnosis(diagnosis: Diagnosis) -> None:
    """Mask what did not come from a read line: notes, reasons, input errors, the names of the inputs (a path
    can hold a token) and the events' titles (a user's signature file is shown as it is written)."""
    diagnosis.notes = [mask_secrets(note) for note in diagnosis.notes]
    diagnosis.reasons = [Reason(reason.kind, mask_secrets(reason.text)) for reason in diagnosis.reasons]
    for summary in diagnosis.files:
        if summary.error:
            summary.error = mask_secrets(summary.error)
    renamed = {f.path: masked for f in diagnosis.files if (masked := mask_secrets(f.path)) != f.path}
    events = diagnosis.events if diagnosis.root_cause is None else [*diagnosis.events, diagnosis.root_cause]
    titles = {e.signature_id: e.title for e in events}
    retitled = {sid: masked for sid, title in titles.items() if (masked := mask_secrets(title)) != title}
    if not (renamed or retitled):
        return  # nearly always: no need to visit a cascade's thousands of events again
    for f in diagnosis.files:
        f.path = renamed.get(f.path, f.path)
    for event in events:
        event.file = renamed.get(event.file, event.file)
        event.title = retitled.get(event.signature_id, event.title)
    for suspect in diagnosis.suspicious:
        suspect.file = renamed.get(suspect.file, suspect.file)
    for state in diagnosis.ranks.values():
        state.files = {renamed.get(name, name) for name in state.files}


def not_all_clear(diagnosis: Diagnosis, unread: Sequence[str]) -> None:
    """"No failure" needs every input read to its end: a file that could not be read, was empty, or whose
    (compressed) data broke off may hold the failure. The answer is then unknown, and says which."""
    if diagnosis.verdict is not Verdict.NO_FAILURE:
        return
    broken = [f.path for f in diagnosis.files if f.error] + list(unread)
    if not broken:
        return
    diagnosis.verdict = Verdict.UNKNOWN
    diagnosis.confidence = min(diagnosis.confidence, 0.3)
    shown = ", ".join(broken[:5]) + (f" and {len(broken) - 5} more" if len(broken) > 5 else "")
    diagnosis.reasons.append(Reason("contradicts", f"not every input was read to its end ({shown}): the failure "
                                                   "may be in what was not read, so this is not an all-clear"))
