"""Match one line against the signatures its keywords point to, under a time limit per pattern.

A line yields at most one event: the matching signature with the highest priority. A pattern that runs
past the time limit is reported (file and line of the signature) and disabled for the rest of the run,
so one catastrophic pattern cannot hang a diagnosis.

The limits are CPU time (the ``regex`` module's ``timeout`` counts the process's CPU time, so a busy machine
stretches them in wall-clock time, never shortens a pattern's share). Three of them:

- a call of a pattern on one line is stopped after ``timeout_s`` (250 ms);
- a user pattern's calls that each take ``SLOW_CALL_S`` or more add up: past ``timeout_s`` in all, it is
  disabled (a pattern that needs 200 ms on every line would otherwise never be stopped);
- all slow calls and stopped calls of a matcher share ``RUNAWAY_BUDGET_S`` (a matcher: one diagnosis of the
  CLI; in the language server, the library until it is reloaded); once it is spent, a user pattern that was
  slow before is disabled before it runs again and any other gets ``SLOW_CALL_S`` per line;
- an exclusion stopped by these limits switches its signature off: without the exclusion it would report
  lines its author excluded.

The accounts live in memory shared with forked processes (parallel workers, dense helpers), so the limits hold
for a diagnosis as a whole, and a pattern stopped in one process is skipped by the others. Built-in patterns
(screened for linear time by the test suite) get the per-call limit only, so that long lines cannot switch
them off by adding up. Each disabled pattern is a :class:`PatternTimeout`, which the diagnosis's notes list.
"""

from __future__ import annotations

import functools
import math
import mmap
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .library import Signature, SignatureLibrary
from .prefilter import KeywordIndex

DEFAULT_PATTERN_TIMEOUT_S = 0.25
SLOW_CALL_S = 0.01  # a call this slow on one line counts against its pattern's limit and the budget
RUNAWAY_BUDGET_S = 2.0  # CPU seconds a matcher spends on slow and stopped calls before it gets strict

# Generic words that make an unmatched line worth ranking as "suspicious" for an `unknown` verdict.
SUSPECT_KEYWORDS: tuple[bytes, ...] = (
    b"Traceback (most recent call last)", b"Error", b"ERROR", b"Exception", b"FATAL", b"Fatal",
    b"panic", b"Panic", b"PANIC", b"Segmentation fault", b"core dumped", b"Killed", b"FAILED",
    b"error:", b"Aborted", b"abort", b"fatal", b") failed", b"Failed to ", b"Memory access fault", b"lost communication",
)
# The level of an ERROR or FATAL record that need hold no error word: glog and absl ("E1102 21:14:35.901399  1457
# file.cc:186] ...", at a line's start: prefilter.py reads a keyword that begins with a newline so), and absl's
# TensorFlow/XLA form ("2024-07-29 17:14:59.920189: E external/xla/...", also with its stamp cut off: "E external/
# ..."). A line only these make a candidate is suspicious only when its prefix parses to that level (scan/scanner.py).
LEVEL_KEYWORDS: tuple[bytes, ...] = (b"\nE0", b"\nE1", b"\nF0", b"\nF1", b": E ", b": F ", b"\nE ", b"\nF ")


@dataclass(frozen=True)
class PatternTimeout:
    """A pattern that ran past the time limit and was disabled (picklable: workers report these)."""

    signature_id: str
    index: int
    reason: str

    def __str__(self) -> str:
        return f"{self.signature_id}[{self.index}]: {self.reason}"


@dataclass
class Match:
    signature: Signature
    fields: dict[str, str]
    index: int  # of the signature in LineMatcher.signatures


KEYWORD_HEAD_MIN = 20  # keywords at least this long are looked for by their head and their tail
KEYWORD_HEAD_BYTES = 14


def keyword_pieces(keyword: str) -> tuple[bytes, ...]:
    """What the keyword index looks for in place of a keyword: the keyword itself, or the first and the last
    KEYWORD_HEAD_BYTES of one at least KEYWORD_HEAD_MIN long. A wrapped line may cut a long keyword in two: either
    piece alone makes a piece of the line a candidate, so that the pieces are joined (scan/continuation.py) and read
    as one line; a whole keyword holds both (a line with one is read, as with any keyword, and its patterns
    decide)."""
    encoded = keyword.encode("utf-8")
    if len(encoded) < KEYWORD_HEAD_MIN:
        return (encoded,)
    return encoded[:KEYWORD_HEAD_BYTES], encoded[-KEYWORD_HEAD_BYTES:]


