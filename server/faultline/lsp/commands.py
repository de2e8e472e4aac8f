"""Server-side commands (``workspace/executeCommand``), with the arguments of the contract.

Each command takes one argument object. Diagnoses run off the event loop, report work-done progress and
stop when the client cancels (``$/cancelRequest`` or the progress bar's cancel): the engine's ``cancel``
flag is set and the request ends with ``RequestCancelled``. Every result is masked: the engine masks each
diagnosis before a view renders it, and messages here hold no log text.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol.types import ApplyWorkspaceEditParams, Position, Range, ShowDocumentParams
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled

from ..diagnosis import Diagnosis
from ..engine import Cancelled, InputError
from ..reasoning.fixes import applicable
from ..render import render_html
from ..render.json_out import diagnosis_json
from .code_actions import OPEN_SIGNATURE, SHOW_LOCATION, plan_fix
from .documents import DocumentResult, uri_path
from .progress import WorkProgress

if TYPE_CHECKING:
    from .server import FaultlineServer

DIAGNOSE_TEXT = "faultline.diagnoseText"
DIAGNOSE_PATH = "faultline.diagnosePath"
REPORT_FOR_DOCUMENT = "faultline.reportForDocument"
APPLY_FIX = "faultline.applyFix"
RELOAD_SIGNATURES = "faultline.reloadSignatures"
APPLY_EDIT_TIMEOUT_S = 120.0
PROGRESS_MIN_TEXT_CHARS = 1_000_000


def _argument(command: str, arguments: Sequence[object], required: dict[str, type | tuple[type, ...]],
              optional: dict[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """The one argument object of a command, checked; raises InvalidParams naming what is wrong."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        shape = ", ".join([f'"{k}"' for k in required] + [f'"{k}"?' for k in optional])
        raise JsonRpcInvalidParams(f"{command}: expected one argument object {{{shape}}}")
    value: dict[str, Any] = arguments[0]
    for key, kind in {**required, **optional}.items():
        if key not in value:
            if key in required:
                raise JsonRpcInvalidParams(f"{command}: missing \"{key}\"")
            continue
        if not isinstance(value[key], kind) or (kind is int and isinstance(value[key], bool)):
            raise JsonRpcInvalidParams(f"{command}: \"{key}\" has the wrong type")
    return value


async def _run_diagnosis(server: FaultlineServer, title: str, work: Callable[..., Diagnosis],
                         with_progress: bool) -> Diagnosis:
    """Run ``work(cancel=..., progress=...)`` in the pool; a cancel from the client stops the engine."""
    cancel = threading.Event()
    request_cancelled = threading.Event()
    request_id = server.protocol.msg_id

    def on_request_cancel() -> None:
        request_cancelled.set()
        cancel.set()

    if request_id is not None:
        server.protocol.cancel_listeners[request_id] = on_request_cancel
    progress = WorkProgress(server, title, cancel) if with_progress else None
    outcome = "done"
    try:
        if progress is not None:
            await progress.begin()
        return await asyncio.get_running_loop().run_in_executor(
            server.pool, partial(work, cancel=cancel.is_set, progress=progress.report if progress else None))
    except asyncio.CancelledError:
        cancel.set()
        outcome = "cancelled"
        raise
    except Cancelled:
        outcome = "cancelled"
        if request_cancelled.is_set():  # pygls has already answered RequestCancelled
            raise asyncio.CancelledError() from None
        raise JsonRpcRequestCancelled(f"{title}: cancelled") from None  # the progress bar's cancel button
    except InputError as error:
        outcome = "failed"
        raise JsonRpcInvalidParams(str(error)) from None
    finally:
        if request_id is not None:
            server.protocol.cancel_listeners.pop(request_id, None)
        if progress is not None:
            progress.end(outcome)


async def _answer(server: FaultlineServer, diagnosis: Diagnosis, include_html: bool) -> dict[str, Any]:
    if diagnosis.root_signature is not None:
        server.recent_fixes[diagnosis.root_signature.id] = diagnosis.root_signature

    def render() -> dict[str, Any]:
        answer = diagnosis_json(diagnosis)
        if include_html:
            answer["html"] = render_html(diagnosis)
        return answer

    return await asyncio.get_running_loop().run_in_executor(server.pool, render)


