"""Helpers for the end-to-end LSP tests: the test client, waiting for notifications, applying edits, and a
raw JSON-RPC connection for the process-lifecycle tests (exit codes, closed stdin, a dead parent)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, Union

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

FIXTURES = Path(__file__).parent / "fixtures"
OOM_LOG = FIXTURES / "oom-cascade" / "console.log"
TEST_SIGNATURES = FIXTURES / "signatures"
SERVER_COMMAND = [sys.executable, "-m", "faultline"]
# 0-based editor lines of the fixture's events
OOM_LINE = 17
WATCHDOG_RANK0_LINE = 20
WATCHDOG_RANK1_LINE = 21

T = TypeVar("T")


class RecordingClient(LanguageClient):
    """pytest-lsp's client, also keeping every diagnostics publication, applied edit and registration."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.published: list[types.PublishDiagnosticsParams] = []
        self.applied_edits: list[types.ApplyWorkspaceEditParams] = []
        self.registrations: list[types.Registration] = []
        self.apply_edit_result = True
        self.position_encoding = "utf-16"  # as negotiated in initialize


def make_client() -> RecordingClient:
    client = RecordingClient(converter_factory=default_converter)
    converter = client.protocol._converter

    # lsprotocol reads any result item with a "command" key as a Command, so a CodeAction that carries a
    # command loses its kind and title; VS Code and Neovim tell them apart by the type of "command".
    def command_or_code_action(item: Any, _: type) -> types.Command | types.CodeAction:
        if isinstance(item.get("command"), str):
            return converter.structure(item, types.Command)
        return converter.structure(item, types.CodeAction)

    # keyed by the typing.Union object lsprotocol registered its hook under
    converter.register_structure_hook(Union[types.Command, types.CodeAction], command_or_code_action)  # noqa: UP007
    features = dict(DEFAULT_CLIENT_FEATURES)

    def publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
        client.published.append(params)
        client.diagnostics[params.uri] = params.diagnostics

    def apply_edit(client: RecordingClient, params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        client.applied_edits.append(params)
        return types.ApplyWorkspaceEditResult(applied=client.apply_edit_result)

    def register(client: RecordingClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    def unregister(client: RecordingClient, params: types.UnregistrationParams) -> None:
        return None

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.WORKSPACE_APPLY_EDIT] = apply_edit
    features[types.CLIENT_REGISTER_CAPABILITY] = register
    features[types.CLIENT_UNREGISTER_CAPABILITY] = unregister
    register_lsp_features(client, features)
    return client


async def wait_for(predicate: Callable[[], T | None], timeout: float = 30.0, what: str = "a condition") -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.02)


async def diagnostics_for(client: RecordingClient, uri: str, version: int | None = None,
                          timeout: float = 30.0, after: int = 0) -> types.PublishDiagnosticsParams:
    """The latest publication for ``uri`` (of ``version`` when given) among those after index ``after``."""
    def latest() -> types.PublishDiagnosticsParams | None:
        for params in reversed(client.published[after:]):
            if params.uri == uri and (version is None or params.version == version):
                return params
        return None

    return await wait_for(latest, timeout, f"diagnostics for {uri} version {version}")


def open_document(client: LanguageClient, path: Path, text: str | None = None, language_id: str = "log",
                  version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
        uri=uri, language_id=language_id, version=version,
        text=text if text is not None else path.read_text(encoding="utf-8"))))
    return uri


def replace_all(client: LanguageClient, uri: str, old_text: str, new_text: str, version: int) -> None:
    """An incremental change replacing the whole document, as VS Code sends it."""
    lines = old_text.split("\n")
    end = types.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangePartial(
            range=types.Range(types.Position(0, 0), end), text=new_text)]))


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the position units the client negotiated."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions, as VS Code's capabilities declare) to ``text``."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        base = sum(len(line) + 1 for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        prefix = line.encode("utf-16-le")[: position.character * 2].decode("utf-16-le")
        return base + len(prefix)

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def edits_for(edit: types.WorkspaceEdit, uri: str) -> list[types.TextEdit]:
    if edit.document_changes:
        found: list[types.TextEdit] = []
        for change in edit.document_changes:
            assert isinstance(change, types.TextDocumentEdit)
            if change.text_document.uri == uri:
                found += [e for e in change.edits if isinstance(e, types.TextEdit)]
        return found
    return list((edit.changes or {}).get(uri, []))


class RawServer:
    """The server process over hand-written JSON-RPC framing, for what a client library hides."""

    def __init__(self, command: list[str] | None = None, cwd: Path | None = None) -> None:
        # a file, not a pipe: a full pipe would block the server; closed in close()
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115
        self.process = subprocess.Popen(command or SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self.stderr, cwd=cwd)
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, method: str, params: Any, timeout: float = 30.0) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        self.send({"id": request_id, "method": method, "params": params})
        return self.read_until(lambda m: m.get("id") == request_id and "method" not in m, timeout)

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"method": method, **({"params": params} if params is not None else {})})

    def read_message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        length = 0
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise EOFError("the server closed its stdout")
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
            elif line in (b"\r\n", b"\n"):
                break
        message: dict[str, Any] = json.loads(self.process.stdout.read(length))
        return message

    def read_until(self, matches: Callable[[dict[str, Any]], bool], timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            message = self.read_message()
            if "method" in message and "id" in message:  # a request from the server: answer it plainly
                self.send({"id": message["id"], "result": None})
            if matches(message):
                return message
        raise AssertionError("timed out waiting for a message")

    def initialize(self, process_id: int | None = None, root: Path | None = None) -> dict[str, Any]:
        reply = self.request("initialize", {"processId": process_id if process_id is not None else os.getpid(),
                                            "rootUri": root.as_uri() if root else None, "capabilities": {},
                                            "initializationOptions": {"signatureFolders": [str(TEST_SIGNATURES)]}})
        self.notify("initialized", {})
        return reply

    def wait(self, timeout: float = 20.0) -> int:
        return self.process.wait(timeout=timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()
        self.stderr.close()

    def stderr_text(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read().decode("utf-8", errors="replace")


CLIENT_NAMES = {"visual-studio-code": "Visual Studio Code", "neovim": "Neovim"}
LAUNCH_SCRIPT = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gpus-per-node=2
set -euo pipefail
export NCCL_DEBUG=WARN

srun --nodes=2 --ntasks-per-node=1 \\
    torchrun --nnodes=2 --nproc-per-node=2 --rdzv-backend=c10d --rdzv-endpoint="$HEAD:29500" \\
    train.py --config configs/7b.yaml
"""


def initialize_params(capabilities: str, workspace: Path, **options: Any) -> types.InitializeParams:
    settings: dict[str, Any] = {"signatureFolders": [str(TEST_SIGNATURES)], "debounceMs": 50, **options}
    return types.InitializeParams(
        capabilities=client_capabilities(capabilities),
        client_info=types.ClientInfo(name=CLIENT_NAMES.get(capabilities, capabilities)),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
        root_uri=workspace.as_uri(),
        initialization_options=settings,
    )


async def start(client: RecordingClient, params: types.InitializeParams) -> types.InitializeResult:
    result = await client.initialize_session(params)
    client.position_encoding = str(result.capabilities.position_encoding or "utf-16")
    return result


CONFIG = ClientServerConfig(server_command=SERVER_COMMAND, client_factory=make_client)
