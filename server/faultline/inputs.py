"""Where a diagnosis's bytes come from: log sources (files, byte ranges of them, text, stdin) and the
streams they open, and what the user named (files, folders of per-rank logs, ``-``) turned into sources.

Folders are walked recursively in natural order (``rank2`` before ``rank10``); hidden entries and files
that look binary are skipped and reported, never silently dropped. A new kind of input (a compressed
file, a dump) is a new way for a :class:`Source` to open a :class:`ByteStream`.
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

    @classmethod
    def from_path(cls, path: Path, name: str | None = None) -> Source:
        return cls(displayable_name(name or str(path)), path=path, size=path.stat().st_size)

    @classmethod
    def from_text(cls, text: str | bytes, name: str = "<text>") -> Source:
        if isinstance(text, str):  # encoded while read (_TextStream); its size in characters: bytes or fewer
            return cls(name, text=text, size=len(text))
        return cls(name, data=text, size=len(text))

    @classmethod
    def from_stdin(cls) -> Source:
        return cls("<stdin>", stream=sys.stdin.buffer)

    def open(self) -> ByteStream:
        if self.path is not None:
            stream = open(self.path, "rb")  # noqa: SIM115 - the scanner closes it
            if self.offset or self.length is not None:
                stream.seek(self.offset)
                return _Window(stream, self.length)
            return stream
        if self.data is not None:
            return io.BytesIO(self.data)
        if self.text is not None:
            return _TextStream(self.text)
        assert self.stream is not None
        return cast(ByteStream, self.stream)  # sys.stdin.buffer: a BufferedReader, typed as BinaryIO

    def tail(self, max_bytes: int) -> tuple[bytes, int] | None:
        """The last ``max_bytes`` (at most) of the source and how many newlines come before them; None for a
        stream, which cannot be read again."""
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
                  ".gz", ".zip", ".tar", ".png", ".jpg", ".jpeg", ".so", ".whl", ".pyc"}


class InputError(Exception):
    """A path the user named cannot be used; the message says which and why."""


@dataclass
class ResolvedInputs:
    sources: list[Source] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(s.size for s in self.sources)


def natural_key(path: str) -> list[object]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path)]


def _is_binary_file(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            return looks_binary(stream.read(8192))
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
                resolved.sources.append(Source.from_path(path, text))
            except OSError as exc:
                raise InputError(f"{text}: cannot be read ({exc.strerror})") from exc
        else:
            raise InputError(f"{text}: not a regular file or folder")
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
        if path.suffix.lower() in _SKIP_SUFFIXES or _is_binary_file(path):
            resolved.skipped.append(f"{displayable_name(str(path))}: skipped (binary)")
            continue
        try:
            resolved.sources.append(Source.from_path(path))
        except OSError as exc:
            resolved.skipped.append(f"{displayable_name(str(path))}: skipped ({exc.strerror})")
