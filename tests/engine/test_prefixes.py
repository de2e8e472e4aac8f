"""Rank, host and time attribution from launcher and logger prefixes (field guide section 1.1)."""

from __future__ import annotations

import pytest

from faultline.lines.prefixes import parse_line, rank_from_path
from faultline.model import LineContext


@pytest.mark.parametrize(
    ("line", "rank", "local_rank", "host", "message"),
    [
        ("[rank3]:[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught x", 3, None, None,
         "[Rank 3] Watchdog caught x"),
        ("[default2]:[rank10]: Traceback (most recent call last):", 10, 2, None, "Traceback (most recent call last):"),
        ("[default2]:ValueError: bad", None, 2, None, "ValueError: bad"),
        (" 3: RuntimeError: x", 3, None, None, "RuntimeError: x"),
        ("12: RuntimeError: x", 12, None, None, "RuntimeError: x"),
        ("[1,3]<stderr>:hello", 3, None, None, "hello"),
        # Determined: harness launch/wrap_rank.py, and the master's trial log lines (master/pkg/model/experiment.go)
        ("[rank=3] Traceback (most recent call last):", 3, None, None, "Traceback (most recent call last):"),
        ("[2021-12-07T10:41:27Z] d173154e [rank=1] || INFO: RuntimeError: boom", 1, None, None, "RuntimeError: boom"),
        ("d173154e [rank=12] || ValueError: x", 12, None, None, "ValueError: x"),
        # torch_npu's error lines (Ascend/pytorch docs error_code_mechanism.md): RankID is the global rank, -1 unset
        ("[ERROR] 2024-10-09-10:06:30 (PID:1506967, Device:1, RankID:1) ERR02200 DIST call hccl api failed.", 1, None,
         None, "ERR02200 DIST call hccl api failed."),
        ("[ERROR] 2025-08-06-16:15:27 (PID:2228607, Device:0, RankID:-1) ERR00100 PTA call acl api failed", None, None,
         None, "ERR00100 PTA call acl api failed"),
        ("[3]<stderr>:hello", 3, None, None, "hello"),  # horovodrun's gloo launcher
        # srun's label comes first on a line: after an MPI task prefix, "6: " is the program's (Horovod's stall report)
        ("[1,0]<stderr>:6: [allreduce.noname.0]", 0, None, None, "6: [allreduce.noname.0]"),
        ("3: [1,0]<stderr>:hello", 0, None, None, "hello"),
        ("10.0.87.143: 10.0.87.143: ip-10-0-87-143:149:298 [5] NCCL INFO x", None, None, "10.0.87.143", "NCCL INFO x"),
        ("10.5: not an address", None, None, None, "10.5: not an address"),
        # pdsh's host prefix of DeepSpeed's multi-node launcher, for hostfile names like worker0, worker-1
        ("worker0: ValueError: LOCAL_RANK (default 0) and args.device inconsistent.", None, None, "worker0",
         "ValueError: LOCAL_RANK (default 0) and args.device inconsistent."),
        ("worker: started", None, None, None, "worker: started"),
        ("::16674:17023 [0] graph/search.cc:703 NCCL WARN x", None, None, None, "graph/search.cc:703 NCCL WARN x"),
        ("<cluster_name>:922:1158 [3] NCCL WARN x", None, None, None, "NCCL WARN x"),  # the host taken out
        ("Tue Jun 15 12:25:59 2021[1]<stderr>:Segmentation fault (core dumped)", 1, None, None,
         "Segmentation fault (core dumped)"),
        ("(VLLM pid=1950315) (VllmWorkerProcess pid=1950430) ERROR 07-07 13:43:36 multiproc_worker_utils.py:226] "
         "RuntimeError: boom", None, None, None, "RuntimeError: boom"),
        ("INFO 07-07 13:43:36 [worker.py:12] Loading weights", None, None, None, "Loading weights"),
        ("node07: [rank5]: ValueError: x", 5, None, "node07", "ValueError: x"),
        ("**(VllmWorker rank=5 pid=50999) ERROR 07-07 15:19:48 [multiproc_executor.py:492] torch.OutOfMemoryError: x",
         5, None, None, "torch.OutOfMemoryError: x"),  # Markdown bold around a pasted line
        ("> [rank3]: ValueError: x", 3, None, None, "ValueError: x"),  # a quoted reply
        ("**bold prose**", None, None, None, "bold prose**"),  # no prefix; the opening mark is not the message's
        ("> not a prefix", None, None, None, "> not a prefix"),
        ("        | [rank0]: FileNotFoundError: x", 0, None, None, "FileNotFoundError: x"),  # a report's rule
        ("<>        [2021-12-07 10:41:27] d173154e [rank=1] || ValueError: x", 1, None, None, "ValueError: x"),
        ("| rank | loss |", None, None, None, "| rank | loss |"),  # a table row, not a gutter before a prefix
        ("torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -8)", None, None, None,
         "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -8)"),  # a logger, not a host
        ("login.hpc.example.edu: ValueError: x", None, None, "login.hpc.example.edu", "ValueError: x"),
        ("Jun 03 23:34:34   what():  _Map_base::at", None, None, None, "  what():  _Map_base::at"),  # a CI's stamp
        ("[2025-02-24 14:09:34 TP14] Scheduler hit an exception: x", 14, None, None, "Scheduler hit an exception: x"),
        ("[23:17:08 TP4] Exception in run_tp_server:", 4, None, None, "Exception in run_tp_server:"),  # SGLang
        ("[2025-02-24 14:09:34 DP1 TP3] x", None, None, None, "x"),  # the TP index repeats in every DP group
        # vLLM V1's worker names: the TP index is the rank in the first DP and PP group, and the PP index without TP
        ("(Worker_TP1 pid=15193) ERROR 05-08 19:06:38 [multiproc_executor.py:962] x", 1, None, None, "x"),
        ("(Worker_DP0_TP3_EP3 pid=1539019) ERROR 10-27 20:05:10 [multiproc_executor.py:699] x", 3, None, None, "x"),
        ("(Worker_PP2 pid=7) x", 2, None, None, "x"),
        ("(Worker_DP1_TP3 pid=7) x", None, None, None, "x"),  # the TP index repeats in every DP group
        ("(Worker_PP1_TP0 pid=7) x", None, None, None, "x"),  # rank = pp * tp_size + tp: the size is not written
        # Lightning's rank_prefixed_message; Open MPI 5 (PRRTE) --tag-output; TensorRT-LLM's logger under MPI
        ("[rank: 7] Child process with PID 37032 terminated with code 1. Forcefully terminating all other processes", 7,
         None, None, "Child process with PID 37032 terminated with code 1. Forcefully terminating all other processes"),
        ("[prterun-f5n18-100629@1,2]<stdout>: f5n18", 2, None, None, "f5n18"),
        ("[06/21/2025-01:30:42] [TRT-LLM] [RANK 3] [E] Assertion failed: x", 3, None, None, "Assertion failed: x"),
        ("[TRT-LLM] [I] Set nccl_plugin to None.", None, None, None, "Set nccl_plugin to None."),
        ("[rank: x] not a rank", None, None, None, "[rank: x] not a rank"),
        ("Jun 18 03:41:57 gpu-b07 kernel: Out of memory", None, None, "gpu-b07", "Out of memory"),  # syslog
        ("(RayTrainWorker pid=2273, ip=172.24.21.66) [rank7]:[W Utils.hpp:108] warn", 7, None, "172.24.21.66",
         "warn"),
        # an actor whose repr holds its rank, printed by Ray for its name (NeMo-RL's policy workers)
        ("(MegatronPolicyWorker[rank=3] pid=4182) [f676f732498b:4182 :0:4182] Caught signal 11", 3, None, None,
         "[f676f732498b:4182 :0:4182] Caught signal 11"),
        ("node1:1234:1300 [0] NCCL INFO comm 0x5 rank 3 nranks 8 - Init COMPLETE", None, None, "node1",
         "NCCL INFO comm 0x5 rank 3 nranks 8 - Init COMPLETE"),
        ("A100-GPU-50:343:1213 [5] NCCL INFO [Service thread] Connection closed by localRank 7", None, None,
         "A100-GPU-50", "NCCL INFO [Service thread] Connection closed by localRank 7"),
        # a container's id for a host name starts with a digit as often as not; a clock time is no host
        ("062fc37504b7:350:457 [0] misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]", None, None,
         "062fc37504b7", "misc/ibvwrap.cu:60 WARN Failed to open libibverbs.so[.1]"),
        ("12:30:45 [0] loss 2.1", None, None, None, "12:30:45 [0] loss 2.1"),
        # Docker Compose's service prefix, padded to the longest name, before everything the service printed
        ("qwen3.8-flash-next  | (Worker_TP0_EP0 pid=331) ERROR 09-06 00:38:50 multiproc_executor.py:944] "
         "AssertionError: 16 is not divisible by 3", 0, None, None, "AssertionError: 16 is not divisible by 3"),
        ("web_1    | Traceback (most recent call last):", None, None, None, "Traceback (most recent call last):"),
        ("RuntimeError: CUDA error: an illegal memory access", None, None, None,
         "RuntimeError: CUDA error: an illegal memory access"),
        ("torch.distributed.DistBackendError: NCCL error", None, None, None, "torch.distributed.DistBackendError: NCCL error"),
    ],
)
def test_prefixes(line: str, rank: int | None, local_rank: int | None, host: str | None, message: str) -> None:
    context, parsed_message = parse_line(line)
    assert (context.rank, context.local_rank, context.host, parsed_message) == (rank, local_rank, host, message)


