"""Signature authoring: live diagnostics on signature TOML files, and a library reload when they change.

A signature file is a ``*.toml`` under one of the server's signature folders (``.faultline/signatures/``
of a workspace folder, the configured ``signatureFolders``) or under the built-in library. Its unsaved
text is checked the way ``faultline signatures check`` checks a file (schema, unknown fields, regexes
that do not compile or run too slowly, failing examples). Saving it, or any change the client's file
watcher reports, reloads the library; load problems of signature files that are not open are published
on those files.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import uuid
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol.types import (
    WORKSPACE_DID_CHANGE_WATCHED_FILES,
    Diagnostic,
    DiagnosticSeverity,
    DidChangeWatchedFilesParams,
    DidChangeWatchedFilesRegistrationOptions,
    FileSystemWatcher,
    PublishDiagnosticsParams,
    Registration,
    RegistrationParams,
    RelativePattern,
    Unregistration,
    UnregistrationParams,
)
from pygls.workspace.position_codec import PositionCodec

from ..library import BUILTIN_DIR, LoadProblem
from ..signature_check import check_signature_file
from .diagnostics import SOURCE, line_range
from .documents import uri_path
from .lines import LineIndex

if TYPE_CHECKING:
    from .server import FaultlineServer

logger = logging.getLogger(__name__)
WORKSPACE_SIGNATURES = Path(".faultline") / "signatures"


def check_signature_text(path: Path, text: str, builtin: bool) -> list[LoadProblem]:
    """Check unsaved text as if it were the file at ``path`` (same file and folder name)."""
    with tempfile.TemporaryDirectory(prefix="faultline-check-") as tmp:
        folder = Path(tmp) / (path.parent.name or "signatures")
        folder.mkdir()
        copy = folder / path.name
        copy.write_text(text, encoding="utf-8")
        return check_signature_file(copy, builtin=builtin)


def problem_diagnostics(problems: list[LoadProblem], lines: LineIndex, codec: PositionCodec) -> list[Diagnostic]:
    out = []
    for problem in problems:
        line = min(max(problem.line - 1, 0), lines.line_count - 1)
        out.append(Diagnostic(range=line_range(lines, line, codec), message=f"{problem.field}: {problem.message}",
                              severity=DiagnosticSeverity.Error, source=SOURCE, code=problem.field))
    return out


def _within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


@dataclass
class _Open:
    version: int | None
    timer: asyncio.TimerHandle | None = None


class SignatureDocuments:
    def __init__(self, server: FaultlineServer) -> None:
        self._server = server
        self._open: dict[str, _Open] = {}
        self._problem_files: set[str] = set()  # files not open whose load problems are published
        self._registration_id: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def folder_of(self, uri: str) -> tuple[Path, bool] | None:
        """The signature folder holding this TOML file, and whether it is the built-in library."""
        path_text = uri_path(uri)
        if path_text is None or not path_text.lower().endswith(".toml"):
            return None
        path = Path(path_text).resolve()
        for folder in self._server.signature_folders():
            if _within(path, folder.resolve()):
                return folder, False
        builtin = BUILTIN_DIR.resolve()
        return (builtin, True) if _within(path, builtin) else None

    def is_signature_document(self, uri: str) -> bool:
        return self.folder_of(uri) is not None

    # -- document events ------------------------------------------------------------------------------
    def opened(self, uri: str, version: int | None) -> None:
        self._open[uri] = _Open(version)
        self._schedule(uri, 0.0)

    def changed(self, uri: str, version: int | None) -> None:
        if uri in self._open:
            self._open[uri].version = version
            self._schedule(uri, self._server.settings.debounce_ms / 1000)

    def saved(self, uri: str) -> None:
        if uri in self._open:
            self._schedule(uri, 0.0)
        self._server.schedule_reload()

    def closed(self, uri: str) -> None:
        state = self._open.pop(uri, None)
        if state is not None and state.timer is not None:
            state.timer.cancel()
        self._publish(uri, None, [])
        self._server.schedule_reload()  # its load problems (if any) are published as a closed file's

    def is_open(self, uri: str) -> bool:
        return uri in self._open

    def watched_files_changed(self, params: DidChangeWatchedFilesParams) -> None:
        folders = [f.resolve() for f in self._server.signature_folders()]
        for change in params.changes:
            path_text = uri_path(change.uri)
            if path_text is None:
                continue
            path = Path(path_text).resolve()
            # a signature file, or a folder that is (or holds) a signature folder, was created or deleted
            if path.suffix.lower() == ".toml" or any(_within(f, path) for f in folders):
                self._server.schedule_reload()
                return

    # -- checking ----------------------------------------------------------------------------------------
    def _schedule(self, uri: str, delay_s: float) -> None:
        state = self._open.get(uri)
        if state is None:
            return
        if state.timer is not None:
            state.timer.cancel()
        loop = asyncio.get_running_loop()

        def start() -> None:
            state.timer = None
            task = loop.create_task(self._check(uri))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

        state.timer = loop.call_later(delay_s, start)

    async def _check(self, uri: str) -> None:
        document = self._server.open_document(uri)
        located = self.folder_of(uri)
        path_text = uri_path(uri)
        if document is None or located is None or path_text is None:
            return
        version, text = document.version, document.source
        work = partial(check_signature_text, Path(path_text), text, located[1])
        try:
            problems = await asyncio.get_running_loop().run_in_executor(self._server.pool, work)
        except Exception:
            logger.exception("checking %s failed", path_text)
            return
        state = self._open.get(uri)
        if state is None or state.version != version:
            return  # a newer version is being checked
        lines = LineIndex.build(text)
        self._publish(uri, version, problem_diagnostics(problems, lines, self._server.workspace.position_codec))
        logger.info("%s: %d problem(s)", path_text, len(problems))

    def publish_library_problems(self, problems: list[LoadProblem]) -> None:
        """Load problems of signature files that are not open (open ones have live diagnostics)."""
        by_file: dict[str, list[LoadProblem]] = defaultdict(list)
        for problem in problems:
            path = Path(problem.file)
            if path.suffix.lower() == ".toml" and path.is_file():
                by_file[path.resolve().as_uri()].append(problem)
        codec = self._server.workspace.position_codec
        for uri in self._problem_files - set(by_file):
            self._publish(uri, None, [])
        published: set[str] = set()
        for uri, found in by_file.items():
            if uri in self._open:
                continue
            path = Path(found[0].file)
            try:
                lines = LineIndex.build(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            self._publish(uri, None, problem_diagnostics(found, lines, codec))
            published.add(uri)
        self._problem_files = published

    def _publish(self, uri: str, version: int | None, diagnostics: list[Diagnostic]) -> None:
        self._server.text_document_publish_diagnostics(
            PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))

    # -- file watching -------------------------------------------------------------------------------
    async def register_watchers(self) -> None:
        """Ask the client to report changes to signature files (when it can register watchers dynamically)."""
        if not self._server.client.watch_files:
            return
        relative = self._server.client.relative_watch_patterns
        watchers = [FileSystemWatcher(glob_pattern=f"**/{WORKSPACE_SIGNATURES.as_posix()}/**/*.toml")]
        for folder in self._server.settings.signature_folders:
            base = Path(folder)
            watchers.append(FileSystemWatcher(
                glob_pattern=RelativePattern(base_uri=base.as_uri(), pattern="**/*.toml") if relative
                else f"{base.as_posix()}/**/*.toml"))
        try:
            if self._registration_id is not None:
                old, self._registration_id = self._registration_id, None
                await self._server.client_unregister_capability_async(UnregistrationParams(
                    [Unregistration(id=old, method=WORKSPACE_DID_CHANGE_WATCHED_FILES)]))
            registration_id = f"faultline-signatures-{uuid.uuid4()}"
            await self._server.client_register_capability_async(RegistrationParams([Registration(
                id=registration_id, method=WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
            self._registration_id = registration_id
        except Exception as error:  # a client that refuses keeps working; saves still reload
            logger.warning("could not register file watchers for signature folders: %s", error)

