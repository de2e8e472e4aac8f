"""The cross-rank reasoning on hand-built events: causal signals before clocks, and the known traps."""

from __future__ import annotations

import pytest

from faultline.library import SignatureLibrary
from faultline.model import Event, FileSummary, Role, ScanOutput, Timestamp, Verdict
from faultline.reasoning import diagnose_scan

LIBRARY = SignatureLibrary.load()
_order = [0]


def ev(sig: str, role: Role, rank: int | None, line: int, *, file: str = "run.log", t: float | None = None,
       priority: int = 50, fields: dict[str, str] | None = None, text: str = "") -> Event:
    _order[0] += 1
    return Event(signature_id=sig, title=sig, category="test", role_prior=role, priority=priority, file=file,
                 line=line, text=text or sig, message=sig, fields=fields or {}, rank=rank,
                 time=Timestamp(2024, t, str(t)) if t is not None else None, order=_order[0], role=role)


def run(events: list[Event], files: list[FileSummary] | None = None, suspects=None):  # type: ignore[no-untyped-def]
    out = ScanOutput(events=events, suspects=suspects or [], files=files or [FileSummary("run.log", lines=100, last_line=100)])
    return diagnose_scan(out, LIBRARY)


def test_earliest_root_cause_wins_not_rank_zero_not_the_loudest() -> None:
    events = [ev("nccl-watchdog-timeout", Role.COLLATERAL, r, 100 + r, t=700.0) for r in (0, 1, 2, 4, 5, 6, 7)]
    events += [ev("cuda-oom", Role.ROOT_CAUSE, 3, 50, t=100.0, priority=90),
               ev("python-exception", Role.ROOT_CAUSE, 0, 120, t=710.0, priority=10)]
    diagnosis = run(events)
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.initiating_rank == 3
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "cuda-oom"
    assert len(diagnosis.collateral) == 8
    assert all(e.caused_by is diagnosis.root_cause for e in diagnosis.collateral)


def test_oom_after_own_timeout_is_collateral() -> None:
    events = [ev("dataloader-worker-exception", Role.ROOT_CAUSE, 2, 10, t=100.0),
              ev("nccl-watchdog-timeout", Role.COLLATERAL, 5, 20, t=700.0),
              ev("cuda-oom", Role.ROOT_CAUSE, 5, 21, t=701.0, priority=90)]
    diagnosis = run(events)
    assert diagnosis.initiating_rank == 2
    oom = [e for e in diagnosis.collateral if e.signature_id == "cuda-oom"]
    assert oom and "consequence" in oom[0].note


def test_oom_after_own_timeout_without_clocks() -> None:
    events = [ev("nccl-watchdog-timeout", Role.COLLATERAL, 5, 20), ev("cuda-oom", Role.ROOT_CAUSE, 5, 21),
              ev("python-exception", Role.ROOT_CAUSE, 1, 5, priority=10)]
    diagnosis = run(events)
    assert diagnosis.initiating_rank == 1


def test_blame_beats_clocks() -> None:
    events = [ev("cuda-oom", Role.ROOT_CAUSE, 1, 10, t=100.0),
              ev("cuda-illegal-memory-access", Role.ROOT_CAUSE, 6, 30, t=105.0),
              ev("nccl-remote-error-propagated", Role.COLLATERAL, 0, 40, t=110.0, fields={"peer_rank": "6"}),
              ev("nccl-remote-error-propagated", Role.COLLATERAL, 2, 41, t=110.0, fields={"peer_rank": "6"})]
    diagnosis = run(events)
    assert diagnosis.initiating_rank == 6
    assert any("name rank 6" in r.text for r in diagnosis.reasons)


def test_simultaneous_causes_are_both_shown() -> None:
    events = [ev("cuda-oom", Role.ROOT_CAUSE, 1, 10, t=100.0, priority=90),
              ev("cuda-illegal-memory-access", Role.ROOT_CAUSE, 6, 30, t=100.5, priority=90)]
    diagnosis = run(events)
    assert diagnosis.initiating_rank == 1
    assert [e.rank for e in diagnosis.competing] == [6]
    assert any(r.kind == "contradicts" and "competing" in r.text for r in diagnosis.reasons)


def test_watchdog_counters_name_the_straggler() -> None:
    events = []
    for rank in range(8):
        if rank == 6:
            events.append(ev("nccl-dump-signal", Role.COLLATERAL, 6, 60,
                             fields={"last_enqueued": "1199", "last_completed": "1199", "peer_rank": "0"}))
            continue
        events.append(ev("nccl-watchdog-timeout", Role.COLLATERAL, rank, 10 + rank, fields={"seq": "1200"}))
        events.append(ev("nccl-watchdog-pg-status", Role.CONTEXT, rank, 20 + rank,
                         fields={"seq": "1200", "last_enqueued": "1200", "last_completed": "1199"}))
    diagnosis = run(events)
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.initiating_rank == 6
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "collective-straggler"
    assert diagnosis.root_cause.line == 60


def test_silent_rank_among_timeouts_is_the_straggler() -> None:
    files = [FileSummary(f"rank{r}.log", lines=50, rank_from_name=r, last_line=50, last_text=f"step 9 rank {r}")
             for r in range(4)]
    events = [ev("gloo-timeout", Role.COLLATERAL, r, 40, file=f"rank{r}.log") for r in (0, 1, 2)]
    diagnosis = run(events, files)
    assert diagnosis.initiating_rank == 3
    assert diagnosis.root_cause is not None and (diagnosis.root_cause.file, diagnosis.root_cause.line) == ("rank3.log", 50)


