"""Signature authoring: live diagnostics on signature TOML files in the workspace, and the library
reloading on save and on file-watcher events."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsp_support import RecordingClient, diagnostics_for, open_document, replace_all, wait_for
from lsprotocol import types

pytestmark = pytest.mark.asyncio

VALID = '''schema_version = 1
id = "frobnicator-mismatch"
title = "Frobnicator checksum mismatch"
category = "data"
severity = "error"
role = "root_cause"
priority = 80
keywords = ["frobnicator checksum mismatch"]
patterns = ['frobnicator checksum mismatch in shard (?P<shard>\\d+)']
message = "frobnicator checksum mismatch in shard {shard}"
explanation = "A data shard failed its checksum."

[fix]
summary = "Re-download the shard."
steps = ["Delete the shard and download it again."]

[verification]
command = "sha256sum -c shards.sha256"
expect = "every shard reports OK"

[examples]
match = ["[rank1]: FATAL: frobnicator checksum mismatch in shard 7"]
no_match = ["[rank1]: frobnicator checksum ok in shard 7"]
'''
LOG = "[rank0]: step 1 · loss 2.0\n[rank1]: FATAL: frobnicator checksum mismatch in shard 7\n"


def line_of(text: str, key: str) -> int:
    return next(i for i, line in enumerate(text.split("\n")) if line.startswith(key))


async def test_live_diagnostics_and_reload_on_save(vscode: RecordingClient, workspace: Path) -> None:
    folder = workspace / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    path = folder / "frobnicator-mismatch.toml"
    broken = VALID.replace('severity = "error"', 'severity = "error"\nseverityy = "high"').replace(
        "(?P<shard>\\d+)", "(?P<shard>\\d+")
    path.write_text(broken, encoding="utf-8")
    uri = open_document(vscode, path, broken, language_id="toml")
    first = await diagnostics_for(vscode, uri, version=1)
    by_code = {d.code: d for d in first.diagnostics}
    assert by_code["severityy"].range.start.line == line_of(broken, "severityy")
    assert "unknown field" in by_code["severityy"].message
    assert by_code["patterns"].range.start.line == line_of(broken, "patterns")
    assert "does not compile" in by_code["patterns"].message
    assert all(d.source == "faultline" and d.severity == types.DiagnosticSeverity.Error for d in first.diagnostics)

    failing_example = VALID.replace("in shard 7\"]", "in shard seven\"]")
    replace_all(vscode, uri, broken, failing_example, version=2)
    second = await diagnostics_for(vscode, uri, version=2)
    (example,) = second.diagnostics
    assert example.code == "examples.match" and "expected a match" in example.message

    replace_all(vscode, uri, failing_example, VALID, version=3)
    assert not (await diagnostics_for(vscode, uri, version=3)).diagnostics

    # saving reloads the library: a log with the new failure is diagnosed with it
    path.write_text(VALID, encoding="utf-8")
    vscode.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    log_uri = open_document(vscode, workspace / "logs" / "frobnicator.log", LOG)

    def frobnicator_root() -> types.Diagnostic | None:
        for params in reversed(vscode.published):
            if params.uri == log_uri:
                return next((d for d in params.diagnostics if d.code == "frobnicator-mismatch"), None)
        return None

    root = await wait_for(frobnicator_root, what="the reloaded signature to diagnose the log")
    assert root.message == "Root cause · rank 1 · frobnicator checksum mismatch in shard 7"


async def test_file_watcher_events_reload_the_library(vscode: RecordingClient, workspace: Path) -> None:
    registration = await wait_for(lambda: next((r for r in vscode.registrations
                                                if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES), None),
                                  what="the file watcher registration")
    options = registration.register_options
    patterns = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern
                for w in (options["watchers"] if isinstance(options, dict) else options.watchers)]
    assert "**/.faultline/signatures/**/*.toml" in patterns
    log_uri = open_document(vscode, workspace / "logs" / "frobnicator.log", LOG)
    before = await diagnostics_for(vscode, log_uri)
    assert not any(d.code == "frobnicator-mismatch" for d in before.diagnostics)
    folder = workspace / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    (folder / "frobnicator-mismatch.toml").write_text(VALID, encoding="utf-8")
    count = len(vscode.published)
    vscode.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[types.FileEvent(
        uri=(folder / "frobnicator-mismatch.toml").as_uri(), type=types.FileChangeType.Created)]))
    after = await diagnostics_for(vscode, log_uri, after=count)
    assert any(d.code == "frobnicator-mismatch" and d.severity == types.DiagnosticSeverity.Error
               for d in after.diagnostics)


async def test_load_problems_of_closed_signature_files_are_published(vscode: RecordingClient,
                                                                     workspace: Path) -> None:
    folder = workspace / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    broken = folder / "half-done.toml"
    broken.write_text('schema_version = 1\nid = "half-done"\ntitle = "Half done"\n', encoding="utf-8")
    await vscode.workspace_execute_command_async(types.ExecuteCommandParams(command="faultline.reloadSignatures"))
    published = await diagnostics_for(vscode, broken.resolve().as_uri())
    assert published.diagnostics and all(d.source == "faultline" for d in published.diagnostics)
    assert any("missing" in d.message for d in published.diagnostics)
    broken.unlink()
    count = len(vscode.published)
    await vscode.workspace_execute_command_async(types.ExecuteCommandParams(command="faultline.reloadSignatures"))
    assert not (await diagnostics_for(vscode, broken.resolve().as_uri(), after=count)).diagnostics


async def test_a_slow_pattern_is_reported_without_blocking_the_server(vscode: RecordingClient,
                                                                      workspace: Path) -> None:
    folder = workspace / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    path = folder / "frobnicator-mismatch.toml"
    # nested repeats: exponential backtracking on a long line that almost matches
    slow = VALID.replace("'frobnicator checksum mismatch in shard (?P<shard>\\d+)'",
                         "'frobnicator checksum mismatch in shard (?P<shard>(\\w+\\s?)+)!'").replace(
        "in shard 7\"]", "in shard 7!\"]")
    uri = open_document(vscode, path, slow, language_id="toml")
    # the check runs off the event loop: a command is answered while it runs
    answer = await vscode.workspace_execute_command_async(types.ExecuteCommandParams(
        command="faultline.diagnoseText", arguments=[{"text": LOG}]))
    assert answer["verdict"] in ("failure", "unknown", "no_failure")
    assert not any(p.uri == uri for p in vscode.published)
    published = await diagnostics_for(vscode, uri, timeout=60)
    (problem,) = published.diagnostics
    assert problem.code == "patterns" and "ms on a 20000-character line" in problem.message
    assert problem.range.start.line == line_of(slow, "patterns")
