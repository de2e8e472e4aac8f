"""Stream log sources in large chunks and turn the few interesting lines into events, written to a sink.

Memory stays bounded whatever the input size: a source is read in chunks of ``CHUNK_BYTES`` (chunks.py);
only lines that hold a signature keyword (or a generic error word) are decoded, attributed and matched
(lines/reading.py). Line numbers are exact (newlines are counted in every chunk); a line longer than
``max_line_bytes`` keeps its number but only its head is matched, and the summary says how many lines were
cut. What is found goes to the sink the scanner is given (sink.py); a dense buffer's lines are shared with
forked helpers, which write to sinks of their own (dense.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path

from ..inputs import ByteStream, Source
from ..lines.cache import MAX_CACHED_LINE_BYTES, LineCache
from ..lines.normalize import has_escapes, without_escapes
from ..lines.prefixes import rank_from_path
from ..lines.reading import DEFAULT_MAX_LINE_BYTES, LineReading, read_line
from ..matcher import LineMatcher, PatternTimeout
from ..model import Event, FileSummary, LineContext, Suspect
from .chunks import (
    PROGRESS_TAIL_BYTES,
    SAMPLE_BYTES,
    Buffer,
    count_newlines,
    note_first_time,
    note_last_line,
    note_progress,
    read_chunks,
    sample_ranks,
    sample_tail_ranks,
)
from .continuation import USUAL_WRAP, WrapWidths, logical_line, stands_alone, wrap_widths
from .dense import DenseShare, Lines, worth_sharing
from .forked import can_fork
from .frame_source import is_frame_source
from .lookback import TimeLookback
from .sink import LineSink, ScanSink

# A line the warnings module printed: "train.py:12: UserWarning: ...", "FutureWarning: ..." (a warning, not an error).
PYTHON_WARNING = re.compile(r"\b[A-Z]\w{0,40}Warning: ")
# The head of a C++ stack (c10::Error's "Exception raised from f at file:line (most recent call first):") and its
# frames ("frame #3: ..."): where the error was raised, not what it is.
_STACK_HEADER = re.compile(r"(?:\[[^\]\n]{0,40}\]:?\s*)?(?:Exception raised from |frame #\d)")
# NCCL's debug output names its level after the prefix: "NCCL INFO ...", "NCCL WARN ...", "NCCL TRACE ..." (debug.cc)
_NCCL_LEVEL = re.compile(r"NCCL (INFO|WARN|TRACE) ")
_NCCL_LEVELS = {"INFO": "I", "WARN": "W", "TRACE": "D"}
# A logger that re-logs another stream at its own level ("<time> | ERROR | stderr | INFO:     Started server", the
# "asctime | levelname | name | message" format of loggers that redirect stderr): the level inside wins.
_RELOGGED_LEVEL = re.compile(r"\|\s*(?:ERROR|CRITICAL|WARNING)\s*\|\s*[\w.-]{1,40}\s*\|\s*(INFO|DEBUG|WARNING|WARN)\b\s*[:|]")

__all__ = ["DEFAULT_MAX_LINE_BYTES", "KEPT_TEXT_CHARS", "Scanner"]

KEPT_TEXT_CHARS = 4000


class Scanner:
    """Scans sources one after another into a sink: events, suspects and one summary a file."""

    def __init__(self, matcher: LineMatcher, sink: ScanSink | None = None, *,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, cancel: Callable[[], bool] | None = None,
                 progress: Callable[[int], None] | None = None, helpers: int = 0,
                 line_cache: LineCache | None = None) -> None:
        """``helpers`` > 0: a buffer with at least ``dense.DENSE_LINES`` candidate lines (a failure cascade)
        shares them with that many forked child processes (see forked.py; only a single-threaded caller may)."""
        self.matcher = matcher
        self.sink = sink if sink is not None else ScanSink()
        self.sink.aggregator.bind(matcher.library)  # which events are anchors of the line-proximity rules
        self.max_line_bytes = max_line_bytes
        self.cancel = cancel
        self.progress = progress
        self.helpers = helpers if can_fork() else 0
        self.line_cache = line_cache  # readings of lines seen in an earlier scan of this document
        if line_cache is not None:
            line_cache.bind(matcher)
        self._share: DenseShare | None = None  # a dense buffer helpers are reading
        self._wrap: WrapWidths | None = None  # the widths the current file's lines may be wrapped at

    def scan(self, source: Source) -> FileSummary:
        summary = FileSummary(path=source.name, rank_from_name=rank_from_path(source.name))
        self.sink.begin(summary)
        # A segment of a file (a parallel scan's) is joined as the whole file would be: by its head's widths.
        self._wrap = _head_wrap(source.path) if source.offset and source.path is not None else None
        stream = source.open()
        try:
            self._scan_stream(stream, source.name, summary, source.length or source.size)
        except OSError as exc:
            summary.error = f"cannot read {source.name}: {exc.strerror or exc}"
        finally:
            if source.stream is None:
                stream.close()
        return summary

    def _scan_stream(self, stream: ByteStream, name: str, summary: FileSummary, size_hint: int = 0) -> None:
        line_base = 1  # number of the first line in the current buffer
        first = True
        last: tuple[Buffer, int] | None = None
        # Bytes from the start of the last progress line to the end of what was read: the stream's last buffer may
        # hold only its final bytes (a file that grew while read, text longer in UTF-8 than its size hint).
        after_progress: int | None = None
        try:
            for buf, limit in read_chunks(stream, summary, self.max_line_bytes, size_hint, self.cancel,
                                          self.progress):
                if has_escapes(buf, limit):  # colours and CRLFs would split keywords and line ends
                    buf = without_escapes(buf[:limit])
                    limit = len(buf)
                if first:
                    if self._wrap is None:
                        self._wrap = wrap_widths(buf[: min(limit, SAMPLE_BYTES)])
                    sample_ranks(buf[: min(limit, SAMPLE_BYTES)], summary)
                    note_first_time(buf[: min(limit, SAMPLE_BYTES)], summary)
                    first = False
                counted = self._scan_buffer(buf, limit, line_base, name, summary.rank_from_name)
                last = (buf, limit)
                # Newlines before the last candidate line were counted to number it; the rest are counted here.
                start, number = counted if counted is not None else (0, line_base)
                line_base = number + count_newlines(buf, start, limit)
                note_last_line(buf, limit, line_base, summary)
                found = note_progress(buf, limit, line_base, summary)
                if found is not None:
                    after_progress = found
                elif after_progress is not None:
                    after_progress += limit
        finally:  # also after a read error: what was found and counted before it is kept
            if self._share is not None:
                self._join_share(name)
            summary.lines = line_base - 1
            if last is not None:
                sample_tail_ranks(*last, summary)
            if after_progress is not None and after_progress > PROGRESS_TAIL_BYTES:
                summary.progress_line = 0  # progress long before the end says nothing of how the stream ended

    def _scan_buffer(self, buf: Buffer, limit: int, line_base: int, name: str,
                     name_rank: int | None) -> tuple[int, int] | None:
        """Read the candidate lines of ``buf[:limit]``, whose first line has number ``line_base``. Returns the
        start and number of the last candidate line (None without any), so the caller need not count the
        newlines before it again."""
        # One entry per candidate line (its start, end and keywords), none per occurrence (prefilter.py); what
        # follows limit is the next chunk's (or stale).
        lines, ends = self.matcher.index.line_hits(buf, limit)
        if not lines:
            return None
        joined = self._join_continuations(buf, limit, lines, ends)
        numbered: Lines = []
        prev_start, prev_line = 0, line_base
        for start in sorted(lines):
            prev_line += count_newlines(buf, prev_start, start)
            prev_start = start
            numbered.append((start, prev_line))
        read = functools.partial(self._read_lines, ends=ends, keyword_ids=lines, joined=joined, name=name,
                                 name_rank=name_rank, lookback=TimeLookback())
        dense = worth_sharing(self.helpers, buf, numbered, ends, self.line_cache)
        if dense and self._share is not None:
            self._join_share(name)  # one dense buffer at a time
        if self._share is not None:  # helpers are reading a dense buffer: this one's lines are merged after it
            self._share.read_later(buf, numbered, read)
        elif dense:
            self.matcher.compile_for(set().union(*lines.values()))  # once here rather than in every process
            self._share = DenseShare.start(buf, limit, numbered, read, self.matcher, self.helpers)
        else:
            read(buf, numbered, self.sink)
        return numbered[-1]

    def _join_continuations(self, buf: Buffer, limit: int, lines: dict[int, list[int]],
                            ends: dict[int, int]) -> dict[int, bytes]:
        """Candidate lines that are pieces of a longer logical line (continuation.py) become that line: read from
        its first piece (whose number it keeps), with its pieces' bytes joined. Returns the joined bytes by start."""
        joined: dict[int, bytes] = {}
        for start in list(lines):
            if start in joined or start not in lines:
                continue  # a logical line already read, or a piece of one
            end = ends[start]
            if buf[start] == 0x5B and (end + 1 >= limit or buf[end + 1] == 0x5B):
                continue  # a prefixed line before a prefixed line: nearly every line of a cascade
            wrap = self._wrap or USUAL_WRAP
            if stands_alone(buf, start, end, limit, wrap):
                continue
            first, last, text = logical_line(buf, start, end, limit, wrap)
            if text is None:
                continue
            ids = lines.pop(start)
            if first in joined:  # another piece of the same logical line was a candidate too
                lines[first].extend(ids)
                continue
            # The keywords of the joined text: a keyword cut by the break is found again.
            lines[first] = [*self.matcher.index.keyword_ids(text), *ids, *lines.get(first, ())]
            ends[first] = last
            joined[first] = text
        return joined

    def _join_share(self, name: str) -> None:
        share, self._share = self._share, None
        assert share is not None
        share.join(self.sink, name, self._adopt_timeouts)

    def _adopt_timeouts(self, timeouts: list[PatternTimeout]) -> None:
        """Patterns a helper switched off are switched off here too; readings made before then go."""
        if self.matcher.adopt_timeouts(timeouts) and self.line_cache is not None:
            self.line_cache.bind(self.matcher)

    def _read_lines(self, buf: Buffer, piece: Lines, sink: LineSink, *, ends: dict[int, int],
                    keyword_ids: dict[int, list[int]], joined: dict[int, bytes], name: str, name_rank: int | None,
                    lookback: TimeLookback) -> None:
        """Read candidate lines of one buffer into ``sink``: ``piece`` holds (start, number) of each."""
        for start, line_no in piece:
            raw: Buffer = joined[start] if joined and start in joined else buf[start:ends[start]]
            self._line(buf, start, raw, line_no, keyword_ids[start], name, name_rank, sink, lookback)

    def _line(self, buf: Buffer, start: int, raw: Buffer, line_no: int, keyword_ids: list[int], name: str,
              name_rank: int | None, sink: LineSink, lookback: TimeLookback) -> None:
        if len(raw) > self.max_line_bytes:
            sink.line_cut()
        cache = self.line_cache
        if cache is None or len(raw) > MAX_CACHED_LINE_BYTES:
            reading = self._read(raw, line_no, keyword_ids, name)
        else:
            key = bytes(raw)
            cached = cache.get(key)
            if cached is None:
                reading = self._read(raw, line_no, keyword_ids, name)
                cache.bind(self.matcher)  # a pattern switched off during this reading: older readings go
                cache.put(key, reading)
            else:
                reading = cached
        text, context = reading.text, reading.context
        rank = context.best_rank
        if rank is not None:
            sink.rank_seen(rank)
        if reading.signature_index is not None and is_frame_source(buf, start):
            return  # a traceback frame's source line quoting a message, not the failure (frame_source.py)
        if reading.signature_index is None:
            first_suspect, first_level = self.matcher.first_suspect_id, self.matcher.first_level_id
            if any(first_suspect <= k < first_level for k in keyword_ids):
                self._suspect(text, reading.message, context, name, line_no, name_rank, sink,
                              quoted_source=is_frame_source(buf, start))
            elif context.level in ("E", "F") and any(k >= first_level for k in keyword_ids):
                self._suspect(text, reading.message, context, name, line_no, name_rank, sink,
                              reason="an error-level record no signature describes")
            return
        lookback.remember(start, context)
        time = context.time
        if time is None:  # an earlier line's stamp is a lower bound for this one
            time = lookback.inferred_time(buf, start, line_no, context)
        sig = self.matcher.signatures[reading.signature_index]
        sink.event(Event(
            signature_id=sig.id, title=sig.title, category=sig.category, role_prior=sig.role,
            priority=sig.priority, file=name, line=line_no, text=text[:KEPT_TEXT_CHARS],
            message=reading.event_message, fields=dict(reading.fields), rank=context.rank,
            local_rank=context.local_rank, host=context.host, pid=context.pid, time=time,
            level=context.level or ("W" if "NCCL WARN" in reading.message else None), role=sig.role,
        ))

    def _read(self, raw: Buffer, line_no: int, keyword_ids: list[int], name: str) -> LineReading:
        """What the line's bytes alone determine (see lines/cache.py)."""
        return read_line(raw, self.matcher, keyword_ids, self.max_line_bytes, f"{name}:{line_no}")

    @staticmethod
    def _suspect(text: str, message: str, context: LineContext, name: str, line_no: int, name_rank: int | None,
                 sink: LineSink, reason: str = "error words on a line no signature describes",
                 quoted_source: bool = False) -> None:
        slot = sink.suspect_slot(name)
        if slot is None:
            return
        stripped = message.strip()  # behind its prefixes ("ERROR 09-01 02:20:44 [engine.py:458]   File ...")
        if not stripped or stripped.startswith(("File \"", "^")):
            return
        score = 1.0
        if context.level in ("E", "F") or "Error" in text or "Exception" in text or "FATAL" in text:
            score += 1.0
        if "Traceback" in text:
            score -= 0.5
        if quoted_source:
            reason = "a traceback frame's source line"
        if quoted_source or _STACK_HEADER.match(stripped):
            score -= 1.5  # where a stack or a statement is, not what failed: the lines that say what rank first
        if "panic" in text.lower() or "fatal" in text.lower():
            score += 1.0
        rank = context.best_rank
        if rank is None:
            rank = name_rank
        level = context.level
        if level is None and (nccl := _NCCL_LEVEL.match(stripped)) is not None:
            level = _NCCL_LEVELS[nccl[1]]  # NCCL's own level word after its prefix (pastes often drop host:pid:tid)
        elif level is None and PYTHON_WARNING.search(text) is not None:
            level = "W"  # the warnings module's "file.py:12: UserWarning: ..." is a warning, whatever its words
        elif level in (None, "E", "W") and (inner := _RELOGGED_LEVEL.search(text)) is not None:
            level = inner[1][:1]
        sink.suspect(Suspect(file=name, line=line_no, text=text[:KEPT_TEXT_CHARS], score=score,
                             reason=reason, rank=rank, level=level),
                     slot)


def _head_wrap(path: Path) -> WrapWidths:
    """The wrap widths of a file's head (continuation.wrap_widths), for a scan that starts inside the file."""
    try:
        with open(path, "rb") as stream:
            head = stream.read(SAMPLE_BYTES)
    except OSError:
        return USUAL_WRAP
    return wrap_widths(without_escapes(head) if has_escapes(head, len(head)) else head)
