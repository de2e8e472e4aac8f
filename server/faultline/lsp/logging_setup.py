"""Logging for the server: stderr only (stdout carries the protocol), forwarded to the client too.

Records at or above the configured level also go to the client as ``window/logMessage``. pygls is kept
at WARNING because it logs every message body at INFO (whole documents, and it would feed on itself).
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading

from lsprotocol.types import LogMessageParams, MessageType
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer

LEVELS = {"error": logging.ERROR, "warning": logging.WARNING, "info": logging.INFO, "debug": logging.DEBUG}
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure_stderr_logging(level: str) -> logging.Handler:
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(handler)
    for name in ("pygls.protocol.json_rpc", "pygls.server"):
        logging.getLogger(name).addFilter(_OneLineProtocolErrors())
    set_level(level)
    return handler


class _OneLineProtocolErrors(logging.Filter):
    """pygls logs a traceback for every request error, including the ones it answers to the client on
    purpose (invalid params, cancelled requests) and for unparsable input. Those become one line (or are
    dropped where the server already logs the answer); real crashes keep their traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if isinstance(error, JsonRpcException) and message.startswith(("Exception occurred for message",
                                                                       "Unable to handle message")):
            return False
        if message.startswith("Unable to deserialize message"):
            return False  # the protocol answers InvalidParams and logs why, in one line
        if isinstance(error, (JsonRpcException, ValueError)):
            record.msg, record.args = f"{message}: {error}", ()
            record.exc_info, record.exc_text = None, None
        return True


def set_level(level: str) -> None:
    logging.getLogger().setLevel(LEVELS.get(level, logging.INFO))
    logging.getLogger("pygls").setLevel(logging.WARNING)


class ClientLogHandler(logging.Handler):
    """Sends log records to the client; safe to call from any thread, never re-entrant."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._server = server
        self._loop = loop
        self._local = threading.local()
        self.enabled = True
        self.setFormatter(logging.Formatter("%(name)s: %(message)s"))  # the message type carries the level

    def emit(self, record: logging.LogRecord) -> None:
        if not self.enabled or getattr(self._local, "sending", False):
            return
        try:
            message = self.format(record)
        except Exception:  # a record that cannot be formatted is dropped, as logging itself would
            return
        kind = (MessageType.Error if record.levelno >= logging.ERROR else MessageType.Warning
                if record.levelno >= logging.WARNING else MessageType.Info if record.levelno >= logging.INFO
                else MessageType.Log)
        try:
            self._loop.call_soon_threadsafe(self._send, kind, message)
        except RuntimeError:  # the loop is closed: the session is over
            self.enabled = False

    def _send(self, kind: MessageType, message: str) -> None:
        if not self.enabled:
            return
        self._local.sending = True
        try:
            self._server.window_log_message(LogMessageParams(type=kind, message=message))
        finally:
            self._local.sending = False