def test_tensorflow_log_prefix_gives_time_and_level() -> None:
    context, message = parse_line("2020-06-08 05:30:15.889706: W tensorflow/core/kernels/data/generator_dataset_op.cc:103] "
                                  "Error occurred when finalizing GeneratorDataset iterator")
    assert context.level == "W" and context.time is not None and context.time.text.startswith("2020-06-08 05:30:15")
    assert message == "Error occurred when finalizing GeneratorDataset iterator"


@pytest.mark.parametrize(("line", "message"), [
    # torchelastic's error record (torch/distributed/elastic/multiprocessing/errors/error_handler.py), pretty-printed
    ('    "message": "RendezvousClosedError: ",', "RendezvousClosedError: "),
    ('    "message": "ValueError: bad \\"shard\\" 7\\nTraceback (most recent call last):",', 'ValueError: bad "shard" 7'),
    ('  "message": {', '  "message": {'),  # the record's outer field
    ('"message": "all good",', '"message": "all good",'),  # not an exception
])
def test_the_exception_inside_torchelastics_error_record(line: str, message: str) -> None:
    assert parse_line(line)[1] == message


def test_submitit_logger_prefix_gives_time_and_level() -> None:
    # submitit/core/logger.py: "%(name)s %(levelname)s (%(asctime)s) - %(message)s"
    context, message = parse_line("submitit WARNING (2022-07-12 04:18:45,881) - Caught signal SIGHUP on host1: this job "
                                  "is preempted.")
    assert context.level == "W" and context.time is not None and context.time.text == "2022-07-12 04:18:45,881"
    assert message == "Caught signal SIGHUP on host1: this job is preempted."
    assert parse_line("submitit is a launcher")[1] == "submitit is a launcher"


