"""Stream log sources in large chunks and turn the few interesting lines into events.

Memory stays bounded whatever the input size: a source is read in chunks of ``CHUNK_BYTES``; only lines
that hold a signature keyword (or a generic error word) are decoded, attributed and matched. Line
numbers are exact (newlines are counted in every chunk); a line longer than ``max_line_bytes`` keeps its
number but only its head is matched, and the summary says how many lines were cut.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ..inputs import ByteStream, Source
from ..lines.cache import MAX_CACHED_LINE_BYTES, LineCache, LineReading
from ..lines.normalize import normalize_line
from ..lines.prefixes import parse_line, rank_from_path
from ..masking import mask_secrets
from ..matcher import LineMatcher, PatternTimeout, fill_message
from ..model import Event, FileSummary, LineContext, ScanOutput, Suspect, Timestamp
from .chunks import CHUNK_BYTES, SAMPLE_BYTES, Buffer, Cancelled, count_newlines, last_visible_byte
from .forked import ClaimQueue, ForkedCall, can_fork
from .lookback import Lookback, lookback_time

DEFAULT_MAX_LINE_BYTES = 1024 * 1024
KEPT_TEXT_CHARS = 4000
MAX_SUSPECTS_PER_FILE = 400
# A buffer with this many candidate lines still to read (a failure cascade: ~50 us a line) is shared with
# helper processes, which claim its lines in blocks of (at least) SHARE_BLOCK_LINES.
DENSE_LINES = 2000
SHARE_BLOCK_LINES = 256

# The rank-naming prefixes of prefixes.py, at line starts: [rankN]:, [defaultN]:, srun " N: ", OpenMPI.
_RANK_PREFIXES = re.compile(
    rb"(?m)^(?:\[[A-Za-z_]{1,40}\]:)?(?:\[rank(\d{1,6})\]:|\[[A-Za-z_]{1,40}?(\d{1,6})\]:|"
    rb" *(\d{1,6}): |\[\d+,(\d{1,6})\]<std)")


class Scanner:
    """Scans sources one after another, accumulating events, suspects and file summaries."""

    def __init__(self, matcher: LineMatcher, *, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
                 cancel: Callable[[], bool] | None = None,
                 progress: Callable[[int], None] | None = None, helpers: int = 0,
                 line_cache: LineCache | None = None) -> None:
        """``helpers`` > 0: a buffer with at least ``DENSE_LINES`` candidate lines (a failure cascade) shares
        them with that many forked child processes (see forked.py; only a single-threaded caller may)."""
        self.matcher = matcher
        self.max_line_bytes = max_line_bytes
        self.cancel = cancel
        self.progress = progress
        self.helpers = helpers if can_fork() else 0
        self.line_cache = line_cache  # readings of lines seen in an earlier scan of this document
        if line_cache is not None:
            line_cache.bind(matcher)
        self.out = ScanOutput()
        self._order = 0
        self._suspects_per_file: dict[str, int] = {}
        self._suspect_attempts: list[int] | None = None  # in a block read apart: each suspect's place in the cap
        self._share: _DenseShare | None = None  # a dense buffer helpers are reading

    def scan(self, source: Source) -> FileSummary:
        summary = FileSummary(path=source.name, rank_from_name=rank_from_path(source.name))
        self.out.files.append(summary)
        stream = source.open()
        try:
            self._scan_stream(stream, source.name, summary, source.length or source.size)
        except OSError as exc:
            summary.error = f"cannot read {source.name}: {exc.strerror or exc}"
        finally:
            if source.stream is None:
                stream.close()
        return summary

    # -- chunk loop -------------------------------------------------------------------------------
    def _chunks(self, stream: ByteStream, summary: FileSummary, size_hint: int = 0) -> Iterator[tuple[Buffer, int]]:
        """Yield (buffer, limit) pairs: ``buffer[:limit]`` holds whole lines only (no copy is made of it).

        One buffer is reused for the whole stream (``readinto``: no fresh 8 MiB object, page-faulted in, per
        chunk, and no copy to join a chunk to the partial line before it). A yielded buffer is valid until the
        next one is asked for; after the last, it is not written again. A line longer than
        ``max_line_bytes`` is yielded as its head, with a newline added, and the rest of it is skipped; the
        caller counts it as one line.
        """
        # bytearray(n) zero-fills all n bytes: a small file gets a buffer of its own size (a 1 MiB rank file
        # with a 9 MiB buffer paid for 8 MiB of zeroing); a file that grows while read is read in more chunks.
        chunk = min(CHUNK_BYTES, size_hint + 1) if size_hint > 0 else CHUNK_BYTES
        buf = bytearray(chunk + self.max_line_bytes + 1)
        view = memoryview(buf)
        have = 0  # bytes of a partial line kept at the start of buf
        skipping_long_line = False
        while True:
            if self.cancel is not None and self.cancel():
                raise Cancelled()
            count = stream.readinto(view[have:have + chunk])
            if not count:
                break
            summary.bytes += count
            if self.progress is not None:
                self.progress(count)
            if skipping_long_line:
                newline = buf.find(b"\n", 0, count)
                if newline == -1:
                    continue
                buf[0:count - newline - 1] = view[newline + 1:count]
                count -= newline + 1
                skipping_long_line = False
            total = have + count
            cut = buf.rfind(b"\n", 0, total)
            if cut == -1:
                if total > self.max_line_bytes:
                    head = bytes(view[:self.max_line_bytes]) + b"\n"
                    yield head, len(head)
                    summary.truncated_lines += 1
                    have = 0
                    skipping_long_line = True
                else:
                    have = total
                continue
            yield buf, cut + 1
            have = total - cut - 1
            if have > self.max_line_bytes:
                head = bytes(view[cut + 1:cut + 1 + self.max_line_bytes]) + b"\n"
                yield head, len(head)
                summary.truncated_lines += 1
                have = 0
                skipping_long_line = True
            elif have:
                buf[0:have] = view[cut + 1:total]
        if have:
            tail = bytes(view[:have]) + b"\n"
            yield tail, len(tail)

    def _scan_stream(self, stream: ByteStream, name: str, summary: FileSummary, size_hint: int = 0) -> None:
        line_base = 1  # number of the first line in the current buffer
        first = True
        last: tuple[Buffer, int] | None = None
        try:
            for buf, limit in self._chunks(stream, summary, size_hint):
                if first:
                    self._sample_ranks(buf[: min(limit, SAMPLE_BYTES)], summary)
                    first = False
                counted = self._scan_buffer(buf, limit, line_base, name, summary)
                last = (buf, limit)
                # Newlines before the last candidate line were counted to number it; the rest are counted here.
                start, number = counted if counted is not None else (0, line_base)
                line_base = number + count_newlines(buf, start, limit)
                self._note_last_line(buf, limit, line_base, summary)
        finally:  # also after a read error: what was found before it is kept
            if self._share is not None:
                self._join_share(name, summary)
        summary.lines = line_base - 1
        if last is not None:
            self._sample_tail_ranks(*last, summary)

    def _sample_ranks(self, sample: Buffer, summary: FileSummary) -> None:
        """Which ranks write to this file: one bytes regex over the head and tail, not a parse per line."""
        if summary.rank_from_name is not None:
            return
        for m in _RANK_PREFIXES.finditer(sample):
            value = next(g for g in m.groups() if g is not None)
            summary.ranks_seen.add(int(value))

    def _sample_tail_ranks(self, buf: Buffer, limit: int, summary: FileSummary) -> None:
        """The ranks the end of the stream (the last buffer, ``buf[:limit]``) names."""
        tail = buf[max(0, limit - SAMPLE_BYTES):limit]
        self._sample_ranks(tail[tail.find(b"\n") + 1:] if limit > SAMPLE_BYTES else tail, summary)

    @staticmethod
    def _note_last_line(buf: Buffer, limit: int, next_line: int, summary: FileSummary) -> None:
        """The last non-blank line of ``buf[:limit]`` (which line ``next_line`` follows), if it has one, as
        the stream's last line so far: a stream whose last buffer holds only blank lines (a final ``\r``
        or spaces after the last newline) keeps the one before. Runs of bytes that cannot be visible are
        passed over in C, so a buffer of blank lines costs no step per line."""
        end = limit - 1  # the final newline
        while end > 0:
            visible = last_visible_byte(buf, end)
            if visible < 0:
                return
            start = buf.rfind(b"\n", 0, visible) + 1
            stop = buf.find(b"\n", visible, limit)
            text = normalize_line(buf[start:stop], 2000)
            if text.strip():  # else an escape sequence, a rewritten line or Unicode spaces: blank after all
                summary.last_line = next_line - count_newlines(buf, start, limit)
                summary.last_text = mask_secrets(text, truncated=stop - start > 2000)
                return
            end = start - 1

    def _scan_buffer(self, buf: Buffer, limit: int, line_base: int, name: str,
                     summary: FileSummary) -> tuple[int, int] | None:
        """Read the candidate lines of ``buf[:limit]``, whose first line has number ``line_base``. Returns the
        start and number of the last candidate line (None without any), so the caller need not count the
        newlines before it again."""
        hits = self.matcher.index.scan(buf, limit)  # what follows limit is the next chunk's (or stale)
        if not hits:
            return None
        self._parsed: dict[int, LineContext] = {}  # line start -> context, for time look-backs
        self._lookbacks: dict[tuple[int | None, int | None], Lookback] = {}  # the last look-back per writer
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
        numbered: list[tuple[int, int]] = []  # (line start, line number)
        prev_start, prev_line = 0, line_base
        for start in sorted(lines):
            prev_line += count_newlines(buf, prev_start, start)
            prev_start = start
            numbered.append((start, prev_line))
        dense = self._worth_helpers(buf, numbered, ends)
        if dense and self._share is not None:
            self._join_share(name, summary)  # one dense buffer at a time
        if self._share is not None:  # helpers are reading a dense buffer: this one's lines are merged after it
            self._share.later.append(self._block_part(buf, numbered, ends, lines, name, summary))
        elif dense:
            self._share = self._start_share(buf, limit, numbered, ends, lines, name, summary)
        else:
            self._lines(buf, numbered, ends, lines, name, summary)
        return numbered[-1]

    def _start_share(self, buf: Buffer, limit: int, numbered: list[tuple[int, int]], ends: dict[int, int],
                     keyword_ids: dict[int, list[int]], name: str, summary: FileSummary) -> _DenseShare:
        """Hand a dense buffer's lines to helpers, in blocks they claim one at a time, while this process reads
        on; it claims what is left at the end of the stream (``_join_share``). A failure cascade sits at the
        end of the log, or (in a parallel scan) in one segment among others: either way this process still has
        reading to do, and the helpers use the cores meanwhile."""
        self.matcher.compile_for(set().union(*keyword_ids.values()))  # once here rather than in every process
        size = max(SHARE_BLOCK_LINES, -(-len(numbered) // ClaimQueue.MAX_CLAIMS))
        blocks = [numbered[i:i + size] for i in range(0, len(numbered), size)]
        queue = ClaimQueue(len(blocks))
        helpers: list[ForkedCall[dict[int, bytes]]] = []
        try:
            for _ in range(self.helpers):
                helpers.append(ForkedCall(functools.partial(self._helper_blocks, queue, blocks, buf, ends,
                                                            keyword_ids, name, summary)))
        except OSError:  # no more processes: this one claims the rest
            pass
        # One copy (bytes of a slice of a bytearray would copy twice): 8 MiB, while the helpers start reading.
        return _DenseShare(bytes(memoryview(buf)[:limit]), blocks, ends, keyword_ids, self._parsed, self._lookbacks,
                           queue, helpers)

    def _join_share(self, name: str, summary: FileSummary) -> None:
        """Claim the dense buffer's blocks the helpers have not, collect theirs, and merge every block in line
        order as if read here one after another, then what was read since."""
        share, self._share = self._share, None
        assert share is not None
        self._parsed, self._lookbacks = share.parsed, share.lookbacks  # that buffer's look-back state
        try:
            parts = dict(self._claimed_blocks(share.queue, share.blocks, share.buf, share.ends, share.keyword_ids,
                                              name, summary))
        finally:
            share.queue.close()
        import pickle  # imported already by ForkedCall, when there are helpers

        for helper in share.helpers:
            pickled = helper.result() or {}  # a failed helper's blocks are missing: read below
            parts.update((index, pickle.loads(data)) for index, data in pickled.items())
        for index, block in enumerate(share.blocks):
            part = parts.get(index)
            if part is None:
                part = self._block_part(share.buf, block, share.ends, share.keyword_ids, name, summary)
            self._take(part, name, summary)
        for part in share.later:
            self._take(part, name, summary)

    def _worth_helpers(self, buf: Buffer, numbered: list[tuple[int, int]], ends: dict[int, int]) -> bool:
        """Helpers pay for themselves on thousands of lines still to read; lines already in the line cache
        (an edited document's unchanged ones) cost a few microseconds each, less than forking."""
        if not self.helpers or len(numbered) < DENSE_LINES:
            return False
        cache = self.line_cache
        if cache is None:
            return True
        unread = sum(1 for start, _ in numbered if bytes(buf[start:ends[start]]) not in cache)
        return unread >= DENSE_LINES

    def _lines(self, buf: Buffer, piece: list[tuple[int, int]], ends: dict[int, int], keyword_ids: dict[int, list[int]],
               name: str, summary: FileSummary) -> None:
        for start, line_no in piece:
            self._line(buf, start, ends[start], line_no, keyword_ids[start], name, summary)

    def _claimed_blocks(self, queue: ClaimQueue, blocks: list[list[tuple[int, int]]], buf: Buffer,
                        ends: dict[int, int], keyword_ids: dict[int, list[int]], name: str,
                        summary: FileSummary) -> Iterator[tuple[int, _BlockPart]]:
        """Blocks claimed from ``queue`` until none is left, each read on its own (in a helper, or here), with
        their numbers."""
        while (index := queue.claim()) is not None:
            yield index, self._block_part(buf, blocks[index], ends, keyword_ids, name, summary)

    def _helper_blocks(self, queue: ClaimQueue, blocks: list[list[tuple[int, int]]], buf: Buffer,
                       ends: dict[int, int], keyword_ids: dict[int, list[int]], name: str,
                       summary: FileSummary) -> dict[int, bytes]:
        """A helper's ``_claimed_blocks``, each pickled as soon as it is read. Pickled all at once at the end
        (~1 MB of events), they kept the scan waiting 20 ms; block by block, that work is part of each claim,
        and the queue spreads it over both processes."""
        import pickle  # imported already by ForkedCall

        return {index: pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
                for index, part in self._claimed_blocks(queue, blocks, buf, ends, keyword_ids, name, summary)}

    def _block_part(self, buf: Buffer, block: list[tuple[int, int]], ends: dict[int, int],
                    keyword_ids: dict[int, list[int]], name: str, summary: FileSummary) -> _BlockPart:
        """One block's events and suspects, with what is needed to merge them exactly as if the block had been
        read after the ones before it (order, the per-file suspect cap, ranks, time-outs). Leaves the scan's
        output as it was: blocks are merged later, in line order (``_take``)."""
        events_before, suspects_before = len(self.out.events), len(self.out.suspects)
        order_before, truncated_before = self._order, summary.truncated_lines
        timeouts_before = len(self.matcher.timeouts)
        ranks_before = set(summary.ranks_seen)
        count_before = self._suspects_per_file.get(name)
        self._suspects_per_file[name] = 0
        self._suspect_attempts = []
        self._lines(buf, block, ends, keyword_ids, name, summary)
        part = _BlockPart(self.out.events[events_before:], self.out.suspects[suspects_before:],
                          self._suspect_attempts, self._suspects_per_file[name], summary.ranks_seen - ranks_before,
                          summary.truncated_lines - truncated_before, self.matcher.timeouts[timeouts_before:])
        del self.out.events[events_before:], self.out.suspects[suspects_before:]
        self._order, summary.truncated_lines, self._suspect_attempts = order_before, truncated_before, None
        summary.ranks_seen.intersection_update(ranks_before)
        if count_before is None:
            del self._suspects_per_file[name]
        else:
            self._suspects_per_file[name] = count_before
        return part

    def _take(self, part: _BlockPart, name: str, summary: FileSummary) -> None:
        """Merge a block read apart as if read here: suspects past this file's cap dropped, orders continued."""
        already = self._suspects_per_file.get(name, 0)
        kept = [suspect for suspect, attempt in zip(part.suspects, part.suspect_attempts, strict=True)
                if already + attempt <= MAX_SUSPECTS_PER_FILE]
        self._suspects_per_file[name] = min(MAX_SUSPECTS_PER_FILE, already + part.attempts)
        items: list[Event | Suspect] = [*part.events, *kept]
        for item in sorted(items, key=lambda item: item.order):
            self._order += 1
            item.order = self._order
        self.out.events.extend(part.events)
        self.out.suspects.extend(kept)
        summary.ranks_seen |= part.ranks_seen
        summary.truncated_lines += part.truncated_lines
        if self.matcher.adopt_timeouts(part.timeouts) and self.line_cache is not None:
            self.line_cache.bind(self.matcher)  # readings made before the pattern was switched off go

    def _line(self, buf: Buffer, start: int, end: int, line_no: int, keyword_ids: list[int], name: str,
              summary: FileSummary) -> None:
        if end - start > self.max_line_bytes:
            summary.truncated_lines += 1
        cache = self.line_cache
        if cache is None or end - start > MAX_CACHED_LINE_BYTES:
            reading = self._read(buf, start, end, line_no, keyword_ids, name)
        else:
            key = bytes(buf[start:end])
            cached = cache.get(key)
            if cached is None:
                reading = self._read(buf, start, end, line_no, keyword_ids, name)
                cache.bind(self.matcher)  # a pattern switched off during this reading: older readings go
                cache.put(key, reading)
            else:
                reading = cached
        text, context = reading.text, reading.context
        rank = context.best_rank
        if rank is not None:
            summary.ranks_seen.add(rank)
        if reading.signature_index is None:
            if any(k >= self.matcher.first_suspect_id for k in keyword_ids):
                self._suspect(text, context, name, line_no, summary)
            return
        self._parsed[start] = context
        time = context.time
        if time is None:  # an earlier line's stamp is a lower bound for this one
            earlier = lookback_time(buf, start, line_no, context, self._parsed, self._lookbacks)
            if earlier is not None:
                time = Timestamp(earlier.year, earlier.seconds, earlier.text, earlier.uptime, inferred=True)
        sig = self.matcher.signatures[reading.signature_index]
        self._order += 1
        event = Event(
            signature_id=sig.id, title=sig.title, category=sig.category, role_prior=sig.role,
            priority=sig.priority, file=name, line=line_no, text=text[:KEPT_TEXT_CHARS],
            message=reading.event_message, fields=dict(reading.fields), rank=context.rank,
            local_rank=context.local_rank, host=context.host, pid=context.pid, time=time,
            level=context.level or ("W" if "NCCL WARN" in reading.message else None), order=self._order,
            role=sig.role,
        )
        self.out.events.append(event)

    def _read(self, buf: Buffer, start: int, end: int, line_no: int, keyword_ids: list[int],
              name: str) -> LineReading:
        """What the line's bytes alone determine (see lines/cache.py)."""
        # Masked before anything else sees it: captured fields and messages inherit the masking.
        # A line cut at max_line_bytes (here or by _chunks, which keeps exactly that many bytes) may end in the
        # head of a secret too short for its rule: truncated=True masks that trailing fragment too.
        text = mask_secrets(normalize_line(buf[start:end], self.max_line_bytes),
                            truncated=end - start >= self.max_line_bytes)
        context, message = parse_line(text)
        signature_indexes = self.matcher.signatures_for(keyword_ids)
        match = self.matcher.match(message, signature_indexes, f"{name}:{line_no}") if signature_indexes else None
        if match is None:
            return LineReading(text, context, message, None, {}, "")
        fields = {k: v[:500] for k, v in match.fields.items()}
        return LineReading(text, context, message, match.index, fields, fill_message(match.signature.message, fields))

    def _suspect(self, text: str, context: LineContext, name: str, line_no: int,
                 summary: FileSummary) -> None:
        count = self._suspects_per_file.get(name, 0)
        if count >= MAX_SUSPECTS_PER_FILE:
            return
        self._suspects_per_file[name] = count + 1
        attempt = count + 1
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
        if self._suspect_attempts is not None:
            self._suspect_attempts.append(attempt)


@dataclass
class _DenseShare:
    """A dense buffer that helpers are reading while the scan goes on, and what was read since."""

    buf: bytes  # a copy: the chunk loop reuses its buffer
    blocks: list[list[tuple[int, int]]]
    ends: dict[int, int]
    keyword_ids: dict[int, list[int]]
    parsed: dict[int, LineContext]
    lookbacks: dict[tuple[int | None, int | None], Lookback]
    queue: ClaimQueue
    helpers: list[ForkedCall[dict[int, bytes]]]
    later: list[_BlockPart] = field(default_factory=list)  # later buffers' lines, merged after the blocks


@dataclass
class _BlockPart:
    """What was found in one block of a dense buffer's lines, read apart from the blocks before it."""

    events: list[Event]
    suspects: list[Suspect]
    suspect_attempts: list[int]  # per suspect: its place among the block's attempts against the file's cap
    attempts: int
    ranks_seen: set[int]
    truncated_lines: int
    timeouts: list[PatternTimeout]
