"""A fix step or variable with a condition is offered only when the failure's own fields meet it, and says why;
malformed conditions are problems with file and line, never code."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline.conditions import parse_condition
from faultline.engine import Engine
from faultline.library import SignatureLibrary

OOM = ("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
       "79.14 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 78.1 GiB memory in use. "
       "Of the allocated memory 70.00 GiB is allocated by PyTorch, and {unallocated} is reserved by PyTorch but "
       "unallocated.\n")


@pytest.mark.parametrize("unallocated, offered", [("6.30 GiB", True), ("1024.00 MiB", True), ("120.00 MiB", False)])
def test_expandable_segments_only_for_fragmentation(engine: Engine, unallocated: str, offered: bool) -> None:
    diagnosis = engine.diagnose_text(OOM.format(unallocated=unallocated), "run.log")
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "cuda-oom"
    names = [env.name for env in sig.fix.env]
    assert ("PYTORCH_CUDA_ALLOC_CONF" in names) is offered
    assert any("expandable_segments" in step for step in sig.fix.steps) is offered
    if offered:
        note = next(env.note for env in sig.fix.env if env.name == "PYTORCH_CUDA_ALLOC_CONF")
        assert f"offered because unallocated = {unallocated}" in note
    # the library's own signature is untouched: another diagnosis decides again
    assert engine.library.get("cuda-oom").fix.env[0].when is not None  # type: ignore[union-attr]


@pytest.mark.parametrize("signal, offered", [("Signals.SIGHUP", True), ("1", True), ("15", False),
                                             ("Signals.SIGTERM", False), ("10", False)])
def test_detaching_from_the_terminal_only_for_a_hangup(engine: Engine, signal: str, offered: bool) -> None:
    """torchrun's agent stopped by SIGHUP (its terminal closed): start runs detached; any other signal: not."""
    text = (f"W0828 22:53:47.001000 1398 torch/distributed/elastic/agent/server/api.py:688] Received {signal} death "
            "signal, shutting down workers\n")
    sig = engine.diagnose_text(text, "launcher.log").root_signature
    assert sig is not None and sig.id == "torchrun-death-signal"
    assert any("tmux" in step and "nohup" in step for step in sig.fix.steps) is offered


def test_an_old_message_without_the_field_offers_nothing_conditional(engine: Engine) -> None:
    text = ("RuntimeError: CUDA out of memory. Tried to allocate 984.00 MiB (GPU 0; 47.50 GiB total capacity; "
            "22.15 GiB already allocated; 68.88 MiB free; 22.16 GiB reserved in total by PyTorch)\n")
    sig = engine.diagnose_text(text, "run.log").root_signature
    assert sig is not None and sig.fix.env == ()


@pytest.mark.parametrize("message", [
    "RuntimeError: CUDA out of memory. Tried to allocate 37631.79 GiB (GPU 3; 79.21 GiB total capacity; 50.52 GiB "
    "already allocated; 24.67 GiB free; 52.32 GiB reserved in total by PyTorch)",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 120.00 GiB. GPU 0 has a total capacity of 79.14 GiB "
    "of which 60.00 GiB is free. Of the allocated memory 18.00 GiB is allocated by PyTorch, and 100.00 MiB is "
    "reserved by PyTorch but unallocated.",
])
def test_a_request_larger_than_the_gpu_is_called_a_wrong_shape(engine: Engine, message: str) -> None:
    """Both wordings of the allocator's capacity: a request above it can never fit, whatever the batch size."""
    sig = engine.diagnose_text(message + "\n", "run.log").root_signature
    assert sig is not None and sig.id == "cuda-oom"
    assert "larger than the whole GPU" in sig.fix.steps[0]
    assert "(offered because size = " in sig.fix.steps[0] and ", > total = " in sig.fix.steps[0]


