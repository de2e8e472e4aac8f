"""Shared pytest fixtures: one loaded engine for the whole session, and the fixture-corpus locations."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from faultline.engine import Engine

# The parsed-signature cache (toml_cache.py) of this test session, not the user's: set before anything loads
# a library, and inherited by every CLI and language-server process the tests start.
os.environ["FAULTLINE_CACHE_DIR"] = tempfile.mkdtemp(prefix="faultline-test-cache-")

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine.load()
