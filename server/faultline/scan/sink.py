"""Where the scan writes what it finds: events, suspects, and the file's counts of ranks and cut lines.

The scanner is given a sink and owns none of its output. :class:`ScanSink` is a diagnosis's output, in line
order, with one order number across all files, a cap on suspects per file, and its events aggregated as they
arrive (aggregate.py: past 10,000 events, near-identical repeats are counted rather than kept). :class:`BlockSink`
holds what one block of a dense buffer's lines yielded when read apart (by a forked helper, or here while helpers
read others); :meth:`ScanSink.merge` adds it exactly as if those lines had been read in place.
"""

from __future__ import annotations

from typing import Protocol

from ..matcher import PatternTimeout
from ..model import Event, FileSummary, ScanOutput, Suspect
from .aggregate import EventAggregator

MAX_SUSPECTS_PER_FILE = 400


class LineSink(Protocol):
    """What reading a candidate line writes to."""

    def event(self, event: Event) -> None:
        """A signature match; its ``order`` is set here."""

    def suspect_slot(self, name: str) -> int | None:
        """Count one try at a suspect line of file ``name``: its place under the file's cap, None past the cap."""

    def suspect(self, suspect: Suspect, slot: int) -> None:
        """An unexplained error line, at the place ``suspect_slot`` gave it; its ``order`` is set here."""

    def rank_seen(self, rank: int) -> None:
        """A line of the current file names this rank."""

    def line_cut(self) -> None:
        """A line of the current file was longer than the scan matches."""


class ScanSink:
    """The output of a scan: every file's events (aggregated), suspects and summary, numbered in the order they
    were read."""

    def __init__(self, aggregator: EventAggregator | None = None) -> None:
        self._output = ScanOutput()
        self.aggregator = aggregator if aggregator is not None else EventAggregator()
        self._order = 0
        self._suspects_per_file: dict[str, int] = {}
        self._summary = FileSummary(path="")  # the current file's: begin() sets it

    @property
    def suspects(self) -> list[Suspect]:
        return self._output.suspects

    @property
    def output(self) -> ScanOutput:
        """What was found so far; its ``events`` are the aggregator's kept events, in order."""
        self._output.events = self.aggregator.events()
        return self._output

    def begin(self, summary: FileSummary) -> None:
        """The lines that follow are of this file."""
        self._output.files.append(summary)
        self._summary = summary

    def event(self, event: Event) -> None:
        self._order += 1
        event.order = self._order
        self.aggregator.add(event)

    def suspect_slot(self, name: str) -> int | None:
        count = self._suspects_per_file.get(name, 0)
        if count >= MAX_SUSPECTS_PER_FILE:
            return None
        self._suspects_per_file[name] = count + 1
        return count + 1

    def suspect(self, suspect: Suspect, slot: int) -> None:
        self._order += 1
        suspect.order = self._order
        self._output.suspects.append(suspect)

    def rank_seen(self, rank: int) -> None:
        self._summary.ranks_seen.add(rank)

    def line_cut(self) -> None:
        self._summary.truncated_lines += 1

    def merge(self, part: BlockSink, name: str) -> None:
        """Add a block read apart, as if read here: its suspects past this file's cap dropped, its order numbers
        continued from this sink's."""
        already = self._suspects_per_file.get(name, 0)
        kept = [suspect for suspect, slot in zip(part.suspects, part.slots, strict=True)
                if already + slot <= MAX_SUSPECTS_PER_FILE]
        self._suspects_per_file[name] = min(MAX_SUSPECTS_PER_FILE, already + part.attempts)
        items: list[Event | Suspect] = [*part.events, *kept]
        for item in sorted(items, key=lambda item: item.order):
            self._order += 1
            item.order = self._order
        self.aggregator.extend(part.events)  # in line order, as read
        self._output.suspects.extend(kept)
        self._summary.ranks_seen |= part.ranks_seen
        self._summary.truncated_lines += part.truncated_lines


class BlockSink:
    """What one block of lines yielded, read apart from the blocks before it (picklable: helpers send it).

    Order numbers and suspect slots count from the block's start; :meth:`ScanSink.merge` continues them.
    """

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.suspects: list[Suspect] = []
        self.slots: list[int] = []  # per suspect: its place among the block's tries
        self.attempts = 0  # suspect tries, up to the cap
        self.ranks_seen: set[int] = set()
        self.truncated_lines = 0
        self.timeouts: list[PatternTimeout] = []  # patterns switched off while reading it
        self._order = 0

    def event(self, event: Event) -> None:
        self._order += 1
        event.order = self._order
        self.events.append(event)

    def suspect_slot(self, name: str) -> int | None:
        if self.attempts >= MAX_SUSPECTS_PER_FILE:
            return None
        self.attempts += 1
        return self.attempts

    def suspect(self, suspect: Suspect, slot: int) -> None:
        self._order += 1
        suspect.order = self._order
        self.suspects.append(suspect)
        self.slots.append(slot)

    def rank_seen(self, rank: int) -> None:
        self.ranks_seen.add(rank)

    def line_cut(self) -> None:
        self.truncated_lines += 1
