"""Events aggregated as they stream: memory bounded by the kinds of events, not by the number of lines.

A failure cascade at scale is mostly the same few lines again and again: every rank's watchdog timeout, every
C++ teardown, the agents' summaries, and a job that retries prints the whole cascade once an attempt. Keeping
every one of them kept memory and the report growing with the failure lines (a 3 GiB log of repeated
cascades: 2 million events, 5.8 GB). :class:`EventAggregator` keeps, per group of near-identical events,

* the first ``KEEP_FIRST`` (3) and the last ``KEEP_LAST`` (2) occurrences, in line order;
* the occurrences the reasoning reads as extremes: the earliest exact time stamp, the earliest time inferred
  from an earlier line (a lower bound the reasoning compares too), the highest ``seq`` (a
  watchdog's timed-out collective) and the lowest ``last_enqueued`` (the straggler's counter);
* how many there were: the group's first kept event carries the number not kept in ``Event.repeats``.

A group is one file, one writer (rank, local rank, host, process id), one signature, one log level, the same
kind of time stamp, the same shape of text the reasoning looks at (indented, an exit-record field, a ``[Rank
N]`` hint on a rank-less line), the same field names and the same values of every field the reasoning reads
(``REASONING_FIELDS``: ranks, peers, exit codes and signals, communicator sizes, process ids, GPU bus ids). So
events that differ in anything the reasoning asks of them are never merged: distinct peers stay distinct
blames, distinct exit codes distinct exit records, distinct processes their own pid-to-rank evidence. Only
repeats, which differ in their time stamps, line numbers and in text the reasoning does not read (durations,
sizes, addresses), are.

Some reasoning looks at the lines around a line (reasoning/attribution.py, roles.py, root_cause.py): the fields
of an exit block belong to the rank line above them, an indented line inside torchrun's failure summary is a
copy, a store error under the store host's frame is rank 0's, a kill record drags its block's other fields
into the teardown. Those rules start at *anchors* (summary headers and fields, exit-block fields, lines with
a rank or exit code field, store frames) and reach ``REACH_LINES`` back and ``FORWARD_LINES`` ahead. A run of
anchors each within reach of the one before is a *chain*; every event from a chain's first anchor until it
ends is held while it is open. When an event whose reading depends on its neighbours (an anchor, an indented
line, a store error) is kept inside a chain, every event of the chain those rules can see from it is kept
with it, and every event those can see, and so on: an indented line's summary window back to its header,
an exit field's or exit record's ``BLOCK_LINES`` either way, a store error's ``STORE_LINES`` back; and the
first event after the chain, which closes an open summary window. The reasoning then sees, around every kept
line, exactly the lines it saw before. Such events are kept as first occurrences or extremes only, never as
last ones, so what they keep stays bounded too.

Nothing is dropped while a scan has found at most ``KEEP_ALL_EVENTS`` (10,000) events: every diagnosis of an
ordinary log, and of a 512-rank cascade, reads exactly the events it read before. Past that, memory is bounded
by files x writers x signatures (x the distinct values of the fields above) plus the chains pinned by first
occurrences, whatever the number of lines. A retry loop that starts new processes (new pids) adds groups per
attempt; one that keeps them (containers) does not.

Aggregation is a function of the events in line order only: a file cut into segments read by several
processes (parallel.py) is aggregated per segment, each segment's first events (until no chain from the
segment before can reach) handed back as they are, and the parent adds those and absorbs the rest in order,
which keeps exactly what one process reading it all would keep. A dense buffer shared with helpers (dense.py)
is merged into the sink in line order before it is aggregated.
"""

from __future__ import annotations

import bisect
import itertools
import re
import weakref
from collections import deque
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..lines.prefixes import inline_rank_hint
from ..model import Event
from ..reasoning.attribution import EXIT_BLOCK_FIELD

if TYPE_CHECKING:
    from ..library import SignatureLibrary

