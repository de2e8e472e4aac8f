"""Scan large inputs on several cores: whole files, or big files cut at line boundaries, in worker processes.

The cross-rank reasoning stays in the parent; workers only turn bytes into events. Each worker numbers
lines from the start of its byte range, and the parent shifts them by the lines of the ranges before, so
line numbers are exactly those of a single-process scan. Workers are forked, so they share the parent's
compiled signature library without loading it again. ``multiprocessing`` is imported only when a scan
is big enough to use it: importing it costs about 30 ms, a third of a small diagnosis's start-up.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..inputs import Source
from ..lines.cache import DIAGNOSIS_CACHE_ENTRIES, LineCache
from ..matcher import LineMatcher, PatternTimeout
from ..model import FileSummary, ScanOutput, Suspect
from .aggregate import EventAggregator
from .forked import ForkedCall
from .scanner import Scanner
from .sink import ScanSink

# Below this much input a second process costs more than it saves.
MIN_PARALLEL_BYTES = 48 * 1024 * 1024
MIN_SEGMENT_BYTES = 32 * 1024 * 1024

_matcher: LineMatcher | None = None
_max_line_bytes = 0
_helpers = 0
_line_cache: LineCache | None = None  # the worker's (``_init_worker``)


@dataclass
class _Unit:
    source_index: int
    segment: int
    source: Source


@dataclass
class _Result:
    source_index: int
    segment: int
    aggregator: EventAggregator  # its events: the parent absorbs them in order (aggregate.py)
    suspects: list[Suspect]
    summary: FileSummary
    timeouts: list[PatternTimeout]


def default_jobs() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, cores))


def worth_parallel(sources: Sequence[Source], jobs: int) -> bool:
    if jobs <= 1 or any(s.path is None for s in sources) or sum(s.size for s in sources) < MIN_PARALLEL_BYTES:
        return False
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _line_boundary(path: Path, nominal: int, size: int) -> int:
    """The first byte after the first newline at or past ``nominal`` (``size`` when there is none)."""
    with open(path, "rb") as stream:
        stream.seek(nominal)
        position = nominal
        while True:
            block = stream.read(1024 * 1024)
            if not block:
                return size
            newline = block.find(b"\n")
            if newline != -1:
                return position + newline + 1
            position += len(block)


def split_units(sources: Sequence[Source], jobs: int) -> list[_Unit]:
    units: list[_Unit] = []
    for index, source in enumerate(sources):
        assert source.path is not None
        # A compressed file can only be read from its start: one piece.
        pieces = 1 if source.compression else min(jobs, max(1, source.size // MIN_SEGMENT_BYTES))
        bounds = [0]
        for k in range(1, pieces):
            cut = _line_boundary(source.path, source.size * k // pieces, source.size)
            if bounds[-1] < cut < source.size:
                bounds.append(cut)
        bounds.append(source.size)
        for segment, (start, end) in enumerate(itertools.pairwise(bounds)):
            part = source if len(bounds) == 2 else Source(source.name, path=source.path, size=end - start,
                                                            offset=start, length=end - start)
            units.append(_Unit(index, segment, part))
    return units


def _init_worker(matcher: LineMatcher, max_line_bytes: int, helpers: int) -> None:
    global _matcher, _max_line_bytes, _helpers, _line_cache
    _matcher, _max_line_bytes, _helpers = matcher, max_line_bytes, helpers
    # One per worker, as one process reading every file shares one: the rank files of a folder repeat the same
    # cascade lines (a thousand files read apart read them a thousand times otherwise).
    _line_cache = LineCache(DIAGNOSIS_CACHE_ENTRIES)


def _scan_unit(unit: _Unit) -> _Result:
    assert _matcher is not None
    return _scan_with(_matcher, _max_line_bytes, _helpers, unit, line_cache=_line_cache)


def _scan_with(matcher: LineMatcher, max_line_bytes: int, helpers: int, unit: _Unit,
               progress: Callable[[int], None] | None = None, line_cache: LineCache | None = None) -> _Result:
    known = len(matcher.timeouts)
    # A cascade repeats many lines byte for byte (every rank's ``terminate called ...``): each read once.
    # Its first events go back as they are (the parent aggregates them after the segment before: aggregate.py).
    scanner = Scanner(matcher, ScanSink(EventAggregator(head=True)), max_line_bytes=max_line_bytes, helpers=helpers,
                      progress=progress,
                      line_cache=line_cache if line_cache is not None else LineCache(DIAGNOSIS_CACHE_ENTRIES))
    summary = scanner.scan(unit.source)
    return _Result(unit.source_index, unit.segment, scanner.sink.aggregator, scanner.sink.suspects, summary,
                   matcher.timeouts[known:])


def scan_parallel(matcher: LineMatcher, sources: Sequence[Source], jobs: int, max_line_bytes: int,
                  progress: Callable[[int], None] | None = None,
                  helpers: int | None = None) -> tuple[ScanOutput, list[PatternTimeout]]:
    """Scan in ``jobs`` forked workers, each sharing dense cascades with ``helpers`` more (default
    ``jobs - 1``); returns the merged output and pattern time-outs met."""
    units = split_units(sources, jobs)
    helpers = jobs - 1 if helpers is None else helpers
    if len(units) <= jobs:
        return _merge(sources, _scan_few(matcher, units, helpers, max_line_bytes, progress), matcher)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context("fork")
    results: list[_Result] = []
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_init_worker,
                             initargs=(matcher, max_line_bytes, helpers)) as pool:
        for result in pool.map(_scan_unit, units, chunksize=max(1, len(units) // (jobs * 8))):
            results.append(result)
            if progress is not None:
                progress(result.summary.bytes)
    return _merge(sources, results, matcher)


def _scan_few(matcher: LineMatcher, units: list[_Unit], helpers: int, max_line_bytes: int,
              progress: Callable[[int], None] | None) -> list[_Result]:
    """One unit per process, the last in this one: no worker pool to start (nor ``multiprocessing`` to import,
    ~30 ms) when a big file's few segments are all there is.

    The last, because a failed run's log ends with its failure: the cascade's thousands of events are found
    here and need not be pickled over from a child (~40 ms for 4,000 events).
    """
    forked = [ForkedCall(functools.partial(_scan_with, matcher, max_line_bytes, helpers, unit)) for unit in units[:-1]]
    results = [_scan_with(matcher, max_line_bytes, helpers, units[-1], progress)]
    for unit, call in zip(units[:-1], forked, strict=True):
        result = call.result()
        if result is None:  # the child failed: scan its segment here, the answer is the same
            results.append(_scan_with(matcher, max_line_bytes, helpers, unit, progress))
            continue
        results.append(result)
        if progress is not None:
            progress(result.summary.bytes)
    return results


def _merge(sources: Sequence[Source], results: list[_Result],
           matcher: LineMatcher) -> tuple[ScanOutput, list[PatternTimeout]]:
    out = ScanOutput()
    aggregator = EventAggregator()
    aggregator.bind(matcher.library)
    timeouts: list[PatternTimeout] = []
    order = 0
    results.sort(key=lambda r: (r.source_index, r.segment))
    summary: FileSummary | None = None
    offset = 0
    for result in results:
        part = result.summary
        if result.segment == 0:
            summary = FileSummary(path=sources[result.source_index].name, rank_from_name=part.rank_from_name)
            out.files.append(summary)
            offset = 0
        assert summary is not None
        for event in result.aggregator.referenced():
            order += 1
            event.line += offset
            event.order = order
        # The segments' first events and groups, in order: what one process reading them all would keep.
        aggregator.absorb(result.aggregator)
        for suspect in result.suspects:
            order += 1
            suspect.line += offset
            suspect.order = order
            out.suspects.append(suspect)
        summary.bytes += part.bytes
        summary.ranks_seen |= part.ranks_seen
        summary.truncated_lines += part.truncated_lines
        summary.error = summary.error or part.error
        summary.first_time = summary.first_time or part.first_time
        if part.last_line:
            summary.last_line, summary.last_text = part.last_line + offset, part.last_text
        if part.progress_line:
            summary.progress_line = part.progress_line + offset
        offset += part.lines
        summary.lines = offset
        timeouts.extend(t for t in result.timeouts if t not in timeouts)
    out.events = aggregator.events()
    return out, timeouts
