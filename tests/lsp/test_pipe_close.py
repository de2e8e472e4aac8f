"""A client that closes the pipe during ``initialize`` (an editor quitting as it starts the server, a wrapper
script that dies): the server ends with code 0 and one log line, never a traceback.

It used to print asyncio's ``CancelledError`` traceback: ``asyncio.run`` cancels the ``initialize`` task,
which was still loading the signature library, and pygls's done-callback re-raises the cancellation.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from lsp_support import SERVER_COMMAND


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


INITIALIZE = frame({"id": 1, "method": "initialize",
                    "params": {"processId": None, "rootUri": None, "capabilities": {}}})


def _send_and_close(tmp_path: Path, data: bytes) -> tuple[int, str]:
    """Start the server, write ``data`` at once, close its stdin; its exit code and its log."""
    # subprocess.run writes the input and closes the pipe at once: both are in the pipe before the server
    # has started, so it reads the request and then the end.
    done = subprocess.run(SERVER_COMMAND, input=data, capture_output=True, timeout=60, cwd=tmp_path)
    return done.returncode, done.stderr.decode("utf-8", errors="replace")


def test_closing_the_pipe_during_initialize_is_one_log_line(tmp_path: Path) -> None:
    code, log = _send_and_close(tmp_path, INITIALIZE)
    assert code == 0, log
    assert "Traceback" not in log and "CancelledError" not in log and "ERROR" not in log, log
    closing = [line for line in log.splitlines() if "closed the connection" in line]
    assert len(closing) == 1 and "during initialize; shutting down" in closing[0], log


@pytest.mark.parametrize("data", [b"", b"Content-Le", INITIALIZE[: len(INITIALIZE) // 2]],
                         ids=["nothing", "half-a-header", "half-a-request"])
def test_closing_the_pipe_early_is_one_log_line(tmp_path: Path, data: bytes) -> None:
    code, log = _send_and_close(tmp_path, data)
    assert code == 0, log
    assert "Traceback" not in log, log
    assert len([line for line in log.splitlines() if "closed the connection" in line]) == 1, log
