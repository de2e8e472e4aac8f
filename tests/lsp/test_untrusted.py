"""In an untrusted workspace the server loads only the built-in signatures (no workspace or configured folders)."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, RecordingClient, diagnostics_for, initialize_params, open_document, start
from lsprotocol import types

pytestmark = pytest.mark.asyncio

PANIC = (Path(__file__).resolve().parent.parent / "fixtures" / "signature_samples" / "my-panic.toml").read_text()
LOG = "[rank0]: step 1\n[rank1]: MyFrameworkPanic: shard 3 lost quorum\n[rank0]: step 2\n"


@pytest.fixture
def panic_workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws" / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    (folder / "my-panic.toml").write_text(PANIC, encoding="utf-8")
    return tmp_path / "ws"


@pytest_lsp.fixture(config=CONFIG)
async def trusted(lsp_client: RecordingClient, panic_workspace: Path):  # type: ignore[no-untyped-def]
    await start(lsp_client, initialize_params("visual-studio-code", panic_workspace, signatureFolders=[],
                                              workspaceTrusted=True))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def untrusted(lsp_client: RecordingClient, panic_workspace: Path):  # type: ignore[no-untyped-def]
    await start(lsp_client, initialize_params("visual-studio-code", panic_workspace, signatureFolders=[],
                                              workspaceTrusted=False))
    yield
    await lsp_client.shutdown_session()


async def root_codes(client: RecordingClient, workspace: Path) -> set[object]:
    uri = open_document(client, workspace / "run.log", LOG)
    published = await diagnostics_for(client, uri, version=1)
    return {d.code for d in published.diagnostics if d.severity == types.DiagnosticSeverity.Error}


async def test_a_trusted_workspace_loads_its_signatures(trusted: RecordingClient, panic_workspace: Path) -> None:
    assert await root_codes(trusted, panic_workspace) == {"my-panic"}


async def test_an_untrusted_workspace_uses_the_built_ins_only(untrusted: RecordingClient,
                                                             panic_workspace: Path) -> None:
    assert "my-panic" not in await root_codes(untrusted, panic_workspace)