def test_collateral_only_without_straggler_is_unknown() -> None:
    events = [ev("nccl-remote-error", Role.COLLATERAL, r, 10 + r) for r in range(4)]
    diagnosis = run(events)
    assert diagnosis.verdict is Verdict.UNKNOWN
    assert diagnosis.initiating_rank is None
    assert diagnosis.root_cause is None
    # The first of them is named as where to start, as a symptom: not a root cause, and no rank is blamed for it.
    assert diagnosis.first_failure is events[0]
    assert diagnosis.first_failure.role is Role.COLLATERAL and diagnosis.first_failure in diagnosis.collateral


def test_no_first_failure_when_a_line_states_the_cause() -> None:
    events = [ev("nccl-watchdog-timeout", Role.COLLATERAL, r, 100 + r, t=700.0) for r in (0, 1)]
    diagnosis = run([*events, ev("cuda-oom", Role.ROOT_CAUSE, 2, 50, t=100.0, priority=90)])
    assert diagnosis.root_cause is not None and diagnosis.first_failure is None


def test_context_only_is_no_failure() -> None:
    diagnosis = run([ev("loss-scale-overflow", Role.CONTEXT, 0, 5)])
    assert diagnosis.verdict is Verdict.NO_FAILURE


def test_torchrun_block_rank_is_evidence_not_the_answer() -> None:
    events = [ev("python-exception", Role.ROOT_CAUSE, 2, 10, priority=10),
              ev("torchrun-failure-rank", Role.CONTEXT, None, 80, fields={"rank": "0", "local_rank": "0"}),
              ev("sigterm-closing", Role.COLLATERAL, None, 81, fields={"exitcode": "-15"},
                 text="  exitcode  : -15 (pid: 9)")]
    diagnosis = run(events)
    assert diagnosis.initiating_rank == 2
    assert diagnosis.ranks[0].exitcode == -15


def _torchrun_summary(entries: list[tuple[str, int, str, str]], root: tuple[str, int]) -> str:
    """torchrun's ChildFailedError text (torch/distributed/elastic/multiprocessing/errors/__init__.py,
    _MSG_FORMAT_TEMPLATE and _FAILURE_FORMAT_TEMPLATE): (time, rank, exitcode, traceback) per failed worker."""
    def entry(i: int, t: str, rank: int, code: str, tb: str) -> str:
        return (f"[{i}]:\n  time      : {t}\n  host      : node-1\n  rank      : {rank} (local_rank: {rank})\n"
                f"  exitcode  : {code} (pid: {1000 + rank})\n  error_file: <N/A>\n  traceback : {tb}\n")
    others = "".join(entry(i + 1, *e) for i, e in enumerate(entries))
    return ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n" + "=" * 60 + "\n"
            "train.py FAILED\n" + "-" * 60 + "\nFailures:\n" + others + "-" * 60 + "\n"
            "Root Cause (first observed failure):\n" + entry(0, root[0], root[1], "1", "To enable traceback see: "
                                                               "https://pytorch.org/docs/stable/elastic/errors.html")
            + "=" * 60 + "\n")


def test_a_kill_after_another_rank_had_exited_is_the_teardown(engine) -> None:  # type: ignore[no-untyped-def]
    text = _torchrun_summary([("2026-09-07_13:03:29", 0, "-9", "Signal 9 (SIGKILL) received by PID 1000"),
                              ("2026-09-07_13:03:29", 2, "-15", "Signal 15 (SIGTERM) received by PID 1002")],
                             ("2026-09-07_13:02:58", 1))
    diagnosis = engine.diagnose_text(text, "launcher.log")
    assert diagnosis.initiating_rank == 1
    assert diagnosis.root_cause is None or diagnosis.root_cause.rank == 1
    assert all(e.signature_id != "exit-sigkill" or e.role is Role.COLLATERAL for e in diagnosis.events)


