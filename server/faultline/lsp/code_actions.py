"""Code actions on diagnosed lines, and the launch-script fix they share with ``faultline.applyFix``.

On the root cause: set the fix's environment variables in the workspace launch script (a WorkspaceEdit
inserting ``export`` lines before the launching command), run the verification command and copy the fix
(client-side commands, offered only to clients that implement them), open the signature's file. On a
collateral line: go to the root cause. All actions are ``quickfix`` actions tied to the line's diagnostics.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol.types import (
    CodeAction,
    CodeActionDisabled,
    CodeActionKind,
    CodeActionParams,
    Command,
    Diagnostic,
    OptionalVersionedTextDocumentIdentifier,
    Position,
    Range,
    TextDocumentEdit,
    TextEdit,
    WorkspaceEdit,
)

from ..library import Signature
from ..model import Event, Role
from ..render.common import shorten
from .capabilities import COPY_TEXT, RUN_VERIFICATION
from .diagnostics import line_range
from .documents import DocumentResult, uri_path
from .launch_script import (
    SCRIPT_SUFFIXES,
    EnvEdit,
    find_launch_scripts,
    is_env_file,
    plan_env_edit,
    split_lines,
)
from .lines import client_units

if TYPE_CHECKING:
    from .server import FaultlineServer

OPEN_SIGNATURE = "faultline.openSignature"  # server side: window/showDocument of the signature file
SHOW_LOCATION = "faultline.showLocation"  # server side: window/showDocument with a selection
MAX_LINES = 500


@dataclass
class FixPlan:
    """Where a signature's environment variables would go, and the edit that puts them there."""

    signature: Signature
    script: Path | None
    env_edit: EnvEdit | None
    workspace_edit: WorkspaceEdit | None
    message: str


def fix_text(sig: Signature) -> str:
    """The fix as text a person pastes: summary, steps and export lines."""
    out = [f"# {sig.qualified_id}: {sig.fix.summary}"]
    out += [f"# {n}. {step}" for n, step in enumerate(sig.fix.steps, 1)]
    for env in sig.fix.env:
        out.append(f"export {env.name}={env.value}" + (f"  # {env.note}" if env.note else ""))
    return "\n".join(out) + "\n"


def _exports(sig: Signature) -> str:
    return "; ".join(f"export {e.name}={e.value}" for e in sig.fix.env)


async def plan_fix(server: FaultlineServer, sig: Signature, uri: str | None) -> FixPlan:
    """Plan the env-var edit for ``sig``. ``uri`` is a launch script to edit, or the log to search near."""
    if not sig.fix.env:
        return FixPlan(sig, None, None, None, f"{sig.qualified_id} has no environment variables to set; "
                                               f"its fix: {sig.fix.summary}")
    given = Path(uri_path(uri) or "") if uri is not None and uri_path(uri) else None
    target = given if given is not None and (given.suffix.lower() in SCRIPT_SUFFIXES or is_env_file(given)) else None
    near = None if target is not None else given
    roots = server.workspace_roots()

    def locate() -> tuple[Path | None, str | None]:
        candidates = [target] if target is not None else find_launch_scripts(roots, near)
        for candidate in candidates:
            try:
                return candidate, candidate.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
        return None, None

    script, text = await asyncio.get_running_loop().run_in_executor(server.pool, locate)
    open_document = server.open_document_for_path(script) if script is not None else None
    if open_document is not None:  # edit what the user sees, unsaved changes included
        text = open_document.source
    if script is None or text is None:
        return FixPlan(sig, None, None, None, "no launch script found in the workspace (a *.sh, *.slurm or *.sbatch "
                                              "file that runs torchrun, deepspeed, srun or accelerate launch, or a "
                                              f".env file); set it yourself: {_exports(sig)}")
    comment = shorten(f"faultline: {sig.qualified_id}: {sig.fix.summary}".replace("\n", " "), 120)
    env_edit = plan_env_edit(script, text, sig.fix.env, comment)
    if env_edit is None:
        return FixPlan(sig, script, None, None, f"{script} does not run a launcher command; set it yourself: "
                                                f"{_exports(sig)}")
    if not env_edit.added:
        return FixPlan(sig, script, env_edit, None, f"{script} already sets {', '.join(env_edit.already_set)}")
    uri_of_script = open_document.uri if open_document is not None else script.as_uri()
    version = open_document.version if open_document is not None else None
    edit = _workspace_edit(server, uri_of_script, version, text, env_edit)
    skipped = f" ({', '.join(env_edit.already_set)} already set)" if env_edit.already_set else ""
    return FixPlan(sig, script, env_edit, edit, f"set {', '.join(env_edit.added)} in {script}{skipped}")


