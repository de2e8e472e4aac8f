"""The time of an unstamped line: the stamp of the nearest earlier line of the same writer (tracebacks
carry no stamps of their own), found by walking back at most ``LOOKBACK_LINES`` lines of the buffer.

Such a time is a lower bound (``Timestamp.inferred``). The walk only shortens with what it remembers of the
buffer (:class:`TimeLookback`): every answer is that of parsing each earlier line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..lines.normalize import normalize_line
from ..lines.prefixes import GLOBAL_RANK_LED, parse_line
from ..lines.reading import DISPLAY_CHARS
from ..model import LineContext, Timestamp
from .chunks import Buffer

LOOKBACK_LINES = 200


def _same_writer(earlier: LineContext, line: LineContext) -> bool:
    """Lines from one process: the same torchrun ``--tee`` stream if there is one, else the same rank."""
    if line.local_rank is not None:
        return earlier.local_rank == line.local_rank and earlier.rank in (None, line.rank)
    return earlier.rank == line.rank and earlier.local_rank is None


# Bytes that make a line's text differ from its ASCII bytes: control bytes (normalizing removes them) and
# non-ASCII bytes (decoded, and Unicode digits are digits to the parser).
_UNCLEAN_CLASS = rb"[\x00-\x08\x0b-\x1f\x7f-\xff]"
_UNCLEAN = re.compile(_UNCLEAN_CLASS)

# Every stamp a look-back can use has a clock time (digit:digit); kernel uptime stamps, which have none, are
# not used. A clean ASCII line without one is not parsed at all: most lines between a cascade's unstamped
# lines are C++ frames. An unclean line goes to the full parse.
_MAYBE_STAMPED = re.compile(rb"\d:\d|" + _UNCLEAN_CLASS)
_UNSTAMPED = LineContext()


def _another_ranks_line(buf: Buffer, start: int, end: int, rank: int | None) -> bool:
    """True when the line surely belongs to a rank other than ``rank``: then it is not the same writer
    (_same_writer), and a look-back can pass it without parsing it. Clean ASCII only: normalizing an unclean
    line can change what its text holds."""
    m = GLOBAL_RANK_LED.match(buf, start, end)
    return (m is not None and int(m[1]) != rank and buf.find(b"[rank", m.end(), end) == -1
            and _UNCLEAN.search(buf, start, end) is None)


@dataclass(frozen=True)
class Lookback:
    """One finished look-back: where it started, and the stamped line it found (or None)."""

    start: int
    found: Timestamp | None
    found_line: int


def lookback_time(buf: Buffer, start: int, line_no: int, context: LineContext, parsed: dict[int, LineContext],
                  previous: dict[tuple[int | None, int | None], Lookback]) -> Timestamp | None:
    """The time of the nearest earlier line of the same writer within ``LOOKBACK_LINES`` lines (tracebacks
    carry no stamps of their own).

    ``previous`` holds this buffer's last look-back per writer. When the walk back reaches the line that
    look-back started from, the answer is known: that line has no stamp of its own (it looked back), and
    what it found is the nearest one before it, if that is still within this line's window. A dense
    cascade of unstamped lines (each rank's ``terminate called`` block) then walks a few lines, not 200.
    """
    writer = (context.rank, context.local_rank)
    earlier = previous.get(writer)
    found: Timestamp | None = None
    found_line = 0
    end = start - 1
    for step in range(1, LOOKBACK_LINES + 1):
        if end <= 0:
            break
        line_start = buf.rfind(b"\n", 0, end) + 1
        if earlier is not None and line_start == earlier.start:
            if earlier.found is not None and earlier.found_line >= line_no - LOOKBACK_LINES:
                found, found_line = earlier.found, earlier.found_line
            break
        prev_context = parsed.get(line_start)
        if prev_context is None:
            if _another_ranks_line(buf, line_start, end, context.rank):
                end = line_start - 1
                continue
            if _MAYBE_STAMPED.search(buf, line_start, end):
                prev_context = parse_line(normalize_line(buf[line_start:end], DISPLAY_CHARS))[0]
            else:
                prev_context = _UNSTAMPED
            parsed[line_start] = prev_context
        # Same writer only: in a combined log the agent's and other ranks' stamps say nothing about this line.
        if prev_context.time is not None and not prev_context.time.uptime and _same_writer(prev_context, context):
            found, found_line = prev_context.time, line_no - step
            break
        end = line_start - 1
    previous[writer] = Lookback(start, found, found_line)
    return found


class TimeLookback:
    """What the look-backs of one buffer remember: the contexts of lines parsed so far (by line start) and the
    last look-back of each writer."""

    def __init__(self) -> None:
        self.parsed: dict[int, LineContext] = {}
        self.previous: dict[tuple[int | None, int | None], Lookback] = {}

    def remember(self, start: int, context: LineContext) -> None:
        """The context of the line at ``start``, already parsed by the scan."""
        self.parsed[start] = context

    def inferred_time(self, buf: Buffer, start: int, line_no: int, context: LineContext) -> Timestamp | None:
        """The time of the unstamped line at ``start``: an earlier line's stamp of the same writer, as a lower
        bound, or None."""
        earlier = lookback_time(buf, start, line_no, context, self.parsed, self.previous)
        if earlier is None:
            return None
        return Timestamp(earlier.year, earlier.seconds, earlier.text, earlier.uptime, inferred=True)
