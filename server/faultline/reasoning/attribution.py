"""Rank attribution: which rank each event belongs to, from its fields, its process, its GPU, its file or a
hint in its text; torchrun's summary copies; a store host's rank-less error to rank 0.

Five passes, in this order: ranks the lines' own fields state, srun's reports of a task, the copies in torchrun's
failure summary, the store host's errors, and then every event still without a rank from its process or GPU. What is left
without a rank, propagation.py attributes from the rest of the logs.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..model import Event, Role
from .state import Reasoning

# The fields of an exit record after the line that names its rank: torchrun's failure entries ("  exitcode  : -9
# (pid: 12)" under "  rank      : 3 (local_rank: 3)"), mpirun's first failed process ("  Exit code:    1" under
# "  Process name: [[50371,1],0]").
EXIT_BLOCK_FIELD = re.compile(r"^\s+(?:exitcode|traceback|error_file|host|time|Exit code|Node)\s*:")


def ranks_from_fields(r: Reasoning) -> None:
    """A rank a line is about (``rank`` and ``comm_rank`` groups; the fields of a torchrun failure entry)."""
    events, world_comm = r.events, r.world_comm
    for e in events:
        if e.rank is None and e.fields.get("own_rank", "").isdigit():  # the printing rank, inside its message
            e.rank = int(e.fields["own_rank"])
        if "rank" in e.fields and e.fields["rank"].isdigit():
            e.rank = int(e.fields["rank"])
            e.rank_from_field = True
        elif "comm_rank" in e.fields and e.pid is not None and e.fields["comm_rank"].isdigit():
            size = int(e.fields.get("nranks", "0") or 0)
            if e.pid not in world_comm or size > world_comm[e.pid][0]:
                world_comm[e.pid] = (size, int(e.fields["comm_rank"]))
    _ranks_from_channels(events, world_comm)
    # torchrun failure blocks: "exitcode : -9 (pid: N)" belongs to the "rank : R" line just above it.
    last_rank_field: dict[str, tuple[int, int]] = {}
    for e in sorted(events, key=lambda ev: (ev.file, ev.line)):
        if e.rank_from_field and "rank" in e.fields:
            last_rank_field[e.file] = (e.line, e.rank)  # type: ignore[assignment]
        elif EXIT_BLOCK_FIELD.match(e.text) and e.file in last_rank_field:
            line, rank = last_rank_field[e.file]
            if 0 < e.line - line <= 6:
                e.rank = rank
                e.rank_from_field = True


def _ranks_from_channels(events: list[Event], world_comm: dict[int, tuple[int, int]]) -> None:
    """A process no ``Init COMPLETE`` line names: its rank from the NCCL channels it connected (``Channel 00/0 :
    1[1] -> 0[0] via P2P/IPC`` under its pid), when they all give it one rank (a process in several communicators
    with several ranks is left alone: which one is the world's the lines do not say)."""
    seen: dict[int, set[int]] = {}
    for e in events:
        if e.pid is not None and e.pid not in world_comm and e.fields.get("channel_rank", "").isdigit():
            seen.setdefault(e.pid, set()).add(int(e.fields["channel_rank"]))
    for pid, ranks in seen.items():
        if len(ranks) == 1:
            world_comm[pid] = (0, next(iter(ranks)))


def ranks_from_processes(r: Reasoning) -> None:
    """Every event still without a rank: from its torchrun --tee local rank, a local rank it is about, its
    process (pid), or its GPU (Xid lines by PCI address). The rest is propagation.py's."""
    events = r.events
    pid_to_rank: dict[int, int] = {pid: rank for pid, (_size, rank) in r.world_comm.items()}
    bus_to_rank = _bus_map(events, r.world_comm)
    for e in events:
        if "pid" in e.fields and e.rank is not None and e.fields["pid"].isdigit():
            pid_to_rank.setdefault(int(e.fields["pid"]), e.rank)
    for e in events:
        if e.rank is not None:
            continue
        if e.local_rank is not None:
            e.rank = e.local_rank
        elif "local_rank" in e.fields and e.fields["local_rank"].isdigit():
            e.rank = int(e.fields["local_rank"])
            e.rank_from_field = True
        elif e.pid is not None and e.pid in pid_to_rank:
            e.rank = pid_to_rank[e.pid]
        elif "pid" in e.fields and e.fields["pid"].isdigit() and int(e.fields["pid"]) in pid_to_rank:
            e.rank = pid_to_rank[int(e.fields["pid"])]
            e.rank_from_field = True  # a line about that process (e.g. the agent's SIGTERM), not from it
        elif "pci" in e.fields and _pci_key(e.host, e.fields["pci"]) in bus_to_rank:
            e.rank = bus_to_rank[_pci_key(e.host, e.fields["pci"])]
        elif "pci" in e.fields and _pci_key(None, e.fields["pci"]) in bus_to_rank:
            e.rank = bus_to_rank[_pci_key(None, e.fields["pci"])]


def ranks_from_srun_tasks(r: Reasoning) -> None:
    """srun's report of a task (``srun: error: <node>: task 15: Segmentation fault``) is about the task whose
    SLURM_PROCID it names: the global rank when srun starts every process itself, one task per GPU. When the logs
    show a launcher per node instead (a torchrun or DeepSpeed local rank, torchrun's failure summary), a task is a
    node's launcher and the launcher's own lines name the rank: the report names no rank (propagation.py leaves it
    without one, too)."""
    reports = [e for e in r.events if e.rank is None and task_id(e) is not None]
    if not reports or _launcher_per_node(r):
        return
    for e in reports:
        e.rank = task_id(e)
        e.rank_from_field = True  # a line about that task, printed by srun


def task_id(event: Event) -> int | None:
    """The one srun task a line is about (``task`` or ``tasks`` naming a single task)."""
    task = event.fields.get("task") or event.fields.get("tasks")
    return int(task) if task and task.isdigit() else None


def _launcher_per_node(r: Reasoning) -> bool:
    """Do the logs show a launcher that starts a node's ranks (a local rank, or torchrun's failure summary)?"""
    summary = r.kinds.summary_headers | r.kinds.summary_fields
    return any(e.local_rank is not None or "local_rank" in e.fields or e.signature_id in summary for e in r.events)


def mark_summary_copies(r: Reasoning) -> None:
    """torchrun's ChildFailedError summary repeats each worker's traceback, indented: those lines are
    copies of the rank's own output (already seen, or evidence only), not new failures."""
    headers, fields = r.kinds.summary_headers, r.kinds.summary_fields
    by_file: dict[str, list[Event]] = defaultdict(list)
    for e in r.events:
        by_file[e.file].append(e)
    for file_events in by_file.values():
        file_events.sort(key=lambda ev: ev.line)
        start: int | None = None
        end = -1
        rank: int | None = None
        for e in file_events:
            if e.signature_id in headers:
                start, end, rank = e.line, e.line + 12, None
                continue
            if start is None:
                continue
            if e.signature_id in fields or EXIT_BLOCK_FIELD.match(e.text):
                end = e.line + 200  # the copied traceback follows, indented, up to the next field
                if e.rank_from_field and e.rank is not None:
                    rank = e.rank
                continue
            if e.line <= end and e.text[:1].isspace():
                e.role = Role.CONTEXT
                e.rank = rank if rank is not None else e.rank
                e.rank_from_field = rank is not None
                e.note = "repeated in torchrun's failure summary"
            elif e.line > end:
                start = None


def store_errors_to_host(r: Reasoning) -> None:
    """A rank-less store error (EADDRINUSE) raised under a frame that only the store host runs (a worker's
    env:// rendezvous creating the TCPStore server) comes from rank 0, which hosts the store in that mode
    (torch/distributed/rendezvous.py). The frame is that of the traceback the error ends, or of the one that
    follows the c10d warnings the failed bind printed first (``The server socket has failed to bind ...``)."""
    frames, errors = r.kinds.store_frames, r.kinds.store_errors
    if not any(e.signature_id in errors and e.rank is None for e in r.events):
        return  # nearly always: no need to sort a cascade's thousands of events
    frame_lines: dict[str, list[int]] = {}
    for e in r.events:
        if e.signature_id in frames:
            frame_lines.setdefault(e.file, []).append(e.line)
    for e in r.events:
        if e.signature_id in errors and e.rank is None and any(
                abs(e.line - line) <= _STORE_FRAME_LINES for line in frame_lines.get(e.file, ())):
            e.rank = 0
            e.note = "raised while creating the env:// TCPStore server, which only rank 0 does"


_STORE_FRAME_LINES = 15  # how far from the store host's frame its bind error is printed (either side)


def _pci_key(host: str | None, pci: str) -> tuple[str | None, int, int] | None:
    """(host, bus, device) of a PCI address ``0000:9a:00.0`` or of NCCL's packed ``busId`` ``9a000``."""
    m = re.fullmatch(r"(?:[0-9a-fA-F]{4,8}:)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-9a-fA-F])?", pci)
    if m:
        return host, int(m[1], 16), int(m[2], 16)
    if re.fullmatch(r"[0-9a-fA-F]{4,16}", pci):
        value = int(pci, 16)
        return host, (value >> 12) & 0xFF, (value >> 4) & 0xFF
    return None


def _bus_map(events: list[Event], world_comm: dict[int, tuple[int, int]]) -> dict[object, int]:
    """GPU PCI address -> rank, from the largest communicator's ``Init COMPLETE`` lines (for Xid lines)."""
    mapping: dict[object, int] = {}
    unique_bus: dict[object, set[int]] = defaultdict(set)
    for e in events:
        bus = e.fields.get("bus_id")
        if not bus or e.pid is None or e.pid not in world_comm:
            continue
        rank = world_comm[e.pid][1]
        key = _pci_key(e.host, bus)
        if key is None:
            continue
        mapping[key] = rank
        unique_bus[(None, key[1], key[2])].add(rank)
    for bus_only, ranks in unique_bus.items():
        if len(ranks) == 1:
            mapping[bus_only] = next(iter(ranks))
    return mapping