def _workspace_edit(server: FaultlineServer, uri: str, version: int | None, text: str,
                    env_edit: EnvEdit) -> WorkspaceEdit:
    lines = split_lines(text)
    if env_edit.needs_leading_newline and lines:
        last = len(lines) - 1
        position = Position(last, client_units(lines[last], server.workspace.position_codec))
        new_text = ("\r\n" if "\r\n" in text else "\n") + env_edit.text
    else:
        position, new_text = Position(env_edit.line, 0), env_edit.text
    text_edit = TextEdit(range=Range(position, position), new_text=new_text)
    if server.client.document_changes:
        return WorkspaceEdit(document_changes=[TextDocumentEdit(
            text_document=OptionalVersionedTextDocumentIdentifier(uri=uri, version=version), edits=[text_edit])])
    return WorkspaceEdit(changes={uri: [text_edit]})


# -- the code action request ----------------------------------------------------------------------------
async def code_actions(server: FaultlineServer, params: CodeActionParams) -> list[CodeAction]:
    uri = params.text_document.uri
    result = server.logs.result(uri)
    if result is None or result.diagnosis is None:
        return []
    first = params.range.start.line
    last = min(params.range.end.line, first + MAX_LINES)
    actions: list[CodeAction] = []
    for line in range(first, last + 1):
        events = result.events_by_line.get(line, [])
        if not events or not server.logs.line_unchanged(uri, result, line):
            continue
        diagnostics = result.diagnostics_by_line.get(line, [])
        for event in events:
            if event is result.diagnosis.root_cause:
                actions += await _root_actions(server, result, event, diagnostics)
            elif event.role is Role.COLLATERAL and event.caused_by is not None:
                action = _go_to_cause(server, result, event, diagnostics)
                if action is not None:
                    actions.append(action)
    only = params.context.only
    if only:
        actions = [a for a in actions if any((a.kind or "").startswith(str(kind)) for kind in only)]
    return actions


async def _root_actions(server: FaultlineServer, result: DocumentResult, event: Event,
                        diagnostics: list[Diagnostic]) -> list[CodeAction]:
    sig = (result.diagnosis.root_signature if result.diagnosis is not None  # its fix as it applies to this failure
           else server.engine.library.get(event.signature_id))
    if sig is None:
        return []
    actions: list[CodeAction] = []
    if sig.fix.env:
        plan = await plan_fix(server, sig, result.uri)
        names = ", ".join(f"{e.name}={e.value}" for e in sig.fix.env)
        if plan.workspace_edit is not None and plan.script is not None:
            actions.append(CodeAction(
                title=f"Faultline: set {', '.join(plan.env_edit.added if plan.env_edit else ())} in "
                      f"{_short_path(server, plan.script)}",
                kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None, is_preferred=True,
                edit=plan.workspace_edit))
        elif server.client.disabled_code_actions:
            actions.append(CodeAction(title=f"Faultline: set {names} in the launch script",
                                      kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                                      disabled=CodeActionDisabled(reason=plan.message)))
    if RUN_VERIFICATION in server.client.commands and sig.verification.command:
        title = f"Faultline: run the verification command ({shorten(sig.verification.command, 60)})"
        actions.append(CodeAction(title=title, kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                                  command=Command(title=title, command=RUN_VERIFICATION, arguments=[sig.verification.command])))
    if COPY_TEXT in server.client.commands:
        title = "Faultline: copy the fix"
        actions.append(CodeAction(title=title, kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                                  command=Command(title=title, command=COPY_TEXT, arguments=[fix_text(sig)])))
    if server.client.show_document:
        title = f"Faultline: open signature {sig.qualified_id}"
        actions.append(CodeAction(title=title, kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                                  command=Command(title=title, command=OPEN_SIGNATURE, arguments=[{"signatureId": sig.id}])))
    return actions


def _go_to_cause(server: FaultlineServer, result: DocumentResult, event: Event,
                 diagnostics: list[Diagnostic]) -> CodeAction | None:
    cause = event.caused_by
    if cause is None or cause.file != result.name or not server.client.show_document:
        return None
    editor_line = result.lines.editor_line(cause.line)
    where = line_range(result.lines, editor_line, server.workspace.position_codec)
    rank = f"rank {cause.rank}" if cause.rank is not None else "rank ?"
    title = f"Faultline: go to the root cause ({rank}, line {editor_line + 1})"
    argument: dict[str, Any] = {"uri": result.uri, "range": _range_json(where)}
    return CodeAction(title=title, kind=CodeActionKind.QuickFix, diagnostics=diagnostics or None,
                      command=Command(title=title, command=SHOW_LOCATION, arguments=[argument]))


def _range_json(where: Range) -> dict[str, Any]:
    return {"start": {"line": where.start.line, "character": where.start.character},
            "end": {"line": where.end.line, "character": where.end.character}}


def _short_path(server: FaultlineServer, path: Path) -> str:
    for root in server.workspace_roots():
        try:
            return str(path.relative_to(root))
        except ValueError:
            continue
    return str(path)
