"""Diagnostics on log documents: root cause, collateral with related information, suspicious lines,
position units, settings (severity, size limit, on/off) and which documents count as logs."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsp_support import (
    OOM_LINE,
    OOM_LOG,
    WATCHDOG_RANK0_LINE,
    WATCHDOG_RANK1_LINE,
    RecordingClient,
    diagnostics_for,
    open_document,
    units,
)
from lsprotocol import types

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.asyncio


def line(text: str, number: int) -> str:
    return text.split("\n")[number]


async def test_oom_cascade_root_cause_and_collateral(client: RecordingClient, workspace: Path) -> None:
    log = workspace / "logs" / "console.log"
    text = log.read_text(encoding="utf-8")
    uri = open_document(client, log)
    published = await diagnostics_for(client, uri, version=1)
    by_line = {d.range.start.line: d for d in published.diagnostics}

    root = by_line[OOM_LINE]
    assert root.message.startswith("Root cause · rank 3 · CUDA out of memory (tried to allocate 4.35 GiB) (6 "
                                   "collateral lines on 2 other rank(s) and 2 unattributed")
    assert root.message.endswith("; the first of each is linked, and every one links back here)")
    assert root.severity == types.DiagnosticSeverity.Error
    assert (root.code, root.source) == ("cuda-oom", "faultline")
    assert root.range == types.Range(types.Position(OOM_LINE, 0),
                                     types.Position(OOM_LINE, units(line(text, OOM_LINE), client.position_encoding)))
    related = {r.location.range.start.line: r for r in root.related_information or []}
    assert {WATCHDOG_RANK0_LINE, WATCHDOG_RANK1_LINE} <= set(related)
    assert all(r.location.uri == uri for r in related.values())
    assert related[WATCHDOG_RANK0_LINE].message.startswith("Collateral · rank 0 · NCCL watchdog timeout")

    for number, rank in ((WATCHDOG_RANK0_LINE, 0), (WATCHDOG_RANK1_LINE, 1)):
        collateral = by_line[number]
        assert collateral.message == f"Collateral · rank {rank} · NCCL watchdog timeout, caused by rank 3 (line 18)"
        assert collateral.severity == types.DiagnosticSeverity.Warning
        assert collateral.code == "nccl-watchdog-timeout"
        back = collateral.related_information or []
        assert len(back) == 1 and back[0].location.uri == uri
        assert back[0].location.range.start.line == OOM_LINE
        assert back[0].message.startswith("Root cause · rank 3 · CUDA out of memory")
    # the root cause lists the first collateral line of each rank (a handful, not all); every collateral
    # diagnostic links back to it, and nothing else is marked
    collateral_lines = {n for n, d in by_line.items() if n != OOM_LINE}
    assert set(related) <= collateral_lines and 2 <= len(related) <= 3  # ranks 0 and 1 (and unattributed)
    assert all(d.severity == types.DiagnosticSeverity.Warning for n, d in by_line.items() if n != OOM_LINE)


async def test_ranges_count_in_the_negotiated_position_units(client: RecordingClient, tmp_path: Path) -> None:
    # The OOM line carries trailing non-ASCII text (a BMP character and one outside the BMP) so that its
    # length differs in UTF-8, UTF-16 and UTF-32 units; the rest of the line is the upstream format.
    oom = OOM_LOG.read_text(encoding="utf-8").split("\n")[OOM_LINE]
    text = f"[rank0]: step 10 · loss 2.1\n{oom} — ⏱ 🚀 still here\n"
    uri = open_document(client, tmp_path / "encoded.log", text)
    published = await diagnostics_for(client, uri)
    (root,) = [d for d in published.diagnostics if d.code == "cuda-oom"]
    expected = units(text.split("\n")[1], client.position_encoding)
    assert root.range.start == types.Position(1, 0)
    assert root.range.end == types.Position(1, expected)
    assert expected != len(text.split("\n")[1]) or client.position_encoding == "utf-32"


async def test_progress_bar_rewrites_put_the_diagnostic_on_the_visible_line(vscode: RecordingClient,
                                                                           tmp_path: Path) -> None:
    oom = OOM_LOG.read_text(encoding="utf-8").split("\n")[OOM_LINE]
    # tqdm rewrites its line with carriage returns; the editor shows each segment as a line of its own
    text = f"epoch 1:  10%|#         | 1/10\repoch 1:  20%|##        | 2/10\n{oom}\n"
    uri = open_document(vscode, tmp_path / "tqdm.log", text)
    published = await diagnostics_for(vscode, uri)
    (root,) = [d for d in published.diagnostics if d.code == "cuda-oom"]
    assert root.range.start.line == 2  # editor lines: 0 and 1 are the two progress segments
    assert root.message.startswith("Root cause · rank 3 · ")


async def test_builtin_library_finds_the_oom_cascade(builtin_library: RecordingClient, workspace: Path) -> None:
    uri = open_document(builtin_library, workspace / "logs" / "console.log")
    published = await diagnostics_for(builtin_library, uri)
    roots = [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert len(roots) == 1
    assert roots[0].code == "cuda-oom" and roots[0].range.start.line == OOM_LINE
    assert roots[0].message.startswith("Root cause · rank 3 · CUDA out of memory")
    assert any(r.location.range.start.line == WATCHDOG_RANK0_LINE for r in roots[0].related_information or [])


async def test_unknown_verdict_marks_the_suspicious_lines(vscode: RecordingClient, tmp_path: Path) -> None:
    watchdog = OOM_LOG.read_text(encoding="utf-8").split("\n")[WATCHDOG_RANK0_LINE]
    text = "\n".join([
        "[rank1]: step 10 · loss 2.1",
        "[rank1]: FATAL: frobnicator checksum mismatch in shard 7 (password=hunter2hunter2)",
        watchdog,  # every rank of the job times out: no rank is silent, none is named
        watchdog.replace("[rank0]", "[rank1]").replace("[Rank 0]", "[Rank 1]"),
    ]) + "\n"
    uri = open_document(vscode, tmp_path / "unknown.log", text)
    published = await diagnostics_for(vscode, uri)
    suspicious = [d for d in published.diagnostics if d.code == "suspicious"]
    assert suspicious and suspicious[0].range.start.line == 1
    assert suspicious[0].severity == types.DiagnosticSeverity.Information
    assert suspicious[0].message.startswith("Suspicious · rank 1 · ")
    assert "hunter2" not in suspicious[0].message and "****" in suspicious[0].message
    collateral = [d for d in published.diagnostics if d.code == "nccl-watchdog-timeout"]
    assert collateral and all("cause is not in this log" in d.message for d in collateral)
    # The first of them is where to start: named as the first failure seen, a symptom.
    assert collateral[0].range.start.line == 2 and collateral[0].message.startswith("First failure seen · rank 0 · ")
    assert all(d.message.startswith("Collateral · ") for d in collateral[1:])


async def test_severity_settings_apply(vscode: RecordingClient, workspace: Path) -> None:
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"faultline": {
        "severity": {"rootCause": "warning", "collateral": "hint"}}}))
    uri = open_document(vscode, workspace / "logs" / "console.log")
    published = await diagnostics_for(vscode, uri)
    by_line = {d.range.start.line: d for d in published.diagnostics}
    assert by_line[OOM_LINE].severity == types.DiagnosticSeverity.Warning
    assert by_line[WATCHDOG_RANK0_LINE].severity == types.DiagnosticSeverity.Hint


async def test_document_over_the_size_limit_gets_one_information(vscode: RecordingClient, workspace: Path) -> None:
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"faultline": {"maxDocumentBytes": 1000}}))
    log = workspace / "logs" / "console.log"
    uri = open_document(vscode, log)
    published = await diagnostics_for(vscode, uri)
    (only,) = published.diagnostics
    assert only.severity == types.DiagnosticSeverity.Information
    assert only.code == "document-too-large"
    assert "faultline.diagnosePath" in only.message and str(log) in only.message


async def test_diagnostics_can_be_switched_off_and_on(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    assert (await diagnostics_for(vscode, uri)).diagnostics
    count = len(vscode.published)
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"faultline": {"enabled": False}}))
    cleared = await diagnostics_for(vscode, uri, after=count)
    assert not cleared.diagnostics
    count = len(vscode.published)
    vscode.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"faultline": {"enabled": True}}))
    assert (await diagnostics_for(vscode, uri, after=count)).diagnostics


async def test_text_files_are_diagnosed_only_when_they_look_like_training_output(
        vscode: RecordingClient, tmp_path: Path) -> None:
    training = open_document(vscode, tmp_path / "run.out", OOM_LOG.read_text(encoding="utf-8"),
                             language_id="plaintext")
    published = await diagnostics_for(vscode, training)
    assert any(d.code == "cuda-oom" for d in published.diagnostics)
    shopping = open_document(vscode, tmp_path / "shopping.txt", "eggs\nmilk\nError: out of bread\n",
                             language_id="plaintext")
    python = open_document(vscode, tmp_path / "train.py", "raise RuntimeError('CUDA out of memory')\n",
                           language_id="python")
    await asyncio.sleep(1.0)
    assert not any(p.uri in (shopping, python) for p in vscode.published)


async def test_closing_a_document_clears_its_diagnostics(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    assert (await diagnostics_for(vscode, uri)).diagnostics
    count = len(vscode.published)
    vscode.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    assert not (await diagnostics_for(vscode, uri, after=count)).diagnostics


async def test_server_logs_reach_the_client(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    await asyncio.sleep(0.2)
    messages = [m.message for m in vscode.log_messages]
    assert any("console.log (version 1): failure, root cause cuda-oom on rank 3" in m for m in messages)


async def test_bundled_example_with_the_builtin_library(builtin_library: RecordingClient) -> None:
    example = Path(__file__).resolve().parents[2] / "examples" / "oom-cascade"
    if not (example / "console.log").exists():
        pytest.skip("the bundled example is not there")
    expected = tomllib.loads((example / "expected.toml").read_text(encoding="utf-8"))
    uri = open_document(builtin_library, example / "console.log")
    published = await diagnostics_for(builtin_library, uri)
    (root,) = [d for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error]
    assert root.range.start.line == expected["root_cause_line"] - 1
    assert root.code == expected["root_cause_signature"].split("/")[-1]
    assert root.message.startswith(f"Root cause · rank {expected['initiating_rank']} · ")
    collateral = [d for d in published.diagnostics if d is not root]
    assert collateral and all(d.severity == types.DiagnosticSeverity.Warning for d in collateral)
    ranks = {d.message.split(" · ")[1] for d in collateral}  # "rank 3", or the label of lines without one
    assert len(root.related_information or []) == min(len(ranks), 5)  # the first line of each rank
    own = [d for d in collateral if d.message.split(" · ")[1] == f"rank {expected['initiating_rank']}"]
    others = {label for label in ranks if label[5:].isdigit()} - {f"rank {expected['initiating_rank']}"}  # not "rank ?"
    # The root rank's own later lines are not collateral of another rank: counted apart, never as a rank.
    assert f"{len(collateral) - len(own)} collateral lines on {len(others)} other rank(s)" in root.message
    assert not own or f", {len(own)} later on rank {expected['initiating_rank']} itself" in root.message
    assert all(f"caused by rank {expected['initiating_rank']}" in d.message for d in collateral)
