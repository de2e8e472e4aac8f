"""A dense buffer (a failure cascade: thousands of candidate lines at ~50 us each) read by forked helpers.

The buffer's candidate lines are cut into blocks that helpers claim one at a time from a shared queue while
the scan reads on; the scan claims what is left when the stream ends. Each block is read into a sink of its
own (:class:`BlockSink`) and the blocks are merged in line order, so the answer is exactly that of reading
every line in place: forking can change how long a diagnosis takes, never what it says.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

from ..lines.cache import LineCache
from ..matcher import LineMatcher, PatternTimeout
from .chunks import Buffer
from .forked import ClaimQueue, ForkedCall
from .sink import BlockSink, LineSink, ScanSink

# A buffer with this many candidate lines still to read is shared with helper processes, which claim its
# lines in blocks of (at least) SHARE_BLOCK_LINES.
DENSE_LINES = 2000
SHARE_BLOCK_LINES = 256

Lines = list[tuple[int, int]]  # (line start in the buffer, line number) of candidate lines, in order
ReadLines = Callable[[Buffer, Lines, LineSink], None]  # reads those lines of a buffer into a sink


def worth_sharing(helpers: int, buf: Buffer, numbered: Lines, ends: dict[int, int],
                  line_cache: LineCache | None) -> bool:
    """Helpers pay for themselves on thousands of lines still to read; lines already in the line cache (an
    edited document's unchanged ones) cost a few microseconds each, less than forking."""
    if not helpers or len(numbered) < DENSE_LINES:
        return False
    if line_cache is None:
        return True
    unread = sum(1 for start, _ in numbered if bytes(buf[start:ends[start]]) not in line_cache)
    return unread >= DENSE_LINES


def read_apart(read: ReadLines, buf: Buffer, lines: Lines, matcher: LineMatcher) -> BlockSink:
    """The lines read into a sink of their own, with the patterns switched off meanwhile."""
    part = BlockSink()
    known = len(matcher.timeouts)
    read(buf, lines, part)
    part.timeouts = matcher.timeouts[known:]
    return part


class DenseShare:
    """A dense buffer that helpers are reading while the scan goes on, and what was read since."""

    def __init__(self, buf: bytes, blocks: list[Lines], read: ReadLines, matcher: LineMatcher, queue: ClaimQueue,
                 helpers: list[ForkedCall[dict[int, bytes]]]) -> None:
        self.buf = buf  # a copy: the chunk loop reuses its buffer
        self.blocks = blocks
        self.read = read
        self.matcher = matcher
        self.queue = queue
        self.helpers = helpers
        self.later: list[BlockSink] = []  # later buffers' lines, merged after the blocks

    @classmethod
    def start(cls, buf: Buffer, limit: int, numbered: Lines, read: ReadLines, matcher: LineMatcher,
              helpers: int) -> DenseShare:
        """Hand a dense buffer's lines to ``helpers`` forked processes, in blocks they claim one at a time.

        A failure cascade sits at the end of the log, or (in a parallel scan) in one segment among others:
        either way this process still has reading to do, and the helpers use the cores meanwhile.
        """
        size = max(SHARE_BLOCK_LINES, -(-len(numbered) // ClaimQueue.MAX_CLAIMS))
        blocks = [numbered[i:i + size] for i in range(0, len(numbered), size)]
        queue = ClaimQueue(len(blocks))
        forked: list[ForkedCall[dict[int, bytes]]] = []
        try:
            for _ in range(helpers):
                forked.append(ForkedCall(functools.partial(_helper_blocks, queue, blocks, buf, read, matcher)))
        except OSError:  # no more processes: this one claims the rest
            pass
        # One copy (bytes of a slice of a bytearray would copy twice): 8 MiB, while the helpers start reading.
        return cls(bytes(memoryview(buf)[:limit]), blocks, read, matcher, queue, forked)

    def read_later(self, buf: Buffer, lines: Lines, read: ReadLines) -> None:
        """Lines of a later buffer, read now and merged after the dense buffer's blocks."""
        self.later.append(read_apart(read, buf, lines, self.matcher))

    def join(self, sink: ScanSink, name: str, adopt: Callable[[list[PatternTimeout]], None]) -> None:
        """Claim the blocks the helpers have not, collect theirs, and merge every block in line order as if read
        here one after another, then what was read since. ``adopt`` takes each part's pattern time-outs."""
        try:
            parts = dict(_claimed_blocks(self.queue, self.blocks, self.buf, self.read, self.matcher))
        finally:
            self.queue.close()
        import pickle  # imported already by ForkedCall, when there are helpers

        for helper in self.helpers:
            pickled = helper.result() or {}  # a failed helper's blocks are missing: read below
            parts.update((index, pickle.loads(data)) for index, data in pickled.items())
        for index, block in enumerate(self.blocks):
            part = parts.get(index)
            if part is None:
                part = read_apart(self.read, self.buf, block, self.matcher)
            sink.merge(part, name)
            adopt(part.timeouts)
        for part in self.later:
            sink.merge(part, name)
            adopt(part.timeouts)


def _claimed_blocks(queue: ClaimQueue, blocks: list[Lines], buf: Buffer, read: ReadLines,
                    matcher: LineMatcher) -> Iterator[tuple[int, BlockSink]]:
    """Blocks claimed from ``queue`` until none is left, each read on its own (in a helper, or here), with
    their numbers."""
    while (index := queue.claim()) is not None:
        yield index, read_apart(read, buf, blocks[index], matcher)


def _helper_blocks(queue: ClaimQueue, blocks: list[Lines], buf: Buffer, read: ReadLines,
                   matcher: LineMatcher) -> dict[int, bytes]:
    """A helper's claimed blocks, each pickled as soon as it is read. Pickled all at once at the end (~1 MB of
    events), they kept the scan waiting 20 ms; block by block, that work is part of each claim, and the
    queue spreads it over both processes."""
    import pickle  # imported already by ForkedCall

    return {index: pickle.dumps(part, protocol=pickle.HIGHEST_PROTOCOL)
            for index, part in _claimed_blocks(queue, blocks, buf, read, matcher)}
