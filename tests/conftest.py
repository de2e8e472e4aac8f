"""Shared pytest fixtures: one loaded engine for the whole session, and the fixture-corpus locations."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline.engine import Engine

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine.load()
