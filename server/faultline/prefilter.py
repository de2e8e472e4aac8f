"""Find, in a large block of bytes, every occurrence of a set of literal keywords — fast.

This is what keeps a gigabyte of healthy step logging cheap: only lines holding a keyword are decoded
and matched against full patterns. Hyperscan (a multi-literal SIMD matcher) does the work when it is
installed; a pure-Python fallback (``bytes.find`` per keyword) gives the same answers, slower.

The scanner asks for :meth:`KeywordIndex.line_hits`: the lines that hold a keyword, each once with the set of
its keywords. Nothing is kept per occurrence, so a line that says ``Error:`` a hundred thousand times costs one
entry, not a hundred thousand (an 8 MB file of such lines held 280 MB of hit tuples). :meth:`KeywordIndex.scan`
(every occurrence) stays for tools and tests.

A keyword that begins with a newline is looked for at the start of a line: after a newline, and at the start of
the buffer, which the scanner always begins at the start of a line. Its line is the one after the newline.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import ModuleType

LineHits = tuple[dict[int, list[int]], dict[int, int]]  # line start -> its keyword ids; line start -> its end

_hs: ModuleType | None
try:  # pragma: no cover - import guard
    import hyperscan as _hs
except ImportError:  # pragma: no cover - platforms without wheels
    _hs = None


class KeywordIndex:
    """Literal multi-keyword search over byte buffers: the lines that hold keywords (``line_hits``), or every
    occurrence as (end offset, keyword id) pairs (``scan``)."""

    def __init__(self, keywords: Sequence[bytes], use_hyperscan: bool = True) -> None:
        if not keywords:
            raise ValueError("a keyword index needs at least one keyword")
        self.keywords = list(keywords)
        # (id, the keyword without its newline) of the keywords that begin a line (module docstring)
        self._line_heads = [(i, k[1:]) for i, k in enumerate(self.keywords) if k.startswith(b"\n") and len(k) > 1]
        self.engine = "python"
        self._db = None
        self._local = threading.local()  # hyperscan scratch space is per thread
        if use_hyperscan and _hs is not None:
            db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
            db.compile(expressions=self.keywords, ids=list(range(len(self.keywords))),
                       elements=len(self.keywords), flags=[0] * len(self.keywords), literal=True)
            self._db = db
            self.engine = "hyperscan"

    def _scratch(self) -> object:
        """This thread's hyperscan scratch space (one per thread; made on first use)."""
        scratch = getattr(self._local, "scratch", None)
        if scratch is None:
            scratch = self._local.scratch = _hs.Scratch(self._db)  # type: ignore[union-attr]
        return scratch

    def scan(self, buffer: bytes | bytearray, end: int | None = None) -> list[tuple[int, int]]:
        """Every keyword occurrence in ``buffer[:end]`` (all of it when ``end`` is None)."""
        hits: list[tuple[int, int]] = []
        if end is None:
            end = len(buffer)
        if self._db is not None:
            append = hits.append

            def on_match(kw_id: int, _start: int, match_end: int, _flags: int, _ctx: object) -> None:
                append((match_end, kw_id))

            scratch = self._scratch()
            self._db.scan(memoryview(buffer)[:end], match_event_handler=on_match, scratch=scratch)
            return hits
        for kw_id, keyword in enumerate(self.keywords):
            start = buffer.find(keyword, 0, end)
            size = len(keyword)
            while start != -1:
                hits.append((start + size, kw_id))
                start = buffer.find(keyword, start + 1, end)
        hits.sort()
        return hits

    def line_hits(self, buffer: bytes | bytearray, end: int | None = None) -> LineHits:
        """The lines of ``buffer`` with a keyword occurrence that ends by ``end`` (all of it when None): by line
        start, in line order, the distinct keyword ids (in no particular order) and the line's end (its newline,
        or the buffer's end). One entry a line, whatever the number of occurrences on it."""
        if end is None:
            end = len(buffer)
        lines: dict[int, list[int]] = {}
        ends: dict[int, int] = {}
        size = len(buffer)
        find, rfind = buffer.find, buffer.rfind
        if self._db is not None:
            line_start, line_end = 0, -1  # the line of the last occurrence: [line_start, line_end)
            ids: list[int] = []
            in_order = True  # hyperscan reports by end offset; the lines' order is checked, not assumed

            def on_match(kw_id: int, _start: int, match_end: int, _flags: int, _ctx: object) -> None:
                nonlocal line_start, line_end, ids, in_order
                if not line_start < match_end <= line_end:  # the occurrence's last byte is on another line
                    start = rfind(b"\n", 0, match_end) + 1
                    known = lines.get(start)
                    if known is None:
                        if start < line_start:
                            in_order = False
                        stop = find(b"\n", match_end)
                        ids = lines[start] = []
                        ends[start] = line_end = stop if stop != -1 else size
                    else:
                        ids, line_end = known, ends[start]
                    line_start = start
                if kw_id not in ids:
                    ids.append(kw_id)

            scratch = self._scratch()
            self._db.scan(memoryview(buffer)[:end], match_event_handler=on_match, scratch=scratch)
            if not in_order:
                lines = {start: lines[start] for start in sorted(lines)}
            return self._with_first_line(buffer, end, lines, ends)
        for kw_id, keyword in enumerate(self.keywords):
            size_kw = len(keyword)
            found = find(keyword, 0, end)
            while found != -1:
                match_end = found + size_kw
                start = rfind(b"\n", 0, match_end) + 1
                stop = find(b"\n", match_end)
                stop = stop if stop != -1 else size
                known = lines.get(start)
                if known is None:
                    lines[start] = [kw_id]
                    ends[start] = stop
                elif known[-1] != kw_id:
                    known.append(kw_id)
                # Further occurrences on this line add nothing: search from its end (a keyword holds no newline).
                found = find(keyword, max(stop, found + 1), end) if stop < end else -1
        return self._with_first_line(buffer, end, {start: lines[start] for start in sorted(lines)}, ends)

    def _with_first_line(self, buffer: bytes | bytearray, end: int, lines: dict[int, list[int]],
                         ends: dict[int, int]) -> LineHits:
        """The hits, with those of the keywords that begin a line at the start of the buffer (no newline before)."""
        heads = [i for i, head in self._line_heads if buffer.startswith(head, 0, end)]
        if not heads:
            return lines, ends
        known = lines.get(0)
        if known is not None:
            known.extend(i for i in heads if i not in known)
            return lines, ends
        stop = buffer.find(b"\n")
        ends[0] = stop if stop != -1 else len(buffer)
        return {0: heads, **lines}, ends

    def contains_any(self, buffer: bytes | bytearray) -> bool:
        """Whether any keyword occurs in ``buffer``: the search stops at the first one."""
        if self._db is None:
            return any(keyword in buffer for keyword in self.keywords)
        scratch = self._scratch()
        try:  # the handler's True stops the scan at the first occurrence, which hyperscan reports by raising
            self._db.scan(buffer, match_event_handler=_stop_scan, scratch=scratch)
        except _hs.ScanTerminated:  # type: ignore[union-attr]
            return True
        return False

    def keyword_ids(self, buffer: bytes | bytearray) -> list[int]:
        """The distinct keywords that occur in ``buffer``."""
        found: set[int] = set()
        for ids in self.line_hits(buffer)[0].values():
            found.update(ids)
        return sorted(found)


def _stop_scan(_kw_id: int, _start: int, _end: int, _flags: int, _ctx: object) -> bool:
    return True