def test_an_ordinary_request_is_not_called_a_wrong_shape(engine: Engine) -> None:
    sig = engine.diagnose_text(OOM.format(unallocated="10.00 MiB"), "run.log").root_signature
    assert sig is not None and not any("larger than the whole GPU" in step for step in sig.fix.steps)


@pytest.mark.parametrize("text, fields, holds", [
    ("unallocated >= 1 GiB", {"unallocated": "1.5 GiB"}, True),
    ("unallocated >= 1 GiB", {"unallocated": "900 MiB"}, False),
    ("size > 100 MB", {"size": "0.2 GB"}, True),
    ("exitcode == -9", {"exitcode": "-9"}, True),
    ("exitcode == -9", {"exitcode": "1"}, False),
    ("hysteresis", {"hysteresis": "2"}, True),
    ("hysteresis", {}, False),
    ("unallocated >= 1 GiB", {"unallocated": "lots"}, False),
    ("size > total", {"size": "37631.79 GiB", "total": "79.21 GiB"}, True),
    ("size > total", {"size": "900 MiB", "total": "79.21 GiB"}, False),
    ("size > total", {"size": "2 GiB"}, False),  # the other field was not captured
    ("size > total", {"size": "2 GiB", "total": "many"}, False),
])
def test_conditions(text: str, fields: dict[str, str], holds: bool) -> None:
    assert parse_condition(text).holds(fields) is holds


def _write_conditional(folder: Path, steps: str, role: str = "root_cause", extra: str = "") -> None:
    """A one-signature folder whose pattern captures ``size``, with these fix steps and extra top-level keys."""
    (folder / "cond.toml").write_text(f'''schema_version = 1
id = "cond"
title = "Conditional"
category = "generic"
severity = "error"
role = "{role}"
priority = 50
{extra}
keywords = ["CONDKEY"]
patterns = ['CONDKEY (?P<size>\\\\d+ GiB)']
message = "cond"
explanation = "x"
[fix]
summary = "s"
steps = {steps}
[verification]
command = "true"
expect = "nothing"
[examples]
match = ["CONDKEY 2 GiB"]
no_match = ["abc"]
''', encoding="utf-8")


@pytest.mark.parametrize("bad", ["__import__('os').system('x') >= 1", "unallocated >= lots", "a >= 1 parsecs", ""])
def test_a_malformed_condition_is_a_problem(bad: str, tmp_path: Path) -> None:
    _write_conditional(tmp_path, f'["always", {{ text = "sometimes", when = "{bad}" }}]')
    library = SignatureLibrary.load([tmp_path], include_builtin=False)
    assert any("fix.steps" in str(p) and "condition" in str(p) for p in library.problems), library.problems


@pytest.mark.parametrize("line, offered", [
    ("gpu-node-07:48213:48301 [1] init.cc:204 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n"
     "gpu-node-07:48213:48301 [1] NCCL INFO init.cc:1280 -> 1", True),
    ("  what():  [Rank 3] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was "
     "encountered", True),
    ("RuntimeError: CUDA error: an illegal memory access was encountered", False),
])
def test_nccl_transport_steps_only_when_nccl_reported_the_illegal_access(engine: Engine, line: str,
                                                                        offered: bool) -> None:
    sig = engine.diagnose_text(line + "\n", "run.log").root_signature
    assert sig is not None and sig.id == "cuda-illegal-memory-access"
    assert any("NCCL_P2P_DISABLE=1" in step for step in sig.fix.steps) is offered


_BARRIER = ("RuntimeError: Timed out initializing process group in store based barrier on rank: 0, for key: "
            "store_based_barrier_key:1 (world_size=4, worker_count={joined}, timeout=0:30:00)\n"
            "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 820989) of "
            "binary: /usr/bin/python\n")


