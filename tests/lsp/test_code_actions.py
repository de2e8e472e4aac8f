"""Code actions: the env-var fix as a WorkspaceEdit on the workspace launch script, the client-side
verification and copy commands, opening the signature, and going from a collateral line to the cause."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from lsp_support import (
    OOM_LINE,
    WATCHDOG_RANK0_LINE,
    RecordingClient,
    apply_text_edits,
    diagnostics_for,
    edits_for,
    open_document,
    wait_for,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio

EXPECTED_SCRIPT_TAIL = """export NCCL_DEBUG=WARN

# faultline: memory/cuda-oom: Lower the per-GPU memory footprint of the failing step.
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
srun --nodes=2 --ntasks-per-node=1 \\
    torchrun"""


async def actions_at(client: RecordingClient, uri: str, line: int) -> list[types.CodeAction]:
    published = client.diagnostics.get(uri, [])
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(types.Position(line, 5), types.Position(line, 5)),
        context=types.CodeActionContext(diagnostics=[d for d in published if d.range.start.line == line]))
    actions = await client.text_document_code_action_async(params)
    assert actions is not None
    return [a for a in actions if isinstance(a, types.CodeAction)]


async def test_root_cause_actions(client: RecordingClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "logs" / "console.log")
    await diagnostics_for(client, uri)
    actions = {a.title: a for a in await actions_at(client, uri, OOM_LINE)}

    fix = actions["Faultline: set PYTORCH_CUDA_ALLOC_CONF in launch.sh"]
    assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
    assert fix.diagnostics and fix.diagnostics[0].code == "cuda-oom"
    assert fix.edit is not None
    script = workspace / "launch.sh"
    edits = edits_for(fix.edit, script.as_uri())
    assert len(edits) == 1
    # VS Code declares documentChanges (a versioned edit); Neovim gets the plain `changes` map
    assert (fix.edit.document_changes is not None) == (client.capabilities.workspace.workspace_edit.document_changes
                                                       is True)
    edited = apply_text_edits(script.read_text(encoding="utf-8"), edits)
    assert EXPECTED_SCRIPT_TAIL in edited
    if shutil.which("bash"):
        assert subprocess.run(["bash", "-n"], input=edited, text=True, check=False).returncode == 0

    opening = actions["Faultline: open signature memory/cuda-oom"]
    assert opening.command is not None and opening.command.command == "faultline.openSignature"
    assert list(opening.command.arguments or []) == [{"signatureId": "cuda-oom"}]
    shown = len(client.shown_documents)
    answer = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=opening.command.command, arguments=opening.command.arguments))
    assert answer["shown"] is True
    shown_document = client.shown_documents[shown]
    assert shown_document.uri.endswith("/fixtures/signatures/cuda-oom.toml")
    assert shown_document.selection is not None and shown_document.selection.start.line == 3  # the `id =` line

    client_side = {a.command.command for a in actions.values() if a.command is not None}
    if client.capabilities.general and client.capabilities.general.position_encodings:  # Neovim
        assert "faultline.runVerification" not in client_side and "faultline.copyText" not in client_side
    else:  # VS Code: the extension implements the client-side commands
        verify = next(a for a in actions.values() if a.command and a.command.command == "faultline.runVerification")
        assert verify.command is not None
        command = "nvidia-smi --query-gpu=index,memory.used,memory.total --format=csv -l 10"
        assert list(verify.command.arguments or []) == [command]
        copy = actions["Faultline: copy the fix"]
        assert copy.command is not None and copy.command.command == "faultline.copyText"
        assert copy.command.arguments is not None
        assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in copy.command.arguments[0]


async def test_go_to_the_root_cause_from_a_collateral_line(client: RecordingClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "logs" / "console.log")
    await diagnostics_for(client, uri)
    (action,) = await actions_at(client, uri, WATCHDOG_RANK0_LINE)
    assert action.title == f"Faultline: go to the root cause (rank 3, line {OOM_LINE + 1})"
    assert action.command is not None and action.command.command == "faultline.showLocation"
    await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments))
    shown = await wait_for(lambda: client.shown_documents[-1] if client.shown_documents else None)
    assert shown.uri == uri and shown.selection is not None
    assert shown.selection.start == types.Position(OOM_LINE, 0)


async def test_variables_already_set_are_not_added_again(vscode: RecordingClient, workspace: Path) -> None:
    script = workspace / "launch.sh"
    script.write_text(script.read_text(encoding="utf-8").replace(
        "export NCCL_DEBUG=WARN", "export NCCL_DEBUG=WARN\nexport PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512"),
        encoding="utf-8")
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    actions = await actions_at(vscode, uri, OOM_LINE)
    disabled = [a for a in actions if a.disabled is not None]
    assert len(disabled) == 1 and disabled[0].edit is None
    assert "already sets PYTORCH_CUDA_ALLOC_CONF" in disabled[0].disabled.reason  # type: ignore[union-attr]


async def test_only_missing_variables_are_added_and_an_open_script_is_edited_as_shown(
        vscode: RecordingClient, workspace: Path) -> None:
    script = workspace / "launch.sh"
    unsaved = script.read_text(encoding="utf-8").replace("set -euo pipefail", "set -euo pipefail\n"
                                                         "export TORCH_NCCL_DUMP_ON_TIMEOUT=1")
    script_uri = open_document(vscode, script, unsaved, language_id="shellscript", version=7)
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    answer = await vscode.workspace_execute_command_async(types.ExecuteCommandParams(
        command="faultline.applyFix", arguments=[{"signatureId": "nccl-watchdog-timeout", "uri": uri}]))
    assert answer["applied"] is True and answer["file"] == str(script)
    (applied,) = vscode.applied_edits
    assert applied.edit.document_changes is not None
    change = applied.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 7
    edited = apply_text_edits(unsaved, edits_for(applied.edit, script_uri))
    assert "export TORCH_NCCL_TRACE_BUFFER_SIZE=2000\nsrun" in edited
    assert edited.count("TORCH_NCCL_DUMP_ON_TIMEOUT") == 1
    assert "TORCH_NCCL_DUMP_ON_TIMEOUT already set" in answer["message"]


async def test_dotenv_file_when_there_is_no_launch_script(vscode: RecordingClient, workspace: Path) -> None:
    (workspace / "launch.sh").unlink()
    (workspace / ".env").write_text("WANDB_PROJECT=llm\nHF_HOME=/data/hf", encoding="utf-8")  # no final newline
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    actions = {a.title: a for a in await actions_at(vscode, uri, OOM_LINE)}
    fix = actions["Faultline: set PYTORCH_CUDA_ALLOC_CONF in .env"]
    assert fix.edit is not None
    edited = apply_text_edits((workspace / ".env").read_text(encoding="utf-8"),
                              edits_for(fix.edit, (workspace / ".env").as_uri()))
    assert edited == ("WANDB_PROJECT=llm\nHF_HOME=/data/hf\n# faultline: memory/cuda-oom: Lower the per-GPU memory "
                      "footprint of the failing step.\nPYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n")


async def test_no_launch_script_gives_a_disabled_action_with_the_reason(vscode: RecordingClient,
                                                                        workspace: Path) -> None:
    (workspace / "launch.sh").unlink()
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    (disabled,) = [a for a in await actions_at(vscode, uri, OOM_LINE) if a.disabled is not None]
    assert "no launch script found" in disabled.disabled.reason  # type: ignore[union-attr]
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in disabled.disabled.reason  # type: ignore[union-attr]


async def test_code_actions_on_unknown_documents_and_plain_lines(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    assert await actions_at(vscode, uri, 4) == []
    assert await actions_at(vscode, (workspace / "other.log").as_uri(), OOM_LINE) == []
    only_refactor = await vscode.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=types.Range(types.Position(OOM_LINE, 0), types.Position(OOM_LINE, 0)),
        context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.Refactor])))
    assert not only_refactor
