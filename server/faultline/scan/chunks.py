"""The chunk loop: a stream read in large chunks of whole lines, with the newline counts, the rank sample and
the last visible line that every buffer needs, and the ``Cancelled`` signal a caller stops it with."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ..inputs import ByteStream
from ..lines.normalize import normalize_line
from ..lines.prefixes import line_start_ranks, parse_line
from ..lines.reading import DISPLAY_CHARS, display_text
from ..model import FileSummary

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


def read_chunks(stream: ByteStream, summary: FileSummary, max_line_bytes: int, size_hint: int = 0,
                cancel: Callable[[], bool] | None = None,
                progress: Callable[[int], None] | None = None) -> Iterator[tuple[Buffer, int]]:
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
    buf = bytearray(chunk + max_line_bytes + 1)
    view = memoryview(buf)
    have = 0  # bytes of a partial line kept at the start of buf
    skipping_long_line = False
    failed: OSError | None = None  # a read error: the lines before it are still yielded, then it is raised
    while True:
        if cancel is not None and cancel():
            raise Cancelled()
        try:
            count = stream.readinto(view[have:have + chunk])
        except OSError as exc:
            failed, count = exc, 0
        if not count:
            break
        summary.bytes += count
        if progress is not None:
            progress(count)
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
            if total > max_line_bytes:
                head = bytes(view[:max_line_bytes]) + b"\n"
                yield head, len(head)
                summary.truncated_lines += 1
                have = 0
                skipping_long_line = True
            else:
                have = total
            continue
        yield buf, cut + 1
        have = total - cut - 1
        if have > max_line_bytes:
            head = bytes(view[cut + 1:cut + 1 + max_line_bytes]) + b"\n"
            yield head, len(head)
            summary.truncated_lines += 1
            have = 0
            skipping_long_line = True
        elif have:
            buf[0:have] = view[cut + 1:total]
    if have:
        tail = bytes(view[:have]) + b"\n"
        yield tail, len(tail)
    if failed is not None:
        raise failed


FIRST_TIME_LINES = 200  # how far into a stream its first time stamp is looked for


def note_first_time(sample: Buffer, summary: FileSummary) -> None:
    """The time stamp of the first stamped line among the first lines of a stream: when the run (or the log)
    began, to say how long it had been going when it failed."""
    for raw in bytes(sample).split(b"\n", FIRST_TIME_LINES)[:FIRST_TIME_LINES]:
        if raw.strip():
            context, _message = parse_line(normalize_line(raw, DISPLAY_CHARS))
            if context.time is not None and not context.time.uptime:
                summary.first_time = context.time
                return


def sample_ranks(sample: Buffer, summary: FileSummary) -> None:
    """Which ranks write to this file: one bytes regex over the head and tail, not a parse per line."""
    summary.ranks_seen |= line_start_ranks(sample)


def sample_tail_ranks(buf: Buffer, limit: int, summary: FileSummary) -> None:
    """The ranks the end of the stream (the last buffer, ``buf[:limit]``) names."""
    tail = buf[max(0, limit - SAMPLE_BYTES):limit]
    sample_ranks(tail[tail.find(b"\n") + 1:] if limit > SAMPLE_BYTES else tail, summary)


# Lines that show a run going on or finishing: a step, iteration or epoch counter, a loss value, a progress bar
# with its rate past 0% (a bar still at 0% may be a run stuck at its start), at 0% with its count past 0 (a long
# run's first steps: "0%| | 13/63645 [") or full (100%, its rate cut off by a paste), a completion message
# (torchrun's WorkerState.SUCCEEDED, "training completed"/"done"), nccl-tests' summary of a finished test
# (src/common.cu: "# Avg bus bandwidth    : 41.69", "# Collective test concluded: all_reduce_perf").
_PROGRESS = re.compile(
    rb"(?m)(?i:\b(?:step|steps|iter|iteration|global_step|epoch)\b[ :=#\[]{0,3}\d|\bloss\b['\" :=]{1,4}-?\d"
    rb"|\b(?:training|train|fine-?tuning|job|run)(?: is)? (?:complete|completed|finished|done|succeeded)\b"
    rb"|\bfinished training\b|\btraining time\b|\b(?:samples|tokens|images|sequences)/s(?:ec(?:ond)?)?\b)"
    rb"|\b(?!0%)\d{1,3}%[^\n|]{0,40}\|[^\n]{0,200}(?:it/s|s/it)|(?<![\d.])100%\|"
    rb"|(?<![\d.])0%\|[^\n|]{0,60}\| *[1-9]\d{0,9}/\d{1,12} \["
    rb"|WorkerState\.SUCCEEDED|exited with (?:exit )?code 0\b"
    rb"|^AUTOTUNE \w{1,40}\(|AUTOTUNE benchmarking takes"
    rb"|# Avg bus bandwidth +: +\d|# Collective test concluded: ")
PROGRESS_TAIL_BYTES = 4096


def note_progress(buf: Buffer, limit: int, next_line: int, summary: FileSummary) -> int | None:
    """The last line near the end of ``buf[:limit]`` (its last ``PROGRESS_TAIL_BYTES``) that shows the run going on
    or finishing, as the evidence that lines before it did not stop the run: set as the summary's progress line,
    and how many bytes of the buffer follow its start (None: no such line). One regex over a few KiB."""
    low = max(0, limit - PROGRESS_TAIL_BYTES)
    last = -1
    end = limit
    while end > low:  # line by line from the end: a running job's last line is usually the one (no match spans lines)
        newline = buf.rfind(b"\n", low, end)
        last = max((m.start() for m in _PROGRESS.finditer(buf, newline + 1 if newline >= 0 else low, end)),
                   default=-1)
        if last >= 0 or newline < 0:
            break
        end = newline
    if last < 0:
        return None
    summary.progress_line = next_line - count_newlines(buf, last, limit)
    return limit - last


def note_last_line(buf: Buffer, limit: int, next_line: int, summary: FileSummary) -> None:
    """The last non-blank line of ``buf[:limit]`` (which line ``next_line`` follows), if it has one, as the
    stream's last line so far: a stream whose last buffer holds only blank lines (a final ``\r`` or spaces
    after the last newline) keeps the one before. Runs of bytes that cannot be visible are passed over in C,
    so a buffer of blank lines costs no step per line."""
    end = limit - 1  # the final newline
    while end > 0:
        visible = last_visible_byte(buf, end)
        if visible < 0:
            return
        start = buf.rfind(b"\n", 0, visible) + 1
        stop = buf.find(b"\n", visible, limit)
        text = display_text(buf[start:stop])
        if text.strip():  # else an escape sequence, a rewritten line or Unicode spaces: blank after all
            summary.last_line = next_line - count_newlines(buf, start, limit)
            summary.last_text = text
            return
        end = start - 1
