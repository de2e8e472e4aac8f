"""Where a diagnosis's bytes come from: log sources (files, byte ranges of them, text, stdin) and the
streams they open, and what the user named (files, folders of per-rank logs, ``-``) turned into sources.

Folders are walked recursively in natural order (``rank2`` before ``rank10``); hidden entries and files
that look binary are skipped and reported, never silently dropped. Compressed files and streams (gzip,
bzip2, xz, zstd: decompress.py) are read as the text they hold. A new kind of input (a dump) is a new way
for a :class:`Source` to open a :class:`ByteStream`.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol, cast

from .decompress import MAGIC_BYTES, DecompressingStream, compression_of
from .lines.normalize import looks_binary


class ByteStream(Protocol):
    """What the chunk loop reads from: a file, a byte range of one, in-memory bytes, stdin."""

    def readinto(self, target: memoryview, /) -> int: ...

    def close(self) -> None: ...


# Bytes of a file name that are not UTF-8 (Python keeps them as lone surrogates) and control characters.
_UNPRINTABLE_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\udc80-\udcff]")


def displayable_name(name: str) -> str:
    """A file name every report can carry: undecodable bytes and control characters become ``\\xNN``.

    A name read from a folder can hold bytes that are not UTF-8 (the JSON report would then not be valid
    UTF-8, and ``--output`` failed) or terminal escape sequences (which a text report would send to the
    terminal). Such a file keeps its events; only the look-up of a silent rank's last line, which reopens
    the file by this name, does not find it.
    """
    if not _UNPRINTABLE_NAME.search(name):
        return name
    return _UNPRINTABLE_NAME.sub(lambda m: f"\\x{ord(m.group(0)) & 0xFF:02x}", name)


@dataclass
class Source:
    """One log input: a file on disk, text handed over by a caller, or a stream (stdin)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    text: str | None = None
    stream: BinaryIO | None = None
    size: int = 0
    offset: int = 0  # a byte range of the file (parallel scans split big files at line boundaries)
    length: int | None = None
    compression: str | None = None  # "gzip", "bzip2", "xz", "zstd": read decompressed (size is the compressed one)

    @classmethod
    def from_path(cls, path: Path, name: str | None = None) -> Source:
        size = path.stat().st_size
        compression = None
        if size and path.is_file():
            with open(path, "rb") as stream:
                compression = compression_of(stream.read(MAGIC_BYTES))
        return cls(displayable_name(name or str(path)), path=path, size=size, compression=compression)

    @classmethod
    def from_text(cls, text: str | bytes, name: str = "<text>") -> Source:
        if isinstance(text, str):  # encoded while read (_TextStream); its size in characters: bytes or fewer
            return cls(name, text=text, size=len(text))
        return cls(name, data=text, size=len(text), compression=compression_of(text[:MAGIC_BYTES]))

    @classmethod
    def from_stdin(cls) -> Source:
        return cls("<stdin>", stream=sys.stdin.buffer)

    def open(self) -> ByteStream:
        if self.path is not None:
            stream = open(self.path, "rb")  # noqa: SIM115 - the scanner closes it
            if self.compression is not None:
                return DecompressingStream(stream, self.compression, self.name)
            if self.offset or self.length is not None:
                stream.seek(self.offset)
                return _Window(stream, self.length)
            return stream
        if self.data is not None:
            if self.compression is not None:
                return DecompressingStream(io.BytesIO(self.data), self.compression, self.name)
            return io.BytesIO(self.data)
        if self.text is not None:
            return _TextStream(self.text)
        assert self.stream is not None
        if not hasattr(self.stream, "read"):
            return cast(ByteStream, self.stream)  # a bare ByteStream: nothing to tell its format by
        head = _read_exactly(self.stream, MAGIC_BYTES)  # a pipe may hand over fewer bytes per read
        compression = compression_of(head)
        prefixed = _Prefixed(head, self.stream)
        if compression is not None:
            self.compression = compression
            return DecompressingStream(cast(BinaryIO, prefixed), compression, self.name)
        return prefixed

    def tail(self, max_bytes: int) -> tuple[bytes, int] | None:
        """The last ``max_bytes`` (at most) of the source and how many newlines come before them; None for a
        stream, which cannot be read again."""
        if self.compression is not None and self.stream is None:
            return _tail_of_stream(self.open(), max_bytes)
        if self.path is not None:
            with open(self.path, "rb") as stream:
                end = self.offset + self.length if self.length is not None else stream.seek(0, io.SEEK_END)
                read_from = max(self.offset, end - max_bytes)
                stream.seek(read_from)
                data = stream.read(end - read_from)
                newlines_before = 0
                stream.seek(self.offset)
                remaining = read_from - self.offset
                while remaining:
                    block = stream.read(min(_TAIL_PIECE_BYTES, remaining))
                    if not block:
                        break
                    newlines_before += block.count(b"\n")
                    remaining -= len(block)
            return data, newlines_before
        if self.data is not None:
            whole = self.data
        elif self.text is not None:
            whole = _encode(self.text)
        else:
            return None
        cut = max(0, len(whole) - max_bytes)
        return whole[cut:], whole.count(b"\n", 0, cut)