async def diagnose_text(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(DIAGNOSE_TEXT, arguments, {"text": str}, {"name": str, "includeHtml": bool})
    engine = server.engine
    name = args.get("name") or "<text>"
    diagnosis = await _run_diagnosis(server, f"Faultline: diagnosing {name}",
                                     partial(engine.diagnose_text, args["text"], name),
                                     with_progress=len(args["text"]) >= PROGRESS_MIN_TEXT_CHARS)
    return await _answer(server, diagnosis, bool(args.get("includeHtml")))


async def diagnose_path(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(DIAGNOSE_PATH, arguments, {"paths": list}, {"includeHtml": bool})
    paths: list[str] = []
    roots = server.workspace_roots()
    for raw in args["paths"]:
        if not isinstance(raw, str) or not raw.strip():
            raise JsonRpcInvalidParams(f"{DIAGNOSE_PATH}: \"paths\" must be a list of file or folder paths")
        if raw.strip() == "-":  # stdin is the protocol stream: never read it as a log
            raise JsonRpcInvalidParams(f"{DIAGNOSE_PATH}: \"-\" (stdin) cannot be diagnosed by the server")
        local = uri_path(raw) if raw.startswith("file:") else raw
        path = Path(local or raw).expanduser()
        if not path.is_absolute() and roots:
            path = roots[0] / path
        paths.append(str(path))
    if not paths:
        raise JsonRpcInvalidParams(f"{DIAGNOSE_PATH}: \"paths\" is empty")
    engine = server.engine
    title = f"Faultline: diagnosing {paths[0]}" + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")
    diagnosis = await _run_diagnosis(server, title, partial(engine.diagnose_paths, paths), with_progress=True)
    return await _answer(server, diagnosis, bool(args.get("includeHtml")))


async def report_for_document(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(REPORT_FOR_DOCUMENT, arguments, {"uri": str}, {})
    uri = args["uri"]
    result: DocumentResult | None = server.logs.result(uri)
    if result is None or result.diagnosis is None or result.version != server.logs.version(uri):
        if server.open_document(uri) is None:
            raise JsonRpcInvalidParams(f"{REPORT_FOR_DOCUMENT}: {uri} is not an open document "
                                       f"(use {DIAGNOSE_PATH} for files on disk)")
        result = await server.logs.diagnose_now(uri)
    diagnosis = result.diagnosis
    assert diagnosis is not None
    answer = await _answer(server, diagnosis, include_html=True)
    html = answer.pop("html")
    return {"diagnosis": answer, "html": html}


async def apply_fix(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(APPLY_FIX, arguments, {"signatureId": str}, {"uri": str})
    known = server.engine.library.get(args["signatureId"])
    if known is None:
        raise JsonRpcInvalidParams(f"{APPLY_FIX}: no signature \"{args['signatureId']}\"")
    # The fix as it applies to the failure diagnosed with this signature (the open log's, else the last command's);
    # without one, nothing conditional.
    document = server.logs.result(args["uri"]) if args.get("uri") else None
    root = document.diagnosis.root_signature if document is not None and document.diagnosis is not None else None
    sig = root if root is not None and root.id == known.id else server.recent_fixes.get(known.id)
    sig = sig or applicable(known, None)
    plan = await plan_fix(server, sig, args.get("uri"))
    file = str(plan.script) if plan.script is not None else None
    if plan.workspace_edit is None:
        return {"applied": False, "file": file, "message": plan.message}
    if not server.client.apply_edit:
        return {"applied": False, "file": file, "message": f"the editor cannot apply edits; {plan.message}"}
    try:
        reply = await asyncio.wait_for(server.workspace_apply_edit_async(ApplyWorkspaceEditParams(
            edit=plan.workspace_edit, label=f"Faultline: {sig.qualified_id} fix")), APPLY_EDIT_TIMEOUT_S)
    except (JsonRpcException, asyncio.TimeoutError) as error:
        return {"applied": False, "file": file, "message": f"the editor did not apply the edit: {error}"}
    if not reply.applied:
        reason = reply.failure_reason or "the editor refused the edit"
        return {"applied": False, "file": file, "message": reason}
    return {"applied": True, "file": file, "message": plan.message[0].upper() + plan.message[1:]}


async def reload_signatures(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    if arguments and not (len(arguments) == 1 and arguments[0] in ({}, None)):
        raise JsonRpcInvalidParams(f"{RELOAD_SIGNATURES}: expected no arguments")
    engine = await server.reload_engine()
    return {"signatures": len(engine.library), "problems": [str(p) for p in engine.library.problems]}


async def open_signature(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(OPEN_SIGNATURE, arguments, {"signatureId": str}, {})
    sig = server.engine.library.get(args["signatureId"])
    if sig is None:
        raise JsonRpcInvalidParams(f"{OPEN_SIGNATURE}: no signature \"{args['signatureId']}\"")
    line = max(sig.line_of("id") - 1, 0)
    shown = await _show(server, sig.path.resolve().as_uri(), Range(Position(line, 0), Position(line, 0)))
    return {"shown": shown, "file": str(sig.path)}


async def show_location(server: FaultlineServer, arguments: Sequence[object]) -> dict[str, Any]:
    args = _argument(SHOW_LOCATION, arguments, {"uri": str, "range": dict}, {})
    try:
        start, end = args["range"]["start"], args["range"]["end"]
        selection = Range(Position(int(start["line"]), int(start["character"])),
                          Position(int(end["line"]), int(end["character"])))
    except (KeyError, TypeError, ValueError):
        raise JsonRpcInvalidParams(f"{SHOW_LOCATION}: \"range\" must be an LSP range") from None
    return {"shown": await _show(server, args["uri"], selection)}


async def _show(server: FaultlineServer, uri: str, selection: Range) -> bool:
    if not server.client.show_document:
        return False
    try:
        reply = await asyncio.wait_for(server.window_show_document_async(
            ShowDocumentParams(uri=uri, take_focus=True, selection=selection)), APPLY_EDIT_TIMEOUT_S)
    except (JsonRpcException, asyncio.TimeoutError):
        return False
    return bool(reply.success)


COMMANDS: dict[str, Callable[[FaultlineServer, Sequence[object]], Any]] = {
    DIAGNOSE_TEXT: diagnose_text,
    DIAGNOSE_PATH: diagnose_path,
    REPORT_FOR_DOCUMENT: report_for_document,
    APPLY_FIX: apply_fix,
    RELOAD_SIGNATURES: reload_signatures,
    OPEN_SIGNATURE: open_signature,
    SHOW_LOCATION: show_location,
}
