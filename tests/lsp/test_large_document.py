"""A 200,000-line log: its first diagnostics arrive, and the server keeps answering other requests
(hovers here) while it parses and diagnoses it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsp_support import OOM_LINE, OOM_LOG, RecordingClient, diagnostics_for, open_document
from lsprotocol import types

pytestmark = [pytest.mark.asyncio, pytest.mark.slow]
LINES = 200_000
HOVER_BUDGET_S = 2.0
FIXTURE_LINES = OOM_LOG.read_text(encoding="utf-8").count("\n")
ROOT_LINE = LINES - FIXTURE_LINES + OOM_LINE


def big_log() -> str:
    steps = "".join(f"[rank{i % 4}]: step {i} · loss {2.5 - i * 1e-6:.4f} · lr 3.0e-04 · 312.5 samples/s\n"
                    for i in range(LINES - FIXTURE_LINES))
    return steps + OOM_LOG.read_text(encoding="utf-8")


async def hover(client: RecordingClient, uri: str, line: int) -> tuple[types.Hover | None, float]:
    start = time.monotonic()
    answer = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line, 4)))
    return answer, time.monotonic() - start


async def test_hovers_are_answered_while_a_200k_line_log_is_diagnosed(vscode: RecordingClient,
                                                                      tmp_path: Path) -> None:
    small = open_document(vscode, tmp_path / "small.log", OOM_LOG.read_text(encoding="utf-8"))
    await diagnostics_for(vscode, small)
    text = big_log()
    assert text.count("\n") == LINES
    large = open_document(vscode, tmp_path / "large.log", text)
    # sent right behind the 14 MB didOpen: answered from the small log's result, not after the diagnosis
    answer, elapsed = await hover(vscode, small, OOM_LINE)
    assert answer is not None and "Root cause" in str(answer.contents)
    assert elapsed < HOVER_BUDGET_S, f"hover took {elapsed:.2f} s during the large diagnosis"
    _, elapsed = await hover(vscode, large, ROOT_LINE)  # no result yet, or already one: either way, fast
    assert elapsed < HOVER_BUDGET_S
    published = await diagnostics_for(vscode, large, timeout=60)
    (root,) = [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert root.range.start.line == ROOT_LINE
    answer, elapsed = await hover(vscode, large, ROOT_LINE)
    assert answer is not None and "Root cause" in str(answer.contents)
    assert elapsed < HOVER_BUDGET_S


async def test_a_stream_of_hovers_keeps_being_answered_during_edits_of_a_large_log(vscode: RecordingClient,
                                                                                  tmp_path: Path) -> None:
    text = big_log()
    large = open_document(vscode, tmp_path / "large.log", text)
    await diagnostics_for(vscode, large, version=1, timeout=60)
    # append lines (the training run is still writing) while hovering the root cause
    for version in range(2, 6):
        end = types.Position(text.count("\n"), 0)
        addition = f"[rank0]: step {version} · loss 2.0\n"
        vscode.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=large, version=version),
            content_changes=[types.TextDocumentContentChangePartial(range=types.Range(end, end), text=addition)]))
        text += addition
        answer, elapsed = await hover(vscode, large, ROOT_LINE)
        assert answer is not None and elapsed < HOVER_BUDGET_S
        await asyncio.sleep(0.05)
    await diagnostics_for(vscode, large, version=5, timeout=60)