def test_xla_dist_prefix_gives_the_host_and_time_but_no_rank() -> None:
    # torch_xla/distributed/xla_dist.py: "%(asctime)-12s %(clientip)s [%(ordinal)s] %(message)s"; the ordinal is the
    # host's index among the TPU VMs, each of which runs several processes.
    context, message = parse_line("2021-04-23 18:14:43 10.164.0.29 [3] pytorch_lightning.utilities.exceptions."
                                  "MisconfigurationException: No TPU devices were found.")
    assert message == "pytorch_lightning.utilities.exceptions.MisconfigurationException: No TPU devices were found."
    assert (context.host, context.rank) == ("10.164.0.29", None)
    assert context.time is not None and context.time.text == "2021-04-23 18:14:43"
    assert parse_line("10.164.0.29 [3] RuntimeError: boom") == (LineContext(host="10.164.0.29"), "RuntimeError: boom")
    # A time stamp and an address without the bracketed index are a message that names an address.
    assert parse_line("2021-04-23 18:14:43 10.164.0.29 connected")[1] == "10.164.0.29 connected"


@pytest.mark.parametrize(("line", "rank", "message"), [
    # milabench's TagConsole (milabench/log.py): the benchmark's tag, then the stream
    ("diffusion-nodes.cn-n001.server.mila.quebec.nolog [stderr] [rank14]: FileNotFoundError: No such file",
     14, "FileNotFoundError: No such file"),
    ("dinov2-giant-nodes.cn-d004 [stdout] [rank3]:[E909 09:55:29.307 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog",
     3, "[Rank 3] Watchdog"),
    ("[stderr] RuntimeError: boom", None, "RuntimeError: boom"),
    # a tag must be one word right before the stream's name
    ("the job wrote to [stderr] RuntimeError: boom", None, "the job wrote to [stderr] RuntimeError: boom"),
])
def test_a_stream_tag_is_a_prefix(line: str, rank: int | None, message: str) -> None:
    context, parsed = parse_line(line)
    assert (context.rank, parsed) == (rank, message)


