"""Roles decided per run: a root-cause-looking line after its rank's own failure is a consequence, and
warning-level matches are causes only when the run did fail."""

from __future__ import annotations

from ..model import Event, Reason, Role
from .state import Reasoning


def demote_after_own_failure(r: Reasoning) -> None:
    """A root-cause-looking line printed after the same rank's own timeout/teardown is a consequence."""
    first_collateral: dict[tuple[str, int], Event] = {}
    for e in sorted(r.events, key=lambda ev: (ev.file, ev.line)):
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


def drop_soft_warnings(r: Reasoning) -> None:
    """Warning-level candidates (``NCCL WARN``, ``[W ...]``) are causes only when the run did fail.

    NCCL prints ``Cuda failure 'out of memory'`` warnings and carries on; when nothing else shows a
    failure, such lines are context, not a root cause.
    """
    soft = [c for c in r.candidates if c.event.level == "W"]
    if not soft:
        return
    hard = [c for c in r.candidates if c.event.level != "W"]
    failed = (hard or any(e.role_prior is Role.COLLATERAL or e.signature_id in r.kinds.failure_evidence
                          for e in r.events)
              or any(code != 0 for code in r.exits.values())
              or any(e.signature_id in r.kinds.summary_headers for e in r.events)
              or any("Traceback" in s.text for s in r.suspects))
    if failed:
        return
    for c in soft:
        c.event.role = Role.CONTEXT
        c.event.note = "a warning while the run went on: nothing else in the logs shows a failure"
    r.diagnosis.reasons.append(Reason("supports", f"{len(soft)} warning line(s) matched failure signatures, but "
                                                  "the run shows no failure, exit code or traceback after them"))
    r.candidates = hard
