"""Hovers on matched lines: Markdown for clients that render it, plain text otherwise, secrets masked."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import (
    CONFIG,
    OOM_LINE,
    OOM_LOG,
    WATCHDOG_RANK0_LINE,
    RecordingClient,
    diagnostics_for,
    initialize_params,
    open_document,
    start,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio


def unescape(markdown: str) -> str:
    """The text a reader sees of escaped Markdown prose (backslash escapes removed)."""
    return re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", markdown)


def hover_params(uri: str, line: int, character: int = 12) -> types.HoverParams:
    return types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(line, character))


async def test_hover_on_the_root_cause(client: RecordingClient, workspace: Path) -> None:
    uri = open_document(client, workspace / "logs" / "console.log")
    await diagnostics_for(client, uri)
    hover = await client.text_document_hover_async(hover_params(uri, OOM_LINE))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    value = unescape(hover.contents.value)
    assert "CUDA out of memory (tried to allocate 4.35 GiB)" in value
    assert "rank 3" in value and "**Root cause**" in value
    assert "**Mechanism:**" in value and "caching allocator" in value
    assert "```sh\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n```" in value
    assert "PyTorch >= 2.1" in value  # the version note of the env var
    assert "```sh\nnvidia-smi --query-gpu=index,memory.used,memory.total --format=csv -l 10\n```" in value
    assert "Expect: memory.used stays below" in value
    assert "**Related:** `nccl-watchdog-timeout`" in value
    assert "**References:** `c10/cuda/CUDACachingAllocator.cpp`" in value
    assert re.search(r"\*\*Confidence 0\.\d\d\*\*", value)
    assert "✔" in value  # the reasons behind the confidence
    assert hover.range is not None and hover.range.start.line == OOM_LINE
    # the answer first: the root cause, then the fix in one line and its verification, then the mechanism
    order = [value.index(marker) for marker in ("**Root cause**", "**Fix:**", "**Verify:**", "**Mechanism:**")]
    assert order == sorted(order)
    assert "\\(" not in hover.contents.value and "\\." not in hover.contents.value.replace("\\.py", "")


async def test_hover_on_a_collateral_line_links_to_the_cause(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    hover = await vscode.text_document_hover_async(hover_params(uri, WATCHDOG_RANK0_LINE))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    value = unescape(hover.contents.value)
    assert value.startswith("### NCCL watchdog timeout — rank 0")
    assert "**Collateral**: caused by rank 3" in value
    assert f"[line {OOM_LINE + 1}]({uri}#L{OOM_LINE + 1})" in value
    assert "TORCH_NCCL_TRACE_BUFFER_SIZE=2000" in value


async def test_no_hover_where_nothing_matched(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    assert await vscode.text_document_hover_async(hover_params(uri, 4)) is None
    assert await vscode.text_document_hover_async(hover_params(uri, 10_000)) is None  # past the end
    assert await vscode.text_document_hover_async(hover_params(uri, OOM_LINE, 100_000)) is not None
    unknown = (workspace / "nowhere.log").as_uri()
    assert await vscode.text_document_hover_async(hover_params(unknown, 0)) is None


@pytest_lsp.fixture(config=CONFIG)
async def plain_text_client(lsp_client: RecordingClient, workspace: Path):  # type: ignore[no-untyped-def]
    params = initialize_params("visual-studio-code", workspace)
    assert params.capabilities.text_document is not None and params.capabilities.text_document.hover is not None
    params.capabilities.text_document.hover.content_format = [types.MarkupKind.PlainText]
    await start(lsp_client, params)
    yield
    await lsp_client.shutdown_session()


async def test_plain_text_hover_when_the_client_asks_for_it(plain_text_client: RecordingClient,
                                                            workspace: Path) -> None:
    uri = open_document(plain_text_client, workspace / "logs" / "console.log")
    await diagnostics_for(plain_text_client, uri)
    hover = await plain_text_client.text_document_hover_async(hover_params(uri, OOM_LINE))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.PlainText
    value = hover.contents.value
    assert "```" not in value and "**" not in value
    assert "Root cause of this run: rank 3 failed first" in value
    assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in value
    assert "Verify: nvidia-smi" in value


async def test_hover_masks_secrets(vscode: RecordingClient, tmp_path: Path) -> None:
    watchdog = OOM_LOG.read_text(encoding="utf-8").split("\n")[WATCHDOG_RANK0_LINE]
    text = "\n".join([
        "[rank1]: FATAL: cannot reach https://trainer:s3cr3tpassw0rd@storage.internal/bucket "
        "(token hf_abcdefghijklmnopqrstuvwxyz0123456789AB)",
        watchdog,  # every rank of the job times out: no rank is silent, none is named
        watchdog.replace("[rank0]", "[rank1]").replace("[Rank 0]", "[Rank 1]"),
    ]) + "\n"
    uri = open_document(vscode, tmp_path / "secret.log", text)
    published = await diagnostics_for(vscode, uri)
    assert any(d.code == "suspicious" and d.range.start.line == 0 for d in published.diagnostics)
    hover = await vscode.text_document_hover_async(hover_params(uri, 0))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "Suspicious line" in hover.contents.value
    assert "s3cr3tpassw0rd" not in hover.contents.value and "hf_abcdefghij" not in hover.contents.value
    assert "****" in hover.contents.value
    for diagnostic in published.diagnostics:
        assert "s3cr3tpassw0rd" not in diagnostic.message and "hf_abcdefghij" not in diagnostic.message