@pytest.mark.parametrize(("line", "level", "message"), [
    ("[LightGBM] [Fatal] Socket recv error, code: 54", "F", "Socket recv error, code: 54"),
    ("2021-03-26T14:07:23.7512940Z [LightGBM] [Warning] num_threads is set=2", "W", "num_threads is set=2"),
    ("[LightGBM] [Info] Connected to rank 1", "I", "Connected to rank 1"),
    ("[LightGBM] Finished loading", None, "[LightGBM] Finished loading"),
])
def test_lightgbm_log_prefix_gives_the_level(line: str, level: str | None, message: str) -> None:
    """LightGBM's Log::Write (include/LightGBM/utils/log.h): "[LightGBM] [<level>] "."""
    context, parsed = parse_line(line)
    assert (context.level, parsed) == (level, message)


def test_nested_process_prefixes_name_the_innermost_process() -> None:
    context, _ = parse_line("(VLLM pid=1950315) (VllmWorkerProcess pid=1950430) ERROR 07-07 13:43:36 x.py:1] y")
    assert context.pid == 1950430 and context.level == "E"


def test_times_from_headers() -> None:
    c10, _ = parse_line("[rank0]:[E709 17:05:38.162555850 ProcessGroupNCCL.cpp:632] [Rank 0] x")
    assert c10.time is not None and c10.time.year is None and c10.time.text.startswith("709 17:05:38")
    ds, _ = parse_line("[2024-03-12 02:29:19,487] [INFO] [launch.py:256:main] process 48240 spawned")
    assert ds.time is not None and ds.time.year == 2024
    torchrun, _ = parse_line("  time      : 2024-05-01_12:00:00")
    assert torchrun.time is not None and torchrun.time.year == 2024
    kernel, message = parse_line("[ 8559.603724] NVRM: Xid (PCI:0000:10:1c): 79, GPU has fallen off the bus.")
    assert kernel.time is not None and kernel.time.uptime and message.startswith("NVRM")
    glog, _ = parse_line("E1129 18:02:21.123000 12345 torch/distributed/elastic/multiprocessing/api.py:897] failed")
    assert glog.pid == 12345 and glog.time is not None


@pytest.mark.parametrize(
    ("path", "rank"),
    [("run/attempt_0/3/stderr.log", 3), ("logs/train_rank12.log", 12), ("slurm-77_3.out", 3), ("rank3.log", 3),
     ("logs/console.log", None), ("ds_logs/worker_rank7.log", 7)],
)
def test_rank_from_path(path: str, rank: int | None) -> None:
    assert rank_from_path(path) == rank


@pytest.mark.parametrize(("line", "message"), [
    ("[rank1]: **TypeError: f() takes from 0 to 4 positional arguments but 5 were given**",
     "TypeError: f() takes from 0 to 4 positional arguments but 5 were given**"),  # bold around the message
    ("`FileNotFoundError: [Errno 2] No such file or directory: 'global_step276'`",
     "FileNotFoundError: [Errno 2] No such file or directory: 'global_step276'`"),  # inline code around it
    ("`Traceback (most recent call last):", "Traceback (most recent call last):"),  # a pair opened here ...
    ("RuntimeError: Address already in use`", "RuntimeError: Address already in use`"),  # ... closed: the line's rest
    ("`Trainer.fit` stopped: `max_steps=400000` reached.", "`Trainer.fit` stopped: `max_steps=400000` reached."),
    ("*** Aborted at 1756212445 (unix time) try \"date -d @1756212445\" if you are using GNU date ***",
     "*** Aborted at 1756212445 (unix time) try \"date -d @1756212445\" if you are using GNU date ***"),
    ("```", "```"),
    ("loss ** 2 is 4.0", "loss ** 2 is 4.0"),
])
def test_the_markdown_mark_a_paste_put_before_a_message_is_not_part_of_it(line: str, message: str) -> None:
    """The message starts where the program's text does; it stays the rest of its line (a closing mark is kept)."""
    assert parse_line(line)[1] == message and line.endswith(message)

