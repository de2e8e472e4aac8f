"""The editor targets, measured through the real language server (``python -m faultline``) over stdio.

A minimal JSON-RPC client (no editor, no LSP library: the timings are the server's, not a client
framework's) opens a log document and measures:

``first_diagnostics_s``  didOpen of the whole text sent -> its first publishDiagnostics (nothing else
                         running); ``client_encode_s``: this client's own time to make the didOpen message
                         (JSON of the whole text), before the clock starts
``requests``             hover and code-action requests sent every few milliseconds while a diagnosis
                         runs (each started by a one-line edit, requests from the end of the debounce
                         until the diagnostics arrive), each one's round trip:
                         p50/p99/max; ``requests_while_opening``: the same while the document opens
                         (the first ones wait while the server reads the whole text off the pipe)
``edits``                one-line edits (a line changed in the middle, a line appended at the end): didChange
                         -> publishDiagnostics of that version, less the debounce the server waits first;
                         each sent when the previous one is published. ``edit_after_idle_s``: the same for an
                         edit sent after the server has been idle for ``IDLE_BEFORE_EDIT_S``

Usage: python lsp_editor.py LOG [--rounds N] -> one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

DEBOUNCE_MS = 300  # the server's default, sent explicitly so the subtraction below stays true
IDLE_BEFORE_EDIT_S = 2.0
SLOWEST: list[tuple[float, float, str]] = []  # (round trip, sent this long after the edit, request)


class Client:
    """Just enough LSP: requests with ids, notifications, and a queue of publishDiagnostics."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self.published: asyncio.Queue[tuple[float, dict[str, Any]]] = asyncio.Queue()
        self.reader = asyncio.create_task(self._read())

    @staticmethod
    def frame(message: dict[str, Any]) -> bytes:
        """A message as the bytes sent: header and JSON body."""
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    def write(self, frame: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame)

    def _send(self, message: dict[str, Any]) -> None:
        self.write(self.frame(message))

    async def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.pending[self.next_id] = future
        self._send({"id": self.next_id, "method": method, "params": params})
        return await future

    def notify(self, method: str, params: Any) -> None:
        self._send({"method": method, "params": params})

    async def _read(self) -> None:
        try:
            await self._read_messages()
        finally:  # the server is gone: whoever waits for an answer fails instead of waiting forever
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(RuntimeError("the server closed its output"))
            await self.published.put((time.perf_counter(), {"uri": None, "gone": True}))

    async def _read_messages(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                header = await stream.readline()
                if not header:
                    return
                if header in (b"\r\n", b"\n"):
                    break
                if header.lower().startswith(b"content-length:"):
                    length = int(header.split(b":")[1])
            message = json.loads(await stream.readexactly(length))
            if "id" in message and "method" in message:  # a request from the server: answer it plainly
                result: Any = None
                if message["method"] == "workspace/configuration":
                    result = [{"debounceMs": DEBOUNCE_MS, "maxDocumentBytes": 1 << 30} for _ in message["params"]["items"]]
                self._send({"id": message["id"], "result": result})
            elif "id" in message:
                future = self.pending.pop(message["id"])
                if "error" in message:
                    future.set_exception(RuntimeError(str(message["error"])))
                else:
                    future.set_result(message.get("result"))
            elif message.get("method") == "textDocument/publishDiagnostics":
                await self.published.put((time.perf_counter(), message["params"]))


async def _published(client: Client, uri: str, version: int, timeout: float = 120.0) -> tuple[float, dict[str, Any]]:
    deadline = time.perf_counter() + timeout
    while True:
        at, params = await asyncio.wait_for(client.published.get(), deadline - time.perf_counter())
        if params.get("gone"):
            raise RuntimeError("the server exited before publishing diagnostics")
        if params["uri"] == uri and params.get("version") == version:
            return at, params


async def _requests_during(client: Client, uri: str, line: int, until: asyncio.Future[Any],
                           interval_s: float, since: float | None = None) -> list[float]:
    """Hover and code-action round trips, one every ``interval_s``, until ``until`` is done. The slowest are
    also kept in ``SLOWEST`` with when they were sent (seconds after ``since``)."""
    latencies: list[float] = []
    position = {"line": line, "character": 4}
    kinds = 0
    while not until.done():
        kinds += 1
        started = time.perf_counter()
        if kinds % 2:
            await client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": position})
        else:
            await client.request("textDocument/codeAction", {
                "textDocument": {"uri": uri}, "range": {"start": position, "end": position},
                "context": {"diagnostics": []}})
        latencies.append(time.perf_counter() - started)
        if since is not None:
            SLOWEST.append((latencies[-1], started - since, "hover" if kinds % 2 else "codeAction"))
        await asyncio.sleep(interval_s)
    return latencies


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def measure(log: Path, rounds: int) -> dict[str, Any]:
    text = log.read_text(encoding="utf-8", errors="surrogateescape")
    lines = text.split("\n")
    # This client's own 200,000 line strings out of its cyclic collector: a full collection of them, set off
    # by parsing a large publishDiagnostics, paused the client for up to ~100 ms while a server's answer
    # waited in its pipe, and counted as that request's round trip.
    gc.collect()
    gc.freeze()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "faultline", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, limit=1 << 26)
    client = Client(process)
    await client.request("initialize", {
        "processId": None, "rootUri": None, "clientInfo": {"name": "faultline-bench"},
        "capabilities": {"textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]},
                                          "publishDiagnostics": {"relatedInformation": True},
                                          "synchronization": {"didSave": True}},
                         "general": {"positionEncodings": ["utf-16"]}},
        "initializationOptions": {"debounceMs": DEBOUNCE_MS, "workspaceTrusted": True,
                                  "maxDocumentBytes": 1 << 30}})
    client.notify("initialized", {})
    uri = log.resolve().as_uri()
    middle = len(lines) // 2

    # 1. First diagnostics of the document, nothing else going on. The clock starts when the message is sent:
    #    turning the text into JSON is the client's work (an editor does it in its own process, and this
    #    client's json.dumps is not what VS Code runs), and is reported apart.
    encoding = time.perf_counter()
    did_open = client.frame({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "log", "version": 1, "text": text}}})
    opened = time.perf_counter()
    client.write(did_open)
    first_at, first_params = await _published(client, uri, 1)
    first_s = first_at - opened
    encode_s = opened - encoding
    # ... and a copy opened while requests about the first one keep coming (those sent first wait while the
    # server reads the didOpen message itself: the whole text as JSON, before any diagnosis starts).
    copy_uri = log.resolve().with_name("copy-" + log.name).as_uri()
    did_open = client.frame({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": copy_uri, "languageId": "log", "version": 1, "text": text}}})
    opened_copy = time.perf_counter()
    client.write(did_open)
    copy = asyncio.ensure_future(_published(client, copy_uri, 1))
    while_opening = await _requests_during(client, uri, middle, copy, 0.005)
    copy_at, _ = await copy
    client.notify("textDocument/didClose", {"textDocument": {"uri": copy_uri}})

    # 2. Requests sent during diagnoses: each diagnosis started by a one-line edit; requests from the end of
    #    the debounce (when the diagnosis starts) until its diagnostics arrive.
    version = 1
    latencies: list[float] = []
    for round_ in range(rounds):
        version += 1
        old = lines[middle + round_]
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": middle + round_, "character": 0},
                       "end": {"line": middle + round_, "character": len(old.encode("utf-16-le")) // 2}},
             "text": old + " (typed)"}]})
        lines[middle + round_] = old + " (typed)"
        edited = time.perf_counter()
        done = asyncio.ensure_future(_published(client, uri, version))
        await asyncio.sleep(DEBOUNCE_MS / 1000)
        latencies += await _requests_during(client, uri, middle, done, 0.003, since=edited)
        await done

    # 3. One-line edits: publish time after the debounce.
    edits = []
    for kind in ("change a line in the middle", "append a line at the end") * max(1, rounds // 2 + 1):
        version += 1
        if kind.startswith("change"):
            old = lines[middle]
            change = {"range": {"start": {"line": middle, "character": 0},
                                "end": {"line": middle, "character": len(old.encode("utf-16-le")) // 2}},
                      "text": old + " (edited)"}
            lines[middle] = old + " (edited)"
        else:
            end = len(lines) - 1
            change = {"range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}},
                      "text": f"[rank0]: step {version} loss 2.0\n"}
            lines.insert(end, f"[rank0]: step {version} loss 2.0")
        sent = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [change]})
        at, _ = await _published(client, uri, version)
        edits.append({"edit": kind, "publish_s": at - sent, "after_debounce_s": at - sent - DEBOUNCE_MS / 1000})

    # ... and one more after the server has sat idle: on this VM an idle process comes back slower (cold caches
    #    and CPU), and a person pauses between edits.
    await asyncio.sleep(IDLE_BEFORE_EDIT_S)
    version += 1
    old = lines[middle]
    lines[middle] = old + " (after a pause)"
    sent = time.perf_counter()
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"range": {"start": {"line": middle, "character": 0},
                   "end": {"line": middle, "character": len(old.encode("utf-16-le")) // 2}},
         "text": lines[middle]}]})
    at, _ = await _published(client, uri, version)
    edit_after_idle_s = at - sent - DEBOUNCE_MS / 1000

    # 4. The same requests with nothing running: what the machine and the client add by themselves.
    idle_for = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().call_later(1.0, idle_for.set_result, None)
    idle = await _requests_during(client, uri, middle, idle_for, 0.003)

    await client.request("shutdown", None)
    client.notify("exit", None)
    await process.wait()
    client.reader.cancel()
    errors = [d for d in first_params["diagnostics"] if d.get("severity") == 1]
    return {
        "input": log.name, "lines": len(lines) - 1, "chars": len(text),
        "first_diagnostics_s": first_s, "client_encode_s": encode_s,
        "root_cause_line": errors[0]["range"]["start"]["line"] + 1 if errors else None,
        "diagnostics": len(first_params["diagnostics"]),
        "requests": {"count": len(latencies), "p50_s": statistics.median(latencies),
                     "p99_s": _percentile(latencies, 0.99), "max_s": max(latencies),
                     "slowest": [{"round_trip_s": r, "sent_after_edit_s": a, "request": k}
                                 for r, a, k in sorted(SLOWEST, reverse=True)[:5]]},
        "requests_idle": {"count": len(idle), "p50_s": statistics.median(idle), "p99_s": _percentile(idle, 0.99),
                          "max_s": max(idle)},
        "requests_while_opening": {"count": len(while_opening), "p50_s": statistics.median(while_opening),
                                   "max_s": max(while_opening), "copy_first_diagnostics_s": copy_at - opened_copy},
        "edits": edits, "edit_after_debounce_max_s": max(e["after_debounce_s"] for e in edits),
        "edit_after_idle_s": edit_after_idle_s, "idle_before_edit_s": IDLE_BEFORE_EDIT_S,
        "debounce_ms": DEBOUNCE_MS,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path)
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.log, args.rounds))))


if __name__ == "__main__":
    main()
