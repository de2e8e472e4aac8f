"""The language server process: one server object holding the session's state, LSP methods wired to the
feature modules, and ``serve()`` (stdio; ``python -m faultline`` and ``faultline serve``).

The event loop only routes messages and publishes results: diagnoses, signature checks, library loads
and launch-script searches run in a thread pool (the engine is reusable across threads). Nothing here
opens a socket; stdout carries the protocol and nothing else.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import (
    FeatureRequestError,
    JsonRpcException,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
)
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from .. import __version__
from ..engine import Engine
from ..library import Signature, SignatureLibrary
from . import code_actions as code_action_feature
from . import hover as hover_feature
from .capabilities import ClientSupport
from .commands import COMMANDS
from .diagnostics import DiagnosticOptions
from .documents import LOG_LANGUAGE_IDS, has_candidate_suffix, uri_path
from .lifecycle import watch_parent
from .log_documents import LogDocuments
from .logging_setup import ClientLogHandler, configure_stderr_logging, set_level
from .protocol import FaultlineProtocol
from .settings import Settings
from .signature_files import WORKSPACE_SIGNATURES, SignatureDocuments
from .stdio import start_io
from .text_document import use_log_documents

if TYPE_CHECKING:
    from pygls.server import ServerErrors

logger = logging.getLogger(__name__)
RELOAD_DEBOUNCE_S = 0.2
# Clients known to implement the client-side commands (the Faultline VS Code extension runs in these).


class FaultlineServer(LanguageServer):
    protocol: FaultlineProtocol

    def __init__(self) -> None:
        super().__init__("faultline", __version__, protocol_cls=FaultlineProtocol,
                         text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.settings = Settings()
        self.client = ClientSupport()  # resolved at initialize
        self.engine = Engine(SignatureLibrary([]))  # replaced by the real library during initialize
        self.pool = ThreadPoolExecutor(max_workers=3, thread_name_prefix="faultline-work")
        self.logs = LogDocuments(self)
        self.signature_docs = SignatureDocuments(self)
        self.shutdown_requested = False
        # The fix of each recent diagnosis's root cause, by signature id, as it applies to that failure
        # (reasoning/fixes.py): "Apply fix" for a diagnosis of a selection or a path offers no more than it did.
        self.recent_fixes: dict[str, Signature] = {}
        self._client_log: ClientLogHandler | None = None
        self._reload_timer: asyncio.TimerHandle | None = None
        self._reload_task: asyncio.Task[Engine] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        self.parent_watch: asyncio.Task[None] | None = None

    # -- documents and workspace ----------------------------------------------------------------------
    def open_document(self, uri: str) -> TextDocument | None:
        """An open document (never one pygls would read from disk for an unknown URI)."""
        document: TextDocument | None = self.workspace.text_documents.get(unquote(uri))
        return document

    def open_document_for_path(self, path: Path) -> TextDocument | None:
        wanted = path.resolve()
        for document in self.workspace.text_documents.values():
            if document.path and Path(document.path).resolve() == wanted:
                found: TextDocument = document
                return found
        return None

    def workspace_roots(self) -> list[Path]:
        roots = [Path(p) for p in (uri_path(folder.uri) for folder in self.workspace.folders.values()) if p]
        if not roots and self.workspace.root_path:
            roots.append(Path(self.workspace.root_path))
        return roots

    def signature_folders(self) -> list[Path]:
        """Configured folders, then each workspace folder's ``.faultline/signatures`` (later ones override).
        In an untrusted workspace, none: a restricted window uses the built-in signatures only."""
        if not self.settings.workspace_trusted:
            return []
        folders: dict[Path, None] = {Path(f): None for f in self.settings.signature_folders}
        for root in self.workspace_roots():
            candidate = root / WORKSPACE_SIGNATURES
            if candidate.is_dir():
                folders.setdefault(candidate, None)
        return list(folders)

    def diagnostic_options(self) -> DiagnosticOptions:
        return DiagnosticOptions(self.settings.severity, code_description=self.client.code_description)

    # -- settings and library -------------------------------------------------------------------------
    def apply_settings(self, raw: object, initial: bool = False) -> None:
        """Take new settings; unless ``initial``, reload the library or re-diagnose as far as they changed."""
        roots = self.workspace_roots()
        previous = self.settings
        self.settings, problems = previous.updated(raw, roots[0] if roots else None)
        for problem in problems:
            logger.warning("settings: %s", problem)
        set_level(self.settings.log_level)
        if self._client_log is not None:
            self._client_log.setLevel(logging.getLogger().level)
        if self.settings == previous or initial:
            return
        logger.info("settings: %s", self.settings.describe())
        if self.settings.signature_folders != previous.signature_folders:
            self._spawn(self.signature_docs.register_watchers())
            self.schedule_reload()
        elif not self.settings.enabled:
            self.logs.clear_all()
        elif (self.settings.severity, self.settings.max_document_bytes, self.settings.enabled) != \
                (previous.severity, previous.max_document_bytes, previous.enabled):
            self.logs.rediagnose_all()

    def load_engine(self) -> Engine:
        """Load the library from the current folders (runs in a worker thread)."""
        engine = Engine.load(self.signature_folders())
        for problem in engine.library.problems:
            logger.warning("signature library: %s", problem)
        logger.info("signature library: %d signatures from the built-ins and %d folder(s)", len(engine.library),
                    len(self.signature_folders()))
        return engine

    async def reload_engine(self) -> Engine:
        """Reload the library, then re-diagnose open logs and republish signature-file problems."""
        if self._reload_timer is not None:
            self._reload_timer.cancel()
            self._reload_timer = None
        engine = await asyncio.get_running_loop().run_in_executor(self.pool, self.load_engine)
        self.engine = engine
        self.signature_docs.publish_library_problems(engine.library.problems)
        self.logs.rediagnose_all()
        return engine

    def schedule_reload(self) -> None:
        if self._reload_timer is not None:
            self._reload_timer.cancel()
        loop = asyncio.get_running_loop()
        self._reload_timer = loop.call_later(RELOAD_DEBOUNCE_S, lambda: self._spawn(self.reload_engine()))

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- lifecycle ---------------------------------------------------------------------------------------
    def install_client_logging(self, loop: asyncio.AbstractEventLoop) -> None:
        self._client_log = ClientLogHandler(self, loop)
        self._client_log.setLevel(logging.getLogger().level)
        logging.getLogger().addHandler(self._client_log)

    def close(self) -> None:
        """Stop all work: cancel running diagnoses and drop queued ones."""
        if self._client_log is not None:
            self._client_log.enabled = False
        self.logs.cancel_all()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def terminate(self, exit_code: int) -> None:
        self.close()
        logger.info("exiting with code %d", exit_code)
        sys.stderr.flush()
        os._exit(exit_code)

    def report_server_error(self, error: Exception, source: ServerErrors) -> None:
        # Request errors are answered with an error response, and messages that could not be parsed are
        # answered by the protocol; neither needs a pop-up in the editor, one log line is enough.
        if isinstance(error, JsonRpcRequestCancelled):
            logger.info("request cancelled: %s", error)
        elif source is JsonRpcException:
            if not isinstance(error, JsonRpcException):
                logger.warning("unreadable message from the client: %s", error)
        elif source is FeatureRequestError:
            if not isinstance(error, JsonRpcMethodNotFound):
                logger.warning("request failed: %s", error)
        else:
            super().report_server_error(error, source)


def create_server() -> FaultlineServer:
    server = FaultlineServer()

    @server.feature(types.INITIALIZE)
    async def initialize(params: types.InitializeParams) -> None:
        use_log_documents(server.workspace)
        server.client = ClientSupport.of(params.capabilities, params.client_info, params.initialization_options)
        server.apply_settings(params.initialization_options, initial=True)
        logger.info("settings: %s", server.settings.describe())
        server.engine = await asyncio.get_running_loop().run_in_executor(server.pool, server.load_engine)
        logger.info("initialized for %s (position encoding %s)",
                    params.client_info.name if params.client_info else "an unnamed client",
                    server.workspace.position_encoding)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        loop = asyncio.get_running_loop()
        server.install_client_logging(loop)
        if server.process_id is not None:
            server.parent_watch = watch_parent(server.process_id, lambda: server.terminate(1))
        await server.signature_docs.register_watchers()
        server.signature_docs.publish_library_problems(server.engine.library.problems)

    @server.feature(types.SHUTDOWN)
    def shutdown(params: None) -> None:
        server.shutdown_requested = True
        server.close()

    @server.feature(types.EXIT)
    def exit_(params: None) -> None:
        server.terminate(0 if server.shutdown_requested else 1)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        document = params.text_document
        if server.signature_docs.is_signature_document(document.uri):
            server.signature_docs.opened(document.uri, document.version)
        elif document.language_id in LOG_LANGUAGE_IDS or has_candidate_suffix(document.uri):
            server.logs.opened(document.uri, document.language_id, document.version)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri, version = params.text_document.uri, params.text_document.version
        if server.signature_docs.is_open(uri):
            server.signature_docs.changed(uri, version)
        else:
            server.logs.changed(uri, version)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE, types.SaveOptions(include_text=False))
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if server.signature_docs.is_signature_document(uri):
            server.signature_docs.saved(uri)
        else:
            server.logs.saved(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if server.signature_docs.is_open(uri):
            server.signature_docs.closed(uri)
        else:
            server.logs.closed(uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        return hover_feature.hover(server, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return await code_action_feature.code_actions(server, params)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        settings = params.settings
        if not (isinstance(settings, dict) and "faultline" in settings) and server.client.configuration_pull:
            try:
                pulled = await server.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section="faultline")]))
                settings = pulled[0] if pulled else None
            except JsonRpcException as error:
                logger.warning("could not read the faultline settings: %s", error)
                return
        server.apply_settings(settings)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(params: types.DidChangeWatchedFilesParams) -> None:
        server.signature_docs.watched_files_changed(params)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_workspace_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        server.schedule_reload()

    for name, handler in COMMANDS.items():
        _register_command(server, name, handler)
    return server


def _register_command(server: FaultlineServer, name: str, handler: Any) -> None:
    # The first parameter is named `ls` so that pygls passes the server there and every argument of the
    # request, unconverted, in `arguments` (the handlers check them and answer InvalidParams).
    async def run(ls: FaultlineServer, *arguments: object) -> Any:
        return await handler(ls, arguments)

    server.command(name)(run)


def serve() -> None:
    """Run the language server on stdin/stdout until the client says ``exit`` or goes away."""
    protocol_out = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print() must never corrupt the protocol stream
    configure_stderr_logging("info")
    # Diagnoses run in worker threads; the event loop answers hovers meanwhile. Every time the loop wants
    # the GIL it waits up to this interval (default 5 ms), several times per request: 1 ms keeps requests
    # sent during a diagnosis answered in a few milliseconds, for a small cost in switches.
    sys.setswitchinterval(0.001)
    server = create_server()
    try:
        start_io(server, sys.stdin.buffer, protocol_out)
    finally:
        server.close()