_TAIL_PIECE_BYTES = 8 * 1024 * 1024


def _tail_of_stream(stream: ByteStream, max_bytes: int) -> tuple[bytes, int] | None:
    """The tail of a stream that can only be read from its start (a compressed file): read it through, keeping
    the last ``max_bytes`` and counting the newlines before them."""
    kept = b""
    newlines_before = 0
    block = bytearray(_TAIL_PIECE_BYTES)
    view = memoryview(block)
    try:
        while True:
            count = stream.readinto(view)
            if not count:
                break
            kept += bytes(view[:count])
            if len(kept) > max_bytes:
                cut = len(kept) - max_bytes
                newlines_before += kept.count(b"\n", 0, cut)
                kept = kept[cut:]
    except OSError:
        pass  # a damaged stream: the tail up to the damage
    finally:
        stream.close()
    return kept, newlines_before


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes, fewer only at the end of the stream."""
    head = b""
    while len(head) < size:
        piece = stream.read(size - len(head))
        if not piece:
            break
        head += piece
    return head


class _Prefixed:
    """A stream whose first bytes were already read (to tell its format): those bytes, then the rest."""

    def __init__(self, head: bytes, stream: BinaryIO) -> None:
        self.head = head
        self.stream = stream

    def read(self, size: int = -1, /) -> bytes:
        if self.head:
            if size < 0:
                data, self.head = self.head + self.stream.read(), b""
                return data
            data, self.head = self.head[:size], self.head[size:]
            if len(data) < size:
                data += self.stream.read(size - len(data))
            return data
        return self.stream.read(size)

    def readinto(self, target: memoryview, /) -> int:
        if self.head:
            count = min(len(self.head), len(target))
            target[:count] = self.head[:count]
            self.head = self.head[count:]
            return count
        return cast(ByteStream, self.stream).readinto(target)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        self.head = b""


def _encode(text: str) -> bytes:
    """Text as the UTF-8 bytes it was read from: lone surrogates that came from undecodable bytes
    (``surrogateescape``) become those bytes again; any other lone surrogate is encoded as is
    (``surrogatepass``) and later read as U+FFFD, rather than failing the diagnosis."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


class _TextStream:
    """Text read as UTF-8 bytes, encoded a piece at a time.

    Encoding a 30 MB document at once is one call that holds the GIL for ~15 ms, during which the language
    server's event loop (another thread) cannot answer a hover.
    """

    PIECE_CHARS = 1 << 20

    def __init__(self, text: str) -> None:
        self.text = text
        self.position = 0
        self.pending = b""

    def readinto(self, target: memoryview) -> int:
        filled = 0
        while filled < len(target):
            if not self.pending:
                if self.position >= len(self.text):
                    break
                piece = self.text[self.position:self.position + self.PIECE_CHARS]
                self.position += self.PIECE_CHARS
                self.pending = _encode(piece)
            count = min(len(target) - filled, len(self.pending))
            target[filled:filled + count] = self.pending[:count]
            self.pending = self.pending[count:]
            filled += count
        return filled

    def close(self) -> None:
        self.pending = b""


