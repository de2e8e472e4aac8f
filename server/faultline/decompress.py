"""Compressed logs read as the text they hold: gzip, bzip2, xz and zstd, recognised by their first bytes.

Rotated and archived logs are usually compressed (``train.log.1.gz``, ``slurm-123.out.xz``). A compressed
input is decompressed as it is read, a piece at a time like any file, so line numbers are those of the
uncompressed text and memory does not grow with its size (nor with its compression ratio: each step's
output is capped). The format is told by the magic bytes, not the file name: a ``.gz`` that is plain text
is read as text, and a compressed file without a suffix is still decompressed. Concatenated members or
frames (``cat a.gz b.gz``) are read one after another. A stream that is damaged or cut short keeps every
line before that point and then raises an ``OSError`` that says so (the scanner turns it into a note).

zstd comes from ``backports.zstd`` (CPython 3.14's ``compression.zstd`` for older Pythons), whose
decompressor has the same ``max_length``/``eof``/``unused_data`` interface as ``bz2`` and ``lzma``; on
Python 3.14 and later the standard library's is used.
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Callable
from typing import BinaryIO, Protocol

# The first bytes of each format (RFC 1952; bzip2's "BZh"; the xz stream and zstd frame magic numbers).
_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
MAGIC_BYTES = 6  # enough to tell every format apart


class _Decompressor(Protocol):
    """What zlib's, bz2's, lzma's and zstd's decompressor objects have in common (zlib's is adapted)."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    @property
    def needs_input(self) -> bool: ...

    def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...


class _Zlib:
    """zlib's decompressor (gzip framing) with the bz2/lzma interface: ``unconsumed_tail`` kept inside."""

    def __init__(self) -> None:
        self._obj = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        self._tail = b""

    @property
    def eof(self) -> bool:
        return self._obj.eof

    @property
    def unused_data(self) -> bytes:
        return self._obj.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._tail

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        out = self._obj.decompress(self._tail + data, max(0, max_length))
        self._tail = self._obj.unconsumed_tail
        return out


def _zstd() -> _Decompressor:
    try:
        from compression.zstd import ZstdDecompressor  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from backports.zstd import ZstdDecompressor  # imported on first use: most diagnoses never need it
    decompressor: _Decompressor = ZstdDecompressor()
    return decompressor


_FACTORIES: dict[str, Callable[[], _Decompressor]] = {
    "gzip": _Zlib,
    "bzip2": bz2.BZ2Decompressor,
    "xz": lzma.LZMADecompressor,
    "zstd": _zstd,
}


def compression_of(head: bytes) -> str | None:
    """The compression format whose magic bytes start ``head``, or None for anything else."""
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    return None


class DecompressingStream:
    """A ``ByteStream`` over the decompressed bytes of a compressed one (closing it closes the raw stream)."""

    RAW_PIECE_BYTES = 64 * 1024

    def __init__(self, raw: BinaryIO, compression: str, name: str) -> None:
        self.raw = raw
        self.compression = compression
        self.name = name
        self._new = _FACTORIES[compression]
        self._obj = self._new()
        self._input = b""  # raw bytes read but not yet given to the decompressor
        self._started = False  # the current member has had input
        self._done = False
        self._error: OSError | None = None

    def readinto(self, target: memoryview, /) -> int:
        filled = 0
        while filled < len(target) and not self._done and self._error is None:
            try:
                data = self._step(len(target) - filled)
            except (OSError, EOFError, ValueError, lzma.LZMAError, zlib.error) as exc:
                self._error = OSError(f"the {self.compression} data is damaged ({type(exc).__name__}: {exc}); "
                                      "the lines before that point were read")
                break
            if data is None:
                continue
            target[filled:filled + len(data)] = data
            filled += len(data)
        if not filled and self._error is not None:
            error, self._error = self._error, None
            self._done = True
            raise error
        return filled

    def _step(self, room: int) -> bytes | None:
        """Decompress up to ``room`` bytes; None when the step only read input or moved to the next member."""
        obj = self._obj
        if obj.eof:
            rest = obj.unused_data + self._input
            self._input = b""
            if not rest:
                rest = self.raw.read(self.RAW_PIECE_BYTES)
            if not rest.strip(b"\x00"):  # the end, or the zero padding some tools add after the last member
                self._done = True
                return None
            self._obj, self._started = self._new(), False
            self._input = rest
            return None
        if obj.needs_input and not self._input:
            self._input = self.raw.read(self.RAW_PIECE_BYTES)
            if not self._input:
                self._done = True
                if self._started:
                    raise EOFError("the compressed data ends before its end marker: the file is cut short")
                return None
        data, self._input = self._input, b""
        self._started = True
        return obj.decompress(data, room)

    def close(self) -> None:
        self.raw.close()
