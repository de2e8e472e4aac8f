"""A failure the program says it caught (fairseq's and ParlAI's "ran out of memory, skipping batch") is context; the
run going on is still the verdict's question."""

from __future__ import annotations

from faultline.engine import Engine
from faultline.model import Role, Verdict

ENGINE = Engine.load(jobs=1)

# THC's check of a failed allocation (aten/src/THC/THCGeneral.cpp, PyTorch 0.4-1.x), then fairseq/trainer.py's warning
_OOM = "THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory"
_SKIPPED = "| WARNING: ran out of memory, skipping batch"
_STEP = "| epoch 001:   0%|          | {n}/72115 [01:2{n}<5:21:16,  3.72it/s, loss=11.45, oom=1]"


def test_a_caught_oom_then_more_steps_is_no_failure() -> None:
    text = "\n".join([_STEP.format(n=1), _OOM, _SKIPPED, _STEP.format(n=2), _STEP.format(n=3)]) + "\n"
    diagnosis = ENGINE.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    oom = next(e for e in diagnosis.events if e.signature_id == "cuda-raw-oom")
    assert oom.role is Role.CONTEXT and "caught it and went on (line 3" in oom.note


def test_a_paste_that_ends_on_the_warning_is_not_an_all_clear() -> None:
    diagnosis = ENGINE.diagnose_text("\n".join([_STEP.format(n=1), _OOM, _SKIPPED]) + "\n", "train.log")
    assert diagnosis.verdict is not Verdict.NO_FAILURE


def test_only_the_failure_just_above_it_was_caught() -> None:
    far = [_OOM, *(_STEP.format(n=n) for n in range(1, 10)), _SKIPPED, _STEP.format(n=9)]
    diagnosis = ENGINE.diagnose_text("\n".join(far) + "\n", "train.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