class _Window:
    """A read-only view of at most ``length`` bytes of a stream, from its current position."""

    def __init__(self, stream: io.BufferedReader, length: int | None) -> None:
        self.stream = stream
        self.left = length

    def readinto(self, target: memoryview) -> int:
        if self.left is None:
            return self.stream.readinto(target)
        if self.left <= 0:
            return 0
        count = self.stream.readinto(target[:self.left])
        self.left -= count
        return count

    def close(self) -> None:
        self.stream.close()


_SKIP_SUFFIXES = {".pt", ".pth", ".bin", ".safetensors", ".ckpt", ".npy", ".npz", ".pkl", ".pickle",
                  ".zip", ".tar", ".tgz", ".png", ".jpg", ".jpeg", ".so", ".whl", ".pyc"}
_ARCHIVE = re.compile(r"\.tar\.(?:gz|bz2|xz|zst)$", re.IGNORECASE)  # a compressed archive: files, not a log


class InputError(Exception):
    """A path the user named cannot be used; the message says which and why."""


@dataclass
class ResolvedInputs:
    sources: list[Source] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # a note per file not read, and why
    unread: list[str] = field(default_factory=list)  # of those, the ones that could not be read (not empty or binary)

    @property
    def total_bytes(self) -> int:
        return sum(s.size for s in self.sources)


def natural_key(path: str) -> list[object]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path)]


def _is_binary_file(path: Path) -> bool:
    """Whether a file's first bytes (decompressed, for a compressed file) are not text."""
    try:
        source = Source.from_path(path)
        stream = source.open()
        try:
            head = bytearray(8192)
            count = stream.readinto(memoryview(head))
        finally:
            stream.close()
        return looks_binary(bytes(head[:count]))
    except OSError:
        return False


def resolve_inputs(paths: Sequence[str | Path], allow_stdin: bool = True) -> ResolvedInputs:
    """Sources for the given paths. Raises :class:`InputError` for a path that does not exist."""
    resolved = ResolvedInputs()
    for raw in paths:
        text = str(raw)
        if text == "-" and allow_stdin:
            resolved.sources.append(Source.from_stdin())
            continue
        path = Path(text)
        if not path.exists():
            raise InputError(f"{text}: no such file or folder")
        if path.is_dir():
            _add_folder(path, resolved)
        elif path.is_file() or path.is_fifo():
            try:
                source = Source.from_path(path, text)
            except OSError as exc:
                raise InputError(f"{text}: cannot be read ({exc.strerror})") from exc
            if path.is_file() and source.size == 0:
                resolved.skipped.append(f"{source.name}: skipped (the file is empty)")
                resolved.unread.append(source.name)
            else:
                resolved.sources.append(source)
        else:
            raise InputError(f"{text}: not a regular file or folder")
    if not resolved.sources and resolved.skipped:
        raise InputError("nothing to diagnose: " + "; ".join(resolved.skipped))
    return resolved


def _add_folder(folder: Path, resolved: ResolvedInputs) -> None:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")]
        for name in files:
            if name.startswith("."):
                continue
            found.append(Path(root) / name)
    for path in sorted(found, key=lambda p: natural_key(str(p))):
        if path.suffix.lower() in _SKIP_SUFFIXES or _ARCHIVE.search(path.name) or _is_binary_file(path):
            resolved.skipped.append(f"{displayable_name(str(path))}: skipped (binary)")
            continue
        name = displayable_name(str(path))
        try:
            source = Source.from_path(path)
        except OSError as exc:
            resolved.skipped.append(f"{name}: skipped ({exc.strerror})")
            resolved.unread.append(name)
            continue
        if source.size == 0 and path.is_file():  # normal in a folder (torchrun --log-dir's empty stderr.log)
            resolved.skipped.append(f"{name}: skipped (the file is empty)")
        else:
            resolved.sources.append(source)
