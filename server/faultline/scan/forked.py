"""Run a function in a forked child process and collect its (pickled) result later; share out numbered
pieces of work between a process and its forked children.

The scanner uses this to share a dense stretch of matching lines between cores: the child sees the
parent's memory as it was at the fork (the buffer, the compiled library) without copying it, works while
the parent works, and sends back only its result. A child that fails or dies returns ``None``, and the
caller does the work itself, so forking can never change an answer, only how long it takes.

Fork only from a single-threaded process (the CLI, a parallel scan's worker): a child forked from a
threaded one (the language server) could wait forever on a lock another thread held at the fork.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


def can_fork() -> bool:
    return hasattr(os, "fork") and sys.platform != "win32"


class ForkedCall(Generic[T]):
    """``function()`` running in a child; ``result()`` waits for it (``None`` when the child failed)."""

    def __init__(self, function: Callable[[], T]) -> None:
        import pickle  # only forking callers pay its import

        self._pickle = pickle
        read_end, write_end = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the child: never returns, never runs the parent's exit handlers or flushes
            code = 1
            try:
                os.close(read_end)
                payload = pickle.dumps(function(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as stream:
                    stream.write(payload)
                code = 0
            except BaseException:  # any failure: the parent does the work itself
                code = 1
            finally:
                os._exit(code)
        os.close(write_end)
        self._read_end = read_end

    def result(self) -> T | None:
        chunks = []
        with os.fdopen(self._read_end, "rb") as stream:
            while True:
                chunk = stream.read(1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
        _, status = os.waitpid(self._pid, 0)
        if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
            return None
        try:
            value: T = self._pickle.loads(b"".join(chunks))
        except Exception:  # a truncated payload: the parent does the work itself
            return None
        return value


class ClaimQueue:
    """The numbers ``0 .. count - 1``, each claimed by exactly one of the processes that read it: the one that
    made it and the children it forks afterwards. Whoever is free takes the next number, so a process slowed
    down (by another program on its core, by copy-on-write after the fork) simply takes fewer.

    A pipe, filled before the fork: every number is a 4-byte record, reads of one record from a pipe are
    atomic between processes, and an empty pipe without a writer reads as the end. At most ``MAX_CLAIMS``
    numbers, so that the filling write fits in a pipe's smallest buffer (one page) and never blocks.
    """

    MAX_CLAIMS = 1024

    def __init__(self, count: int) -> None:
        if not 0 <= count <= self.MAX_CLAIMS:
            raise ValueError(f"a claim queue holds 0 to {self.MAX_CLAIMS} numbers, not {count}")
        self._read_end, write_end = os.pipe()
        try:
            os.write(write_end, b"".join(number.to_bytes(4, "little") for number in range(count)))
        finally:
            os.close(write_end)

    def claim(self) -> int | None:
        """The next unclaimed number, or None when all are taken."""
        record = os.read(self._read_end, 4)
        return int.from_bytes(record, "little") if record else None

    def close(self) -> None:
        os.close(self._read_end)
