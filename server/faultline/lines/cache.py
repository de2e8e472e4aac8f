"""Remember what a candidate line's bytes alone determine, so that re-diagnosing an edited document reads
each unchanged line once.

Decoding, masking, peeling prefixes and matching signatures are a pure function of a line's bytes and the
signature library, and they are nearly all of a failure cascade's cost (~50 us a line). The language
server re-diagnoses a whole document after every edit; with a cache per document, an edit costs the lines
it touched plus what depends on position (line numbers, time look-backs, the reasoning). A hit gives
exactly what reading the line again would: the cache belongs to one matcher, and is emptied when that
matcher's library changes (a pattern switched off for running too long).
"""

from __future__ import annotations

from ..matcher import LineMatcher
from .reading import LineReading

# Longer lines are read every time: a cache of 1 MiB lines would hold their texts by the hundred.
MAX_CACHED_LINE_BYTES = 4096
# One diagnosis's own cache (a document's is kept by the language server): lines of at most 4 KiB each, so
# memory stays well inside the bound.
DIAGNOSIS_CACHE_ENTRIES = 20_000


class LineCache:
    """Readings by line bytes, for one document. Emptied when full (``max_entries``) or stale.

    Also used within a single diagnosis: a 512-rank cascade repeats many lines byte for byte (``terminate
    called after throwing an instance of 'c10::DistBackendError'``, the same C++ frames), a third of them.
    """

    def __init__(self, max_entries: int = 100_000) -> None:
        self.max_entries = max_entries
        self._readings: dict[bytes, LineReading] = {}
        self._owner: tuple[int, int] | None = None  # (id of the matcher, its library generation)
        self.hits = 0
        self.misses = 0

    def bind(self, matcher: LineMatcher) -> None:
        """Use the cache with this matcher: readings made with another one, or another library state, go."""
        owner = (id(matcher), matcher.generation)
        if owner != self._owner:
            self._readings.clear()
            self._owner = owner

    def get(self, key: bytes) -> LineReading | None:
        reading = self._readings.get(key)
        if reading is None:
            self.misses += 1
        else:
            self.hits += 1
        return reading

    def put(self, key: bytes, reading: LineReading) -> None:
        if len(self._readings) >= self.max_entries:
            self._readings.clear()
        self._readings[key] = reading

    def __len__(self) -> int:
        return len(self._readings)

    def __contains__(self, key: object) -> bool:
        return key in self._readings
