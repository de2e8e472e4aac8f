"""Fixtures for the end-to-end LSP tests: the real server process (``python -m faultline``) driven by
pytest-lsp with VS Code's and Neovim's client capabilities, in a temporary workspace that holds the
OOM-cascade log and a SLURM launch script."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import CONFIG, LAUNCH_SCRIPT, OOM_LOG, RecordingClient, initialize_params, start


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    (root / "logs").mkdir(parents=True)
    shutil.copy(OOM_LOG, root / "logs" / "console.log")
    (root / "launch.sh").write_text(LAUNCH_SCRIPT, encoding="utf-8")
    return root


@pytest_lsp.fixture(config=CONFIG, params=["visual-studio-code", "neovim"])
async def client(lsp_client: RecordingClient, request: pytest.FixtureRequest,
                 workspace: Path) -> AsyncIterator[None]:
    """One server per test, once with VS Code's capabilities and once with Neovim's."""
    await start(lsp_client, initialize_params(request.param, workspace))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def vscode(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    await start(lsp_client, initialize_params("visual-studio-code", workspace))
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=CONFIG)
async def builtin_library(lsp_client: RecordingClient, workspace: Path) -> AsyncIterator[None]:
    """A server with the built-in signature library only."""
    await start(lsp_client, initialize_params("visual-studio-code", workspace, signatureFolders=[]))
    yield
    await lsp_client.shutdown_session()