def test_a_kill_before_any_other_exit_stays_the_cause(engine) -> None:  # type: ignore[no-untyped-def]
    text = _torchrun_summary([("2026-09-07_13:03:29", 1, "-15", "Signal 15 (SIGTERM) received by PID 1001")],
                             ("2026-09-07_13:02:58", 0)).replace(
        "rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 1000)",
        "rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 1000)")
    diagnosis = engine.diagnose_text(text, "launcher.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.initiating_rank == 0
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "exit-sigkill"


def test_a_fatal_nccl_warn_is_a_failure_not_a_warning(engine) -> None:  # type: ignore[no-untyped-def]
    # NCCL src/bootstrap.cc: the root gives up right after this WARN; nothing else may follow in the log.
    text = ("node-1:18569:18569 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
            "node-1:18569:18835 [0] bootstrap.cc:131 NCCL WARN Bootstrap Root : rank 1 of 8 ranks has already "
            "checked in\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "nccl-bootstrap-duplicate-rank"
    assert diagnosis.initiating_rank is None  # the rank in the message is the one claimed twice, not the printer


def test_no_failure_lists_the_lines_it_weighed_and_why_each_is_harmless(engine) -> None:  # type: ignore[no-untyped-def]
    text = ("step 1 loss 2.0\n"
            "node1:12:12 [0] NCCL WARN Cuda failure 'out of memory'\n"
            "step 2 loss 1.9\nstep 3 loss 1.8\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert [(c.line, c.text) for c in diagnosis.considered] == [(2, text.splitlines()[1])]
    assert "run.log:4 shows the run going on" in diagnosis.considered[0].reason
    assert any("looked like trouble" in r.text for r in diagnosis.reasons)
    healthy = engine.diagnose_text("step 1 loss 2.0\nstep 2 loss 1.9\n", "run.log")
    assert healthy.verdict is Verdict.NO_FAILURE and healthy.considered == []
    failed = engine.diagnose_text(text + "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate "
                                          "2.00 GiB.\n", "run.log")
    assert failed.verdict is Verdict.FAILURE and failed.considered == []


# Open MPI's orterun help texts (orte/tools/orterun/help-orterun.txt: [orterun:proc-aborted-strsignal]).
_MPIRUN_EXIT = ("-" * 74 + "\nPrimary job  terminated normally, but 1 process returned\n"
                "a non-zero exit code. Per user-direction, the job has been aborted.\n" + "-" * 74 + "\n" + "-" * 74 + "\n"
                "mpirun noticed that process rank {rank} with PID 4242 on node gpu-07 exited on signal {signal} "
                "({name}).\n" + "-" * 74 + "\n")


def test_an_exit_record_alone_names_the_rank_that_died(engine) -> None:  # type: ignore[no-untyped-def]
    """All the logs show is the launcher's record of one rank's death: that rank is the initiator and the record
    the root line (its own error went to its own output), even for a signal a teardown also gives (SIGABRT)."""
    diagnosis = engine.diagnose_text(_MPIRUN_EXIT.format(rank=3, signal=6, name="Aborted"), "mpirun.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.initiating_rank == 3
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 6
    assert diagnosis.root_cause.signature_id == "mpirun-process-exit"


def test_the_only_rank_that_aborted_on_its_own_watchdog_is_no_initiator(engine) -> None:  # type: ignore[no-untyped-def]
    """Rank 7's own lines are its watchdog's timeout in a collective it had entered and the abort of it; torchrun's
    agent then stops the others and records rank 7's -6. Its timer ran out first; who held the collective up is not
    in the log, so no rank is named and the fix is the timeout family's."""
    text = ("terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=806, OpType=BROADCAST, "
            "Timeout(ms)=1800000) ran for 1801027 milliseconds before timing out.\n"
            + "".join(f"WARNING:torch.distributed.elastic.multiprocessing.api:Sending process {56163 + n} closing "
                      "signal SIGTERM\n" for n in range(7))
            + "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -6) local_rank: 7 (pid: 561642) "
              "of binary: /usr/bin/python\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.initiating_rank is None
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "nccl-watchdog-timeout"  # whose fix the answer gives


def test_exit_records_of_several_victims_name_no_rank(engine) -> None:  # type: ignore[no-untyped-def]
    text = (_MPIRUN_EXIT.format(rank=3, signal=6, name="Aborted")
            + _MPIRUN_EXIT.format(rank=5, signal=6, name="Aborted"))
    diagnosis = engine.diagnose_text(text, "mpirun.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.initiating_rank is None


def test_the_rank_missing_from_a_ready_list_is_the_straggler_without_any_rank_prefix(engine) -> None:  # type: ignore[no-untyped-def]
    """Horovod <= 0.19 (horovod/common/operations.cc) lists the ranks that submitted a stalled tensor; the ranks
    listed show the job's ranks up to the highest, so a gap among them is the rank that never arrived."""
    text = "".join(f"Stalled ops: HorovodBroadcast_layer_{n}_weights_0 [ready ranks: 5, 6, 3, 1, 4, 0]\n"
                   for n in range(3))
    diagnosis = engine.diagnose_text(text, "horovod.log")
    assert diagnosis.initiating_rank == 2


# horovod/common/stall_inspector.cc (0.17+, under horovodrun/mpirun --tag-output): the warning, "Stalled ranks:"
# ("Missing ranks:" since 0.20.1), then one line per missing rank with the tensors it never submitted.
_STALL = ("[1,0]<stderr>:[2019-10-09 15:36:43.594972: W horovod/common/stall_inspector.cc:105] One or more tensors "
          "were submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of "
          "ranks for more than 60 seconds. This may indicate that different ranks are trying to submit different "
          "tensors or that only subset of ranks is submitting tensors, which will cause deadlock. \n"
          "[1,0]<stderr>:Missing ranks:\n{ranks}")


def test_the_rank_a_stall_report_lists_as_missing_is_the_straggler(engine) -> None:  # type: ignore[no-untyped-def]
    text = _STALL.format(ranks="[1,0]<stderr>:6: [allreduce.noname.0, allreduce.noname.1, allreduce.noname.10]\n")
    diagnosis = engine.diagnose_text(text, "horovod.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.initiating_rank == 6
    listed = [e for e in diagnosis.events if e.signature_id == "horovod-stall-missing-rank"]
    assert [(e.rank, e.fields.get("missing_ranks")) for e in listed] == [(0, "6")]  # rank 0 reports rank 6


def test_a_stall_in_which_every_rank_misses_a_tensor_names_no_straggler(engine) -> None:  # type: ignore[no-untyped-def]
    """Each rank waits on a tensor another one submitted: the ranks run different collectives, none is behind."""
    text = _STALL.format(ranks="[1,0]<stderr>:0: [HorovodBroadcast_bias_0]\n"
                               "[1,0]<stderr>:1: [DistributedMomentumOptimizer_Allreduce/HorovodAllreduce_AddN_0]\n")
    diagnosis = engine.diagnose_text(text, "horovod.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.initiating_rank is None


def test_a_stall_the_run_went_on_after_names_no_straggler(engine) -> None:  # type: ignore[no-untyped-def]
    text = _STALL.format(ranks="[1,0]<stderr>:1: [HorovodAllreduce_gradients_AddN_0]\n"
                               "[1,1]<stderr>:INFO:tensorflow:loss = 25.564167, step = 0\n"
                               "[1,0]<stderr>:INFO:tensorflow:loss = 25.1, step = 100\n")
    diagnosis = engine.diagnose_text(text, "horovod.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE


def test_the_only_rank_whose_traceback_has_no_exception_line_started_it(engine) -> None:  # type: ignore[no-untyped-def]
    """A paste cut before rank 1's exception line: its traceback is still its own failure; rank 2 only lost the
    store afterwards (torch/csrc/distributed/c10d/TCPStore.cpp recvValue)."""
    text = ("[rank1]: Traceback (most recent call last):\n"
            '[rank1]:   File "/code/train.py", line 443, in <module>\n'
            "[rank1]:     dataset_manager.cache()\n"
            "[rank2]:[W729 10:15:17.529377834 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=76, "
            "addr=[localhost]:60902, remote=[localhost]:29500): Connection reset by peer\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.initiating_rank == 1
    # with the exception line there, the line decides as before
    whole = text.replace("[rank2]", "[rank1]: ValueError: bad cache\n[rank2]", 1)
    diagnosis = engine.diagnose_text(whole, "run.log")
    assert diagnosis.initiating_rank == 1 and diagnosis.root_cause is not None
    assert diagnosis.root_cause.text.endswith("ValueError: bad cache")


# NCCL's WARN (net_ib.cc / ib_plugin.c) prints the CUDA device, not the rank; ProcessGroupNCCL's later line of the
# same process names its rank inside the message (c10d's logPrefix), with no [rankN]: prefix in front.
_IB_WARN = ("node-a:34610:36821 [4] ib_plugin.c:1673 NCCL WARN NET/IB: Got completion from peer 10.0.1.23<47140> "
            "with status=12 opcode=0 len=0 vendor err 129 (Recv) hca ibp152s0\n"
            "node-a:34610:36821 [4] NCCL INFO transport/net.cc:1314 -> 6\n")
_PG_LINE = ("[E1229 16:47:25.333820755 ProcessGroupNCCL.cpp:541] {group}Rank 4] found async exception when checking "
            "for NCCL errors: NCCL error: remote process exited or there was a network error, NCCL version 2.22.3\n")


@pytest.mark.parametrize(("group", "rank"), [("[", 4), ("[PG ID 0 PG GUID 0(default_pg) ", 4), ("[PG ID 3 PG GUID 3 ", None)])
def test_the_rank_a_process_group_message_names_is_the_files_rank(engine, group: str, rank: int | None) -> None:  # type: ignore[no-untyped-def]
    """A paste whose only rank is the one ProcessGroupNCCL names inside its messages: the default group's rank is the
    process's global rank, and the NCCL WARN that explains the failure is that rank's; a subgroup's is not."""
    diagnosis = engine.diagnose_text(_IB_WARN + _PG_LINE.format(group=group), "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert diagnosis.initiating_rank == rank


def test_deepspeed_log_dist_rank_is_not_the_files_rank(engine) -> None:  # type: ignore[no-untyped-def]
    from faultline.lines.prefixes import inline_rank

    assert inline_rank("[2023-07-10 04:09:43,963] [INFO] [logging.py:93:log_dist] [Rank 0] DeepSpeed info") == (0, False)
    assert inline_rank(_PG_LINE.format(group="[PG 0 ")) == (4, True)


def test_a_scripts_own_rank_tag_names_the_rank(engine) -> None:  # type: ignore[no-untyped-def]
    """c10's "[rankN]" without its colon, as a script prints it ("[rank8] Gloo connectFullMesh failed ..."): the
    line is that rank's."""
    from faultline.lines.prefixes import inline_rank

    assert inline_rank("[rank8] Gloo connectFullMesh failed ... timed out connecting") == (8, False)
    text = ("[rank8] Gloo connectFullMesh failed ... timed out connecting: SO_ERROR: Connection refused, "
            "remote=[127.0.0.1]:14215\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.initiating_rank == 8


# torch/multiprocessing/spawn.py: ProcessRaisedException's message is the child's index and its own traceback.
_SPAWN_RAISED = """Traceback (most recent call last):
  File "train.py", line 16, in <module>
    mp.spawn(main, nprocs=2)
  File "/usr/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 150, in join
    raise ProcessRaisedException(msg, error_index, failed_process.pid)
torch.multiprocessing.spawn.ProcessRaisedException: {space}

-- Process 1 terminated with the following error:
Traceback (most recent call last):
  File "/usr/lib/python3.8/site-packages/torch/multiprocessing/spawn.py", line 59, in _wrap
    fn(i, *args)
  File "train.py", line 50, in main
    loss = model(batch).sum()
ValueError: batch 17 has no labels
""".format(space=" ")  # spawn's message starts with a blank line: the exception line ends with ": "


def test_the_traceback_under_a_spawn_header_is_that_process_s(engine) -> None:  # type: ignore[no-untyped-def]
    diagnosis = engine.diagnose_text(_SPAWN_RAISED, "spawn.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 14
    assert diagnosis.initiating_rank == 1
    later = _SPAWN_RAISED + "RuntimeError: the parent's own cleanup failed\n"
    diagnosis = engine.diagnose_text(later, "spawn.log")  # the header's block ends at the child's exception line
    assert all(e.rank is None for e in diagnosis.events if e.line == 15)


_SRUN_TRACEBACK = ('Traceback (most recent call last):\n  File "train.py", line 90, in <module>\n'
                   "ValueError: bad batch\n")


def test_srun_s_report_of_a_task_names_the_rank_when_srun_started_every_rank(engine) -> None:  # type: ignore[no-untyped-def]
    """srun started one task per rank (no launcher per node): the task its report names is the rank, and the only
    task that exited on its own gives the rank-less traceback above its rank."""
    text = _SRUN_TRACEBACK + ("srun: error: gpu-a-017: task 3: Exited with exit code 1\n"
                              "srun: error: gpu-a-017: tasks 0-2: Terminated\n")
    diagnosis = engine.diagnose_text(text, "job.out")
    assert diagnosis.initiating_rank == 3
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 3
    crash = engine.diagnose_text("srun: error: ip-26-0-141-178: task 15: Segmentation fault\n", "job.out")
    assert crash.initiating_rank == 15 and crash.root_cause is not None and crash.root_cause.line == 1


def test_a_task_is_not_a_rank_under_a_launcher_per_node(engine) -> None:  # type: ignore[no-untyped-def]
    """srun started one torchrun per node: task 1 is the second node's launcher, not rank 1; the rank is torchrun's."""
    text = _SRUN_TRACEBACK + (
        "E1201 10:00:01.000000 4242 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 2 (pid: 4245) of binary: /usr/bin/python\n"
        "srun: error: gpu-b-002: task 1: Exited with exit code 1\n")
    diagnosis = engine.diagnose_text(text, "job.out")
    assert diagnosis.initiating_rank != 1


def test_a_launcher_s_report_printed_before_the_worker_s_traceback_does_not_demote_it(engine) -> None:  # type: ignore[no-untyped-def]
    """DeepSpeed's launcher prints "Killing subprocess N" from its own process, often before the worker's buffered
    traceback reaches the stream: the worker's error stays the cause of its rank, not a consequence of the kill."""
    text = ("[rank0]: Global Rank: 0 Local Rank: 0\n"
            "Killing subprocess 659577\n"
            'Traceback (most recent call last):\n  File "train.py", line 299, in <module>\n'
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    diagnosis = engine.diagnose_text(text, "launch.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 5
    assert diagnosis.initiating_rank == 0


def test_the_agent_s_record_of_its_one_worker_is_the_rank_of_its_output(engine) -> None:  # type: ignore[no-untyped-def]
    """torchelastic's rendezvous result names the global rank of the node's one worker: the worker's rank-less
    error in the same output is that rank's. With several workers on the node, no rank follows from it."""
    def agent_log(ranks: str) -> str:
        return ("INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous complete for workers. Result:\n"
                f"  restart_count=0\n  group_rank=1\n  global_ranks=[{ranks}]\n  global_world_sizes=[2]\n"
                "[W socket.cpp:601] [c10d] The client socket has failed to connect to [worker-0]:43461 "
                "(errno: 113 - No route to host).\n")

    assert engine.diagnose_text(agent_log("1"), "pod.log").initiating_rank == 1
    assert engine.diagnose_text(agent_log("2, 3"), "pod.log").initiating_rank is None



def test_a_paste_that_ends_on_warnings_is_not_called_harmless(engine) -> None:  # type: ignore[no-untyped-def]
    """Only warnings looked like trouble: with the process's output going on after them they are harmless; when the
    paste ends on them (a hang, a process that stopped there), "no failure" would be a guess."""
    warns = ("worker0-0d9gnb:15:91 [3] misc/utils.cc:118 NCCL WARN Could not get a hash of the host name\n"
             "worker0-0d9gnb:15:91 [3] transport.cu:153 NCCL WARN transport.cu:153 ->2 [Proxy thread error]\n")
    ended = engine.diagnose_text(warns, "pod.log")
    assert ended.verdict is Verdict.UNKNOWN and ended.suspicious
    went_on = engine.diagnose_text(warns + "worker0-0d9gnb:15:15 [3] NCCL INFO Using network Socket\n", "pod.log")
    assert went_on.verdict is Verdict.NO_FAILURE


def test_a_line_with_error_words_and_nothing_after_it_is_not_an_all_clear(engine) -> None:  # type: ignore[no-untyped-def]
    text = ("ERROR: the coordinator lost contact with a remote daemon.\n"
            "  HNP daemon   : [[43015,0],0] on node launcher-0\n")
    assert engine.diagnose_text(text, "run.log").verdict is Verdict.UNKNOWN
    assert engine.diagnose_text(text + "step 12 loss 2.31\n", "run.log").verdict is Verdict.NO_FAILURE


def test_srun_s_report_takes_no_rank_from_its_file_under_a_launcher_per_node(engine) -> None:  # type: ignore[no-untyped-def]
    """The only rank prefix in the file is [rank11], yet srun's 'task 0' is the first node's torchrun, not rank 11:
    its exit code must not make rank 11 the one rank that ended on its own."""
    text = ("[rank11]:[E726 10:59:44.365679787 ProcessGroupNCCL.cpp:621] [Rank 11] Some NCCL operations have failed or "
            "timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
            "corrupted/incomplete data.\n"
            "Root Cause (first observed failure):\n[0]:\n  time      : 2024-07-26_10:59:45\n  host      : node-1\n"
            "  rank      : 10 (local_rank: 2)\n  exitcode  : -6 (pid: 214033)\n  error_file: <N/A>\n"
            "  traceback : Signal 6 (SIGABRT) received by PID 214033\n"
            "srun: error: node-1: task 0: Exited with exit code 1\n")
    diagnosis = engine.diagnose_text(text, "job.out")
    report = next(e for e in diagnosis.events if e.signature_id == "srun-task-exit")
    assert report.rank is None
    assert diagnosis.initiating_rank != 11


def test_the_bind_warnings_before_the_store_hosts_traceback_are_rank_0s(engine) -> None:  # type: ignore[no-untyped-def]
    """c10d prints its failed binds before the exception reaches the env:// rendezvous frame that creates the
    TCPStore server, which only rank 0 does: the warnings above that traceback are rank 0's too."""
    text = ("[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
            "already in use).\n"
            "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 1141, in '
            "init_process_group\n"
            "    store, rank, world_size = next(rendezvous_iterator)\n"
            '  File "/usr/lib/python3/dist-packages/torch/distributed/rendezvous.py", line 241, in '
            "_env_rendezvous_handler\n"
            "    store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout)\n")
    diagnosis = engine.diagnose_text(text, "serve.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "store-addr-in-use"
    assert diagnosis.initiating_rank == 0


_IGNORED = ("Epoch 5/15: 100%|##########| 120/120 [00:31<00:00,  3.85it/s, loss=0.412]\n"
            "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f6d64a3b1f0>\n"
            "Traceback (most recent call last):\n"
            '  File "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", line 1479, in __del__\n'
            "    self._shutdown_workers()\n"
            '  File "/usr/lib/python3.10/multiprocessing/process.py", line 160, in is_alive\n'
            "    assert self._parent_pid == os.getpid(), 'can only test a child process'\n"
            "AssertionError: can only test a child process\n")


def test_an_exception_python_ignored_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """CPython's 'Exception ignored in:' traceback did not stop the program: with the run going on after it, the
    paste shows no failure, and the report says why the assertion is harmless."""
    diagnosis = engine.diagnose_text(_IGNORED + "Epoch 6/15: 100%|##########| 120/120 [00:30<00:00,  3.9it/s]\n",
                                     "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert any("Python ignored this exception" in (e.note or "") for e in diagnosis.events)


def test_a_failure_after_an_ignored_exception_is_still_the_failure(engine) -> None:  # type: ignore[no-untyped-def]
    diagnosis = engine.diagnose_text(_IGNORED + "Traceback (most recent call last):\n"
                                     '  File "train.py", line 90, in <module>\n'
                                     "ValueError: shapes (4, 3) and (2,) do not match\n", "train.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None
    assert diagnosis.root_cause.text.startswith("ValueError")


def test_an_ignored_exception_s_traceback_cut_before_its_exception_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """A paste that ends inside the traceback under 'Exception ignored in:' (its exception's line cut off): the
    traceback's lines are no suspects, so nothing unexplained is left and the header is listed as considered."""
    cut = _IGNORED.splitlines(keepends=True)[:-1]
    diagnosis = engine.diagnose_text("".join(cut), "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert [s.line for s in diagnosis.considered] == [2]


def test_an_error_line_after_a_cut_ignored_traceback_is_still_suspect(engine) -> None:  # type: ignore[no-untyped-def]
    """Only the traceback's own lines (its header, frames and source) are excused, not what follows them."""
    cut = "".join(_IGNORED.splitlines(keepends=True)[:-1])
    diagnosis = engine.diagnose_text(cut + "ERROR: the job lost its connection to the scheduler\n", "train.log")
    assert diagnosis.verdict is Verdict.UNKNOWN
    assert [s.line for s in diagnosis.suspicious] == [8]


def test_git_finding_no_repository_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """git's own 'fatal: not a git repository' (setup.c), printed when a tool asks for the commit: the caller goes
    on. The line is listed among those considered, with why it is harmless."""
    text = ("2022-01-06 23:05:39,304 - mmgen - INFO - Set random seed to 2021, deterministic: False\n"
            "fatal: not a git repository (or any parent up to mount point /home/ma-user)\n"
            "Stopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).\n"
            "2022-01-06 23:08:41,271 - mmgen - INFO - Load reference inception pkl from caleba.pkl\n")
    diagnosis = engine.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert [(s.line, "harmless" in s.reason or "informational" in s.reason) for s in diagnosis.considered] == [(2, True)]


def test_a_grappler_pass_that_failed_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """TensorFlow's meta optimizer logs '<pass> failed: <status>' at error level, drops the pass's output and goes
    on with the graph as it was (grappler/optimizers/meta_optimizer.cc): not a failure, even as the paste's end."""
    line = ("2021-04-25 19:41:36.471487: E tensorflow/core/grappler/optimizers/meta_optimizer.cc:599] layout failed: "
            "Invalid argument: Size of values 0 does not match size of permutation 4 @ fanin shape in x\n")
    diagnosis = engine.diagnose_text(line, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert [s.line for s in diagnosis.considered] == [1]
    executor = line.replace("grappler/optimizers/meta_optimizer.cc:599] layout failed",
                            "common_runtime/executor.cc:599] Executor failed")
    assert engine.diagnose_text(executor, "train.log").verdict is not Verdict.NO_FAILURE


def test_an_old_nccl_warning_then_more_initialisation_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """NCCL 2.0-2.2 wrote its WARN without 'NCCL ' ('misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]'), led
    by a container id for a host: a warning it carries on after (sockets instead of InfiniBand)."""
    text = ("062fc37504b7:350:457 [0] misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]\n"
            "062fc37504b7:350:457 [0] INFO Using internal Network Socket\n"
            "062fc37504b7:350:457 [0] INFO NET : Using interface eth0:172.17.0.3<0>\n")
    diagnosis = engine.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert [e.signature_id for e in diagnosis.events] == ["nccl-warn-unexplained"]


_VLLM_SHUTDOWN = ("ERROR 07-17 23:44:18 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 6923 died, exit "
                  "code: -15\nINFO 07-17 23:44:18 multiproc_worker_utils.py:123] Killing local vLLM worker processes\n")


def test_vllm_workers_stopped_with_sigterm_are_the_shutdown_not_a_cause(engine) -> None:  # type: ignore[no-untyped-def]
    """vLLM's WorkerMonitor logs every worker that ended with a non-zero code at error level; -15 is a worker the
    engine stopped (vllm/executor/multiproc_worker_utils.py). After a test session that passed it is no failure;
    after the engine's own error that error stays the cause."""
    passed = "===== 5 passed in 525.85s (0:08:45) =====\n" + _VLLM_SHUTDOWN
    assert engine.diagnose_text(passed, "test.log").verdict is Verdict.NO_FAILURE
    failed = "ERROR 02-28 01:21:51 engine.py:400] ValueError: The input size is not aligned\n" + _VLLM_SHUTDOWN
    diagnosis = engine.diagnose_text(failed, "serve.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None
    assert diagnosis.root_cause.line == 1
    killed = passed.replace("exit code: -15", "exit code: -9")
    assert engine.diagnose_text(killed, "test.log").verdict is not Verdict.NO_FAILURE


def test_ncclcomminitrank_refusing_a_rank_beyond_the_world_is_a_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """NCCL's init.cc WARNs 'Invalid rank requested : 7/4' and returns ncclInvalidArgument: more processes than the
    world size. A paste of those WARNs between init INFO lines is a failure, not a run that went on."""
    text = ("u37:6861:6861 [7] init.cc:981 NCCL WARN Invalid rank requested : 7/4\n"
            "u37:6860:6860 [6] NCCL INFO Bootstrap : Using [0]enp1s0f0:10.49.66.196<0>\n"
            "u37:6854:7877 [0] NCCL INFO Setting affinity for GPU 0 to 03,fffff000,003fffff\n")
    diagnosis = engine.diagnose_text(text, "train.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_signature is not None and diagnosis.root_signature.id == "nccl-invalid-rank"


def test_jax_falling_back_to_the_cpu_is_the_cause(engine) -> None:  # type: ignore[no-untyped-def]
    """jax/_src/xla_bridge.py: the GPU backend raised and JAX runs on CPU devices; every process prints it."""
    line = ("CUDA backend failed to initialize: jaxlib/cuda/versions_helpers.cc:90: operation gpuDeviceGetAttribute("
            "&major, GPU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device) failed: CUDA_ERROR_NOT_INITIALIZED (Set "
            "TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)\n")
    text = line + line + "Process 2: Global devices: [CpuDevice(id=0), CpuDevice(id=1)], Local devices: [CpuDevice(id=1)]\n"
    diagnosis = engine.diagnose_text(text, "jax.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None
    assert (diagnosis.root_cause.line, diagnosis.root_cause.signature_id) == (1, "jax-cuda-backend-failed")


def test_ggmls_cuda_error_and_its_assert_are_a_failure(engine) -> None:  # type: ignore[no-untyped-def]
    """Older llama.cpp's CUDA check ('CUDA error 719 at <file>.cu:<line>: <error>') then GGML_ASSERT's abort, whose
    own line names a .cu file: a failure stated by the CUDA error, never 'no failure'."""
    text = ("CUDA error 719 at /src/llama.cpp/ggml-cuda.cu:8008: unspecified launch failure\n"
            "current device: 1\n"
            "GGML_ASSERT: /src/llama.cpp/ggml-cuda.cu:8008: !\"CUDA error\"\n")
    diagnosis = engine.diagnose_text(text, "llama.log")
    assert diagnosis.verdict is Verdict.FAILURE and diagnosis.root_cause is not None
    assert (diagnosis.root_cause.line, diagnosis.root_cause.signature_id) == (1, "cuda-launch-failure")
    assert any(e.signature_id == "native-assertion" and e.line == 3 for e in diagnosis.events)


_IPV6 = ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (i-7840df31, 37340) cannot be retrieved (gai error: "
         "-2 - Name or service not known).\n")  # torch/csrc/distributed/c10d/socket.cpp, a warning


@pytest.mark.parametrize("repeats, verdict", [(1, Verdict.NO_FAILURE), (2, Verdict.NO_FAILURE), (3, Verdict.UNKNOWN),
                                              (6, Verdict.UNKNOWN)])
def test_a_warning_logged_again_and_again_to_the_end_is_no_all_clear(engine, repeats: int,  # type: ignore[no-untyped-def]
                                                                     verdict: Verdict) -> None:
    """One warning at a paste's end is how programs warn and go on; the same warning in a loop up to the end is a
    wait that had not ended when the paste stops."""
    diagnosis = engine.diagnose_text(_IPV6 * repeats, "train.log")
    assert diagnosis.verdict is verdict
    if verdict is Verdict.UNKNOWN:  # each line of the loop listed once, in order
        assert [s.line for s in diagnosis.suspicious] == list(range(1, repeats + 1))


def test_a_warning_loop_wrapped_by_a_terminal_still_ends_the_paste(engine) -> None:  # type: ignore[no-untyped-def]
    wrapped = _IPV6[:120] + "\n" + _IPV6[120:]
    assert engine.diagnose_text(wrapped * 3, "train.log").verdict is Verdict.UNKNOWN


@pytest.mark.parametrize("text", [
    "".join(f"[rank{r}]:{_IPV6}" for r in range(4)),  # one warning from each of four ranks: no loop
    # the warnings module prints a warning once per place and process: four copies are four processes
    # (torchvision/io/image.py's warn() when its C extension does not load, a common start-up line)
    ("/usr/local/lib/python3.10/dist-packages/torchvision/io/image.py:13: UserWarning: Failed to load image Python "
     "extension: 'libc10_cuda.so: cannot open shared object file: No such file or directory'If you don't plan on using "
     "image functionality from `torchvision.io`, you can ignore this warning.\n") * 4,
])
def test_copies_of_a_warning_from_several_processes_are_no_wait_loop(engine, text: str) -> None:  # type: ignore[no-untyped-def]
    assert engine.diagnose_text(text, "train.log").verdict is Verdict.NO_FAILURE


def test_a_warning_loop_that_the_run_got_past_is_no_failure(engine) -> None:  # type: ignore[no-untyped-def]
    diagnosis = engine.diagnose_text(_IPV6 * 4 + "{'loss': 2.0313, 'learning_rate': 1e-05, 'epoch': 0.01}\n", "train.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE


_SHM = ("node1:15016:15201 [1] misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 "
        "bytes, error: No space left on device (28)\n")


@pytest.mark.parametrize("channels, rank", [
    ("node1:15016:15016 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n"
     "node1:15015:15015 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n", 1),
    ("node1:15016:15016 [1] NCCL INFO Channel 00/0 : 0[0] -> 1[1] [receive] via NET/Socket/0\n", 1),
    # one process that connected as two ranks (two communicators): which is the world's, the lines do not say
    ("node1:15016:15016 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n"
     "node1:15016:15016 [1] NCCL INFO Channel 00/0 : 3[1] -> 2[0] via P2P/IPC\n", None),
])
def test_a_process_s_rank_from_the_channels_it_connected(engine, channels: str,  # type: ignore[no-untyped-def]
                                                         rank: int | None) -> None:
    diagnosis = engine.diagnose_text(channels + _SHM, "pod.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "nccl-shm-error"
    assert diagnosis.initiating_rank == rank


# c10/cuda/CUDACachingAllocator.cpp: the allocator warns when cudaMalloc fails, then frees its cache and retries.
ALLOCATOR_WARNING = ("[rank1]:[W906 07:46:05.008634648 CUDACachingAllocator.cpp:3933] memory allocation failed with OOM "
                     "on device 1 while trying to allocate 4334813184 bytes (free: 3779919872, total: 287431131136).\n")


def test_an_allocator_oom_warning_is_the_cause_only_when_the_run_stopped(engine) -> None:  # type: ignore[no-untyped-def]
    exited = ("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 1 (pid: 4242) of "
              "binary: /usr/bin/python3\n")
    stopped = engine.diagnose_text(ALLOCATOR_WARNING + exited, "server.log")
    assert stopped.verdict is Verdict.FAILURE
    assert stopped.root_cause is not None and stopped.root_cause.signature_id == "cuda-oom-allocator-warning"
    went_on = engine.diagnose_text(ALLOCATOR_WARNING + "".join(
        f"[rank1]: step {n} | loss 2.{n:02d} | lr 1.0e-04\n" for n in range(100, 110)), "train.log")
    assert went_on.verdict is Verdict.NO_FAILURE
    oom = ("[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.04 GiB. GPU 1 has a total capacity "
           "of 267.69 GiB of which 3.52 GiB is free.\n")
    both = engine.diagnose_text(ALLOCATOR_WARNING + oom, "train.log")
    assert both.root_cause is not None and both.root_cause.signature_id in ("cuda-oom", "cuda-oom-allocator-warning")


def test_a_tensorflow_task_that_lost_its_peer_is_a_victim(engine) -> None:  # type: ignore[no-untyped-def]
    """tensorflow/core/distributed_runtime/master_session.cc logs the lost partition, then the session raises
    errors_impl.UnavailableError: the task at the other end went away, so the cause is in its log (unknown here), and
    the fix is the one for a lost task (MonitoredTrainingSession recovers from UnavailableError)."""
    text = ("INFO:tensorflow:loss = 5.55723, step = 1431908\n"
            "E tensorflow/core/distributed_runtime/master_session.cc:1372] Cleanup partition error: Unavailable: "
            '{"created":"@1484095048.299027908","description":"EOF","grpc_status":14}\n'
            "Traceback (most recent call last):\n"
            '  File "train.py", line 38, in main\n'
            "    sess.run(train_op)\n"
            "tensorflow.python.framework.errors_impl.UnavailableError: Socket closed\n")
    diagnosis = engine.diagnose_text(text, "worker0.log")
    assert diagnosis.verdict is Verdict.UNKNOWN and diagnosis.root_cause is None
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "tf-grpc-unavailable" and "MonitoredTrainingSession" in sig.fix.summary



def test_a_rank_silent_in_a_subgroups_timeout_is_no_straggler(engine) -> None:  # type: ignore[no-untyped-def]
    """A timeout on process group 5 says nothing about ranks outside that group: rank 0, seen only answering the
    dump signal, is not named as the rank that never reached the collective. On the default group it would be."""
    timeout = ("[rank1]:[E1218 01:59:12.846104516 ProcessGroupNCCL.cpp:685] [Rank 1] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=943, OpType=ALLREDUCE, NumelIn=2, NumelOut=2, Timeout(ms)=600000) "
               "ran for 600019 milliseconds before timing out.\n"
               "[rank1]:[E1218 01:59:12.853182951 ProcessGroupNCCL.cpp:2252] [PG ID 5 PG GUID 15 Rank 1]  failure "
               "detected by watchdog at work sequence id: 943 PG status: last enqueued work: 943, last completed "
               "work: 942\n")
    other = ("[rank0]:[E1218 01:59:12.984943801 ProcessGroupNCCL.cpp:1806] [PG ID 0 PG GUID 0 Rank 0] Observed "
             "flight recorder dump signal from another rank via TCPStore.\n")
    diagnosis = engine.diagnose_text(timeout + other, "job.log")
    assert diagnosis.initiating_rank is None and diagnosis.verdict is Verdict.UNKNOWN
    default_group = engine.diagnose_text(timeout.replace("PG ID 5 PG GUID 15", "PG ID 0 PG GUID 0") + other, "job.log")
    assert default_group.initiating_rank == 0
