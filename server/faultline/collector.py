"""Pause Python's cyclic garbage collector while a diagnosis runs.

A diagnosis creates ~10^5 objects (events, line readings, report dictionaries) and no reference cycles
(tests/engine/test_cycles.py). While it runs, the collector's passes re-walk those objects again and again:
35-40 ms of a 10 MiB diagnosis, and in the language server each pass holds the GIL while a hover waits.
Reference counting still frees everything as before; only cycles (made by other code meanwhile) wait for the
first collection after the pause.

The pause is counted: overlapping diagnoses (the language server's worker threads) keep the collector off
until the last one ends, and it is then switched back on only if it was on before the first began.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0
_was_enabled = False


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    global _pauses, _was_enabled
    with _lock:
        if _pauses == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _was_enabled:
                gc.enable()
