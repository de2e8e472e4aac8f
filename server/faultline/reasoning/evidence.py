"""Facts the later passes share, gathered once the ranks are known: the year of stamps without one, every
rank the logs show, who blames whom, and each rank's first exit code; plus the skew allowed between clocks
and which exit codes start a failure and which end one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..lines.timestamps import comparable_seconds, default_year
from ..model import Event, FileSummary, Role
from .state import Reasoning

CLOCK_SKEW_S = 2.0
ORIGIN_EXITS = {1, -9, -7, -11, 137, 139, 135}
VICTIM_EXITS = {-15, -6, 143, 134}


# Signal names of the exit records that name a signal instead of an exit code (mpirun, mp.spawn).
SIGNALS = {"SIGHUP": 1, "SIGINT": 2, "SIGQUIT": 3, "SIGILL": 4, "SIGTRAP": 5, "SIGABRT": 6, "SIGBUS": 7, "SIGFPE": 8,
           "SIGKILL": 9, "SIGUSR1": 10, "SIGSEGV": 11, "SIGUSR2": 12, "SIGPIPE": 13, "SIGALRM": 14, "SIGTERM": 15}


def gather(r: Reasoning) -> None:
    """The year, the ranks, the blames and the exit codes (after attribution: they need each event's rank)."""
    r.year = default_year(e.time for e in r.events)
    r.ranks = all_ranks(r.events, r.file_list)
    r.blames = _blames(r.events, r.kinds.not_blaming)
    r.exits = exit_records(r.events)


def all_ranks(events: list[Event], files: Iterable[FileSummary]) -> set[int]:
    ranks: set[int] = set()
    for f in files:
        ranks |= f.ranks_seen
        if f.rank_from_name is not None and not f.ranks_seen:
            ranks.add(f.rank_from_name)
    ranks |= {e.rank for e in events if e.rank is not None}
    return {r for r in ranks if r < 1_000_000}


def seconds(event: Event, default_year: int) -> float | None:
    return comparable_seconds(event.time, default_year)


def _blames(events: list[Event], not_blaming: frozenset[str]) -> Counter[int]:
    """How many lines blame each rank (a captured ``peer_rank``), passed on from a rank that blames another in
    its own lines: the ranks waiting on rank 0's monitored barrier point at rank 0, and rank 0's own line names
    the rank that did not arrive; the one it names is the culprit, rank 0 only the messenger."""
    blames: Counter[int] = Counter()
    own: dict[int, set[int]] = {}  # rank -> the ranks its own lines blame
    for e in events:
        peer = e.fields.get("peer_rank")
        if (peer and peer.isdigit() and e.role_prior is not Role.CONTEXT and e.signature_id not in not_blaming
                and (e.rank is None or int(peer) != e.rank)):
            blames[int(peer)] += 1
            if e.rank is not None and not e.rank_from_field:
                own.setdefault(e.rank, set()).add(int(peer))
    for _ in range(len(own)):  # along a chain of messengers, never round a cycle
        messenger = next((rank for rank in blames if len(own.get(rank, ())) == 1
                          and next(iter(own[rank])) not in own), None)
        if messenger is None:
            break
        blames[next(iter(own[messenger]))] += blames.pop(messenger)
    return blames


def exit_code(event: Event) -> int | None:
    """The exit code an exit record states: ``exitcode``, or a ``signal`` (number or name) as its negative."""
    fields = event.fields
    if not fields:
        return None
    code = fields.get("exitcode")
    if code and len(code) <= 5 and code.lstrip("-").isdigit():
        return int(code)
    signal = fields.get("signal") or fields.get("signal_name")
    if signal:
        number = SIGNALS.get(signal.removeprefix("Signals.")) if not signal.isdigit() else int(signal)
        if number:
            return -number
    return None


def exit_records(events: list[Event]) -> dict[int, int]:
    """Each rank's first exit code in the launchers' exit records."""
    exits: dict[int, int] = {}
    for e in events:
        if e.rank is not None:
            code = exit_code(e)
            if code is not None:
                exits.setdefault(e.rank, code)
    return exits


def origin_ranks(exits: dict[int, int]) -> set[int]:
    """The ranks that ended on their own: the only rank that failed at all, else those whose exit code is not
    the one a launcher's teardown gives (SIGTERM, SIGABRT)."""
    failed = {rank for rank, code in exits.items() if code != 0}
    if len(failed) <= 1:
        return failed
    return {rank for rank in failed if exits[rank] not in VICTIM_EXITS}


def ranks_with_events(events: list[Event]) -> set[int]:
    return {e.rank for e in events if e.rank is not None and not e.rank_from_field}
