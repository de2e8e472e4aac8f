"""Stream log sources in large chunks and turn the few interesting lines into events.

Memory stays bounded whatever the input size: a source is read in chunks of ``CHUNK_BYTES``; only lines
that hold a signature keyword (or a generic error word) are decoded, attributed and matched. Line
numbers are exact (newlines are counted in every chunk); a line longer than ``max_line_bytes`` keeps its
number but only its head is matched, and the summary says how many lines were cut.
"""

from __future__ import annotations

import dataclasses
import io
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .masking import mask_secrets
from .matcher import LineMatcher, fill_message
from .model import Event, FileSummary, LineContext, Suspect, Timestamp
from .normalize import normalize_line
from .prefixes import parse_line, rank_from_path

CHUNK_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_LINE_BYTES = 1024 * 1024
KEPT_TEXT_CHARS = 4000
SAMPLE_BYTES = 64 * 1024
MAX_SUSPECTS_PER_FILE = 400
LOOKBACK_LINES = 200


# The rank-naming prefixes of prefixes.py, at line starts: [rankN]:, [defaultN]:, srun " N: ", OpenMPI.
_RANK_PREFIXES = re.compile(
    rb"(?m)^(?:\[[A-Za-z_]{1,40}\]:)?(?:\[rank(\d{1,6})\]:|\[[A-Za-z_]{1,40}?(\d{1,6})\]:|"
    rb" *(\d{1,6}): |\[\d+,(\d{1,6})\]<std)")


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


class Cancelled(Exception):
    """The caller asked to stop (e.g. an editor cancelled the request)."""


