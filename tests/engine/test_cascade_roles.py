"""Roles that depend on what is around a line: a wait the run got past, an NCCL warning that a result chain
follows, the terminate line of a C++ exception, a victim's abort, the ranks a stalled collective lists as
missing, and a progress bar that never moved. Lines in the upstream formats (Horovod stall_inspector /
operations.cc, NCCL debug.cc and checks.h, libstdc++ vterminate.cc, torch elastic api.py)."""

from __future__ import annotations

from faultline.engine import Engine
from faultline.model import Verdict

STALL = ("[1,0]<stderr>:[2020-02-25 11:13:55.899666: W horovod/common/stall_inspector.cc:105] One or more tensors were "
         "submitted to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks "
         "for more than 60 seconds. This may indicate that different ranks are trying to submit different tensors or "
         "that only subset of ranks is submitting tensors, which will cause deadlock.\n")
STEPS = ("[1,1]<stderr>:INFO:tensorflow:loss = 25.564167, step = 0\n"
         "[1,0]<stderr>:INFO:tensorflow:loss = 24.1, step = 100\n")


def test_a_stall_warning_then_more_steps_is_no_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(STALL + STEPS, "hvd.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert any("shows the run going on after it" in s.reason for s in diagnosis.considered)


def test_a_stall_warning_with_nothing_after_it_is_a_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(STEPS + STALL, "hvd.log")
    assert diagnosis.verdict is not Verdict.NO_FAILURE


def test_a_stall_then_steps_then_an_error_is_still_a_failure(engine: Engine) -> None:
    error = "[1,1]<stderr>:RuntimeError: Horovod has been shut down. This was caused by an exception on one of the ranks\n"
    diagnosis = engine.diagnose_text(STALL + STEPS + error, "hvd.log")
    assert diagnosis.verdict is not Verdict.NO_FAILURE


def test_the_ranks_a_stalled_collective_lists_as_missing_are_the_stragglers(engine: Engine) -> None:
    text = ("WARNING: One or more tensors were submitted to be reduced, gathered or broadcasted by subset of ranks and "
            "are waiting for remainder of ranks for more than 60 seconds.\nStalled ops:\n"
            + "".join(f"HorovodBroadcast_layer{i}_weights_0 [missing ranks: 3]\n" for i in range(4)))
    diagnosis = engine.diagnose_text(text, "hvd.log")
    assert diagnosis.initiating_rank == 3
    assert any("lists rank(s) 3 as missing" in r.text for r in diagnosis.reasons)


CHAIN = ("user:16901:16967 [2] misc/socket.cc:441 NCCL WARN socketFinalizeAccept: wrong type 4 != 3\n"
         "user:16901:16967 [2] NCCL INFO misc/socket.cc:561 -> 3\n"
         "user:16901:16967 [2] NCCL INFO transport/net_socket.cc:375 -> 3\n")


def test_the_nccl_warning_a_result_chain_follows_is_the_cause(engine: Engine) -> None:
    diagnosis = engine.diagnose_text("user:16905:16951 [6] NCCL INFO Connected all trees\n" + CHAIN, "nccl.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 2
    assert diagnosis.root_cause.signature_id == "nccl-warn-unexplained"


def test_an_nccl_warning_alone_is_no_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(CHAIN.splitlines()[0] + "\nstep 10 loss 1.5\n", "nccl.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE


# NVIDIA/nccl src/init.cc: a fatal condition NCCL reports as a WARN before it returns ncclInvalidUsage.
DUPLICATE_GPU = ("frodo:33793:33885 [1] init.cc:573 NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA "
                 "device 83000\n")


def test_a_log_that_ends_on_a_fatal_nccl_warning_is_a_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text("frodo:33793:33793 [1] NCCL INFO Using network Socket\n" + DUPLICATE_GPU, "nccl.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "nccl-duplicate-gpu"


def test_a_fatal_nccl_warning_with_steps_after_it_is_no_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(DUPLICATE_GPU + "step 10 loss 1.5\nstep 20 loss 1.4\n", "nccl.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE


# NVIDIA/nccl src/transport/net_ib.cc (<= 2.9 wording) and src/misc/ibvwrap.cc: a verbs completion error, the result
# chain it starts, and a CUDA error the same process prints later, after its communicator was torn down.
IB_CHAIN = ("gpu5:35917:35994 [0] transport/net_ib.cu:788 NCCL WARN NET/IB : Got completion with error 12, opcode 1, "
            "len 0, vendor err 129\n"
            "gpu5:35917:35994 [0] NCCL INFO include/net.h:34 -> 2\n"
            "gpu5:35917:35994 [0] NCCL INFO transport/net.cu:537 -> 2\n"
            "gpu5:35917:35917 [0] NCCL INFO Destroyed comm 0x7f24c4001af0 rank 4\n"
            "gpu5:35917:35917 [1] init.cu:194 NCCL WARN Cuda failure 'an illegal memory access was encountered'\n")


def test_a_described_warning_that_heads_a_result_chain_stays_its_process_cause(engine: Engine) -> None:
    """A WARN a specific signature describes is its process's stated cause when a failed result chain follows it,
    as an undescribed one is: a more specific line the process prints a few lines later is not preferred to it."""
    diagnosis = engine.diagnose_text(IB_CHAIN, "nccl.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert diagnosis.root_cause.signature_id == "nccl-ib-completion-error"


def test_a_chain_pasted_without_prefixes_or_with_the_host_taken_out_promotes_the_warning(engine: Engine) -> None:
    """A paste trimmed of NCCL's ``host:pid:tid [dev]`` (both lines without a pid are one process), or with its
    host name replaced (``::16901:16967 [2]``, ``<cluster_name>:16901:16967 [2]``)."""
    trimmed = "\n".join(line.split("] ", 1)[1] for line in CHAIN.splitlines()) + "\n"
    for text in (trimmed, CHAIN.replace("user:", "::"), CHAIN.replace("user:", "<cluster_name>:")):
        diagnosis = engine.diagnose_text(text, "nccl.log")
        assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1, text
        assert diagnosis.root_cause.signature_id == "nccl-warn-unexplained"


def test_a_chain_of_another_process_does_not_promote_the_warning(engine: Engine) -> None:
    other = CHAIN.replace("16901:16967 [2] NCCL INFO", "16902:16970 [3] NCCL INFO")
    diagnosis = engine.diagnose_text(other, "nccl.log")
    assert diagnosis.root_cause is None or diagnosis.root_cause.signature_id != "nccl-warn-unexplained"


# torch/csrc/distributed/c10d/NCCLUtils.hpp: the error a failed NCCL call is raised as, on each rank
INTERNAL = ("RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:975, "
            "internal error, NCCL version 21.1.4\n")
TOPOLOGY_CHAIN = ("52: ip-0A0C:76285:76947 [4] graph/rings.cc:38 NCCL WARN Error : ring 0 does not loop back to start "
                  "(48 != 52)\n52: ip-0A0C:76285:76947 [4] NCCL INFO graph/connect.cc:311 -> 3\n"
                  "52: ip-0A0C:76285:76947 [4] NCCL INFO init.cc:763 -> 3\n")


def test_the_warning_a_chain_starts_from_explains_the_error_the_chain_ends_in(engine: Engine) -> None:
    """The WARN says why; the RuntimeError the chain ends in, on the same rank a few lines later, is that failure:
    the WARN stays the root, and it counts as specific as that error against another rank's copy of it."""
    text = TOPOLOGY_CHAIN + "52: " + INTERNAL + "54: " + INTERNAL
    diagnosis = engine.diagnose_text(text, "slurm.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert diagnosis.initiating_rank == 52


def test_a_harmless_earlier_warning_is_not_the_head_of_a_chain(engine: Engine) -> None:
    """The chain starts from the nearest WARN before it; when a specific signature describes that one, an earlier
    harmless WARN of the same process ('Failed to open libibverbs.so') is not promoted."""
    text = ("d131:57:57 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
            "d131:57:57 [0] NCCL INFO NET/Socket : Using [0]eth0:172.17.0.2<0>\n"
            "d131:57:75 [0] misc/topo.cc:22 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:02/../../0000:02:00.0\n"
            "d131:57:75 [0] NCCL INFO init.cc:876 -> 2\n")
    diagnosis = engine.diagnose_text(text, "nccl.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 3


WATCHDOG = ("[E ProcessGroupNCCL.cpp:916] [Rank 1] NCCL watchdog thread terminated with exception: [Rank 1] Watchdog "
            "caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, "
            "NumelOut=131072000, Timeout(ms)=1800000) ran for 1800314 milliseconds before timing out.\n")


def test_the_terminate_line_of_a_watchdog_timeout_is_a_consequence(engine: Engine) -> None:
    text = (WATCHDOG + "terminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  " + WATCHDOG.split("] ", 1)[1])
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is None or diagnosis.root_cause.signature_id != "cpp-terminate"


def test_the_terminate_line_defers_to_the_what_line_that_states_the_cause(engine: Engine) -> None:
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: an illegal memory access was encountered\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 2


def test_an_abort_exit_beside_another_ranks_timeout_names_no_rank(engine: Engine) -> None:
    text = ("[rank2]:[E1128 21:12:49.422069862 ProcessGroupNCCL.cpp:2068] [PG ID 0 PG GUID 0(default_pg) Rank 2] "
            + WATCHDOG.split("] ", 1)[1] +
            "E1128 21:12:50.390000 3139541 site-packages/torch/distributed/elastic/multiprocessing/api.py:874] failed "
            "(exitcode: -6) local_rank: 3 (pid: 3139623) of binary: /usr/bin/python3.10\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.initiating_rank != 3


def test_a_progress_bar_still_at_zero_is_not_progress(engine: Engine) -> None:
    stuck = ("INFO 11-01 23:16:33 distributed_gpu_executor.py:56] # GPU blocks: 185231, # CPU blocks: 18724\n"
             "Processed prompts:   0%|          | 0/16 [00:00<?, ?it/s, est. speed input: 0.00 toks/s]\n")
    assert engine.diagnose_text(stuck, "run.log").verdict is not Verdict.NO_FAILURE
    moving = stuck.replace("0%|          | 0/16", "50%|#####     | 8/16")
    assert engine.diagnose_text(moving, "run.log").verdict is Verdict.NO_FAILURE
    long_run = stuck.replace("0%|          | 0/16", "0%|          | 13/63645")  # 0% of a long run, moving
    assert engine.diagnose_text(long_run, "run.log").verdict is Verdict.NO_FAILURE


# torch/_dynamo/exc.py BackendCompilerFailed: "backend='{}' raised:\n{}: {}" - the wrapped exception on the next line.
COMPILE_FAILED = ('  File "/usr/lib/python3.10/site-packages/torch/utils/_triton.py", line 37, in triton_backend_hash\n'
                  "    from triton.common.backend import get_backend, get_cuda_version_key\n"
                  "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\n"
                  "ModuleNotFoundError: No module named 'triton.common'\n")


def test_the_exception_a_compile_failure_wraps_is_the_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(COMPILE_FAILED, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 4
    wrapper = next(e for e in diagnosis.events if e.line == 3)
    assert "re-raises the exception on line 4" in wrapper.note


def test_a_wrapped_lowering_exception_that_states_its_error_is_the_failure(engine: Engine) -> None:
    # torch/_inductor/exc.py LoweringException under BackendCompilerFailed: the next line is a wrapper too, but it
    # states the error (an ImportError), so it is the failure; a wrapper that only says "raised:" never is
    lowering = COMPILE_FAILED.replace("ModuleNotFoundError: No module named 'triton.common'",
                                      "LoweringException: ImportError: cannot import name 'triton_key' from "
                                      "'triton.compiler.compiler'")
    diagnosis = engine.diagnose_text(lowering, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 4
    assert "ImportError" in diagnosis.root_cause.message
    twice = COMPILE_FAILED.replace("ModuleNotFoundError: No module named 'triton.common'",
                                   "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:")
    assert engine.diagnose_text(twice, "run.log").root_cause.line == 3  # type: ignore[union-attr]


def test_a_compile_failure_whose_wrapped_line_was_cut_is_the_failure(engine: Engine) -> None:
    diagnosis = engine.diagnose_text("\n".join(COMPILE_FAILED.splitlines()[:3]) + "\n", "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "inductor-backend-failed"


# NVIDIA/nccl src/debug.cc prints its level word after the prefix; src/plugin/net.cc logs a missing net plugin at
# INFO ("NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.") and goes on with its internal transports.
PLUGIN_INFO = (" NCCL INFO NET/Plugin: Failed to find ncclNetPlugin_v8 symbol.\n"
               "NCCL INFO cudaDriverVersion 12040\n")


def test_nccl_info_lines_with_error_words_are_what_nccl_logs_as_info(engine: Engine) -> None:
    # the host:pid:tid prefix taken out of the paste, as users often do: the level word still says INFO
    diagnosis = engine.diagnose_text(PLUGIN_INFO, "nccl.log")
    assert diagnosis.verdict is Verdict.NO_FAILURE
    assert any("logs it as a warning" in s.reason for s in diagnosis.considered)


def test_an_unexplained_error_line_after_nccl_info_lines_still_makes_it_unknown(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(PLUGIN_INFO + "fatal: could not start the engine, error 7\n", "nccl.log")
    assert diagnosis.verdict is Verdict.UNKNOWN


# nccl-tests (src/common.cu) ends a test it finished with its summary: the warnings before it did not stop the run.
_NCCL_TESTS_END = "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 25.905\n#\n"
_IB_WARN = "node1:10:10 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got async event : GPU Direct RDMA error\n"


def test_nccl_tests_finishing_after_a_warning_is_no_failure(engine: Engine) -> None:
    assert engine.diagnose_text(_IB_WARN + _NCCL_TESTS_END, "nccl-tests.log").verdict is Verdict.NO_FAILURE
    assert engine.diagnose_text(_NCCL_TESTS_END + _IB_WARN, "nccl-tests.log").verdict is not Verdict.NO_FAILURE


# torch/multiprocessing/spawn.py ProcessRaisedException ("-- Process %d terminated with the following error:" and the
# child's traceback), here cut before its exception line; the other ranks lose the store rank 0 hosted
# (torch/csrc/distributed/c10d/TCPStore.cpp recvValue, Utils.hpp "Connection closed by peer").
SPAWN_CUT = (
    "[rank3]:[W625 23:35:35.311127584 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, addr=[::ffff:"
    "127.0.0.1]:37468, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes\n"
    "[rank2]:[W625 23:35:35.303797152 TCPStore.cpp:125] [c10d] recvValue failed on SocketImpl(fd=6, addr=[::ffff:"
    "127.0.0.1]:37470, remote=[::ffff:127.0.0.1]:6006): failed to recv, got 0 bytes\n"
    "Traceback (most recent call last):\n"
    '  File "/code/train.py", line 80, in <module>\n'
    "    mp.spawn(main_ddp, args=(cfg,), nprocs=4)\n"
    "torch.multiprocessing.spawn.ProcessRaisedException: \n"
    "\n"
    "-- Process 0 terminated with the following error:\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/multiprocessing/spawn.py", line 90, in _wrap\n'
    "    fn(i, *args)\n"
    '  File "/code/trainer.py", line 395, in train_component\n'
    "    loss, metrics = model(batch)\n")


def test_a_spawn_header_whose_traceback_was_cut_names_its_process(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(SPAWN_CUT, "spawn.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.initiating_rank == 0
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "mp-spawn-raised"
    assert diagnosis.root_cause.text == "-- Process 0 terminated with the following error:"
    # with the child's exception in the paste, that exception is the root
    full = engine.diagnose_text(SPAWN_CUT + "AssertionError: batch must divide the world size\n", "spawn.log")
    assert full.root_cause is not None and full.root_cause.text.startswith("AssertionError")


# sgl-project/sglang python/sglang/srt/managers/scheduler.py run_scheduler_process:
# logger.error(f"Scheduler hit an exception: {traceback}") with the logger's "[time TPn]" prefix.
SCHEDULER_HIT = (
    "[2025-02-21 22:59:28 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1825, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/torch/cuda/streams.py", line 100, in synchronize\n'
    "    super().synchronize()\n"
    "RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
    "incorrect.\n")


def test_a_line_announcing_a_traceback_does_not_make_its_exception_a_consequence(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(SCHEDULER_HIT, "server.log")
    assert diagnosis.verdict is Verdict.FAILURE
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "cuda-illegal-memory-access"
    assert diagnosis.root_cause.line == 6
