"""The fix when the culprit's own error is not in the logs: where to look, made concrete for the job the logs show."""

from __future__ import annotations

from faultline.engine import Engine
from faultline.model import Verdict

# An error line of TensorFlow's C++ log (tsl/platform/default/logging.cc prefix) that no signature explains, then a
# traceback whose exception line the paste cut: the run failed, and no line says why.
_TF = ("2024-03-01 10:00:00.000000: E tensorflow/core/common_runtime/frobnicate_op.cc:123] Frobnicator failed: "
       "status 3\n"
       "Traceback (most recent call last):\n"
       '  File "train.py", line 38, in main\n'
       "    sess.run(train_op)\n")
_TORCH = ("Traceback (most recent call last):\n"
          '  File "train.py", line 38, in main\n'
          "    dist.all_reduce(loss)\n"
          '  File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501, in all_reduce\n'
          "    work = group.allreduce([tensor], opts)\n")


def _missing_cause_fix(engine: Engine, text: str) -> tuple[list[str], list[str]]:
    """The names of the fix's variables, and its steps and verification command."""
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.root_cause is None
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "cause-not-in-logs"
    return [e.name for e in sig.fix.env], [*sig.fix.steps, sig.verification.command]


def test_a_pytorch_job_or_one_of_no_known_framework_is_told_how_torchrun_makes_the_cause_show(engine: Engine) -> None:
    env, steps = _missing_cause_fix(engine, _TORCH)
    assert "TORCH_NCCL_ASYNC_ERROR_HANDLING" in env and "TORCH_DISTRIBUTED_DEBUG" in env
    assert any("torchrun --tee 3" in step for step in steps)


def test_a_job_that_shows_no_pytorch_gets_no_torch_settings(engine: Engine) -> None:
    env, steps = _missing_cause_fix(engine, _TF)
    assert env and not any(name.startswith("TORCH_") for name in env)
    assert not any("torchrun" in step or "@record" in step or "attempt_" in step for step in steps)
    assert any("srun --output" in step for step in steps) and any("dmesg" in step for step in steps)