KEEP_FIRST = 3
KEEP_LAST = 2
KEEP_ALL_EVENTS = 10_000
# How far the line-proximity rules of the reasoning reach. A summary field keeps torchrun's summary window open
# for 200 lines, a header for 12 (attribution.mark_summary_copies): anchors further apart never share a window.
# An exit field belongs to the rank line up to 6 above (attribution.ranks_from_fields), a kill record takes its
# block's fields up to 6 lines either way (roles.demote_kills_after_exits), the entry under a "first observed
# failure" line is up to 6 below it (root_cause._launcher_first_failure); a store error's frame is up to 15
# lines above it (attribution.store_errors_to_host).
REACH_LINES = 212
BLOCK_LINES = 6
STORE_LINES = 15

# The fields any reasoning pass reads the value of (reasoning/attribution.py, evidence.py, root_cause.py):
# events whose values differ are never merged. ``seq`` and ``last_enqueued`` are read as extremes (the
# highest, the lowest per rank): each group keeps the occurrence that holds its extreme instead.
REASONING_FIELDS = frozenset({
    "bus_id", "comm_rank", "exitcode", "local_rank", "missing_ranks", "nranks", "own_rank", "pci", "peer_rank",
    "pid", "rank", "ready_ranks", "signal", "signal_name", "world_size",
})
# A line with one of these fields is an anchor: an exit record, or the rank line an exit block belongs to.
_ANCHOR_FIELDS = ("rank", "local_rank", "exitcode", "signal", "signal_name")

GroupKey = tuple[object, ...]
# How an event's reading depends on the lines around it (bits; 0: it does not).
_ANCHOR = 1  # it starts or extends a line-proximity rule, and its block's lines either way count for it
_WINDOW = 2  # indented: a copy when a summary window is open (from the window's header on)
_STORE = 4  # a store error: the frame above it counts for it


def group_key(event: Event, exit_field: bool | None = None, run: int = 0) -> GroupKey:
    """What must be equal for two events to be merged (see the module docstring). ``exit_field``: whether its
    text is an exit-block field, when known; ``run``: the run of its file it belongs to (the last item)."""
    time = event.time
    # A time inferred from an earlier line comes and goes with where a read buffer starts: such events go with
    # those without a time (the earliest inferred one is kept as an extreme).
    stamp = None if time is None or time.inferred else (time.uptime, time.year is None)
    text = event.text
    hint = inline_rank_hint(text) if event.rank is None else None
    fields = tuple([(name, value) if name in REASONING_FIELDS else name for name, value in event.fields.items()])
    if exit_field is None:
        exit_field = EXIT_BLOCK_FIELD.match(text) is not None
    return (event.file, event.rank, event.local_rank, event.host, event.pid, event.signature_id, event.level,
            stamp, text[:1].isspace(), exit_field, hint, fields, run)


_INTEGER = re.compile(r"-?\d+")


