"""Diagnose open log documents off the event loop and publish the newest result only.

Open and save diagnose at once, edits after ``debounceMs``. A newer version cancels the diagnosis of an
older one (the engine polls the cancel flag between chunks), and a result is published only while its
version is still the document's current version, so an older result never replaces a newer one. The
last result stays available to hovers and code actions while the next diagnosis runs.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol.types import TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, Diagnostic, PublishDiagnosticsParams
from pygls.protocol import default_converter
from pygls.workspace.position_codec import PositionCodec

from ..engine import Cancelled, Engine
from ..lines.cache import LineCache
from .diagnostics import DiagnosticOptions, build_diagnostics, too_large_diagnostic
from .documents import DocumentResult, document_name, is_log_document
from .lines import LineIndex
from .progress import WorkProgress
from .text_document import LogTextDocument

if TYPE_CHECKING:
    from .server import FaultlineServer

logger = logging.getLogger(__name__)
PROGRESS_MIN_CHARS = 4_000_000  # smaller documents are diagnosed too fast for a progress bar to help


def analyse_document(engine: Engine, uri: str, version: int | None, text: str, *, max_bytes: int | None,
                     codec: PositionCodec, options: DiagnosticOptions, cancel: threading.Event,
                     progress: Callable[[float, str], None] | None = None,
                     line_cache: LineCache | None = None, line_starts: Sequence[int] | None = None) -> DocumentResult:
    """Diagnose one snapshot of a document (runs in a worker thread). ``max_bytes=None`` means no limit.

    ``line_starts``: the text's line offsets when the open document already knows them (text_document.py).
    """
    lines = LineIndex(text, tuple(line_starts)) if line_starts is not None else LineIndex.build(text)
    name = document_name(uri)
    if max_bytes is not None:
        size = len(text) if text.isascii() else len(text.encode("utf-8", errors="surrogatepass"))
        if size > max_bytes:
            return DocumentResult(uri, version, name, lines, None,
                                  [too_large_diagnostic(size, max_bytes, name, lines, codec)], too_large=True)
    diagnosis = engine.diagnose_text(text, name, cancel=cancel.is_set, progress=progress, line_cache=line_cache)

    def signature_file(signature_id: str) -> Path | None:
        signature = engine.library.get(signature_id)
        return signature.path if signature is not None else None

    diagnostics = build_diagnostics(diagnosis, lines, uri, codec, options, signature_file)
    return DocumentResult(uri, version, name, lines, diagnosis, diagnostics,
                          publish_body=publish_body(uri, version, diagnostics))


_CONVERTER = default_converter()  # type: ignore[no-untyped-call]


def publish_body(uri: str, version: int | None, diagnostics: list[Diagnostic]) -> str:
    """The JSON-RPC notification publishing ``diagnostics``, exactly as pygls would write it.

    Serializing a thousand diagnostics takes ~15 ms; done here, in the worker thread, the event loop only
    writes the bytes (pygls would convert and encode them on the loop, where hovers wait meanwhile). One
    diagnostic at a time: ``json.dumps`` of the whole list is one C call that holds the GIL for 5-8 ms, and
    the loop could not answer meanwhile. The list is spliced into its place in the notification (a JSON
    string cannot hold the unescaped ``"diagnostics": []`` of the key).
    """
    params = _CONVERTER.unstructure(PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[]))
    head = json.dumps({"params": params, "method": TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, "jsonrpc": "2.0"})
    items = ", ".join(json.dumps(_CONVERTER.unstructure(diagnostic)) for diagnostic in diagnostics)
    return head.replace('"diagnostics": []', f'"diagnostics": [{items}]', 1)


@dataclass
class _Tracked:
    uri: str
    language_id: str | None
    version: int | None
    timer: asyncio.TimerHandle | None = None
    cancel: threading.Event | None = None
    result: DocumentResult | None = None
    published: bool = False
    # What its lines read as in earlier diagnoses: an edit re-reads only the lines it touched.
    line_cache: LineCache = field(default_factory=LineCache)


class LogDocuments:
    """The open documents that may be logs, their pending work and their last results."""

    def __init__(self, server: FaultlineServer) -> None:
        self._server = server
        self._docs: dict[str, _Tracked] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    # -- document events (called on the event loop) ------------------------------------------------
    def opened(self, uri: str, language_id: str | None, version: int | None) -> None:
        self._docs[uri] = _Tracked(uri, language_id, version)
        self._schedule(uri, delay_s=0.0)

    def changed(self, uri: str, version: int | None) -> None:
        tracked = self._docs.get(uri)
        if tracked is None:
            return
        tracked.version = version
        self._cancel_running(tracked)
        # The debounce counts from the edit's arrival: applying it to a large document already took a while.
        started = self._server.protocol.message_started
        spent = asyncio.get_running_loop().time() - started if started is not None else 0.0
        self._schedule(uri, delay_s=max(0.0, self._server.settings.debounce_ms / 1000 - spent))

    def saved(self, uri: str) -> None:
        tracked = self._docs.get(uri)
        if tracked is None:
            return
        if tracked.result is None or tracked.result.version != tracked.version or tracked.timer is not None:
            self._schedule(uri, delay_s=0.0)

    def closed(self, uri: str) -> None:
        tracked = self._docs.pop(uri, None)
        if tracked is None:
            return
        self._cancel_running(tracked)
        if tracked.timer is not None:
            tracked.timer.cancel()
        if tracked.published:
            self._publish(uri, None, [])

    def is_tracked(self, uri: str) -> bool:
        return uri in self._docs

    def result(self, uri: str) -> DocumentResult | None:
        tracked = self._docs.get(uri)
        return tracked.result if tracked is not None else None

    def version(self, uri: str) -> int | None:
        tracked = self._docs.get(uri)
        return tracked.version if tracked is not None else None

    def line_unchanged(self, uri: str, result: DocumentResult, line: int) -> bool:
        """True when editor line ``line`` still reads as it did in ``result`` (always, for the same version)."""
        if self.version(uri) == result.version:
            return True
        document = self._server.open_document(uri)
        if isinstance(document, LogTextDocument):  # found by offset, without splitting a large text
            return document.line_at(line) == result.lines.line_text(line)
        return document is not None and current_line(document.source, line) == result.lines.line_text(line)

    def rediagnose_all(self) -> None:
        for uri in list(self._docs):
            self._schedule(uri, delay_s=0.0)

    def clear_all(self) -> None:
        """Diagnostics off: cancel everything, forget results, clear what was published."""
        for tracked in self._docs.values():
            self._cancel_running(tracked)
            if tracked.timer is not None:
                tracked.timer.cancel()
                tracked.timer = None
            tracked.result = None
            if tracked.published:
                self._publish(tracked.uri, None, [])
                tracked.published = False

    def cancel_all(self) -> None:
        for tracked in self._docs.values():
            self._cancel_running(tracked)
            if tracked.timer is not None:
                tracked.timer.cancel()
                tracked.timer = None

    # -- running ------------------------------------------------------------------------------------
    def _schedule(self, uri: str, delay_s: float) -> None:
        tracked = self._docs.get(uri)
        if tracked is None or not self._server.settings.enabled:
            return
        if tracked.timer is not None:
            tracked.timer.cancel()
        loop = asyncio.get_running_loop()
        tracked.timer = loop.call_later(delay_s, self._start, uri)

    def _start(self, uri: str) -> None:
        tracked = self._docs.get(uri)
        if tracked is None:
            return
        tracked.timer = None
        task = asyncio.get_running_loop().create_task(self._run(tracked))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _cancel_running(tracked: _Tracked) -> None:
        if tracked.cancel is not None:
            tracked.cancel.set()
            tracked.cancel = None

    async def _run(self, tracked: _Tracked) -> None:
        server = self._server
        document = server.open_document(tracked.uri)
        if document is None or self._docs.get(tracked.uri) is not tracked:
            return
        version, text = document.version, document.source
        line_starts = document.line_starts() if isinstance(document, LogTextDocument) else None
        if not is_log_document(tracked.uri, tracked.language_id, text[:200_000] + text[-200_000:]):
            if tracked.published:  # it no longer looks like a log (e.g. a .txt file was rewritten)
                self._publish(tracked.uri, version, [])
                tracked.published = False
            tracked.result = None
            return
        self._cancel_running(tracked)
        cancel = threading.Event()
        tracked.cancel = cancel
        progress = (WorkProgress(server, f"Faultline: diagnosing {document_name(tracked.uri)}", cancel)
                    if len(text) >= PROGRESS_MIN_CHARS else None)
        if progress is not None:
            await progress.begin()
        work = partial(analyse_document, server.engine, tracked.uri, version, text,
                       max_bytes=server.settings.max_document_bytes, codec=server.workspace.position_codec,
                       options=server.diagnostic_options(), cancel=cancel,
                       progress=progress.report if progress is not None else None, line_cache=tracked.line_cache,
                       line_starts=line_starts)
        outcome = "done"
        try:
            result = await asyncio.get_running_loop().run_in_executor(server.pool, work)
        except Cancelled:
            outcome = "cancelled"
            return
        except Exception:
            outcome = "failed"
            logger.exception("diagnosing %s failed", document_name(tracked.uri))
            return
        finally:
            if progress is not None:
                progress.end(outcome)
        if self._docs.get(tracked.uri) is not tracked or tracked.version != version or cancel.is_set():
            logger.debug("dropping the result of %s version %s: superseded", tracked.uri, version)
            return
        tracked.cancel = None
        tracked.result = result
        # What the server keeps between diagnoses (results, line caches, documents) is out of the cyclic
        # collector's way from now on: a full collection of it, triggered in the middle of the next diagnosis,
        # holds the GIL for tens of milliseconds, and hovers wait. Refcounting still frees it when replaced.
        gc.freeze()
        if result.publish_body is None or not self._write(result.publish_body):
            self._publish(tracked.uri, version, result.diagnostics)
        tracked.published = True
        logger.info("%s (version %s): %s", document_name(tracked.uri), version, _summary(result))

    async def diagnose_now(self, uri: str) -> DocumentResult:
        """A result for the current text of an open document, whatever its kind or size (explicit request)."""
        server = self._server
        tracked = self._docs.get(uri)
        document = server.open_document(uri)
        if document is None:
            raise KeyError(uri)
        if tracked is not None and tracked.result is not None and tracked.result.diagnosis is not None \
                and tracked.result.version == document.version:
            return tracked.result
        work = partial(analyse_document, server.engine, uri, document.version, document.source, max_bytes=None,
                       codec=server.workspace.position_codec, options=server.diagnostic_options(),
                       cancel=threading.Event())
        result = await asyncio.get_running_loop().run_in_executor(server.pool, work)
        if tracked is not None and tracked.version == result.version:
            tracked.result = result  # hovers and code actions can use it; nothing is published
        return result

    def _write(self, body: str) -> bool:
        """Send a notification serialized in advance; False when there is no transport to write to."""
        protocol = self._server.protocol
        writer = protocol.writer
        if writer is None:
            return False
        data = body.encode("utf-8")
        header = f"Content-Length: {len(data)}\r\nContent-Type: {protocol.CONTENT_TYPE}; charset={protocol.CHARSET}\r\n\r\n"
        written = writer.write(header.encode("ascii") + data)
        if inspect.isawaitable(written):
            task = asyncio.ensure_future(written)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        return True

    def _publish(self, uri: str, version: int | None, diagnostics: list[Diagnostic]) -> None:
        self._server.text_document_publish_diagnostics(
            PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics))


def current_line(text: str, line: int) -> str | None:
    """Line ``line`` (0-based, editor numbering) of ``text``, or None past the end."""
    if "\r" in text:
        index = LineIndex.build(text)
        return index.line_text(line) if line < index.line_count else None
    parts = text.split("\n", line + 1)
    return parts[line] if line < len(parts) else None


def _summary(result: DocumentResult) -> str:
    if result.too_large:
        return "too large to diagnose automatically"
    diagnosis = result.diagnosis
    if diagnosis is None:
        return "not diagnosed"
    root = diagnosis.root_cause
    if root is not None:
        return (f"{diagnosis.verdict.value}, root cause {root.signature_id} on rank {root.rank} "
                f"(line {root.line}), {len(diagnosis.collateral)} collateral line(s)")
    return f"{diagnosis.verdict.value}, {len(result.diagnostics)} diagnostic(s)"
