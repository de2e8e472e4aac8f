"""The server process: clean exit codes, leaving when the client goes away, answering bad requests with
errors instead of crashing or hanging, and no network."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsp_support import OOM_LOG, RawServer


@pytest.fixture
def server(tmp_path: Path):  # type: ignore[no-untyped-def]
    raw = RawServer(cwd=tmp_path)
    yield raw
    raw.close()


def open_log(server: RawServer, path: Path, text: str) -> str:
    uri = path.as_uri()
    server.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "log", "version": 1,
                                                            "text": text}})
    return uri


def test_shutdown_then_exit_ends_with_code_0(server: RawServer, tmp_path: Path) -> None:
    server.initialize(root=tmp_path)
    open_log(server, tmp_path / "run.log", OOM_LOG.read_text(encoding="utf-8"))
    assert server.request("shutdown", None) == {"jsonrpc": "2.0", "id": 2, "result": None}
    server.notify("exit")
    assert server.wait() == 0


def test_exit_without_shutdown_ends_with_code_1(server: RawServer, tmp_path: Path) -> None:
    server.initialize(root=tmp_path)
    server.notify("exit")
    assert server.wait() == 1


def test_closed_stdin_ends_the_server(server: RawServer, tmp_path: Path) -> None:
    server.initialize(root=tmp_path)
    assert server.process.stdin is not None
    server.process.stdin.close()
    assert server.wait(timeout=20) == 0


def test_a_dead_client_process_ends_the_server(server: RawServer, tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        server.initialize(process_id=parent.pid, root=tmp_path)
        time.sleep(0.5)
        assert server.process.poll() is None
    finally:
        parent.kill()
        parent.wait()
    assert server.wait(timeout=20) is not None  # noticed within a few polling intervals


def test_bad_requests_get_errors_and_the_server_keeps_working(server: RawServer, tmp_path: Path) -> None:
    server.initialize(root=tmp_path)
    uri = open_log(server, tmp_path / "run.log", OOM_LOG.read_text(encoding="utf-8"))
    server.read_until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    malformed = server.request("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": -1}})
    assert malformed["error"]["code"] == -32602 and "textDocument/hover" in malformed["error"]["message"]
    missing = server.request("textDocument/codeAction", {"textDocument": {"uri": uri}})
    assert missing["error"]["code"] == -32602
    unknown = server.request("faultline/noSuchMethod", {})
    assert unknown["error"]["code"] == -32601
    # a body that is not JSON is dropped without taking the server down
    assert server.process.stdin is not None
    server.process.stdin.write(b"Content-Length: 9\r\n\r\n{not json")
    server.process.stdin.flush()
    past_end = server.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                     "position": {"line": 99_999, "character": 99_999}})
    assert past_end["result"] is None
    other = server.request("textDocument/hover", {"textDocument": {"uri": (tmp_path / "nope.log").as_uri()},
                                                  "position": {"line": 0, "character": 0}})
    assert other["result"] is None
    hover = server.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                  "position": {"line": 17, "character": 0}})
    assert "Root cause" in hover["result"]["contents"]["value"]
    assert server.request("shutdown", None)["result"] is None
    server.notify("exit")
    assert server.wait() == 0
    assert "Traceback" not in server.stderr_text()


@pytest.mark.skipif(not Path("/proc/self/net/tcp").exists(), reason="needs Linux /proc")
def test_the_server_opens_no_network_socket(server: RawServer, tmp_path: Path) -> None:
    server.initialize(root=tmp_path)
    open_log(server, tmp_path / "run.log", OOM_LOG.read_text(encoding="utf-8"))
    server.read_until(lambda m: m.get("method") == "textDocument/publishDiagnostics")
    server.request("workspace/executeCommand", {"command": "faultline.diagnosePath", "arguments": [
        {"paths": [str(OOM_LOG.parent)], "includeHtml": True}]})
    pid = server.process.pid
    socket_inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = fd.readlink()
        except OSError:
            continue
        if str(target).startswith("socket:["):
            socket_inodes.add(str(target)[len("socket:["):-1])
    network_inodes = set()
    for table in ("tcp", "tcp6", "udp", "udp6", "raw", "raw6"):
        path = Path(f"/proc/{pid}/net/{table}")
        if path.exists():
            for row in path.read_text().splitlines()[1:]:
                fields = row.split()
                if len(fields) > 9:
                    network_inodes.add(fields[9])
    # (asyncio's own wake-up channel is a local socket pair, which is not a network socket)
    assert not socket_inodes & network_inodes