class _Chain:
    """A run of anchors in one file, each within reach of the one before, and every event since its first."""

    __slots__ = ("closer", "closer_group", "events", "extremes", "file", "groups", "headers", "kinds", "last_anchor",
                 "seeds")

    def __init__(self, anchor: Event) -> None:
        self.file = anchor.file
        self.events: list[Event] = []  # in line order
        self.kinds: list[int] = []  # per event: how it depends on the lines around it
        # Per event: its group. Weak: a group holds the chains its events keep (no cycle to wait for the collector).
        self.groups: list[weakref.ref[_Group]] = []
        # Events, not line numbers: a merge renumbers the lines of a part read apart (parallel.py).
        self.headers: list[Event] = []  # its summary headers (a summary window starts at one)
        self.last_anchor = anchor
        self.seeds: list[Event] = []  # the first occurrences kept inside it (a group's first few)
        self.extremes: dict[tuple[GroupKey, str], Event] = {}  # the extremes kept inside it
        self.closer: Event | None = None  # the first event after it, kept when anything in it is
        self.closer_group: weakref.ref[_Group] | None = None

    def append(self, event: Event, kind: int, group: _Group, header: bool) -> None:
        self.events.append(event)
        self.kinds.append(kind)
        self.groups.append(weakref.ref(group))
        if header:
            self.headers.append(event)

    def close(self, closer: tuple[Event, _Group] | None) -> bool:
        """It ended (``closer``: the event that ended it, None at a file's end): what nothing kept is let go.
        False when nothing in it is kept."""
        kept = self._covered()
        if not kept:
            self.events, self.kinds, self.groups, self.headers = [], [], [], []
            return False
        if closer is not None:
            self.closer, self.closer_group = closer[0], weakref.ref(closer[1])
        self.events = [self.events[i] for i in kept]
        self.kinds = [self.kinds[i] for i in kept]
        self.groups = [self.groups[i] for i in kept]
        return True

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (a worker sends its aggregator back, parallel.py): the groups as themselves, not weakly."""
        state = {name: getattr(self, name) for name in self.__slots__}
        state["groups"] = [_alive(group) for group in self.groups]
        state["closer_group"] = None if self.closer_group is None else _alive(self.closer_group)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self.groups = [weakref.ref(group) for group in state["groups"]]
        self.closer_group = None if state["closer_group"] is None else weakref.ref(state["closer_group"])

    def regroup(self) -> None:
        """Name, for each event, the group that counts it now (a group read apart was absorbed into another)."""
        self.groups = [weakref.ref(_alive(group).resolved()) for group in self.groups]
        if self.closer_group is not None:
            self.closer_group = weakref.ref(_alive(self.closer_group).resolved())

    def kept(self) -> list[tuple[Event, _Group]]:
        """What its seeds keep, with their groups: every event they see, and every event those see; and the
        closer."""
        covered = self._covered()
        if not covered:
            return []
        events = [(self.events[i], _alive(self.groups[i])) for i in covered]
        if self.closer is not None and self.closer_group is not None:
            events.append((self.closer, _alive(self.closer_group)))
        return events

    def _covered(self) -> list[int]:
        seeds = [*self.seeds, *self.extremes.values()]
        if not seeds:
            return []
        lines = [event.line for event in self.events]
        headers = [event.line for event in self.headers]
        done = bytearray(len(lines))
        todo = [(event.line, event.line) for event in seeds]
        while todo:
            low, high = todo.pop()
            index = bisect.bisect_left(lines, low)
            while index < len(lines) and lines[index] <= high:
                if not done[index]:
                    done[index] = 1
                    todo.extend(self._sees(self.kinds[index], lines[index], headers))
                index += 1
        return [index for index, flag in enumerate(done) if flag]

    @staticmethod
    def _sees(kind: int, line: int, headers: list[int]) -> list[tuple[int, int]]:
        """The lines whose events the reasoning looks at when it reads an event of this kind on this line."""
        seen = []
        if kind & _ANCHOR:
            seen.append((line - BLOCK_LINES, line + BLOCK_LINES))
        if kind & _STORE:
            seen.append((line - STORE_LINES, line))
        if kind & _WINDOW:
            header = bisect.bisect_right(headers, line) - 1
            if header >= 0:
                seen.append((headers[header], line))
        return seen


def _alive(group: weakref.ref[_Group]) -> _Group:
    """The group a chain names: alive while its aggregator is (it holds every group; absorb regroups chains)."""
    found = group()
    assert found is not None, "a chain outlived its group"
    return found


class _Group:
    """One group's count, first and last occurrences, and the occurrences holding its extremes."""

    __slots__ = ("__weakref__", "count", "earliest", "earliest_bound", "first", "first_pins", "into", "key",
                 "max_seq", "min_enqueued", "pins", "tail", "values")

    def __init__(self, key: GroupKey) -> None:
        self.key = key
        self.count = 0
        self.first: list[Event] = []
        self.first_pins: list[_Chain | None] = []  # per first occurrence: the chain it keeps lines of, if any
        self.tail: deque[Event] = deque(maxlen=KEEP_LAST)
        self.earliest: Event | None = None  # the first with the earliest exact time stamp
        self.earliest_bound: Event | None = None  # the first with the earliest inferred time
        self.max_seq: Event | None = None  # the first with the highest seq
        self.min_enqueued: Event | None = None  # the first with the lowest last_enqueued
        self.values: dict[str, Any] = {}  # extreme -> its value (the lowest; the highest seq is kept negated)
        self.pins: dict[str, _Chain] = {}  # extreme -> the chain it keeps lines of
        self.into: _Group | None = None  # the group it was absorbed into (its chains still name this one)

    def resolved(self) -> _Group:
        """The group that counts this one's events: itself, or the one it was absorbed into."""
        group = self
        while group.into is not None:
            group = group.into
        return group

    def add(self, event: Event, keep_first: int, chain: _Chain | None) -> None:
        """``chain``: the open chain, when the event's reading depends on the lines around it. Such an event is
        kept as a first occurrence or an extreme (with the lines around it), never as a last one."""
        self.count += 1
        if len(self.first) < keep_first:
            self.first.append(event)
            self.first_pins.append(chain)
            if chain is not None:
                chain.seeds.append(event)
        elif chain is None:
            self.tail.append(event)
        time = event.time
        if time is not None and not time.uptime:
            seconds = (time.year or 0) * 366 * 86400.0 + time.seconds
            if time.inferred:
                self._offer("earliest_bound", (time.year is None, seconds), event, chain)
            else:
                self._offer("earliest", seconds, event, chain)
        fields = event.fields
        if fields:
            seq = fields.get("seq")
            if seq is not None and seq.isdigit():  # as root_cause._straggler reads it
                self._offer("max_seq", -int(seq), event, chain)
            enqueued = fields.get("last_enqueued")
            if enqueued is not None and _INTEGER.fullmatch(enqueued):
                self._offer("min_enqueued", int(enqueued), event, chain)

    def _offer(self, extreme: str, value: Any, event: Event, chain: _Chain | None) -> bool:
        """A candidate for an extreme: it replaces the one held only when strictly lower (of equals, the earlier
        occurrence stays), and then keeps the lines around it in its chain, while the one before lets go."""
        held = self.values.get(extreme)
        if held is not None and not value < held:
            return False
        self.values[extreme] = value
        setattr(self, extreme, event)
        before = self.pins.pop(extreme, None)
        if before is not None:
            before.extremes.pop((self.key, extreme), None)
        if chain is not None:
            self.pins[extreme] = chain
            chain.extremes[(self.key, extreme)] = event
        return True

    def absorb(self, later: _Group, keep_first: int) -> None:
        """Add a group of the same key read after this one (the rest of a file, read by another process)."""
        self.count += later.count
        room = max(0, keep_first - len(self.first))
        self.first.extend(later.first[:room])
        self.first_pins.extend(later.first_pins[:room])
        # Its other first occurrences are not first here: one in a chain lets go of the lines it kept there (read
        # here, it would never have kept them), one elsewhere is a candidate for the last occurrences.
        for event, chain in zip(later.first[room:], later.first_pins[room:], strict=True):
            if chain is None:
                self.tail.append(event)
            else:
                del chain.seeds[next(i for i, seed in enumerate(chain.seeds) if seed is event)]
        self.tail.extend(later.tail)
        for extreme, value in later.values.items():
            chain = later.pins.get(extreme)
            if not self._offer(extreme, value, getattr(later, extreme), chain) and chain is not None:
                chain.extremes.pop((later.key, extreme), None)  # not an extreme here: it lets go of what it kept
        later.into = self

    def members(self) -> Iterator[Event]:
        yield from self.first
        yield from self.tail
        for event in (self.earliest, self.earliest_bound, self.max_seq, self.min_enqueued):
            if event is not None:
                yield event


