"""The language server reads inputs as the CLI does: a compressed log named by path is diagnosed as its text,
and an empty one is refused with a clear error rather than answered "no failure"."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsp_support import OOM_LOG, RecordingClient
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio


async def run(client: RecordingClient, command: str, *arguments: Any) -> Any:
    return await client.workspace_execute_command_async(types.ExecuteCommandParams(
        command=command, arguments=list(arguments)))


async def test_a_compressed_log_and_an_empty_one(vscode: RecordingClient, workspace: Path) -> None:
    plain = await run(vscode, "faultline.diagnosePath", {"paths": [str(OOM_LOG)]})
    packed = workspace / "console.log.gz"
    packed.write_bytes(gzip.compress(OOM_LOG.read_bytes()))
    answer = await run(vscode, "faultline.diagnosePath", {"paths": [str(packed)]})
    assert answer["verdict"] == plain["verdict"] == "failure"
    assert answer["initiating_rank"] == plain["initiating_rank"]
    assert answer["root_cause"]["line"] == plain["root_cause"]["line"]
    folder = workspace / "archived"
    folder.mkdir()
    shutil.copy(packed, folder / "rank0.log.gz")
    in_folder = await run(vscode, "faultline.diagnosePath", {"paths": [str(folder)]})
    assert in_folder["root_cause"]["line"] == plain["root_cause"]["line"]
    empty = workspace / "empty.log"
    empty.write_bytes(b"")
    with pytest.raises(JsonRpcException) as refused:
        await run(vscode, "faultline.diagnosePath", {"paths": [str(empty)]})
    assert "empty" in str(refused.value)