@dataclass
class Source:
    """One log input: a file on disk, text handed over by a caller, or a stream (stdin)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    stream: BinaryIO | None = None
    size: int = 0
    offset: int = 0  # a byte range of the file (parallel scans split big files at line boundaries)
    length: int | None = None

    @classmethod
    def from_path(cls, path: Path, name: str | None = None) -> Source:
        return cls(displayable_name(name or str(path)), path=path, size=path.stat().st_size)

    @classmethod
    def from_text(cls, text: str | bytes, name: str = "<text>") -> Source:
        data = text.encode("utf-8", errors="surrogateescape") if isinstance(text, str) else text
        return cls(name, data=data, size=len(data))

    @classmethod
    def from_stdin(cls) -> Source:
        return cls("<stdin>", stream=sys.stdin.buffer)

    def open(self) -> BinaryIO:
        if self.path is not None:
            stream = open(self.path, "rb")  # noqa: SIM115 - the scanner closes it
            if self.offset or self.length is not None:
                stream.seek(self.offset)
                return _Window(stream, self.length)  # type: ignore[return-value]
            return stream
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.stream is not None
        return self.stream


class _Window:
    """A read-only view of at most ``length`` bytes of a stream, from its current position."""

    def __init__(self, stream: BinaryIO, length: int | None) -> None:
        self.stream = stream
        self.left = length

    def read(self, size: int = -1) -> bytes:
        if self.left is None:
            return self.stream.read(size)
        if self.left <= 0:
            return b""
        data = self.stream.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.stream.close()


@dataclass
class ScanOutput:
    events: list[Event] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    files: list[FileSummary] = field(default_factory=list)


class Scanner:
    """Scans sources one after another, accumulating events, suspects and file summaries."""

    def __init__(self, matcher: LineMatcher, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 cancel: Callable[[], bool] | None = None,
                 progress: Callable[[int], None] | None = None) -> None:
        self.matcher = matcher
        self.max_line_bytes = max_line_bytes
        self.cancel = cancel
        self.progress = progress
        self.out = ScanOutput()
        self._order = 0
        self._suspects_per_file: dict[str, int] = {}

    def scan(self, source: Source) -> FileSummary:
        summary = FileSummary(path=source.name, rank_from_name=rank_from_path(source.name))
        self.out.files.append(summary)
        stream = source.open()
        try:
            self._scan_stream(stream, source.name, summary)
        except OSError as exc:
            summary.error = f"cannot read {source.name}: {exc.strerror or exc}"
        finally:
            if source.stream is None:
                stream.close()
        return summary

    # -- chunk loop -------------------------------------------------------------------------------
    def _chunks(self, stream: BinaryIO, summary: FileSummary) -> Iterator[tuple[bytes, int]]:
        """Yield (buffer, limit) pairs: ``buffer[:limit]`` holds whole lines only (no copy is made of it).

        A line longer than ``max_line_bytes`` is yielded as its head, with a newline added, and the rest of
        it is skipped; the caller counts it as one line.
        """
        carry = b""
        skipping_long_line = False
        while True:
            if self.cancel is not None and self.cancel():
                raise Cancelled()
            data = stream.read(CHUNK_BYTES)
            if not data:
                break
            summary.bytes += len(data)
            if self.progress is not None:
                self.progress(len(data))
            if skipping_long_line:
                newline = data.find(b"\n")
                if newline == -1:
                    continue
                data = data[newline + 1:]
                skipping_long_line = False
            buf = carry + data if carry else data
            cut = buf.rfind(b"\n")
            if cut == -1:
                if len(buf) > self.max_line_bytes:
                    head = buf[: self.max_line_bytes] + b"\n"
                    yield head, len(head)
                    summary.truncated_lines += 1
                    carry = b""
                    skipping_long_line = True
                else:
                    carry = buf
                continue
            carry = buf[cut + 1:]
            yield buf, cut + 1
            if len(carry) > self.max_line_bytes:
                head = carry[: self.max_line_bytes] + b"\n"
                yield head, len(head)
                summary.truncated_lines += 1
                carry = b""
                skipping_long_line = True
        if carry:
            tail = carry + b"\n"
            yield tail, len(tail)

    def _scan_stream(self, stream: BinaryIO, name: str, summary: FileSummary) -> None:
        line_base = 1  # number of the first line in the current buffer
        first = True
        last: tuple[bytes, int, int] | None = None
        for buf, limit in self._chunks(stream, summary):
            if first:
                self._sample_ranks(buf[: min(limit, SAMPLE_BYTES)], summary)
                first = False
            self._scan_buffer(buf, limit, line_base, name, summary)
            last = (buf, limit, line_base)
            line_base += buf.count(b"\n", 0, limit)
        summary.lines = line_base - 1
        if last is not None:
            self._record_tail(*last, summary)

    def _sample_ranks(self, sample: bytes, summary: FileSummary) -> None:
        """Which ranks write to this file: one bytes regex over the head and tail, not a parse per line."""
        if summary.rank_from_name is not None:
            return
        for m in _RANK_PREFIXES.finditer(sample):
            value = next(g for g in m.groups() if g is not None)
            summary.ranks_seen.add(int(value))

    def _record_tail(self, buf: bytes, limit: int, base: int, summary: FileSummary) -> None:
        tail = buf[max(0, limit - SAMPLE_BYTES):limit]
        self._sample_ranks(tail[tail.find(b"\n") + 1:] if limit > SAMPLE_BYTES else tail, summary)
        end = limit - 1  # the final newline
        while end > 0:
            start = buf.rfind(b"\n", 0, end) + 1
            text = normalize_line(buf[start:end], 2000)
            if text.strip():
                summary.last_line = base + buf.count(b"\n", 0, start)
                summary.last_text = mask_secrets(text, truncated=end - start > 2000)
                return
            end = start - 1

    def _scan_buffer(self, buf: bytes, limit: int, line_base: int, name: str, summary: FileSummary) -> None:
        hits = self.matcher.index.scan(buf)
        if not hits:
            return
        if limit < len(buf):  # the partial last line is scanned again with the next chunk
            hits = [hit for hit in hits if hit[0] <= limit]
        self._parsed: dict[int, LineContext] = {}  # line start -> context, for time look-backs
        self._lookbacks: dict[tuple[int | None, int | None], _Lookback] = {}  # the last look-back per writer
        lines: dict[int, list[int]] = {}
        ends: dict[int, int] = {}
        # One pass over the hits in end order, keeping the current line's bounds: searching back to the line
        # start once per hit made a long line full of keywords quadratic (a 1 MiB line of "Error"s: 1.6 s).
        hits.sort()
        ids: list[int] = []
        line_end = -1
        for end, kw_id in hits:
            if end > line_end:
                start = buf.rfind(b"\n", max(line_end, 0), end) + 1
                stop = buf.find(b"\n", end)
                line_end = stop if stop != -1 else len(buf)
                ids = lines[start] = []
                ends[start] = line_end
            ids.append(kw_id)
        prev_start, prev_line = 0, line_base
        for start in sorted(lines):
            line_no = prev_line + buf.count(b"\n", prev_start, start)
            prev_start, prev_line = start, line_no
            self._line(buf, start, ends[start], line_no, lines[start], name, summary)

    def _line(self, buf: bytes, start: int, end: int, line_no: int, keyword_ids: list[int], name: str,
              summary: FileSummary) -> None:
        if end - start > self.max_line_bytes:
            summary.truncated_lines += 1
        # Masked before anything else sees it: captured fields and messages inherit the masking.
        # A line cut at max_line_bytes (here or by _chunks, which keeps exactly that many bytes) may end in the
        # head of a secret too short for its rule: truncated=True masks that trailing fragment too.
        text = mask_secrets(normalize_line(buf[start:end], self.max_line_bytes),
                            truncated=end - start >= self.max_line_bytes)
        context, message = parse_line(text)
        signature_indexes = self.matcher.signatures_for(keyword_ids)
        match = self.matcher.match(message, signature_indexes, f"{name}:{line_no}") if signature_indexes else None
        rank = context.best_rank
        if rank is not None:
            summary.ranks_seen.add(rank)
        if match is None:
            if any(k >= self.matcher.first_suspect_id for k in keyword_ids):
                self._suspect(text, context, name, line_no, summary)
            return
        self._parsed[start] = context
        if context.time is None:
            context = _with_time(context, _lookback_time(buf, start, line_no, context, self._parsed, self._lookbacks))
        sig = match.signature
        fields = {k: v[:500] for k, v in match.fields.items()}
        self._order += 1
        event = Event(
            signature_id=sig.id, title=sig.title, category=sig.category, role_prior=sig.role,
            priority=sig.priority, file=name, line=line_no, text=text[:KEPT_TEXT_CHARS],
            message=fill_message(sig.message, fields), fields=fields, rank=context.rank,
            local_rank=context.local_rank, host=context.host, pid=context.pid, time=context.time,
            level=context.level or ("W" if "NCCL WARN" in message else None), order=self._order, role=sig.role,
        )
        self.out.events.append(event)

    def _suspect(self, text: str, context: LineContext, name: str, line_no: int,
                 summary: FileSummary) -> None:
        count = self._suspects_per_file.get(name, 0)
        if count >= MAX_SUSPECTS_PER_FILE:
            return
        self._suspects_per_file[name] = count + 1
        stripped = text.strip()
        if not stripped or stripped.startswith(("File \"", "^")):
            return
        score = 1.0
        if context.level in ("E", "F") or "Error" in text or "Exception" in text or "FATAL" in text:
            score += 1.0
        if "Traceback" in text:
            score -= 0.5
        if "panic" in text.lower() or "fatal" in text.lower():
            score += 1.0
        self._order += 1
        rank = context.best_rank
        if rank is None:
            rank = summary.rank_from_name
        self.out.suspects.append(Suspect(file=name, line=line_no, text=text[:KEPT_TEXT_CHARS],
                                         score=score, reason="error words on a line no signature describes",
                                         rank=rank, order=self._order))


def _with_time(context: LineContext, time: Timestamp | None) -> LineContext:
    if time is None:
        return context
    return dataclasses.replace(context, time=dataclasses.replace(time, inferred=True))


def _same_writer(earlier: LineContext, line: LineContext) -> bool:
    """Lines from one process: the same torchrun ``--tee`` stream if there is one, else the same rank."""
    if line.local_rank is not None:
        return earlier.local_rank == line.local_rank and earlier.rank in (None, line.rank)
    return earlier.rank == line.rank and earlier.local_rank is None


@dataclass(frozen=True)
class _Lookback:
    """One finished look-back: where it started, and the stamped line it found (or None)."""

    start: int
    found: Timestamp | None
    found_line: int


def _lookback_time(buf: bytes, start: int, line_no: int, context: LineContext, parsed: dict[int, LineContext],
                   previous: dict[tuple[int | None, int | None], _Lookback]) -> Timestamp | None:
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
            prev_context = parsed[line_start] = parse_line(normalize_line(buf[line_start:end], 2000))[0]
        # Same writer only: in a combined log the agent's and other ranks' stamps say nothing about this line.
        if prev_context.time is not None and not prev_context.time.uptime and _same_writer(prev_context, context):
            found, found_line = prev_context.time, line_no - step
            break
        end = line_start - 1
    previous[writer] = _Lookback(start, found, found_line)
    return found


def last_line_of_rank(path: Path, rank: int, max_bytes: int = 64 * 1024 * 1024) -> tuple[int, str] | None:
    """Line number and text of the last line a given rank printed in a combined log (read from the end)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as stream:
            read_from = max(0, size - max_bytes)
            stream.seek(read_from)
            data = stream.read()
            prefix_lines = 0
            if read_from:
                stream.seek(0)
                remaining = read_from
                while remaining:
                    block = stream.read(min(CHUNK_BYTES, remaining))
                    prefix_lines += block.count(b"\n")
                    remaining -= len(block)
    except OSError:
        return None
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        raw = data[start:end].rstrip(b"\n")
        if raw.strip():
            context, _ = parse_line(normalize_line(raw, 2000))
            line_rank = context.best_rank
            if line_rank == rank:
                return (prefix_lines + data.count(b"\n", 0, start) + 1,
                        mask_secrets(normalize_line(raw, 2000), truncated=len(raw) > 2000))
        end = start
    return None
