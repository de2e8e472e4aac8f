"""Progress on a terminal for a long diagnosis: shown only once it has taken a while, and erased at the end.

A 75 KB log is diagnosed before a person could read a progress line, so nothing is printed for it; a 3 GiB
one shows "faultline: 40% scanned 1.2 of 3.0 GiB" on stderr, rewritten in place, and the line is cleared
before the report is written, so it never mixes with the report or stays behind in the scrollback.
"""

from __future__ import annotations

import time
from typing import TextIO

SHOW_AFTER_S = 0.5  # a diagnosis faster than this shows no progress at all
_CLEAR = "\r\x1b[K"


class TerminalProgress:
    """``report(fraction, message)`` as the engine's progress callback (a negative fraction: no share is known),
    then ``finish()``."""

    def __init__(self, stream: TextIO, show_after_s: float = SHOW_AFTER_S) -> None:
        self.stream = stream
        self.show_after_s = show_after_s
        self._now = time.monotonic
        self.started = self._now()
        self.shown = False
        self._last = -1.0
        self._written = 0.0

    def report(self, fraction: float, message: str) -> None:
        if self._now() - self.started < self.show_after_s:
            return
        now = self._now()
        if fraction >= 0 and fraction - self._last < 0.01 and fraction < 1.0:
            return  # at most a hundred rewrites
        if fraction < 0 and now - self._written < 0.2:
            return  # no share known (a compressed input): at most five rewrites a second
        self._last, self._written = fraction, now
        share = f"{min(fraction, 1.0) * 100:3.0f}% " if fraction >= 0 else ""
        self.stream.write(f"{_CLEAR}faultline: {share}{message}")
        self.stream.flush()
        self.shown = True

    def finish(self) -> None:
        """Erase the progress line, if one was shown."""
        if self.shown:
            self.stream.write(_CLEAR)
            self.stream.flush()
            self.shown = False


def size_text(count: int) -> str:
    """``75 KB``, ``1.2 MiB``, ``3.0 GiB``: a byte count as a person reads it."""
    if count < 1024:
        return f"{count} B"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{count} B"
