"""Helpers of the chunk loop: newline counts, the last visible byte of a buffer, and the ``Cancelled`` signal."""

from __future__ import annotations

CHUNK_BYTES = 8 * 1024 * 1024
SAMPLE_BYTES = 64 * 1024

Buffer = bytes | bytearray  # the chunk loop's reused bytearray, or bytes (a cut long line's head, a tail)


class Cancelled(Exception):
    """The caller asked to stop (e.g. an editor cancelled the request)."""


# Bytes that are never visible: ASCII whitespace, the other C0 controls and DEL (normalize_line removes or
# strips them all).
_INVISIBLE_BYTES = bytes(range(0x21)) + b"\x7f"


def last_visible_byte(buf: Buffer, end: int) -> int:
    """The index of the last byte before ``end`` that may be visible, or -1: pieces from the end, growing."""
    high, size = end, 4096
    while high > 0:
        low = max(0, high - size)
        kept = len(buf[low:high].rstrip(_INVISIBLE_BYTES))
        if kept:
            return low + kept - 1
        high, size = low, min(size * 2, 1 << 20)
    return -1


# Counting newlines in 8 MiB is one C call that holds the GIL for 3-8 ms; in the language server the event
# loop, another thread, cannot answer a hover meanwhile. In pieces, it can between them.
_COUNT_PIECE_BYTES = 1024 * 1024


def count_newlines(buf: Buffer, start: int, end: int) -> int:
    if end - start <= _COUNT_PIECE_BYTES:
        return buf.count(b"\n", start, end)
    return sum(buf.count(b"\n", piece, min(piece + _COUNT_PIECE_BYTES, end))
               for piece in range(start, end, _COUNT_PIECE_BYTES))
