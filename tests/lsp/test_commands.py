"""Server-side commands: the CLI's JSON for text and paths, reports for open documents, applying a fix,
reloading signatures; progress, cancellation and bad arguments."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from lsp_support import OOM_LOG, TEST_SIGNATURES, RecordingClient, diagnostics_for, open_document, wait_for
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcRequestCancelled

pytestmark = pytest.mark.asyncio


async def run(client: RecordingClient, command: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command, arguments=list(arguments)))


def cli_json(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--format", "json",
                           "--signatures", str(TEST_SIGNATURES), *args], capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


async def test_diagnose_text_returns_the_cli_json(vscode: RecordingClient) -> None:
    answer = await run(vscode, "faultline.diagnoseText", {"text": OOM_LOG.read_text(encoding="utf-8"),
                                                          "name": str(OOM_LOG)})
    assert answer == cli_json(str(OOM_LOG))
    assert answer["verdict"] == "failure" and answer["initiating_rank"] == 3
    with_html = await run(vscode, "faultline.diagnoseText", {"text": "[rank0]: step 1 · loss 2.0\n",
                                                             "includeHtml": True})
    assert with_html["verdict"] == "no_failure"
    assert "<html" in with_html["html"].lower() and "<script" not in with_html["html"].lower()


async def test_diagnose_path_on_files_and_folders(vscode: RecordingClient, workspace: Path) -> None:
    folder = workspace / "logs"
    answer = await run(vscode, "faultline.diagnosePath", {"paths": [str(folder)]})
    assert answer == cli_json(str(folder))
    assert answer["root_cause"]["file"] == str(folder / "console.log")
    relative = await run(vscode, "faultline.diagnosePath", {"paths": ["logs/console.log"], "includeHtml": True})
    assert relative["root_cause"]["line"] == 18 and "data-line='18'" in relative["html"]
    # the command reported work-done progress, from begin to end
    assert any(reports and isinstance(reports[0], types.WorkDoneProgressBegin)
               and isinstance(reports[-1], types.WorkDoneProgressEnd) for reports in vscode.progress_reports.values())


async def test_bad_arguments_are_refused(vscode: RecordingClient, workspace: Path) -> None:
    for command, arguments in [
        ("faultline.diagnoseText", []),
        ("faultline.diagnoseText", [{"text": 5}]),
        ("faultline.diagnoseText", ["just a string"]),
        ("faultline.diagnosePath", [{"paths": ["-"]}]),
        ("faultline.diagnosePath", [{"paths": [str(workspace / "missing.log")]}]),
        ("faultline.diagnosePath", [{"paths": []}]),
        ("faultline.reportForDocument", [{"uri": (workspace / "closed.log").as_uri()}]),
        ("faultline.applyFix", [{"signatureId": "no-such-signature"}]),
        ("faultline.openSignature", [{}]),
        ("faultline.showLocation", [{"uri": "file:///x.log", "range": {"start": 1}}]),
        ("faultline.reloadSignatures", [{"unexpected": True}]),
    ]:
        with pytest.raises(JsonRpcInvalidParams):
            await run(vscode, command, *arguments)
    with pytest.raises(JsonRpcException):
        await run(vscode, "faultline.noSuchCommand")
    # the server is still answering
    assert (await run(vscode, "faultline.diagnoseText", {"text": "[rank0]: step 1 · loss 2.0\n"}))["verdict"] == "no_failure"


async def test_report_for_an_open_document(vscode: RecordingClient, workspace: Path) -> None:
    uri = open_document(vscode, workspace / "logs" / "console.log")
    await diagnostics_for(vscode, uri)
    report = await run(vscode, "faultline.reportForDocument", {"uri": uri})
    assert report["diagnosis"]["root_cause"]["line"] == 18
    assert report["diagnosis"]["root_cause"]["file"] == str(workspace / "logs" / "console.log")
    assert 'class="fl-event' in report["html"] or "fl-event" in report["html"]
    # an open document that is not a log is diagnosed on request
    other = open_document(vscode, workspace / "notes.md", "nothing to see\n", language_id="markdown")
    assert (await run(vscode, "faultline.reportForDocument", {"uri": other}))["diagnosis"]["verdict"] == "no_failure"


async def test_apply_fix_edits_the_launch_script(vscode: RecordingClient, workspace: Path) -> None:
    log_uri = (workspace / "logs" / "console.log").as_uri()
    answer = await run(vscode, "faultline.applyFix", {"signatureId": "cuda-oom", "uri": log_uri})
    script = workspace / "launch.sh"
    assert answer == {"applied": True, "file": str(script),
                      "message": f"Set PYTORCH_CUDA_ALLOC_CONF in {script}"}
    (applied,) = vscode.applied_edits
    assert applied.label == "Faultline: memory/cuda-oom fix"
    vscode.apply_edit_result = False
    refused = await run(vscode, "faultline.applyFix", {"signatureId": "cuda-oom"})
    assert refused["applied"] is False and refused["file"] == str(script)
    # a launch script named directly
    other = workspace / "other.sbatch"
    other.write_text("#!/bin/bash\ndeepspeed train.py\n", encoding="utf-8")
    vscode.apply_edit_result = True
    direct = await run(vscode, "faultline.applyFix", {"signatureId": "cuda-oom", "uri": other.as_uri()})
    assert direct["applied"] is True and direct["file"] == str(other)


async def test_reload_signatures_picks_up_new_files(vscode: RecordingClient, workspace: Path) -> None:
    before = await run(vscode, "faultline.reloadSignatures")
    assert before["signatures"] > 2 and before["problems"] == []
    folder = workspace / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    source = (TEST_SIGNATURES / "cuda-oom.toml").read_text(encoding="utf-8")
    (folder / "frobnicator-mismatch.toml").write_text(
        source.replace('id = "cuda-oom"', 'id = "frobnicator-mismatch"'), encoding="utf-8")
    (folder / "broken.toml").write_text("schema_version = 1\nid = 'broken'\n", encoding="utf-8")
    after = await run(vscode, "faultline.reloadSignatures", {})
    assert after["signatures"] == before["signatures"] + 1
    assert any(p.startswith(str(folder / "broken.toml")) for p in after["problems"])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("how", ["cancelRequest", "progressCancel"])
async def test_a_long_diagnosis_can_be_cancelled(vscode: RecordingClient, tmp_path: Path, how: str) -> None:
    # A named pipe makes the diagnosis as long as the test wants: the engine reads it chunk by chunk and
    # polls the cancel flag between chunks.
    fifo = tmp_path / "endless.log"
    os.mkfifo(fifo)
    stop = threading.Event()

    def feed() -> None:
        chunk = b"[rank0]: step 1 \xc2\xb7 loss 2.0\n" * 400_000
        try:
            with open(fifo, "wb") as stream:
                while not stop.is_set():
                    stream.write(chunk)
        except (BrokenPipeError, OSError):
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    request_id = str(uuid.uuid4())
    reply = asyncio.ensure_future(vscode.protocol.send_request_async(
        types.WORKSPACE_EXECUTE_COMMAND,
        types.ExecuteCommandParams(command="faultline.diagnosePath", arguments=[{"paths": [str(fifo)]}]),
        msg_id=request_id))
    token = await wait_for(lambda: next((t for t, r in vscode.progress_reports.items()
                                         if r and isinstance(r[0], types.WorkDoneProgressBegin)), None),
                           what="the progress bar")
    await asyncio.sleep(0.3)
    if how == "cancelRequest":
        vscode.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=request_id))
    else:
        vscode.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    try:
        with pytest.raises(JsonRpcRequestCancelled):
            await asyncio.wait_for(reply, 20)
        await wait_for(lambda: isinstance(vscode.progress_reports[token][-1], types.WorkDoneProgressEnd),
                       what="the end of the progress bar")
    finally:
        stop.set()
        feeder.join(10)
    # the server is still answering
    assert (await run(vscode, "faultline.diagnoseText", {"text": "[rank0]: step 1 · loss 2.0\n"}))["verdict"] == "no_failure"


async def test_faultline_serve_starts_the_server(tmp_path: Path) -> None:
    from lsp_support import RawServer

    console_script = Path(sys.executable).parent / "faultline"
    if not console_script.exists():
        found = shutil.which("faultline")
        if found is None:
            pytest.skip("the faultline console script is not installed")
        console_script = Path(found)
    server = RawServer([str(console_script), "serve"])
    try:
        reply = server.initialize(root=tmp_path)
        assert reply["result"]["serverInfo"]["name"] == "faultline"
        commands = reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
        assert {"faultline.diagnoseText", "faultline.diagnosePath", "faultline.reportForDocument",
                "faultline.applyFix", "faultline.reloadSignatures"} <= set(commands)
        assert "faultline.runVerification" not in commands and "faultline.copyText" not in commands
        assert server.request("shutdown", None)["result"] is None
        server.notify("exit")
        assert server.wait() == 0
    finally:
        server.close()
