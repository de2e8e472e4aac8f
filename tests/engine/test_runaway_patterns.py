"""A catastrophically backtracking user pattern is stopped, disabled and reported; the diagnosis completes."""

from __future__ import annotations

from pathlib import Path

from faultline.engine import Engine
from faultline.library import SignatureLibrary

SLOW = (Path(__file__).resolve().parent.parent / "fixtures" / "signature_samples" / "slow-one.toml").read_text()


def test_slow_pattern_is_disabled_and_reported(tmp_path: Path) -> None:
    (tmp_path / "slow-one.toml").write_text(SLOW)
    engine = Engine(SignatureLibrary.load([tmp_path]), pattern_timeout_s=0.1)
    log = "x" * 5000 + "\n" + "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + "x" * 5000
    diagnosis = engine.diagnose_text(log, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "cuda-oom"
    problems = [str(p) for p in engine.library.problems if "slow-one" in p.file]
    assert problems and "time limit" in problems[0] and "disabled" in problems[0]
    assert problems[0].startswith(str(tmp_path / "slow-one.toml") + ":8: patterns:")
    assert any("signature pattern disabled" in n for n in diagnosis.notes)
