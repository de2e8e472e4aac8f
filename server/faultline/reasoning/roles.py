"""Roles decided per run: a root-cause-looking line after its rank's own failure is a consequence, and
warning-level matches are causes only when the run did fail."""

from __future__ import annotations

from ..diagnosis import Diagnosis
from ..model import Event, Reason, Role, Suspect
from .evidence import Candidate


def demote_after_own_failure(events: list[Event]) -> None:
    """A root-cause-looking line printed after the same rank's own timeout/teardown is a consequence."""
    first_collateral: dict[tuple[str, int], Event] = {}
    for e in sorted(events, key=lambda ev: (ev.file, ev.line)):
        if e.rank is None or e.rank_from_field:
            continue
        key = (e.file, e.rank)
        if e.role_prior is Role.COLLATERAL and key not in first_collateral:
            first_collateral[key] = e
        elif e.role_prior is Role.ROOT_CAUSE and key in first_collateral:
            earlier = first_collateral[key]
            e.role = Role.COLLATERAL
            e.note = (f"printed after this rank's own {earlier.title} (line {earlier.line}): "
                      "a consequence, not the cause")


def drop_soft_warnings(candidates: list[Candidate], events: list[Event], exits: dict[int, int],
                        suspects: list[Suspect], diagnosis: Diagnosis) -> list[Candidate]:
    """Warning-level lines (``NCCL WARN``, ``[W ...]``) are causes only when the run did fail.

    NCCL prints ``Cuda failure 'out of memory'`` warnings and carries on; when nothing else shows a
    failure, such lines are context, not a root cause.
    """
    soft = [c for c in candidates if c.event.level == "W"]
    if not soft:
        return candidates
    hard = [c for c in candidates if c.event.level != "W"]
    failed = (hard or any(e.role_prior is Role.COLLATERAL for e in events)
              or any(code != 0 for code in exits.values())
              or any(e.signature_id == "torchrun-child-failed" for e in events)
              or any("Traceback" in s.text for s in suspects))
    if failed:
        return candidates
    for c in soft:
        c.event.role = Role.CONTEXT
        c.event.note = "a warning while the run went on: nothing else in the logs shows a failure"
    diagnosis.reasons.append(Reason("supports", f"{len(soft)} warning line(s) matched failure signatures, but the "
                                                "run shows no failure, exit code or traceback after them"))
    return hard
