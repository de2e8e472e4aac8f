"""Sigma's "goodlog" test: on logs of healthy training runs, no failure signature may fire."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.model import Role, Verdict

HEALTHY = Path(__file__).resolve().parent.parent / "fixtures" / "healthy"
CASES = sorted(p for p in HEALTHY.iterdir() if p.is_dir()) if HEALTHY.is_dir() else []


def test_there_are_healthy_logs() -> None:
    assert len(CASES) >= 3


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_no_failure_signature_fires(engine: Engine, case: Path) -> None:
    logs = sorted(p for p in case.iterdir() if p.name not in ("expected.toml", "README.md"))
    diagnosis = engine.diagnose_paths(logs)  # the run's own output, not the fixture's description of it
    fired = [f"{e.file}:{e.line} {e.signature_id}" for e in diagnosis.events if e.role_prior is not Role.CONTEXT]
    assert not fired
    assert diagnosis.verdict is Verdict.NO_FAILURE
