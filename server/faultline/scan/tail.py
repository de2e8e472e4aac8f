"""Read a log from its end: the last line a given rank printed (a silent straggler's anchor)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..inputs import Source
from ..lines.normalize import normalize_line
from ..lines.prefixes import parse_line
from ..lines.reading import DISPLAY_CHARS, display_text

TAIL_BYTES = 64 * 1024 * 1024

LastLineLookup = Callable[[str, int], "tuple[int, str] | None"]  # (file name, rank) -> (line, text)


def last_line_of_rank(source: Source, rank: int, max_bytes: int = TAIL_BYTES) -> tuple[int, str] | None:
    """Line number and text of the last line a given rank printed in a combined log (read from the end)."""
    try:
        tail = source.tail(max_bytes)
    except OSError:
        return None
    if tail is None:
        return None
    data, newlines_before = tail
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        raw = data[start:end].rstrip(b"\n")
        if raw.strip():
            context, _ = parse_line(normalize_line(raw, DISPLAY_CHARS))
            if context.best_rank == rank:
                return newlines_before + data.count(b"\n", 0, start) + 1, display_text(raw)
        end = start
    return None


def last_line_lookup(sources: Sequence[Source]) -> LastLineLookup:
    """The look-up the reasoning uses: by the name a source was scanned under."""
    by_name = {source.name: source for source in sources}

    def lookup(name: str, rank: int) -> tuple[int, str] | None:
        source = by_name.get(name)
        return last_line_of_rank(source, rank) if source is not None else None

    return lookup
