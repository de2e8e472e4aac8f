"""Newest version wins: results of an older document version are never published over a newer one,
edits are debounced, and hovers answer from the last result while the next diagnosis runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsp_support import OOM_LINE, OOM_LOG, RecordingClient, diagnostics_for, open_document, replace_all
from lsprotocol import types

pytestmark = pytest.mark.asyncio
FILLER = "".join(f"[rank{i % 4}]: step {i} · loss {2.5 - i * 1e-6:.4f} · 312.5 samples/s\n" for i in range(150_000))


def with_oom_on_rank(text: str, rank: int) -> str:
    lines = text.split("\n")
    lines = [line.replace("[rank3]: torch.OutOfMemoryError", f"[rank{rank}]: torch.OutOfMemoryError") for line in lines]
    return "\n".join(lines)


def root_of(params: types.PublishDiagnosticsParams) -> types.Diagnostic:
    (root,) = [d for d in params.diagnostics if d.severity == types.DiagnosticSeverity.Error]
    return root


async def test_an_older_version_is_never_published_over_a_newer_one(vscode: RecordingClient, tmp_path: Path) -> None:
    log = OOM_LOG.read_text(encoding="utf-8")
    slow = FILLER + log  # version 1: large enough that its diagnosis is still running when version 2 arrives
    uri = open_document(vscode, tmp_path / "run.log", slow)
    newer = with_oom_on_rank(log, 2)
    replace_all(vscode, uri, slow, newer, version=2)
    latest = await diagnostics_for(vscode, uri, version=2)
    assert root_of(latest).message.startswith("Root cause · rank 2 · ")
    await asyncio.sleep(1.5)  # anything still in flight for version 1 would arrive now
    versions = [p.version for p in vscode.published if p.uri == uri]
    assert versions == sorted(versions), versions
    assert versions[-1] == 2
    assert root_of(vscode.published[-1]).message.startswith("Root cause · rank 2 · ")


async def test_rapid_edits_are_debounced_to_the_last_version(vscode: RecordingClient, tmp_path: Path) -> None:
    log = OOM_LOG.read_text(encoding="utf-8")
    uri = open_document(vscode, tmp_path / "run.log", log)
    await diagnostics_for(vscode, uri, version=1)
    text = log
    for version, rank in zip(range(2, 7), (0, 1, 2, 0, 1), strict=True):
        new_text = with_oom_on_rank(log, rank)
        replace_all(vscode, uri, text, new_text, version=version)
        text = new_text
    final = await diagnostics_for(vscode, uri, version=6)
    assert root_of(final).message.startswith("Root cause · rank 1 · ")
    await asyncio.sleep(0.5)
    assert {p.version for p in vscode.published if p.uri == uri} <= {1, 6}


async def test_hover_uses_the_last_result_while_a_new_diagnosis_is_pending(vscode: RecordingClient,
                                                                          tmp_path: Path) -> None:
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"faultline": {"debounceMs": 60_000}}))  # edits are not diagnosed until the save
    log = OOM_LOG.read_text(encoding="utf-8")
    path = tmp_path / "run.log"
    uri = open_document(vscode, path, log)
    await diagnostics_for(vscode, uri, version=1)
    appended = log + "[rank0]: one more line\n"
    replace_all(vscode, uri, log, appended, version=2)
    hover = await vscode.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(OOM_LINE, 3)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Root cause" in hover.contents.value
    # once the hovered line itself has changed, the old result no longer describes it
    edited = appended.replace("Tried to allocate 4.35 GiB", "Tried to allocate 8.00 GiB")
    replace_all(vscode, uri, appended, edited, version=3)
    assert await vscode.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(OOM_LINE, 3))) is None
    count = len(vscode.published)
    vscode.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    saved = await diagnostics_for(vscode, uri, version=3, after=count)
    assert "8.00 GiB" in root_of(saved).message
    hover = await vscode.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(OOM_LINE, 3)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "8.00 GiB" in hover.contents.value  # Markdown escapes only what would change the rendering
