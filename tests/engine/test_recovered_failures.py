"""A failure the program says it caught (fairseq's and ParlAI's "ran out of memory, skipping batch") is context; the
run going on is still the verdict's question."""

from __future__ import annotations

from pathlib import Path

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


def test_a_paste_that_ends_on_a_catch_the_run_went_on_after_before_is_no_failure() -> None:
    """The program went on after the same catch earlier in the file: it recovers from that failure."""
    text = "\n".join([_STEP.format(n=1), _OOM, _SKIPPED, _STEP.format(n=2), _OOM, _SKIPPED]) + "\n"
    assert ENGINE.diagnose_text(text, "train.log").verdict is Verdict.NO_FAILURE


def test_a_catch_in_another_file_says_nothing_about_this_one(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text("\n".join([_STEP.format(n=1), _OOM, _SKIPPED, _STEP.format(n=2)]) + "\n")
    (tmp_path / "rank1.log").write_text("\n".join([_STEP.format(n=1), _OOM, _SKIPPED]) + "\n")
    assert ENGINE.diagnose_paths([tmp_path]).verdict is not Verdict.NO_FAILURE


def test_only_the_failure_just_above_it_was_caught() -> None:
    far = [_OOM, *(_STEP.format(n=n) for n in range(1, 10)), _SKIPPED, _STEP.format(n=9)]
    diagnosis = ENGINE.diagnose_text("\n".join(far) + "\n", "train.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1


# CPython 3.10's weakref.finalize runs at exit from _exitfunc; tempfile's TemporaryDirectory registers its _cleanup there
_EXIT_CLEANUP = ("Traceback (most recent call last):\n"
                 '  File "/usr/local/lib/python3.10/weakref.py", line 667, in _exitfunc\n'
                 "    f()\n"
                 '  File "/usr/local/lib/python3.10/weakref.py", line 591, in __call__\n'
                 "    return info.func(*info.args, **(info.kwargs or {}))\n"
                 '  File "/usr/local/lib/python3.10/tempfile.py", line 868, in _cleanup\n'
                 "    cls._rmtree(name, ignore_errors=ignore_errors)\n"
                 '  File "/usr/local/lib/python3.10/shutil.py", line 729, in rmtree\n'
                 "    os.rmdir(path)\n"
                 "OSError: [Errno 39] Directory not empty: '/cache/tmp/hf_datasets-7bhpwpa5'\n")


def test_the_standard_librarys_clean_up_failing_at_exit_is_no_failure() -> None:
    text = "[INFO:swift] End time of running main: 2025-03-23 09:29:36.599759\n" + _EXIT_CLEANUP
    diagnosis = ENGINE.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert any("clean-up at exit" in e.note for e in diagnosis.events)


def test_a_librarys_finalizer_failing_at_exit_is_still_a_failure() -> None:
    """Only the standard library's own clean-up is excused: a package's finalizer (a distributed shutdown) that
    raises at exit is a failure the user has to look at."""
    text = _EXIT_CLEANUP.replace('  File "/usr/local/lib/python3.10/tempfile.py"',
                                 '  File "/usr/local/lib/python3.10/site-packages/jax/_src/distributed.py"')
    assert ENGINE.diagnose_text(text, "train.log").verdict is Verdict.FAILURE


_BAR = "Epoch 0:   1%|▋          | {n}/4943 [00:11<21:31,  3.79it/s, loss=7.11, v_num=z34s]"
_API = "wandb: ERROR Error while calling W&B API: internal database error (<Response [500]>)"


def test_a_paste_that_ends_on_an_error_the_run_went_on_after_before_is_no_failure() -> None:
    text = "\n".join([_BAR.format(n=44), _API, _BAR.format(n=160), _API]) + "\n"
    diagnosis = ENGINE.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    last = next(s for s in diagnosis.considered if s.line == 4)
    assert last.reason == "the same error as line 2, which the run went on after"


def test_a_paste_that_ends_on_another_error_is_not_an_all_clear() -> None:
    text = "\n".join([_BAR.format(n=44), _API, _BAR.format(n=160), "wandb: ERROR Run upload failed: disk quota"]) + "\n"
    assert ENGINE.diagnose_text(text, "train.log").verdict is not Verdict.NO_FAILURE
