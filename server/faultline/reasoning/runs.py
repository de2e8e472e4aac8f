"""One run at a time: an input that holds several runs is diagnosed for the most recent one, and says so.

A log file appended to by a resubmitted job, a torchrun agent that restarted its workers after a failure, a
folder holding the output of several Slurm jobs: one answer mixed from all of them would blame a rank of one
run for the timeouts of another. The runs are told apart by what launchers print (signatures with a
``run_boundary``: a launch banner, a restart of the worker group) and, for a folder, by the Slurm job id in
the file names. The most recent run is diagnosed; the events of the others stay in the report as context
with a note, and a note names each earlier run with its first failure.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..model import Event, Role
from .state import Reasoning

# slurm-<job>.out, slurm-<job>_<array task>.err, and the same with a prefix: one job id per file.
_SLURM_JOB = re.compile(r"(?:^|[/\\_.-])slurm-(?P<job>\d{2,12})(?:[_.](?:\d+|\w+))?\.(?:out|err|log|txt)$")


def keep_last_run(r: Reasoning) -> None:
    """Reduce the events to the most recent run of each input (and the most recent Slurm job of a folder)."""
    earlier: dict[str, int] = {}  # file -> the line where its last run begins
    starts, restarts = r.kinds.run_starts, r.kinds.run_restarts
    if starts or restarts:
        first_start: dict[str, int] = {}
        for e in r.events:
            if e.signature_id in starts:
                first_start[e.file] = min(first_start.get(e.file, e.line), e.line)
        for e in r.events:
            boundary = e.signature_id in restarts or (e.signature_id in starts and e.line > first_start[e.file])
            if boundary:
                earlier[e.file] = max(earlier.get(e.file, 0), e.line)
    left_out_files = _older_slurm_jobs([f.path for f in r.file_list])
    if not earlier and not left_out_files:
        return  # nearly always
    kept: list[Event] = []
    gone: dict[str, list[Event]] = defaultdict(list)
    for e in r.events:
        cut = earlier.get(e.file, 0)
        if e.file in left_out_files or e.line < cut:
            gone[e.file].append(e)
        else:
            kept.append(e)
    went_on = any(f.progress_line > earlier.get(f.path, 0) for f in r.file_list if f.path not in left_out_files)
    if not went_on and not any(e.role_prior is not Role.CONTEXT for e in kept):
        return  # the last run shows nothing at all (a log cut after a restart): diagnose what there is
    for events in gone.values():
        for e in events:
            e.role = Role.CONTEXT
            e.note = "from an earlier run or attempt in this input: not part of the diagnosis"
    r.events = kept
    r.suspects = [s for s in r.suspects if s.file not in left_out_files and s.line >= earlier.get(s.file, 0)]
    r.file_list = [f for f in r.file_list if f.path not in left_out_files]
    r.files = {f.path: f for f in r.file_list}
    for file, line in sorted(earlier.items()):
        if file in left_out_files:
            continue
        first = _first_failure(gone.get(file, []))
        what = (f"; an earlier one failed first with '{first.title}' at line {first.line}" if first is not None
                else "")
        r.diagnosis.notes.append(f"{file}: holds more than one run or attempt; diagnosed: the last one, from line "
                                 f"{line}{what}")
    if left_out_files:
        shown = ", ".join(sorted(left_out_files)[:5]) + (" ..." if len(left_out_files) > 5 else "")
        failed = [f for f in sorted(left_out_files) if _first_failure(gone.get(f, [])) is not None]
        what = f"; failures in {', '.join(failed[:3])}" if failed else ""
        r.diagnosis.notes.append(f"the input holds the output of more than one Slurm job; diagnosed: the most "
                                 f"recent job only (left out: {shown}{what})")


def _first_failure(events: list[Event]) -> Event | None:
    failures = [e for e in events if e.role_prior is not Role.CONTEXT]
    return min(failures, key=lambda e: e.line) if failures else None


def _older_slurm_jobs(paths: list[str]) -> set[str]:
    """The files of every Slurm job but the most recent one (job ids grow with time), when there are several."""
    jobs: dict[str, int] = {}
    for path in paths:
        m = _SLURM_JOB.search(path)
        if m:
            jobs[path] = int(m.group("job"))
    if len(set(jobs.values())) < 2:
        return set()
    latest = max(jobs.values())
    return {path for path, job in jobs.items() if job != latest}