class LineMatcher:
    """Keyword prefilter plus full patterns for a signature library."""

    def __init__(self, library: SignatureLibrary, timeout_s: float = DEFAULT_PATTERN_TIMEOUT_S,
                 use_hyperscan: bool = True) -> None:
        self.library = library
        self.timeout_s = timeout_s
        self.signatures: list[Signature] = library.matchable()
        keyword_to_sigs: dict[bytes, set[int]] = {}
        for index, sig in enumerate(self.signatures):
            for keyword in sig.keywords:
                for piece in keyword_pieces(keyword):
                    keyword_to_sigs.setdefault(piece, set()).add(index)
        keywords = list(keyword_to_sigs)
        self.keyword_signatures: list[tuple[int, ...]] = [tuple(sorted(keyword_to_sigs[k])) for k in keywords]
        self.first_suspect_id = len(keywords)
        self.first_level_id = len(keywords) + len(SUSPECT_KEYWORDS)  # ids from here on: LEVEL_KEYWORDS
        self.index = KeywordIndex(keywords + list(SUSPECT_KEYWORDS) + list(LEVEL_KEYWORDS),
                                  use_hyperscan=use_hyperscan)
        self.timeouts: list[PatternTimeout] = []
        self._ledger = _Ledger(self.signatures)
        self._leveled = frozenset(i for i, sig in enumerate(self.signatures) if sig.levels)  # match at some levels only
        # Candidates are tried in this order (highest priority first, then library order), so the first match
        # is the answer and the lower-priority rest need not run.
        by_priority = sorted(range(len(self.signatures)), key=lambda i: (-self.signatures[i].priority, i))
        self._try_rank = [0] * len(self.signatures)
        for position, index in enumerate(by_priority):
            self._try_rank[index] = position

    @property
    def generation(self) -> int:
        """Changes whenever the library's answers may have (a pattern switched off)."""
        return self.library.generation

    def signatures_for(self, keyword_ids: Iterable[int], level: str | None = None) -> set[int]:
        """The signatures a line's keywords select; at a line's log ``level``, those that match at that level
        (a signature's ``levels``; a line without a level, or a signature without levels, is not filtered)."""
        found: set[int] = set()
        limit = self.first_suspect_id
        for kw_id in keyword_ids:
            if kw_id < limit:
                found.update(self.keyword_signatures[kw_id])
        if level is not None and self._leveled and not found.isdisjoint(self._leveled):
            found = {i for i in found if i not in self._leveled or level in self.signatures[i].levels}
        return found

    def new_diagnosis(self) -> None:
        """A new diagnosis gets the whole runaway budget again (a long-running language server diagnoses many);
        patterns already switched off stay off, and their accounts are kept."""
        self._ledger.seconds[0] = 0.0

    def adopt_timeouts(self, timeouts: Iterable[PatternTimeout]) -> bool:
        """Patterns another process (a parallel worker, a helper) switched off for running too long: switch
        them off here too and record them like local time-outs. True when any of them was still on here."""
        adopted = False
        for timeout in timeouts:
            sig = self.library.get(timeout.signature_id)
            if (sig is not None and timeout.index < len(sig.pattern_sources)
                    and timeout.index not in sig.disabled_patterns):
                self.library.disable_pattern(sig, timeout.index, timeout.reason)
                self.timeouts.append(timeout)
                adopted = True
        return adopted

    def compile_for(self, keyword_ids: Iterable[int]) -> None:
        """Compile now the (lazily compiled) patterns of the signatures these keywords select."""
        for index in self.signatures_for(keyword_ids):
            self.signatures[index].patterns  # noqa: B018 - the property compiles and keeps them

    def match(self, message: str, signature_indexes: Iterable[int], where: str = "") -> Match | None:
        """The best signature matching ``message`` among ``signature_indexes``: the highest priority, then the
        first in library order."""
        for index in sorted(signature_indexes, key=self._try_rank.__getitem__):
            sig = self.signatures[index]
            fields = self._search(index, sig, message, where)
            if fields is not None:
                return Match(sig, fields, index)
        return None

    def _search(self, index: int, sig: Signature, message: str, where: str) -> dict[str, str] | None:
        first = self._ledger.first_slot[index]
        seconds = self._ledger.seconds
        for i, pattern in enumerate(sig.patterns):
            if i in sig.disabled_patterns or seconds[first + i] == math.inf:  # off here, or in another process
                continue
            m, stopped = self._timed(sig, first + i, pattern, message)
            if stopped is not None:
                self._disable(sig, first, (i,), stopped, message, where)
            if m is None:
                continue
            for exclusion in sig.exclusions:
                excluded, stopped = self._timed(sig, first + i, exclusion, message)
                if stopped is not None:  # without its exclusion the signature would report what its author excluded
                    self._disable(sig, first, range(len(sig.patterns)), f"its exclusion {stopped}", message, where)
                    return None
                if excluded is not None:
                    return None
            return {k: v for k, v in m.groupdict().items() if v is not None}
        return None

    def _timed(self, sig: Signature, slot: int, pattern: Any, message: str) -> tuple[Any, str | None]:
        """``pattern.search(message)`` under the limits: its match (or None) and, when the pattern is to be
        disabled, why (it was stopped, or a completed call used up its time)."""
        seconds = self._ledger.seconds
        limit = self.timeout_s
        if sig.builtin:
            try:
                return pattern.search(message, timeout=limit), None
            except TimeoutError:
                seconds[0] += limit
                return None, f"ran past the {_ms(limit)} time limit"
        own_left = limit - seconds[slot]
        budget_left = RUNAWAY_BUDGET_S - seconds[0]
        if budget_left <= 0 and seconds[slot] > 0:
            return None, (f"was slow on earlier lines ({_ms(seconds[slot])}) and the {RUNAWAY_BUDGET_S:g} s budget "
                          f"for slow patterns is spent: not run again,")
        call_limit = min(limit, max(min(SLOW_CALL_S, limit), min(own_left, budget_left)))
        start = time.thread_time()
        try:
            found = pattern.search(message, timeout=call_limit)
        except TimeoutError:
            self._ledger.charge(slot, time.thread_time() - start)
            if call_limit >= limit:
                return None, f"ran past the {_ms(limit)} time limit"
            if own_left <= budget_left:
                return None, f"used up its {_ms(limit)} time limit over slow lines, the last"
            return None, (f"ran past the {_ms(call_limit)} left once the {RUNAWAY_BUDGET_S:g} s budget for slow "
                          f"patterns was spent")
        took = time.thread_time() - start
        if took >= SLOW_CALL_S:
            spent = self._ledger.charge(slot, took)
            if limit <= spent < math.inf:  # (inf: another process disabled it meanwhile, and says so)
                return found, f"used up its {_ms(limit)} time limit over slow lines ({_ms(spent)}), the last"
        return found, None

    def _disable(self, sig: Signature, first: int, indexes: Iterable[int], why: str, message: str,
                 where: str) -> None:
        reason = f"{why} on a line of {len(message)} characters{' (' + where + ')' if where else ''}"
        for i in indexes:
            self._ledger.seconds[first + i] = math.inf
            if i not in sig.disabled_patterns:
                self.library.disable_pattern(sig, i, reason)
                self.timeouts.append(PatternTimeout(sig.id, i, reason))


