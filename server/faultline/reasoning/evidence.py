"""Facts the reasoning passes share: the skew allowed between clocks, which exit codes start a failure and
which end one, which ranks exist, who blames whom, each rank's first exit code, and a candidate root cause."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from ..lines.timestamps import absolute_seconds
from ..model import Event, FileSummary, Role

CLOCK_SKEW_S = 2.0
STRAGGLER_SIGNATURE = "collective-straggler"
ORIGIN_EXITS = {1, -9, -7, -11, 137, 139, 135}
VICTIM_EXITS = {-15, -6, 143, 134}
# Signatures whose named rank is the first rank to time out (a victim), not a culprit.
_NOT_BLAME = ("nccl-dump-signal",)


@dataclass
class Candidate:
    event: Event
    time: float | None  # exact time, or the lower bound of an inferred one
    agent_report: bool

    @property
    def exact(self) -> bool:
        return self.time is not None and self.event.time is not None and not self.event.time.inferred


def all_ranks(events: list[Event], files: Iterable[FileSummary]) -> set[int]:
    ranks: set[int] = set()
    for f in files:
        ranks |= f.ranks_seen
        if f.rank_from_name is not None:
            ranks.add(f.rank_from_name)
    ranks |= {e.rank for e in events if e.rank is not None}
    return {r for r in ranks if r < 1_000_000}


def seconds(event: Event, default_year: int) -> float | None:
    if event.time is None or event.time.uptime:
        return None
    return absolute_seconds(event.time, default_year)


def blames_of(events: list[Event]) -> Counter[int]:
    blames: Counter[int] = Counter()
    for e in events:
        peer = e.fields.get("peer_rank")
        if (peer and peer.isdigit() and e.role_prior is not Role.CONTEXT and e.signature_id not in _NOT_BLAME
                and (e.rank is None or int(peer) != e.rank)):
            blames[int(peer)] += 1
    return blames


def exit_codes(events: list[Event]) -> dict[int, int]:
    exits: dict[int, int] = {}
    for e in events:
        code = e.fields.get("exitcode")
        if e.rank is not None and code and re.fullmatch(r"-?\d+", code):
            exits.setdefault(e.rank, int(code))
    return exits


def is_error_file(path: str) -> bool:
    """torchrun's per-worker ``error.json`` repeats the worker's exception: evidence, not its own output."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] == "error.json"


def ranks_with_events(events: list[Event]) -> set[int]:
    return {e.rank for e in events if e.rank is not None and not e.rank_from_field}
