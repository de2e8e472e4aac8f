"""A job stopped by its scheduler: submitit's preemption and time-limit handling (submitit/core/job_environment.py),
where a requeued job goes on and only a job that cannot be requeued has ended."""

from __future__ import annotations

from faultline.engine import Engine
from faultline.model import Verdict

ENGINE = Engine.load(jobs=1)

_START = "submitit INFO (2024-03-11 09:00:00,100) - Starting with JobEnvironment(job_id=60601445, hostname=node-12, " \
         "local_rank=0(2), node=0(1), global_rank=0(2))"
_SIGNAL = "submitit WARNING (2024-03-11 09:14:52,113) - Caught signal SIGUSR2 on node-12: this job is {case}."


def test_a_requeued_job_that_starts_again_is_no_failure() -> None:
    text = "\n".join([_START, _SIGNAL.format(case="preempted"),
                      "submitit INFO (2024-03-11 09:14:52,120) - Requeued job 60601445 (3 remaining timeouts)",
                      "submitit INFO (2024-03-11 09:14:52,121) - Exiting gracefully after preemption/timeout.",
                      _START.replace("09:00:00", "09:20:41"), "step 120 loss 1.93"]) + "\n"
    assert ENGINE.diagnose_text(text, "job.log").verdict is Verdict.NO_FAILURE


def test_a_job_that_is_not_requeued_has_ended_by_the_scheduler() -> None:
    text = "\n".join([_START, _SIGNAL.format(case="timed-out"),
                      "submitit INFO (2024-03-11 09:14:52,120) - Job not requeued because: timed-out and not "
                      "checkpointable."]) + "\n"
    diagnosis = ENGINE.diagnose_text(text, "job.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "submitit-job-interrupted"
    assert diagnosis.root_cause.line == 3
    assert diagnosis.root_signature is not None and "checkpoint" in diagnosis.root_signature.fix.summary


def test_a_paste_that_ends_on_the_signal_is_not_an_all_clear() -> None:
    diagnosis = ENGINE.diagnose_text(_START + "\n" + _SIGNAL.format(case="preempted") + "\n", "job.log")
    assert diagnosis.verdict is Verdict.UNKNOWN
    assert [s.line for s in diagnosis.suspicious] == [2]
