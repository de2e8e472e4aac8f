"""The language server under abuse: edit storms, a 50 MB document, hover storms, secrets in every output.

Every test keeps talking to the server afterwards: it must stay up and answer throughout.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest
from lsp_support import OOM_LOG, RecordingClient, diagnostics_for, open_document
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from hardening.secrets_corpus import build_secret_log, find_leaks

pytestmark = pytest.mark.asyncio


def summary(params: types.PublishDiagnosticsParams) -> list[tuple[int, str, int | None]]:
    return sorted((d.range.start.line, d.message, d.severity) for d in params.diagnostics)


async def test_500_quick_edits_end_in_the_diagnosis_of_the_final_text(vscode: RecordingClient,
                                                                       tmp_path: Path) -> None:
    log = OOM_LOG.read_text(encoding="utf-8")
    uri = open_document(vscode, tmp_path / "edited.log", log)
    await diagnostics_for(vscode, uri, version=1)
    text = log
    lines = log.count("\n")
    for version in range(2, 502):  # each edit appends one line at the end, as a growing log does
        line = f"[rank{version % 4}]: step {version} loss 1.{version:03d}\n"
        vscode.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(lines, 0), types.Position(lines, 0)), text=line)]))
        text += line
        lines += 1
    final = await diagnostics_for(vscode, uri, version=501, timeout=60)
    fresh_uri = open_document(vscode, tmp_path / "fresh.log", text)
    fresh = await diagnostics_for(vscode, fresh_uri, version=1, timeout=60)
    assert summary(final) == summary(fresh)
    assert any(d.severity == types.DiagnosticSeverity.Error for d in final.diagnostics)


async def test_a_50_mb_document_and_a_hover_storm(vscode: RecordingClient, tmp_path: Path) -> None:
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"faultline": {"maxDocumentBytes": 64_000_000}}))
    log = OOM_LOG.read_text(encoding="utf-8")
    filler_line = "[rank1]: step 12345 · loss 2.3456 · lr 3.0e-4 · grad_norm 1.02 · 312.5 samples/s\n"
    big = filler_line * (50_000_000 // len(filler_line.encode())) + log
    assert len(big.encode()) > 50_000_000
    small_uri = open_document(vscode, tmp_path / "small.log", log)
    await diagnostics_for(vscode, small_uri, version=1)
    big_uri = open_document(vscode, tmp_path / "big.log", big)
    # a storm of hovers on the small log while the big one is being diagnosed: every one is answered
    latencies = []
    for _ in range(50):
        start = time.perf_counter()
        hover = await asyncio.wait_for(vscode.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(small_uri), types.Position(17, 3))), timeout=10)
        latencies.append(time.perf_counter() - start)
        assert hover is not None
    latencies.sort()
    assert latencies[int(len(latencies) * 0.9)] < 2.0, latencies
    published = await diagnostics_for(vscode, big_uri, version=1, timeout=240)
    root = [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert len(root) == 1 and root[0].range.start.line == big.count("\n") - log.count("\n") + 17


async def test_no_secret_reaches_diagnostics_hovers_or_command_results(vscode: RecordingClient,
                                                                        tmp_path: Path) -> None:
    secret_log = build_secret_log()
    uri = open_document(vscode, tmp_path / "secrets.log", secret_log.text)
    published = await diagnostics_for(vscode, uri, version=1, timeout=60)
    outputs = [json.dumps([(d.message, d.code, [r.message for r in d.related_information or []])
                           for d in published.diagnostics])]
    for diagnostic in published.diagnostics:
        hover = await vscode.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), diagnostic.range.start))
        if hover is not None:
            outputs.append(json.dumps(vscode.protocol._converter.unstructure(hover)))
        actions = await vscode.text_document_code_action_async(types.CodeActionParams(
            types.TextDocumentIdentifier(uri), diagnostic.range,
            types.CodeActionContext(diagnostics=[diagnostic])))
        outputs.append(json.dumps(vscode.protocol._converter.unstructure(actions)))
    result = await vscode.workspace_execute_command_async(types.ExecuteCommandParams(
        command="faultline.diagnoseText", arguments=[{"text": secret_log.text, "name": "secrets.log",
                                                      "includeHtml": True}]))
    outputs.append(json.dumps(result))
    report = await vscode.workspace_execute_command_async(types.ExecuteCommandParams(
        command="faultline.reportForDocument", arguments=[{"uri": uri}]))
    outputs.append(json.dumps(report))
    outputs.extend(message.message for message in vscode.log_messages)
    assert published.diagnostics
    assert find_leaks("\n".join(outputs)) == []
