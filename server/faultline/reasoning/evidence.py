"""Facts the later passes share, gathered once the ranks are known: the year of stamps without one, every
rank the logs show, who blames whom, and each rank's first exit code; plus the skew allowed between clocks
and which exit codes start a failure and which end one."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from ..lines.timestamps import comparable_seconds, default_year
from ..model import Event, FileSummary, Role
from .state import Reasoning

CLOCK_SKEW_S = 2.0
ORIGIN_EXITS = {1, -9, -7, -11, 137, 139, 135}
VICTIM_EXITS = {-15, -6, 143, 134}


def gather(r: Reasoning) -> None:
    """The year, the ranks, the blames and the exit codes (after attribution: they need each event's rank)."""
    r.year = default_year(e.time for e in r.events)
    r.ranks = all_ranks(r.events, r.file_list)
    r.blames = _blames(r.events, r.kinds.not_blaming)
    r.exits = _exit_codes(r.events)


def all_ranks(events: list[Event], files: Iterable[FileSummary]) -> set[int]:
    ranks: set[int] = set()
    for f in files:
        ranks |= f.ranks_seen
        if f.rank_from_name is not None:
            ranks.add(f.rank_from_name)
    ranks |= {e.rank for e in events if e.rank is not None}
    return {r for r in ranks if r < 1_000_000}


def seconds(event: Event, default_year: int) -> float | None:
    return comparable_seconds(event.time, default_year)


def _blames(events: list[Event], not_blaming: frozenset[str]) -> Counter[int]:
    blames: Counter[int] = Counter()
    for e in events:
        peer = e.fields.get("peer_rank")
        if (peer and peer.isdigit() and e.role_prior is not Role.CONTEXT and e.signature_id not in not_blaming
                and (e.rank is None or int(peer) != e.rank)):
            blames[int(peer)] += 1
    return blames


def _exit_codes(events: list[Event]) -> dict[int, int]:
    exits: dict[int, int] = {}
    for e in events:
        code = e.fields.get("exitcode")
        if e.rank is not None and code and re.fullmatch(r"-?\d+", code):
            exits.setdefault(e.rank, int(code))
    return exits


def ranks_with_events(events: list[Event]) -> set[int]:
    return {e.rank for e in events if e.rank is not None and not e.rank_from_field}