@pytest.mark.parametrize("joined, stated", [("16", True), ("3", False)])
def test_a_symptom_whose_fields_state_the_cause_is_the_root(engine: Engine, joined: str, stated: bool) -> None:
    """A store barrier that more workers joined than the world holds is a second launch on the same store (its
    root_when holds): the line is the cause, with the step for it. Fewer joined: a rank is missing, the barrier
    is the waiting side, and the line stays a symptom."""
    diagnosis = engine.diagnose_text(_BARRIER.format(joined=joined), "run.log")
    root = diagnosis.root_cause
    assert (root is not None and root.signature_id == "store-timeout" and root.line == 1) is stated
    steps = diagnosis.root_signature.fix.steps if diagnosis.root_signature is not None else ()
    assert any("More workers joined than the world holds" in step for step in steps) is stated
    summary = diagnosis.root_signature.fix.summary if diagnosis.root_signature is not None else ""
    assert summary.startswith("More workers joined than the world holds") is stated  # the stated cause's fix


_WATCHDOG = ("[rank3]:[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:632] [Rank 3] Watchdog caught collective operation "
             "timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)={timeout}) ran for "
             "{elapsed} milliseconds before timing out.\n")


@pytest.mark.parametrize("timeout, elapsed, stated", [("5000", "5012", True), ("1800000", "1800020", False)])
def test_a_watchdog_timeout_of_seconds_is_the_cause(engine: Engine, timeout: str, elapsed: str, stated: bool) -> None:
    """A collective that timed out under a group timeout of seconds: the setting is the cause, and the fix says to
    give the group minutes. Under the usual 30 minutes the same line is a symptom of a rank that went missing."""
    diagnosis = engine.diagnose_text(_WATCHDOG.format(timeout=timeout, elapsed=elapsed), "run.log")
    assert (diagnosis.verdict == "failure" and diagnosis.root_cause is not None
            and diagnosis.root_cause.signature_id == "nccl-watchdog-timeout") is stated
    fix = diagnosis.root_signature.fix if diagnosis.root_signature is not None else None
    assert (fix is not None and "minutes, not seconds" in fix.summary) is stated


@pytest.mark.parametrize("seq, offered", [("1", True), ("7", False)])
def test_the_first_collective_never_completing_points_at_the_gpus_reaching_each_other(engine: Engine, seq: str,
                                                                                    offered: bool) -> None:
    """SeqNum 1 timed out: no collective ever completed, so the GPUs may not reach each other (P2P, ACS/IOMMU)."""
    line = _WATCHDOG.format(timeout="5000", elapsed="5012").replace("SeqNum=1,", f"SeqNum={seq},")
    sig = engine.diagnose_text(line, "run.log").root_signature
    assert sig is not None and sig.id == "nccl-watchdog-timeout"
    assert any("NCCL_P2P_DISABLE=1" in step for step in sig.fix.steps) is offered


def test_a_root_when_on_a_field_no_pattern_captures_is_a_problem(tmp_path: Path) -> None:
    _write_conditional(tmp_path, '["always"]', role="collateral", extra='root_when = "nope > 1"')
    library = SignatureLibrary.load([tmp_path], include_builtin=False)
    assert any("root_when" in str(p) and "nope" in str(p) for p in library.problems), library.problems


@pytest.mark.parametrize("cause, offered", [("OutOfMemoryError", True), ("ValueError", False)])
def test_without_a_root_line_the_familys_first_line_decides(engine: Engine, cause: str, offered: bool) -> None:
    """Only a caller's re-raise of a task's exception (ray/exceptions.py RayTaskError) is in the paste: the cause
    is unknown, the fix is that family's, and its conditional steps are checked against that line's own fields."""
    line = (f"ray.exceptions.RayTaskError({cause}): ray::WorkerDict.update_actor() (pid=4120, ip=10.0.0.7, "
            "actor_id=36b6798a692f88dfb0e149e301000000)\n")
    diagnosis = engine.diagnose_text(line, "driver.log")
    sig = diagnosis.root_signature
    assert diagnosis.root_cause is None and sig is not None and sig.id == "ray-task-error"
    assert any("gpu_memory_utilization" in step for step in sig.fix.steps) is offered


