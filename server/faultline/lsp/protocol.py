"""The JSON-RPC protocol with one repair: a request whose params do not fit the method gets an error reply.

pygls parses a message before dispatching it; when the params of a request fail to parse it logs the
problem and sends nothing, so the client would wait forever. Here the request is answered with
``InvalidParams`` (naming the method and the first problem) before the message is dropped.
"""

from __future__ import annotations

import logging
from typing import Any

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

logger = logging.getLogger(__name__)


class FaultlineProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as error:
            if isinstance(data, dict) and "id" in data and "method" in data:
                cause = error.__cause__
                detail = str(cause).splitlines()[0] if cause is not None and str(cause) else error.message
                reply = JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail}")
                logger.warning("request %s: %s", data["id"], reply.message)
                self._send_response(data["id"], None, reply.to_response_error())
            raise