class _Ledger:
    """The CPU seconds slow calls cost: ``seconds[0]`` in all, ``seconds[first_slot[i] + k]`` for pattern ``k``
    of signature ``i`` (``inf`` once it is disabled). Kept in an anonymous shared mapping, which processes
    forked later (parallel workers, dense helpers) write to and read from as well; two processes adding at
    the same instant may lose one addition, which only lets a pattern run a little longer."""

    def __init__(self, signatures: Sequence[Signature]) -> None:
        self.first_slot: list[int] = []
        slots = 1
        for sig in signatures:
            self.first_slot.append(slots)
            slots += len(sig.pattern_sources)
        buffer: mmap.mmap | bytearray
        try:
            buffer = mmap.mmap(-1, 8 * slots)  # MAP_SHARED | MAP_ANONYMOUS on POSIX: shared across fork
        except (OSError, ValueError):  # no shared memory: this process's own account
            buffer = bytearray(8 * slots)
        self.seconds = memoryview(buffer).cast("d")

    def charge(self, slot: int, seconds: float) -> float:
        """Add a slow call's time to its pattern's account and the total; the pattern's total."""
        self.seconds[0] += seconds
        self.seconds[slot] += seconds
        return self.seconds[slot]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


_PLACEHOLDER = re.compile(r"\{(\w{1,40})\}")


_UNFILLED = "\x00"  # where a placeholder the match did not fill stands, until the message is complete
# A parenthetical that only holds what the match did not fill ("(pid ?)", "(exit code ?)", "(size ?, limit ?)")
# says nothing: it goes.
_EMPTY_ASIDE = re.compile(r" \((?:[^(),\x00\n]{1,30} )?\x00(?:, (?:[^(),\x00\n]{1,30} )?\x00){0,8}\)")


def fill_message(template: str, fields: dict[str, str]) -> str:
    """``{field}`` placeholders filled from a match; unknown ones render as ``?``. Never evaluates.

    Placeholders written side by side (``{negative}{ordinal}``) are alternatives, one per pattern: those the match
    did not fill render as nothing, and ``?`` only stands for the run when none of them was filled. An aside in
    parentheses that holds nothing but unfilled placeholders (``(pid {pid})`` of a line without a pid, ``(size
    {size}, limit {limit})`` of one without either) is left out."""
    out: list[str] = []
    run: list[str] = []  # the placeholders of the current run of adjacent ones

    def close_run() -> None:
        filled = [fields[name].replace(_UNFILLED, "") for name in run if name in fields]
        for text in filled or [_UNFILLED]:
            out.append(text if len(text) <= 200 else text[:200] + "…")
        run.clear()

    for literal, name in _template_parts(template):
        if literal or name is None:
            if run:
                close_run()
            out.append(literal)
        if name is not None:
            run.append(name)
    if run:
        close_run()
    text = "".join(out)
    if _UNFILLED not in text:
        return text
    return _EMPTY_ASIDE.sub("", text).replace(_UNFILLED, "?")


@functools.lru_cache(maxsize=1024)
def _template_parts(template: str) -> tuple[tuple[str, str | None], ...]:
    """A message template as (literal text, placeholder name) pairs, parsed once per template."""
    parts: list[tuple[str, str | None]] = []
    position = 0
    for m in _PLACEHOLDER.finditer(template):
        parts.append((template[position:m.start()], m.group(1)))
        position = m.end()
    parts.append((template[position:], None))
    return tuple(parts)