@pytest.mark.parametrize("error, offered", [("Address already in use", True), ("Cannot assign requested address", False)])
def test_reusing_process_groups_only_when_nccl_found_the_address_in_use(engine: Engine, error: str,
                                                                         offered: bool) -> None:
    """NCCL src/include/socket.h / misc/socket.cc: WARN("Call to bind failed : %s", strerror(errno))."""
    text = (f"node-1:140:140 [0] misc/socket.cc:380 NCCL WARN Call to bind failed : {error}\n"
            "node-1:140:140 [0] NCCL INFO bootstrap.cc:91 -> 2\n")
    sig = engine.diagnose_text(text, "run.log").root_signature
    assert sig is not None and sig.id == "nccl-system-error"
    assert any("dist.new_group" in step for step in sig.fix.steps) is offered


ORTE_BLOCK = ("--------------------------------------------------------------------------\n"
              "ORTE was unable to reliably start one or more daemons.\n"
              "This usually is caused by:\n")


@pytest.mark.parametrize("command, daemon_step, launcher_step", [
    ("orted", True, False), ("prted", True, False), ("torchrun", False, True), ("mytool", False, False)])
def test_a_missing_command_gets_the_steps_of_its_kind(engine: Engine, command: str, daemon_step: bool,
                                                      launcher_step: bool) -> None:
    """The shell's 'command not found' is the cause, not the launcher block after it; mpirun's daemon and a
    Python package's console script each get their own step."""
    diagnosis = engine.diagnose_text(f"bash: {command}: command not found\n" + ORTE_BLOCK, "mpirun.log")
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "shell-command-not-found"
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert any("--prefix" in step for step in sig.fix.steps) is daemon_step
    assert any("python -m torch.distributed.run" in step for step in sig.fix.steps) is launcher_step


def test_an_option_run_as_a_command_is_not_the_cause(engine: Engine) -> None:
    """'--flag: command not found' is the rest of a command whose line continuation broke: the error of the
    command before it is what failed."""
    text = ("ValueError: No slot '1' specified on host 'localhost'\n"
            "generate.sh: line 15: --input_path: command not found\n")
    diagnosis = engine.diagnose_text(text, "generate.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1


@pytest.mark.parametrize("line, offered", [
    ("ray.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node Local is used (15.98 / 16.82 GB). "
     "The top 5 memory consumers are:", True),
    ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", False)])
def test_the_object_store_step_only_for_the_old_memory_monitor(engine: Engine, line: str, offered: bool) -> None:
    sig = engine.diagnose_text(line + "\n", "driver.log").root_signature
    assert sig is not None and sig.id == "ray-node-oom"
    assert any("object_store_memory" in step for step in sig.fix.steps) is offered


@pytest.mark.parametrize("ending, offered", [("exit code 1", True), ("signal SIGKILL", False)])
def test_the_exit_call_step_only_for_an_exit_code(engine: Engine, ending: str, offered: bool) -> None:
    text = f"torch.multiprocessing.spawn.ProcessExitedException: process 0 terminated with {ending}\n"
    sig = engine.diagnose_text(text, "spawn.log").root_signature
    assert sig is not None and sig.id == "mp-spawn-exit"
    assert any("sys.exit" in step for step in sig.fix.steps) is offered


@pytest.mark.parametrize("line, offered", [
    ("ssh: Could not resolve hostname worker-1.job.<namespace>.svc: Name or service not known", True),
    ("ssh: connect to host 10.0.0.7 port 22: Connection refused", False)])
def test_the_dns_step_only_for_a_name_ssh_could_not_resolve(engine: Engine, line: str, offered: bool) -> None:
    """A redacted part of a host name ("<namespace>") is still a host name."""
    diagnosis = engine.diagnose_text(line + "\n" + ORTE_BLOCK, "launcher.log")
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "ssh-launch-failed"
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert any("dnsPolicy" in step for step in sig.fix.steps) is offered