class EventAggregator:
    """The events of a scan, aggregated once there are more than ``keep_all`` of them (module docstring).

    ``add`` takes events in line order (``order`` set); ``events`` is what is kept, in order, with each group's
    first kept event's ``repeats`` set to the occurrences not kept. ``head``: hold this part's first events
    as they are, until no chain of an earlier part could reach further (parallel.py hands them to the parent).
    """

    def __init__(self, keep_all: int | None = None, keep_first: int = KEEP_FIRST, *, head: bool = False) -> None:
        self.keep_all = KEEP_ALL_EVENTS if keep_all is None else keep_all
        self.keep_first = keep_first
        self.total = 0  # every event added, kept or not (the head's are not)
        self.groups: dict[GroupKey, _Group] = {}
        self.head: list[Event] = []  # the events before this part's first break, for the part before it
        self._in_head = head
        self._head_anchor = 0  # the last anchor's line in the head (0: one may end the part before)
        self._anchor_ids: frozenset[str] = frozenset()
        self._header_ids: frozenset[str] = frozenset()
        self._window_anchor_ids: frozenset[str] = frozenset()  # summary headers and fields
        self._store_error_ids: frozenset[str] = frozenset()
        self._run_ids: frozenset[str] = frozenset()  # where a run or attempt of a file begins (reasoning/runs.py)
        self._run_file = ""  # the file of the last event, and how many runs of it began since this part began
        self._run = 0
        self._chain: _Chain | None = None  # the open chain
        self._pinned: list[_Chain] = []  # closed chains that first occurrences keep
        self._all: list[Event] | None = []  # every event, while there are at most keep_all
        self._kept: list[Event] | None = None  # events(), until the next add

    def bind(self, library: SignatureLibrary) -> None:
        """Learn which signatures are anchors (torchrun's summary, a store host's frame) and store errors."""
        self._header_ids = library.ids_where(summary="header")
        self._window_anchor_ids = (self._header_ids | library.ids_where(summary="field")
                                   | library.ids_where(summary="first-failure"))
        self._anchor_ids = self._window_anchor_ids | library.ids_where(store_host="frame")
        self._store_error_ids = library.ids_where(store_host="error")
        try:
            self._run_ids = library.ids_where(run_boundary="start") | library.ids_where(run_boundary="restart")
        except AttributeError:  # a library without run boundaries
            self._run_ids = frozenset()

    @property
    def aggregated(self) -> bool:
        """Whether events are being dropped (more than ``keep_all`` were found)."""
        return self._all is None

    def _kind(self, event: Event, exit_field: bool) -> int:
        """How the event's reading depends on the lines around it (``_ANCHOR``, ``_WINDOW``, ``_STORE`` bits)."""
        fields = event.fields
        signature = event.signature_id
        text = event.text
        kind = 0
        if (signature in self._anchor_ids or exit_field
                or (fields and any(name in fields for name in _ANCHOR_FIELDS))):
            kind = _ANCHOR
        # attribution.mark_summary_copies: an indented line that is no header, summary field or exit field.
        if text[:1].isspace() and not exit_field and signature not in self._window_anchor_ids:
            kind |= _WINDOW
        if signature in self._store_error_ids:
            kind |= _STORE
        return kind

    def add(self, event: Event) -> None:
        if self._in_head:
            self.head.append(event)
            if self._kind(event, EXIT_BLOCK_FIELD.match(event.text) is not None) & _ANCHOR:
                self._head_anchor = event.line
            elif event.line - self._head_anchor > REACH_LINES:
                self._in_head = False  # this event closed any chain reaching here; the rest is this part's
            return
        self.total += 1
        self._kept = None
        if self._all is not None:  # below the threshold nothing is grouped: an ordinary log pays nothing here
            self._all.append(event)
            if self.total > self.keep_all:
                self._group_all()
            return
        self._group(event)

    def _group_all(self) -> None:
        """Past the threshold: group every event kept so far, in order, as if each had been grouped as it came."""
        events, self._all = self._all or [], None
        for event in events:
            self._group(event)

    def _group(self, event: Event) -> None:
        """Count the event in its group and its chain; keep it if it is a first, last or extreme occurrence."""
        exit_field = EXIT_BLOCK_FIELD.match(event.text) is not None
        kind = self._kind(event, exit_field)
        if event.file != self._run_file:
            self._run_file, self._run = event.file, 0
        if event.signature_id in self._run_ids:
            self._run += 1  # each run is aggregated apart: the reasoning diagnoses the last one on its own
        key = group_key(event, exit_field, self._run)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = _Group(key)
        chain = self._chain
        if chain is not None and (chain.file != event.file or
                                  (not kind & _ANCHOR and event.line - chain.last_anchor.line > REACH_LINES)):
            self._close_chain((event, group) if chain.file == event.file else None)
            chain = None
        if kind & _ANCHOR:
            if chain is None:
                chain = self._chain = _Chain(event)
            chain.last_anchor = event
        if chain is not None:
            chain.append(event, kind, group, event.signature_id in self._header_ids)
        group.add(event, self.keep_first, chain if kind else None)

    def extend(self, events: Iterable[Event]) -> None:
        for event in events:
            self.add(event)

    def _close_chain(self, closer: tuple[Event, _Group] | None) -> None:
        chain, self._chain = self._chain, None
        if chain is not None and chain.close(closer) and chain.seeds:
            self._pinned.append(chain)  # kept by first occurrences (a chain kept by extremes only: by them)

    def absorb(self, later: EventAggregator) -> None:
        """Add what another aggregator kept of the events that follow these, as if they had been added here one
        by one: first its head (as it is), then its groups and chains. Its events must be renumbered already."""
        self.extend(later.head)
        if not later.total:
            return
        if self._all is not None and later._all is not None and self.total + later.total <= self.keep_all:
            self.total += later.total
            self._kept = None
            self._all.extend(later._all)  # neither is grouped yet, nor needs to be
            return
        for part in (self, later):
            if part._all is not None:
                part._group_all()
        self._close_chain(None)  # the head ended with the event that closed it (or later starts another file)
        self.total += later.total
        self._kept = None
        # Its runs were counted from where its own events began: continue this part's count of that file.
        offset = self._run if self._run_file == later._first_file() else 0
        if offset:
            later._shift_runs(offset)
        merged = False
        for key, group in later.groups.items():
            mine = self.groups.get(key)
            if mine is None:
                self.groups[key] = group
            else:
                mine.absorb(group, self.keep_first)
                merged = True
        if merged:
            for chain in later._chains():  # its chains' groups: those that count them now
                chain.regroup()
        self._pinned.extend(later._pinned)
        self._chain = later._chain
        self._run_file, self._run = later._run_file, later._run

    def _first_file(self) -> str:
        """The file of this part's first aggregated event ('' with none)."""
        for group in self.groups.values():
            return str(group.key[0])
        return ""

    def _shift_runs(self, offset: int) -> None:
        """Number this part's runs of its first file from ``offset`` (it continues a part that counted them)."""
        first = self._first_file()
        shifted: dict[GroupKey, _Group] = {}
        for key, group in self.groups.items():
            if key[0] == first:
                old = key
                key = (*key[:-1], int(key[-1]) + offset)  # type: ignore[call-overload]
                group.key = key
                for extreme, chain in group.pins.items():
                    chain.extremes[(key, extreme)] = chain.extremes.pop((old, extreme))
            shifted[key] = group
        self.groups = shifted
        if self._run_file == first:
            self._run += offset

    def _chains(self) -> Iterator[_Chain]:
        """Every chain something here keeps events of, and the open one; each once."""
        seen: set[int] = set()
        for chain in itertools.chain(self._pinned, *(group.pins.values() for group in self.groups.values()),
                                     (self._chain,) if self._chain is not None else ()):
            if id(chain) not in seen:
                seen.add(id(chain))
                yield chain

    def referenced(self) -> list[Event]:
        """Every event this aggregator holds (head, kept, in chains), in order: what a merge renumbers."""
        held: dict[int, Event] = {}
        for event in itertools.chain(self.head, self._all or (), *(group.members() for group in self.groups.values())):
            held.setdefault(id(event), event)
        for chain in self._chains():
            for event in itertools.chain(chain.events, (chain.closer,) if chain.closer is not None else ()):
                held.setdefault(id(event), event)
        return sorted(held.values(), key=lambda event: event.order)

    def _kept_events(self) -> Iterator[tuple[Event, _Group]]:
        """Every kept event, with its group."""
        for group in self.groups.values():
            for event in group.members():
                yield event, group
        for chain in self._chains():
            yield from chain.kept()

    def events(self) -> list[Event]:
        """The kept events in order; a group's first kept event counts the others in ``repeats``."""
        if self._all is not None:
            return [*self.head, *self._all] if self.head else self._all
        if self._kept is None:
            kept: dict[int, tuple[Event, _Group]] = {}
            for event, group in self._kept_events():
                kept.setdefault(id(event), (event, group.resolved()))
            counted: dict[int, int] = {}
            firsts: dict[int, tuple[Event, _Group]] = {}
            for event, group in kept.values():
                event.repeats = 0
                counted[id(group)] = counted.get(id(group), 0) + 1
                first = firsts.get(id(group))
                if first is None or event.order < first[0].order:
                    firsts[id(group)] = (event, group)
            for event, group in firsts.values():
                event.repeats = group.count - counted[id(group)]
            self._kept = sorted((event for event, _group in kept.values()), key=lambda event: event.order)
        return self._kept
