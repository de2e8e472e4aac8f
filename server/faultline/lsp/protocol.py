"""The JSON-RPC protocol with two repairs to pygls, and the time each message's handling started.

A request whose params do not fit the method gets an error reply: pygls parses a message before
dispatching it and, when the params of a request fail to parse, logs the problem and sends nothing, so
the client would wait forever. Here the request is answered with ``InvalidParams`` (naming the method
and the first problem) before the message is dropped.

``$/cancelRequest`` reaches long-running commands: pygls runs a command handler as a separate task and
only cancels the request's own future, so the handler would never learn it should stop. Handlers
register a listener under their request id; a cancel calls it.

``message_started``: an edit's debounce counts from when its message reached the handlers, so that the
time pygls takes to apply it to a large document is part of the wait, not added to it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from cattrs import transform_error
from cattrs.errors import ClassValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)


class FaultlineProtocol(LanguageServerProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cancel_listeners: dict[int | str, Callable[[], None]] = {}
        # When the message being handled reached its handler chain (event-loop time): an edit's debounce
        # counts from there, not from after pygls has applied the edit (~10-30 ms for a 30 MB document).
        self.message_started: float | None = None

    def handle_message(self, message: Any) -> None:
        self.message_started = asyncio.get_running_loop().time()
        super().handle_message(message)

    def _handle_cancel_notification(self, msg_id: int | str) -> None:
        listener = self.cancel_listeners.pop(msg_id, None)
        if listener is not None:
            listener()
        super()._handle_cancel_notification(msg_id)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                detail = _describe(error.__cause__) or error.message
                reply = JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail}")
                logger.warning("request %s: %s", data["id"], reply.message)
                self._send_response(data["id"], None, reply.to_response_error())
            raise


def _describe(cause: BaseException | None) -> str:
    """What was wrong with the params, e.g. ``invalid value for type, expected int @ $.params.position.line``."""
    if isinstance(cause, ClassValidationError):
        return "; ".join(transform_error(cause)[:3])
    return str(cause).splitlines()[0] if cause is not None and str(cause) else ""
