"""Find, in a large block of bytes, every occurrence of a set of literal keywords — fast.

This is what keeps a gigabyte of healthy step logging cheap: only lines holding a keyword are decoded
and matched against full patterns. Hyperscan (a multi-literal SIMD matcher) does the work when it is
installed; a pure-Python fallback (``bytes.find`` per keyword) gives the same answers, slower.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import ModuleType

_hs: ModuleType | None
try:  # pragma: no cover - import guard
    import hyperscan as _hs
except ImportError:  # pragma: no cover - platforms without wheels
    _hs = None


class KeywordIndex:
    """Literal multi-keyword search over byte buffers. ``scan`` returns (end offset, keyword id) pairs."""

    def __init__(self, keywords: Sequence[bytes], use_hyperscan: bool = True) -> None:
        if not keywords:
            raise ValueError("a keyword index needs at least one keyword")
        self.keywords = list(keywords)
        self.engine = "python"
        self._db = None
        self._local = threading.local()  # hyperscan scratch space is per thread
        if use_hyperscan and _hs is not None:
            db = _hs.Database(mode=_hs.HS_MODE_BLOCK)
            db.compile(expressions=self.keywords, ids=list(range(len(self.keywords))),
                       elements=len(self.keywords), flags=[0] * len(self.keywords), literal=True)
            self._db = db
            self.engine = "hyperscan"

    def scan(self, buffer: bytes | bytearray, end: int | None = None) -> list[tuple[int, int]]:
        """Every keyword occurrence in ``buffer[:end]`` (all of it when ``end`` is None)."""
        hits: list[tuple[int, int]] = []
        if end is None:
            end = len(buffer)
        if self._db is not None:
            append = hits.append

            def on_match(kw_id: int, _start: int, match_end: int, _flags: int, _ctx: object) -> None:
                append((match_end, kw_id))

            scratch = getattr(self._local, "scratch", None)
            if scratch is None:
                scratch = self._local.scratch = _hs.Scratch(self._db)  # type: ignore[union-attr]
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
