"""Work-done progress for long work (``$/progress``) and the client's cancel turned into the engine's.

The engine reports progress from a worker thread; reports are throttled there and handed to the event
loop, which is the only thread that writes to the client. Cancelling the progress in the client sets the
same ``threading.Event`` the engine's ``cancel`` callback polls.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING

from lsprotocol.types import ProgressToken, WorkDoneProgressBegin, WorkDoneProgressEnd, WorkDoneProgressReport

if TYPE_CHECKING:
    from .server import FaultlineServer

logger = logging.getLogger(__name__)
CREATE_TIMEOUT_S = 5.0


class WorkProgress:
    """One progress bar in the client for one piece of work; silent when the client has none."""

    def __init__(self, server: FaultlineServer, title: str, cancel: threading.Event,
                 token: ProgressToken | None = None, min_interval_s: float = 0.2) -> None:
        self._server = server
        self._title = title
        self._cancel = cancel
        self._token = token
        self._min_interval_s = min_interval_s
        self._last_sent = 0.0
        self._last_percentage: int | None = -1
        self._loop: asyncio.AbstractEventLoop | None = None
        self._active = False

    async def begin(self) -> None:
        self._loop = asyncio.get_running_loop()
        progress = self._server.work_done_progress
        if self._token is None:
            if not self._server.client.work_done_progress:
                return
            token = f"faultline-{uuid.uuid4()}"
            try:
                await asyncio.wait_for(progress.create_async(token), CREATE_TIMEOUT_S)
            except Exception as error:  # a client that refuses or ignores the request gets no progress
                logger.debug("no progress bar: %s", error)
                return
            self._token = token
        progress.begin(self._token, WorkDoneProgressBegin(title=self._title, cancellable=True, percentage=0))
        self._active = True
        future: Future[object] | None = progress.tokens.get(self._token)
        if future is not None:
            future.add_done_callback(lambda f: self._cancel.set() if f.cancelled() else None)

    def report(self, fraction: float, message: str) -> None:
        """Called from any thread; sends at most one report per ``min_interval_s`` and per percent (a negative
        ``fraction``: no share is known, as for a compressed input; the report carries only the message)."""
        if not self._active or self._loop is None:
            return
        percentage = max(0, min(100, int(fraction * 100))) if fraction >= 0 else None
        now = time.monotonic()
        if (percentage is not None and percentage == self._last_percentage) or (
                now - self._last_sent < self._min_interval_s and (percentage is None or percentage < 100)):
            return
        self._last_sent, self._last_percentage = now, percentage
        self._loop.call_soon_threadsafe(self._send_report, percentage, message)

    def _send_report(self, percentage: int | None, message: str) -> None:
        if self._active and self._token is not None:
            self._server.work_done_progress.report(
                self._token, WorkDoneProgressReport(message=message, percentage=percentage, cancellable=True))

    def end(self, message: str) -> None:
        """Called on the event loop thread when the work is over (done, failed or cancelled)."""
        if not self._active or self._token is None:
            return
        self._active = False
        self._server.work_done_progress.end(self._token, WorkDoneProgressEnd(message=message))
        self._server.work_done_progress.tokens.pop(self._token, None)
