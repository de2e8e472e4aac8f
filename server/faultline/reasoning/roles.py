"""Roles decided per run: a root-cause-looking line after its rank's own failure is a consequence, and
warning-level matches are causes only when the run did fail."""

from __future__ import annotations

from ..model import Event, Reason, Role
from .attribution import EXIT_BLOCK_FIELD
from .evidence import CLOCK_SKEW_S, exit_code, seconds
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


_EXIT_BLOCK_LINES = 6  # the fields of one exit block (torchrun's: time, host, rank, exitcode, error_file, traceback)


def demote_kills_after_exits(r: Reasoning) -> None:
    """A rank killed by a signal after another rank had already exited with an error is part of the teardown.

    Launchers stop the remaining workers once one fails (torchrun sends SIGTERM, then SIGKILL to those that
    do not stop), so their exit records read "-9" or "Signal 9" with a later time than the worker that
    failed first: the kill is a consequence, not the origin.
    """
    exited: list[tuple[float, Event]] = []
    for e in r.events:
        code = exit_code(e) if e.rank_from_field else None
        t = _exit_time(e, r.year) if code is not None and code > 0 else None
        if t is not None:
            exited.append((t, e))
    if not exited:
        return  # nearly always
    for e in r.events:
        if e.role is not Role.ROOT_CAUSE or not e.rank_from_field:
            continue
        code = exit_code(e)
        t = _exit_time(e, r.year) if code is not None and code < 0 else None
        if t is None:
            continue
        before = [x for tx, x in exited if x.rank != e.rank and tx < t - CLOCK_SKEW_S]
        if before:
            first = min(before, key=lambda x: x.line)
            note = (f"killed after rank {first.rank} had already exited with code {exit_code(first)} "
                    f"({first.file}:{first.line}): the launcher's teardown, not the cause")
            for same in r.events:  # the record and the other fields of its exit block ("traceback : Signal 9")
                if (same.file == e.file and same.rank == e.rank and same.rank_from_field
                        and same.role is Role.ROOT_CAUSE and abs(same.line - e.line) <= _EXIT_BLOCK_LINES):
                    same.role = Role.COLLATERAL
                    same.note = note


def _exit_time(e: Event, year: int) -> float | None:
    """When an exit record happened: its own time stamp, or the ``time :`` field of its exit block."""
    if e.time is None or (e.time.inferred and not EXIT_BLOCK_FIELD.match(e.text)):
        return None
    return seconds(e, year)


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
