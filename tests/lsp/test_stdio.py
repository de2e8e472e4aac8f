"""How the server reads its input (server/faultline/lsp/stdio.py): a pipe on the event loop, a regular file
through pygls's threaded reader, and input that ends in the middle of a message."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from lsp_support import SERVER_COMMAND, RawServer

from faultline.lsp.stdio import PIPE_BYTES, pipe_reader, widen_pipe


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def replies(output: bytes) -> list[dict[str, Any]]:
    messages = []
    while output:
        header, _, rest = output.partition(b"\r\n\r\n")
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        messages.append(json.loads(rest[:length]))
        output = rest[length:]
    return messages


def test_a_session_from_a_regular_file_is_served_by_the_threaded_reader(tmp_path: Path) -> None:
    # Requests answered at once (a real session would wait for initialize's answer before going on: a file
    # ends before the server has loaded its library).
    script = tmp_path / "session.jsonrpc"
    script.write_bytes(frame({"id": 1, "method": "faultline/noSuchMethod", "params": {}}) + frame({"method": "exit"}))
    with open(script, "rb") as stdin:
        done = subprocess.run(SERVER_COMMAND, stdin=stdin, capture_output=True, timeout=60, cwd=tmp_path)
    assert replies(done.stdout)[0]["error"]["code"] == -32601
    assert done.returncode == 1  # exit without shutdown
    assert b"cannot be read as a pipe" in done.stderr


def log_after_sending(tmp_path: Path, data: bytes) -> str:
    """The server's log once an initialized server has been sent ``data`` and stdin closed: it must exit 0."""
    server = RawServer(cwd=tmp_path)
    try:
        server.initialize(root=tmp_path)
        assert server.process.stdin is not None
        try:
            server.process.stdin.write(data)
            server.process.stdin.close()
        except BrokenPipeError:  # the server may stop reading before all of it
            pass
        assert server.wait(timeout=20) == 0
        return server.stderr_text()
    finally:
        server.close()


def test_input_that_ends_inside_a_message_ends_the_server_with_a_clear_log_line(tmp_path: Path) -> None:
    log = log_after_sending(tmp_path, frame({"id": 2, "method": "shutdown"})[:-3])
    assert "closed the connection in the middle of a message" in log
    assert "Traceback" not in log


def test_a_pipe_is_read_by_the_event_loop_without_threads() -> None:
    """Messages arriving in pieces are reassembled, and no reader thread is started (pygls's reader runs
    each header line and body read in a thread-pool worker)."""

    async def scenario() -> tuple[bytes, bytes, int]:
        read_fd, write_fd = os.pipe()
        stdin = os.fdopen(read_fd, "rb", buffering=0)
        reader = await pipe_reader(stdin)
        assert reader is not None
        try:
            message = frame({"id": 2, "method": "shutdown"})
            os.write(write_fd, message[:10])
            pending = asyncio.ensure_future(reader.readline())
            await asyncio.sleep(0.05)
            assert not pending.done()  # half a header line: still waiting
            os.write(write_fd, message[10:])
            header = await asyncio.wait_for(pending, 10)
            await reader.readline()
            body = await asyncio.wait_for(reader.readexactly(len(message) - message.index(b"{")), 10)
            threads = threading.active_count()
        finally:
            os.close(write_fd)
            stdin.close()
        return header, body, threads

    header, body, threads = asyncio.run(scenario())
    assert header.startswith(b"Content-Length: ")
    assert json.loads(body)["method"] == "shutdown"
    assert threads == 1


def test_the_input_pipe_is_widened_for_large_messages() -> None:
    fcntl = pytest.importorskip("fcntl")
    if not hasattr(fcntl, "F_GETPIPE_SZ"):
        pytest.skip("pipe sizes are a Linux feature")
    read_fd, write_fd = os.pipe()
    try:
        with os.fdopen(read_fd, "rb", buffering=0) as stdin:
            before = fcntl.fcntl(read_fd, fcntl.F_GETPIPE_SZ)
            widen_pipe(stdin)
            after = fcntl.fcntl(read_fd, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(write_fd)
    assert before < PIPE_BYTES <= after


def test_widening_what_is_not_a_pipe_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"")
    with open(path, "rb") as stdin:
        widen_pipe(stdin)  # no error: F_SETPIPE_SZ on a regular file is refused, and that is all
        assert stdin.read() == b""


def test_a_regular_file_cannot_be_read_as_a_pipe(tmp_path: Path) -> None:
    path = tmp_path / "input"
    path.write_bytes(b"")

    async def attempt() -> object:
        with open(path, "rb") as stdin:
            return await pipe_reader(stdin)

    assert asyncio.run(attempt()) is None


def test_a_header_line_too_long_to_be_one_ends_the_server_with_a_clear_log_line(tmp_path: Path) -> None:
    log = log_after_sending(tmp_path, b"X" * (3 * 1024 * 1024) + b"\r\n")  # it stops reading after 1 MiB
    assert "header line longer than" in log
    assert "Traceback" not in log


def test_windows_keeps_the_threaded_reader(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.platform", "win32")

    async def attempt() -> object:
        read_fd, write_fd = os.pipe()
        try:
            with os.fdopen(read_fd, "rb", buffering=0) as stdin:
                return await pipe_reader(stdin)
        finally:
            os.close(write_fd)

    assert asyncio.run(attempt()) is None
