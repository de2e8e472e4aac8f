"""The end of a session: ``exit`` after ``shutdown`` ends the process with 0 (1 without ``shutdown``), and a
client whose process has died (its ``processId`` from ``initialize`` is gone) ends the server too.

Closing stdin ends pygls' read loop by itself; ``serve`` then returns.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable

logger = logging.getLogger(__name__)
PARENT_CHECK_INTERVAL_S = 2.0


def process_alive(pid: int) -> bool:
    """True while a process with this id exists (on Windows, where signal 0 is not a probe: always True)."""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    except OSError:
        return True
    return True


def watch_parent(pid: int, on_gone: Callable[[], None],
                 interval_s: float = PARENT_CHECK_INTERVAL_S) -> asyncio.Task[None]:
    """Poll the client's process on the running loop; call ``on_gone`` once it has disappeared."""

    async def watch() -> None:
        while True:
            await asyncio.sleep(interval_s)
            if not process_alive(pid):
                logger.warning("the client process %s is gone; exiting", pid)
                on_gone()
                return

    return asyncio.get_running_loop().create_task(watch())
