"""Rank propagation: a rank for every event whose own line names none, from what the rest of the logs say.

Runs after attribution.py, which has taken every explicit rank: the line's rank prefix, a rank or local rank
the line is about, its process (pid) and its GPU. An event still without a rank takes, in this order:

1. a rank written inside its message (``[Rank 3]``, ``[PG ID 0 PG GUID 0(default_pg) Rank 3]``);
   the rank of the header its line is pasted under (``-- Process 1 terminated with the following error:`` and the
   child's traceback), through the first line after the header that can start a failure;
2. the single rank of its file: every line of the file that names a rank names this one (a per-rank file,
   or an excerpt of one rank's output), or, when no line names one, the elastic agent's record of the one worker
   it started (``global_ranks=[1]``); for a line that can start a failure, in a file where no line names a
   rank but inside its message, the single rank that the messages about the default process group name
   (``[Rank 4] found async exception``);
3. for a line that can start a failure only: the single origin, the one rank that ended on its own in the
   launcher's exit records (torchrun, mpirun, mp.spawn, srun) when no other rank did;
4. its file's name, when no line of the file names a rank and the name ends in the rank (``rank3.log``,
   ``train_rank12.log``, ``attempt_0/3/stderr.log``; not ``hang-rank3-test.log``).

A line that can start a failure and is still without a rank after that takes the one rank the logs blame, when
they blame exactly one (``take_the_blamed_rank``, after the blames are gathered): a launcher naming the process that
failed in its own words (``Shard 0 failed to start``), a barrier naming the rank that did not arrive.
"""

from __future__ import annotations

from ..lines.prefixes import inline_rank
from ..model import Role
from .attribution import task_id
from .evidence import exit_records, origin_ranks
from .state import Reasoning


def propagate_ranks(r: Reasoning) -> None:
    """Give each rank-less event the rank the rest of the logs point to (the order in the module docstring)."""
    if all(e.rank is not None for e in r.events):
        return  # nearly always in a cascade: every line carries its rank prefix
    file_ranks: dict[str, set[int]] = {}
    for f in r.file_list:
        file_ranks[f.path] = set(f.ranks_seen)
    in_message: dict[int, int] = {}  # id(event) -> the rank its message names
    in_message_ranks: dict[str, set[int]] = {}  # file -> the ranks messages about the default group name
    for e in r.events:
        if e.rank is not None and not e.rank_from_field:
            file_ranks.setdefault(e.file, set()).add(e.rank)
        elif e.rank is None and (named := inline_rank(e.text)) is not None:
            in_message[id(e)] = named[0]
            if named[1]:
                in_message_ranks.setdefault(e.file, set()).add(named[0])
    worker_ranks: dict[str, set[int]] = {}  # file -> the global ranks its agent's records give its one worker
    for e in r.events:
        if e.fields.get("worker_rank", "").isdigit():
            worker_ranks.setdefault(e.file, set()).add(int(e.fields["worker_rank"]))
    under_header = _ranks_under_headers(r)
    origins = origin_ranks(exit_records([e for e in r.events if e.rank is not None and e.fields]))
    single_origin = next(iter(origins)) if len(origins) == 1 else None
    for e in r.events:
        if e.rank is not None or task_id(e) is not None:
            continue  # srun's report of a task is about that task (attribution.py), never the file's rank
        hint = in_message.get(id(e))
        ranks = file_ranks.get(e.file) or worker_ranks.get(e.file, set())
        named_inside = in_message_ranks.get(e.file, set()) if not ranks else set()
        if hint is not None:
            e.rank = hint
        elif id(e) in under_header:
            e.rank = under_header[id(e)]
        elif len(ranks) == 1:
            e.rank = next(iter(ranks))
        elif len(named_inside) == 1 and e.role_prior is Role.ROOT_CAUSE:
            e.rank = next(iter(named_inside))
        elif single_origin is not None and e.role_prior is Role.ROOT_CAUSE:
            e.rank = single_origin
            e.note = e.note or f"rank {single_origin} is the only rank that ended on its own (the launcher's exit records)"
        elif not ranks and r.files.get(e.file) is not None:
            e.rank = r.files[e.file].rank_from_name


def _ranks_under_headers(r: Reasoning) -> dict[int, int]:
    """The rank-less events pasted under a header that introduces a rank's own output (by ``id``): each takes
    the header's rank, from the header to the first event after it that can start a failure (the child's
    exception line, the end of its traceback)."""
    if not any(e.signature_id in r.kinds.output_headers for e in r.events):
        return {}
    ranks: dict[int, int] = {}
    header: tuple[str, int] | None = None  # (file, rank) of the open header
    for e in sorted(r.events, key=lambda e: (e.file, e.line)):
        if e.signature_id in r.kinds.output_headers and e.rank is not None:
            header = (e.file, e.rank)
            continue
        if header is None or header[0] != e.file:
            header = None
            continue
        if e.rank is None:
            ranks[id(e)] = header[1]
        if e.role_prior is Role.ROOT_CAUSE:
            header = None
    return ranks


def take_the_blamed_rank(r: Reasoning) -> None:
    """A rank-less event that can start a failure takes the single rank other lines blame (module docstring)."""
    if len(r.blames) != 1:
        return
    rank = next(iter(r.blames))
    for e in r.events:
        if (e.rank is None and e.role_prior is Role.ROOT_CAUSE and task_id(e) is None
                and e.fields.get("peer_rank") != str(rank)):  # the line that blames a rank is not that rank's own
            e.rank = rank
            e.note = e.note or f"rank {rank} is the only rank the other lines name as the one that failed"
            r.ranks.add(rank)
