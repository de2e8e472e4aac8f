"""Read the lines just before a given line of a source again: the traceback above a root-cause line.

The scan keeps only candidate lines; once the root cause is chosen, the frames printed above it are read
from the source a second time, a few lines only, in blocks, without holding the file in memory. A stream
(stdin) cannot be read again and gives nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..inputs import ByteStream, Source
from ..lines.reading import display_text

_BLOCK_BYTES = 4 * 1024 * 1024
MAX_WINDOW_BYTES = 256 * 1024  # the lines before a line, at most: a traceback is far shorter

LinesBefore = Callable[[str, int, int], "list[str] | None"]  # (file name, line, count) -> the lines before it


def lines_before(source: Source, line: int, count: int) -> list[str] | None:
    """The (at most) ``count`` lines before line number ``line`` (1-based), oldest first, shown as a view
    shows them (clean, masked); None when the source cannot be read again."""
    if line <= 1 or count <= 0:
        return [] if source.stream is None else None
    if source.stream is not None and source.path is None:
        return None
    try:
        stream = source.open()
    except OSError:
        return None
    try:
        kept = b""  # the last bytes read before the line, at most a window
        newlines = 0
        while newlines < line - 1:
            chunk = _read_block(stream)
            if not chunk:
                break
            wanted = line - 1 - newlines  # newlines up to the start of the line
            found = chunk.count(b"\n")
            if found < wanted:
                newlines += found
                kept = chunk[-MAX_WINDOW_BYTES:] if len(chunk) >= MAX_WINDOW_BYTES else (kept + chunk)[-MAX_WINDOW_BYTES:]
                continue
            end = _nth_newline(chunk, wanted)  # the newline that ends the line before ``line``
            kept = (kept + chunk[max(0, end - MAX_WINDOW_BYTES):end])[-MAX_WINDOW_BYTES:]
            newlines = line - 1
    except OSError:
        return None
    finally:
        stream.close()
    pieces = kept.split(b"\n")
    return [display_text(piece.rstrip(b"\r")) for piece in pieces[-count:]]


def _read_block(stream: ByteStream) -> bytes:
    block = bytearray(_BLOCK_BYTES)
    size = stream.readinto(memoryview(block))
    return bytes(block[:size]) if size else b""


def _nth_newline(chunk: bytes, n: int) -> int:
    """The index of the ``n``-th newline (1-based) of a chunk that holds at least ``n``: counts over halves, then
    a short walk, not a search per line."""
    low, high, before = 0, len(chunk), 0  # the n-th newline lies in chunk[low:high]; ``before`` newlines precede low
    while high - low > _WALK_BYTES:
        middle = (low + high) // 2
        in_first_half = chunk.count(b"\n", low, middle)
        if before + in_first_half >= n:
            high = middle
        else:
            low, before = middle, before + in_first_half
    end = low - 1
    for _ in range(n - before):
        end = chunk.index(b"\n", end + 1)
    return end


_WALK_BYTES = 4096


def lines_before_lookup(sources: Sequence[Source]) -> LinesBefore:
    """The look-up the reasoning uses: by the name a source was scanned under."""
    by_name = {source.name: source for source in sources}

    def lookup(name: str, line: int, count: int) -> list[str] | None:
        source = by_name.get(name)
        return lines_before(source, line, count) if source is not None else None

    return lookup
