"""Deterministic generator of large multi-rank training logs with a failure cascade buried inside.

What it writes (same seed, same arguments -> the same bytes):

* one *combined* log (every rank's output in one file, as a SLURM ``--output`` file collects it) of a
  chosen size, in one of four launcher prefix styles:
  ``c10``   application lines from torch logging carry ``[rankN]:I1129 08:00:01.123456 4105 train.py:241]``;
  ``tee``   torchrun ``--tee 3``: worker lines carry ``[default5]:`` (the LOCAL rank);
  ``srun``  ``srun --label torchrun ...`` (one torchrun per node): every line carries the node's task id ``" 4: "``;
  ``plain`` no launcher prefix at all.
  Whatever the style, c10 C++ log lines and uncaught Python tracebacks carry the global ``[rankN]:`` that
  PyTorch itself writes, C++ ``terminate``/``frame #`` lines carry none, and torchrun agent lines carry
  none (except the srun label).
* a *per-rank folder*: one file per rank (``train_rank{N}.log``, as DeepSpeed ``--enable_each_rank_log``
  names them), each about the same size, the cascade at the end of each file.

Most lines are healthy training output (a per-rank step line every step, a rank-0 summary, checkpoint
saves, start-up banners, the odd harmless ``wandb: ERROR`` retry line). The failure is the classic
cascade: rank ``culprit`` raises ``torch.OutOfMemoryError`` in its forward pass; its node's torchrun agent
SIGTERMs the siblings and prints the ChildFailedError summary; ten minutes later every other rank's NCCL
watchdog times out on the all-reduce the culprit never issued, tears its process down (SIGABRT), and each
node's agent prints its own summary. In a combined log the cascade sits at ``position`` (0..1) of the
file; when it is below 1 the job's retry loop (an sbatch script appending to the same output file)
restarts training from the last checkpoint and healthy output fills the rest.

Message formats are copied from /work/shared/reference/failure-field-guide.md, which cites the upstream
sources: c10 ``[rankN]:[E1129 ...]`` headers (c10/util/Logging.cpp), the excepthook ``[rankN]: ``
prefix (torch/distributed/distributed_c10d.py), torch logging headers (torch/_logging/_internal.py),
torchrun ``[default3]:`` (elastic/multiprocessing/tail_log.py), ``srun --label`` (slurm
src/common/write_labelled_message.c), the OOM text (c10/cuda/CUDACachingAllocator.cpp), watchdog and
teardown texts (ProcessGroupNCCL.cpp), the agent and ChildFailedError texts
(torch/distributed/elastic/multiprocessing/{api.py,errors/__init__.py}), NCCL INFO lines (NCCL
src/init.cc, src/debug.cc); the wandb retry line is observed in public logs.

Usage: ``python bench/generate.py combined --size 100M --style tee`` or
``python bench/generate.py folder --files 1024 --file-size 1M``; ``--help`` for the rest.
"""

from __future__ import annotations

import argparse
import calendar
import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

GENERATOR_VERSION = 1
STYLES = ("c10", "tee", "srun", "plain")
DATA_DIR = Path(__file__).resolve().parent / "data"
FLUSH_BYTES = 8 * 1024 * 1024
START_EPOCH = calendar.timegm((2025, 11, 29, 8, 0, 0, 0, 0, 0))
STEP_SECONDS = 1.2
CHECKPOINT_EVERY = 500
TOTAL_STEPS = 250_000
COLLECTIVES_PER_STEP = 4
NCCL_TIMEOUT_MS = 600_000
SITE = "/usr/local/lib/python3.11/site-packages"
OOM_SIZE = "2.50 GiB"


@dataclass(frozen=True)
class Scenario:
    """The simulated job: world size, launcher style, who fails, where in the file."""

    ranks: int = 512
    gpus_per_node: int = 8
    style: str = "c10"
    culprit_rank: int = 37
    position: float = 0.6
    seed: int = 20251129

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise ValueError(f"style must be one of {', '.join(STYLES)}, not {self.style!r}")
        if not 0 <= self.culprit_rank < self.ranks:
            raise ValueError(f"culprit rank {self.culprit_rank} is outside 0..{self.ranks - 1}")
        if self.ranks % self.gpus_per_node:
            raise ValueError("ranks must be a multiple of gpus_per_node")
        if not 0.0 <= self.position <= 1.0:
            raise ValueError("position must lie in 0..1")


@dataclass
class Expected:
    """What a correct diagnosis of the generated input says (checked by the benchmarks and tests)."""

    initiating_rank: int
    root_cause_file: str
    root_cause_line: int
    root_cause_text: str
    signature_prefix: str = "cuda-oom"
    files: int = 1
    lines: int = 0
    bytes: int = 0
    scenario: dict[str, object] = field(default_factory=dict)
    generator_version: int = GENERATOR_VERSION


# -- cluster layout ---------------------------------------------------------------------------------
class _Cluster:
    """Deterministic hosts, pids and per-rank constants for a scenario."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.gpn = scenario.gpus_per_node
        self.nodes = scenario.ranks // self.gpn
        self.label_width = len(str(self.nodes - 1))

    def node(self, rank: int) -> int:
        return rank // self.gpn

    def local(self, rank: int) -> int:
        return rank % self.gpn

    def host(self, node: int) -> str:
        return f"gpu-node-{node:03d}"

    def agent_pid(self, node: int) -> int:
        return 3900 + (node * 131) % 900

    def pid(self, rank: int) -> int:
        return self.agent_pid(self.node(rank)) + 205 + 3 * self.local(rank)

    def worker_prefix(self, rank: int) -> str:
        """What the launcher puts before every line a worker process writes."""
        style = self.scenario.style
        if style == "tee":
            return f"[default{self.local(rank)}]:"
        if style == "srun":
            return f"{self.node(rank):>{self.label_width}}: "
        return ""

    def agent_prefix(self, node: int) -> str:
        return f"{node:>{self.label_width}}: " if self.scenario.style == "srun" else ""


class _Clock:
    """Wall-clock strings for seconds since the start of the run, cached per second."""

    def __init__(self) -> None:
        self.second = -1
        self.date = self.hms = self.mmdd = self.mmdd_py = ""

    def at(self, seconds: float) -> _Clock:
        whole = int(seconds)
        if whole != self.second:
            self.second = whole
            tm = time.gmtime(START_EPOCH + whole)
            self.date = time.strftime("%Y-%m-%d", tm)
            self.hms = time.strftime("%H:%M:%S", tm)
            self.mmdd = f"{tm.tm_mon}{tm.tm_mday:02d}"  # c10's C++ header does not zero-pad the month
            self.mmdd_py = time.strftime("%m%d", tm)  # torch's Python logging header does
        return self


# -- output -----------------------------------------------------------------------------------------
class _Writer:
    """Joins lines into large blocks and writes them unbuffered; counts lines and bytes (ASCII only)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._stream = open(path, "wb", buffering=0)  # noqa: SIM115 - closed in close()
        self._parts: list[str] = []
        self._pending = 0
        self.lines = 0
        self.bytes = 0

    def add(self, lines: list[str]) -> None:
        if not lines:
            return
        text = "\n".join(lines) + "\n"
        self._parts.append(text)
        self._pending += len(text)
        self.lines += len(lines)
        self.bytes += len(text)
        if self._pending >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        if self._parts:
            self._stream.write("".join(self._parts).encode("ascii"))
            self._parts.clear()
            self._pending = 0

    def close(self) -> None:
        self.flush()
        self._stream.close()


def loss_text(step: int) -> str:
    """The loss curve's first digits at ``step`` (the last two digits vary per rank)."""
    return f"{1.9 + 8.0 / (1.0 + step / 400.0):.2f}"


# -- healthy output ---------------------------------------------------------------------------------
class _Healthy:
    """Per-step healthy lines; value strings come from tables drawn once, so a line costs one f-string."""

    def __init__(self, cluster: _Cluster, rng: random.Random) -> None:
        self.cluster = cluster
        self.rng = rng
        ranks = cluster.scenario.ranks
        self.usec = [f"{rng.randrange(1_000_000):06d}" for _ in range(997)]
        self.msec = [f"{rng.randrange(1000):03d}" for _ in range(997)]
        self.digits = [f"{i:02d}" for i in range(100)]
        self.grad_norm = [f"{rng.gauss(0.85, 0.12):.3f}" for _ in range(1009)]
        self.tokens = [f"{rng.gauss(2980.0, 40.0):.1f}" for _ in range(1013)]
        self.step_time = [f"{rng.gauss(STEP_SECONDS, 0.015):.3f}" for _ in range(1019)]
        self.mem = [f"{rng.gauss(61.3, 0.8):.2f}" for _ in range(ranks)]
        self.orders = []
        for _ in range(61):
            order = list(range(ranks))
            rng.shuffle(order)
            self.orders.append(order)
        style = cluster.scenario.style
        # The part of an application line before its time stamp, per rank.
        if style == "c10":
            self.head = [f"[rank{r}]:I" for r in range(ranks)]
            self.mid = [f" {cluster.pid(r)} train.py:241] " for r in range(ranks)]
        else:
            self.head = [cluster.worker_prefix(r) for r in range(ranks)]
            self.mid = [" INFO trainer: " for _ in range(ranks)]

    def app(self, rank: int, clock: _Clock, k: int, message: str) -> str:
        """One application log line from ``rank`` (torch logging header in the c10 style)."""
        if self.cluster.scenario.style == "c10":
            return f"{self.head[rank]}{clock.mmdd_py} {clock.hms}.{self.usec[k % 997]}{self.mid[rank]}{message}"
        return f"{self.head[rank]}{clock.date} {clock.hms},{self.msec[k % 997]}{self.mid[rank]}{message}"

    def _stamp(self, clock: _Clock) -> str:
        return f"{clock.mmdd_py} {clock.hms}." if self.cluster.scenario.style == "c10" else f"{clock.date} {clock.hms},"

    def _step_line(self, rank: int, step: int, stamp: str, loss_head: str) -> str:
        k = step * 7919
        ticks = self.usec if self.cluster.scenario.style == "c10" else self.msec
        return (f"{self.head[rank]}{stamp}{ticks[(k + rank) % 997]}{self.mid[rank]}step={step} "
                f"loss={loss_head}{self.digits[(k + 3 * rank) % 100]} grad_norm={self.grad_norm[(k + 5 * rank) % 1009]} "
                f"tokens_per_s={self.tokens[(k + 7 * rank) % 1013]} step_time_s={self.step_time[(k + 11 * rank) % 1019]} "
                f"mem_alloc_gib={self.mem[rank]}")

    def rank_steps(self, rank: int, stamps: list[str], loss_heads: list[str], first: int) -> list[str]:
        """One rank's step lines for steps ``first, first + 1, ...`` (per-rank files; not rank 0's extras)."""
        return [self._step_line(rank, first + i, stamp, loss_heads[i]) for i, stamp in enumerate(stamps)]

    def step(self, step: int, seconds: float, clock: _Clock, ranks: range | list[int]) -> list[str]:
        """Every listed rank's step line (in a shuffled order) plus rank 0's summary and events."""
        clock.at(seconds)
        k = step * 7919
        loss_head = loss_text(step)
        digits, gnorm, stime = self.digits, self.grad_norm, self.step_time
        stamp = self._stamp(clock)
        order = self.orders[step % 61] if isinstance(ranks, range) else ranks
        lines = [self._step_line(r, step, stamp, loss_head) for r in order]
        if 0 in ranks:
            lines.append(self.app(0, clock, k + 1, (
                f"step {step}/{TOTAL_STEPS} | loss {loss_head}{digits[k % 100]} | lr {self._lr(step):.4e} | "
                f"grad_norm {gnorm[k % 1009]} | global_batch 4096 | tokens/s {self.cluster.scenario.ranks * 2.98:.2f}K | "
                f"mfu 41.{step % 10}% | elapsed {stime[k % 1019]}s")))
            if step % CHECKPOINT_EVERY == 0:
                lines.append(self.app(0, clock, k + 2, f"saving checkpoint to /checkpoints/run-0042/step_{step:06d}"))
            elif step % CHECKPOINT_EVERY == 30:
                saved = step - 30
                lines.append(self.app(0, clock, k + 3, f"saved checkpoint step_{saved:06d} in "
                                                       f"{30 + (step % 17)}.{step % 10}s"))
            if self.rng.random() < 1 / 2500:
                # wandb's own stderr line (no logger header); observed in public training logs.
                lines.append(f"{self.cluster.worker_prefix(0)}wandb: ERROR Error while calling W&B API: An internal "
                             "error occurred. Please contact support. (<Response [500]>)")
        return lines

    @staticmethod
    def stamps(clock: _Clock, style: str, seconds: list[float]) -> list[str]:
        out = []
        for t in seconds:
            clock.at(t)
            out.append(f"{clock.mmdd_py} {clock.hms}." if style == "c10" else f"{clock.date} {clock.hms},")
        return out

    @staticmethod
    def _lr(step: int) -> float:
        return 3e-4 * min(1.0, step / 2000.0) * (1.0 - 0.9 * step / TOTAL_STEPS)


def _preamble(cluster: _Cluster, clock: _Clock, seconds: float, ranks: list[int], *,
              agents: bool) -> list[str]:
    """torchrun's OMP_NUM_THREADS banner per node and NCCL's init lines per rank."""
    clock.at(seconds)
    lines: list[str] = []
    if agents:
        for node in range(cluster.nodes):
            head = (f"{cluster.agent_prefix(node)}W{clock.mmdd_py} {clock.hms}.{(node * 7717) % 1_000_000:06d} "
                    f"{cluster.agent_pid(node)} torch/distributed/run.py:793] ")
            lines += [head, head + "*" * 41,
                      head + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to "
                             "avoid your system being overloaded, please further tune the variable for optimal "
                             "performance in your application as needed. ",
                      head + "*" * 41]
    n = cluster.scenario.ranks
    for r in ranks:
        node, local = cluster.node(r), cluster.local(r)
        nccl = f"{cluster.worker_prefix(r)}{cluster.host(node)}:{cluster.pid(r)}:{cluster.pid(r)} [{local}] NCCL INFO "
        if r == 0:
            lines += [nccl + "Bootstrap : Using eth0:10.1.0.1<0>",
                      nccl + "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; "
                             "OOB eth0:10.1.0.1<0>",
                      nccl + "NCCL version 2.21.5+cuda12.4"]
        bus = f"{0x18 + 0x11 * local:x}000"
        lines.append(nccl + f"comm 0x55d{(r * 2654435761) % 0xFFFFFF:06x}0 rank {r} nranks {n} cudaDev {local} "
                            f"nvmlDev {local} busId {bus} commId 0x8f1b2c3d4e5f6a7b - Init COMPLETE")
    return lines


# -- the failure cascade ----------------------------------------------------------------------------
def _oom_traceback(cluster: _Cluster, rank: int) -> list[str]:
    """The culprit's uncaught OutOfMemoryError, as distributed_c10d's excepthook prints it."""
    local = cluster.local(rank)
    body = [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 318, in <module>',
        "    main()",
        '  File "/workspace/train.py", line 287, in main',
        "    loss = train_step(model, batch, optimizer)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/workspace/train.py", line 201, in train_step',
        "    outputs = model(**batch)",
        "              ^^^^^^^^^^^^^^",
        f'  File "{SITE}/torch/nn/modules/module.py", line 1773, in _wrapped_call_impl',
        "    return self._call_impl(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/torch/nn/modules/module.py", line 1784, in _call_impl',
        "    return forward_call(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/torch/nn/parallel/distributed.py", line 1657, in forward',
        "    output = self._run_ddp_forward(*inputs, **kwargs)",
        "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  File "/workspace/model.py", line 142, in forward',
        "    attn = torch.softmax(scores, dim=-1)",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {OOM_SIZE}. GPU {local} has a total capacity "
        "of 79.10 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.88 GiB memory in "
        "use. Of the allocated memory 75.02 GiB is allocated by PyTorch, and 1.35 GiB is reserved by PyTorch but "
        "unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://docs.pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda"
        "-alloc-conf)",
    ]
    prefix = f"{cluster.worker_prefix(rank)}[rank{rank}]: "
    return [prefix + line for line in body]


def _c10(cluster: _Cluster, rank: int, clock: _Clock, usec: int, src_line: int, message: str) -> str:
    return (f"{cluster.worker_prefix(rank)}[rank{rank}]:[E{clock.mmdd} {clock.hms}.{usec:06d}{usec % 1000:03d} "
            f"ProcessGroupNCCL.cpp:{src_line}] {message}")


def _watchdog_teardown(cluster: _Cluster, rank: int, clock: _Clock, seq: int, rng: random.Random) -> list[str]:
    """One victim's watchdog timeout, its process teardown and the C++ abort (ProcessGroupNCCL.cpp)."""
    ran_for = NCCL_TIMEOUT_MS + rng.randrange(3, 90)
    usec = rng.randrange(1_000_000 - 1000)
    work = (f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn=1259621, NumelOut=1259621, "
            f"Timeout(ms)={NCCL_TIMEOUT_MS})")
    timeout = (f"[Rank {rank}] Watchdog caught collective operation timeout: {work} ran for {ran_for} milliseconds "
               "before timing out.")
    pg = f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]"
    terminated = f"{pg} Process group watchdog thread terminated with exception: {timeout}"
    raw = cluster.worker_prefix(rank)
    lines = [
        _c10(cluster, rank, clock, usec, 632, timeout),
        _c10(cluster, rank, clock, usec + 89, 2271,
             f"{pg} failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {seq}, "
             f"last completed work: {seq - 1}"),
        _c10(cluster, rank, clock, usec + 120, 670,
             "Stack trace of the failed collective not found, potentially because FlightRecorder is disabled. You can "
             "enable it by setting TORCH_NCCL_TRACE_BUFFER_SIZE to a non-zero value."),
        _c10(cluster, rank, clock, usec + 181, 684,
             f"[Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA "
             "kernels, subsequent GPU operations might run on corrupted/incomplete data."),
        _c10(cluster, rank, clock, usec + 202, 690,
             f"[Rank {rank}] To avoid data inconsistency, we are taking the entire process down."),
        _c10(cluster, rank, clock, usec + 344, 1905, terminated),
        raw + "terminate called after throwing an instance of 'c10::DistBackendError'",
        raw + f"  what():  {terminated}",
        raw + "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 "
              "(most recent call first):",
    ]
    frames = [
        ("c10::Error::Error(c10::SourceLocation, std::string) + 0x98", "libc10.so"),
        ("c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, "
         "std::ratio<1l, 1000l> > >) + 0x23d", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::watchdogHandler() + 0xc48", "libtorch_cuda.so"),
        ("c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d", "libtorch_cuda.so"),
        ("<unknown function> + 0xdc253", "libstdc++.so.6"),
        ("<unknown function> + 0x94ac3", "libc.so.6"),
        ("<unknown function> + 0x126850", "libc.so.6"),
    ]
    for i, (func, lib) in enumerate(frames):
        where = f"{SITE}/torch/lib/{lib}" if lib in ("libc10.so", "libtorch_cuda.so") else f"/lib/x86_64-linux-gnu/{lib}"
        lines.append(raw + f"frame #{i}: {func} (0x7f{(rank * 977 + i * 131) % 0xFFFF:04x}1c7b9e28 in {where})")
    lines.append(raw)
    return lines


def _agent_block(cluster: _Cluster, node: int, clock: _Clock, first: tuple[int, int],
                 others: list[tuple[int, int]], killed: list[int]) -> list[str]:
    """A node's torchrun agent after a worker failed: SIGTERM the rest, log it, raise ChildFailedError.

    ``first`` and ``others`` are (rank, exitcode) failures seen in the same poll; ``killed`` the ranks it
    still had to SIGTERM.
    """
    head = f"{cluster.agent_prefix(node)}"
    pid = cluster.agent_pid(node)
    api = "torch/distributed/elastic/multiprocessing/api.py"
    lines = [f"{head}W{clock.mmdd_py} {clock.hms}.{(node * 1301) % 1_000_000:06d} {pid} {api}:897] Sending process "
             f"{cluster.pid(r)} closing signal SIGTERM" for r in killed]
    for rank, code in [first, *others]:
        lines.append(f"{head}E{clock.mmdd_py} {clock.hms}.{(node * 1733) % 1_000_000:06d} {pid} {api}:869] failed "
                     f"(exitcode: {code}) local_rank: {cluster.local(rank)} (pid: {cluster.pid(rank)}) of binary: "
                     "/usr/bin/python3")
    lines += [head + line for line in [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        "             ^^^^^^",
        f'  File "{SITE}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 357, in wrapper',
        "    return f(*args, **kwargs)",
        "           ^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/torch/distributed/run.py", line 901, in main',
        "    run(args)",
        f'  File "{SITE}/torch/distributed/run.py", line 892, in run',
        "    elastic_launch(",
        f'  File "{SITE}/torch/distributed/launcher/api.py", line 143, in __call__',
        "    return launch_agent(self._config, self._entrypoint, list(args))",
        "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        f'  File "{SITE}/torch/distributed/launcher/api.py", line 277, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "=" * 60,
        "train.py FAILED",
        "-" * 60,
        "Failures:",
    ]]
    stamp = time.strftime("%Y-%m-%d_%H:%M:%S", time.gmtime(START_EPOCH + clock.second))

    def failure(index: int, rank: int, code: int) -> list[str]:
        signal_names = {-6: "SIGABRT", -15: "SIGTERM", -9: "SIGKILL"}
        trace = (f"Signal {-code} ({signal_names[code]}) received by PID {cluster.pid(rank)}" if code < 0
                 else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        return [head + line for line in [
            f"[{index}]:",
            f"  time      : {stamp}",
            f"  host      : {cluster.host(node)}",
            f"  rank      : {rank} (local_rank: {cluster.local(rank)})",
            f"  exitcode  : {code} (pid: {cluster.pid(rank)})",
            "  error_file: <N/A>",
            f"  traceback : {trace}",
        ]]

    if others:
        for index, (rank, code) in enumerate(others, 1):
            lines += failure(index, rank, code)
    else:
        lines.append(head + "  <NO_OTHER_FAILURES>")
    lines += [head + "-" * 60, head + "Root Cause (first observed failure):"]
    lines += failure(0, *first)
    lines.append(head + "=" * 60)
    return lines


@dataclass
class _Cascade:
    lines: list[str]
    oom_index: int  # index in ``lines`` of the OutOfMemoryError line
    end_seconds: float


def _cascade(cluster: _Cluster, clock: _Clock, seconds: float, step: int, rng: random.Random) -> _Cascade:
    """The whole failure, merged across ranks and agents in time order (one process's lines stay in order)."""
    culprit = cluster.scenario.culprit_rank
    culprit_node = cluster.node(culprit)
    seq = step * COLLECTIVES_PER_STEP + 1  # the all-reduce of the step the culprit never reached
    units: list[tuple[float, int, list[str]]] = []
    clock.at(seconds)
    units.append((seconds, 0, _oom_traceback(cluster, culprit)))
    node_ranks = [r for r in range(culprit_node * cluster.gpn, (culprit_node + 1) * cluster.gpn)]
    siblings = [r for r in node_ranks if r != culprit]
    t = seconds + 1.4
    units.append((t, 1, _agent_block(cluster, culprit_node, clock.at(t), (culprit, 1), [], siblings)))
    timeout_at = seconds + NCCL_TIMEOUT_MS / 1000.0
    aborts: dict[int, list[tuple[float, int]]] = {}
    order = 2
    for rank in range(cluster.scenario.ranks):
        if cluster.node(rank) == culprit_node:
            continue
        t = timeout_at + rng.uniform(0.0, 2.5)
        units.append((t, order, _watchdog_teardown(cluster, rank, clock.at(t), seq, rng)))
        order += 1
        aborts.setdefault(cluster.node(rank), []).append((t, rank))
    for node, seen in sorted(aborts.items()):
        seen.sort()
        t_first = seen[0][0]
        same_poll = [r for t, r in seen[1:] if t - t_first < 0.1]
        killed = [r for t, r in seen[1:] if t - t_first >= 0.1]
        t = t_first + 0.3
        units.append((t, order, _agent_block(cluster, node, clock.at(t), (seen[0][1], -6),
                                             [(r, -6) for r in same_poll], killed)))
        order += 1
    units.sort(key=lambda u: (u[0], u[1]))
    lines: list[str] = []
    for _, _, block in units:
        lines += block
    if cluster.scenario.style == "srun":
        for node in range(cluster.nodes):
            lines.append(f"srun: error: {cluster.host(node)}: task {node}: Exited with exit code 1")
    oom_index = len(units[0][2]) - 1
    return _Cascade(lines, oom_index, units[-1][0] + 5.0)


# -- combined log -----------------------------------------------------------------------------------
def write_combined(path: Path, size_bytes: int, scenario: Scenario) -> Expected:
    """A combined log of about ``size_bytes`` (plus the cascade when ``position`` is 1)."""
    cluster = _Cluster(scenario)
    rng = random.Random(scenario.seed)
    healthy = _Healthy(cluster, rng)
    clock = _Clock()
    all_ranks = list(range(scenario.ranks))
    writer = _Writer(path)
    try:
        seconds = 0.0
        writer.add(_preamble(cluster, clock, seconds, all_ranks, agents=True))
        seconds += 20.0
        fail_at = int(size_bytes * scenario.position)
        step = 1
        everyone = range(scenario.ranks)
        while writer.bytes < fail_at:
            writer.add(healthy.step(step, seconds, clock, everyone))
            step += 1
            seconds += STEP_SECONDS
        cascade = _cascade(cluster, clock, seconds, step, rng)
        oom_line = writer.lines + cascade.oom_index + 1
        oom_text = cascade.lines[cascade.oom_index]
        writer.add(cascade.lines)
        if writer.bytes < size_bytes:
            seconds = cascade.end_seconds + 60.0
            resume = (step // CHECKPOINT_EVERY) * CHECKPOINT_EVERY
            clock.at(seconds)
            origin = f"from checkpoint /checkpoints/run-0042/step_{resume:06d}" if resume else "from scratch"
            writer.add([f"Attempt 1 exited with code 1; retrying (attempt 2 of 3) {origin}"])
            writer.add(_preamble(cluster, clock, seconds, all_ranks, agents=True))
            seconds += 20.0
            step = resume + 1
            while writer.bytes < size_bytes:
                writer.add(healthy.step(step, seconds, clock, everyone))
                step += 1
                seconds += STEP_SECONDS
    finally:
        writer.close()
    return Expected(initiating_rank=scenario.culprit_rank, root_cause_file=str(path), root_cause_line=oom_line,
                    root_cause_text=oom_text, lines=writer.lines, bytes=writer.bytes, scenario=asdict(scenario))


# -- failure-dense log ------------------------------------------------------------------------------
DENSE_STEPS = 100  # healthy steps per attempt before the OOM: ~9 MiB, against a cascade's ~1.6 MiB


def write_failure_dense(path: Path, size_bytes: int, scenario: Scenario, steps: int = DENSE_STEPS) -> Expected:
    """A job whose retry loop keeps failing the same way, appended to one file until it holds ``size_bytes``.

    Every attempt starts from scratch (there is no checkpoint yet), prints the launcher's banner and NCCL's init
    lines, trains ``steps`` steps, and runs out of memory on the same batch on the culprit rank, followed by the
    whole cascade (the node's SIGTERMs and summary, every other rank's watchdog timeout and teardown, every
    agent's summary). About a third of the lines hold keywords, 2 million in 3 GiB. The processes keep their ids
    from attempt to attempt (a restarted container's), and the collective the others time out in is the same.
    The root cause is the first attempt's OOM: the earliest, and where the first failure is. Written as it is
    generated, a block at a time (_Writer), whatever the size.
    """
    cluster = _Cluster(scenario)
    rng = random.Random(scenario.seed)
    healthy = _Healthy(cluster, rng)
    clock = _Clock()
    all_ranks = list(range(scenario.ranks))
    everyone = range(scenario.ranks)
    writer = _Writer(path)
    oom_line, oom_text = 0, ""
    try:
        seconds = 0.0
        attempt = 1
        while writer.bytes < size_bytes:
            if attempt > 1:
                clock.at(seconds)
                writer.add([f"Attempt {attempt - 1} exited with code 1; retrying (attempt {attempt}) from scratch"])
            writer.add(_preamble(cluster, clock, seconds, all_ranks, agents=True))
            seconds += 20.0
            for step in range(1, steps + 1):
                writer.add(healthy.step(step, seconds, clock, everyone))
                seconds += STEP_SECONDS
            cascade = _cascade(cluster, clock, seconds, steps + 1, rng)
            if attempt == 1:
                oom_line = writer.lines + cascade.oom_index + 1
                oom_text = cascade.lines[cascade.oom_index]
            writer.add(cascade.lines)
            seconds = cascade.end_seconds + 60.0
            attempt += 1
    finally:
        writer.close()
    return Expected(initiating_rank=scenario.culprit_rank, root_cause_file=str(path), root_cause_line=oom_line,
                    root_cause_text=oom_text, lines=writer.lines, bytes=writer.bytes, scenario=asdict(scenario))


# -- per-rank folder --------------------------------------------------------------------------------
def write_rank_folder(folder: Path, file_bytes: int, scenario: Scenario) -> Expected:
    """One plain file per rank (``train_rank{N}.log``), each about ``file_bytes``, the cascade at the end."""
    cluster = _Cluster(scenario)
    rng = random.Random(scenario.seed)
    healthy = _Healthy(cluster, rng)
    clock = _Clock()
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("train_rank*.log"):
        stale.unlink()
    # Every rank runs the same number of steps; size it from rank 1's line length.
    sample = healthy.step(1000, 1000.0, clock, [1])
    steps = max(10, int(file_bytes / (len(sample[0]) + 1)))
    end_seconds = 20.0 + steps * STEP_SECONDS
    stamps = healthy.stamps(clock, scenario.style, [20.0 + step * STEP_SECONDS for step in range(1, steps + 1)])
    loss_heads = [loss_text(step) for step in range(1, steps + 1)]
    seq = (steps + 1) * COLLECTIVES_PER_STEP + 1
    culprit = scenario.culprit_rank
    total_lines = total_bytes = 0
    oom_line, oom_text, oom_file = 0, "", ""
    for rank in range(scenario.ranks):
        path = folder / f"train_rank{rank}.log"
        writer = _Writer(path)
        try:
            writer.add(_preamble(cluster, clock, 0.0, [rank], agents=False))
            if rank == 0:  # rank 0 also prints the summary and checkpoint lines
                for step in range(1, steps + 1):
                    writer.add(healthy.step(step, 20.0 + step * STEP_SECONDS, clock, [0]))
            else:
                writer.add(healthy.rank_steps(rank, stamps, loss_heads, 1))
            if rank == culprit:
                clock.at(end_seconds)
                traceback = _oom_traceback(cluster, rank)
                oom_line, oom_text, oom_file = writer.lines + len(traceback), traceback[-1], str(path)
                writer.add(traceback)
            elif cluster.node(rank) != cluster.node(culprit):
                t = end_seconds + NCCL_TIMEOUT_MS / 1000.0 + rng.uniform(0.0, 2.5)
                writer.add(_watchdog_teardown(cluster, rank, clock.at(t), seq, rng))
            # the culprit's node siblings were SIGTERMed by their agent: their files just stop
        finally:
            writer.close()
        total_lines += writer.lines
        total_bytes += writer.bytes
    return Expected(initiating_rank=culprit, root_cause_file=oom_file, root_cause_line=oom_line,
                    root_cause_text=oom_text, files=scenario.ranks, lines=total_lines, bytes=total_bytes,
                    scenario=asdict(scenario))


# -- cached data sets -------------------------------------------------------------------------------
def parse_size(text: str) -> int:
    """``10M``, ``1G``, ``200K`` or a plain byte count (binary units)."""
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _manifest(path: Path) -> Path:
    return path.with_name(path.name + ".expected.json")


def _cached(path: Path, request: dict[str, object]) -> Expected | None:
    manifest = _manifest(path)
    if not manifest.is_file() or not path.exists():
        return None
    try:
        stored = json.loads(manifest.read_text())
    except (OSError, ValueError):
        return None
    if stored.get("request") != request:
        return None
    expected = Expected(**stored["expected"])
    return expected if expected.generator_version == GENERATOR_VERSION else None


def _remember(path: Path, request: dict[str, object], expected: Expected) -> None:
    _manifest(path).write_text(json.dumps({"request": request, "expected": asdict(expected)}, indent=2))


def combined_log(size_bytes: int, scenario: Scenario, data_dir: Path = DATA_DIR) -> tuple[Path, Expected]:
    """The combined log for these parameters, generated once and reused while its manifest matches."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / f"combined-{scenario.style}-{scenario.ranks}r-{_size_name(size_bytes)}.log"
    request = {"kind": "combined", "size": size_bytes, **asdict(scenario), "version": GENERATOR_VERSION}
    expected = _cached(path, request)
    if expected is None:
        expected = write_combined(path, size_bytes, scenario)
        _remember(path, request, expected)
    return path, expected


def failure_dense_path(size_bytes: int, scenario: Scenario, data_dir: Path = DATA_DIR) -> Path:
    return data_dir / f"dense-{scenario.style}-{scenario.ranks}r-{_size_name(size_bytes)}.log"


def failure_dense_log(size_bytes: int, scenario: Scenario, data_dir: Path = DATA_DIR) -> tuple[Path, Expected]:
    """The failure-dense log (write_failure_dense) for these parameters, generated once and reused."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = failure_dense_path(size_bytes, scenario, data_dir)
    request = {"kind": "dense", "size": size_bytes, "steps": DENSE_STEPS, **asdict(scenario),
               "version": GENERATOR_VERSION}
    expected = _cached(path, request)
    if expected is None:
        expected = write_failure_dense(path, size_bytes, scenario)
        _remember(path, request, expected)
    return path, expected


def rank_folder(file_bytes: int, scenario: Scenario, data_dir: Path = DATA_DIR) -> tuple[Path, Expected]:
    data_dir.mkdir(parents=True, exist_ok=True)
    folder = data_dir / f"ranks-{scenario.ranks}x{_size_name(file_bytes)}"
    request = {"kind": "folder", "file_size": file_bytes, **asdict(scenario), "version": GENERATOR_VERSION}
    expected = _cached(folder, request)
    if expected is None:
        expected = write_rank_folder(folder, file_bytes, scenario)
        _remember(folder, request, expected)
    return folder, expected


def _size_name(size: int) -> str:
    for unit, scale in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate benchmark logs (deterministic; written to bench/data/).")
    sub = parser.add_subparsers(dest="kind", required=True)
    combined = sub.add_parser("combined", help="one combined multi-rank log")
    combined.add_argument("--size", default="10M", help="e.g. 10M, 100M, 1G (binary units)")
    combined.add_argument("--output", type=Path, help="file to write (default: bench/data/, cached)")
    dense = sub.add_parser("dense", help="one combined log of repeated failure cascades (a failing retry loop)")
    dense.add_argument("--size", default="300M", help="e.g. 300M, 3G (binary units)")
    dense.add_argument("--output", type=Path, help="file to write (default: bench/data/, cached)")
    folder = sub.add_parser("folder", help="a folder with one log per rank")
    folder.add_argument("--files", type=int, default=None, help="number of rank files (= world size; default 1024)")
    folder.add_argument("--file-size", default="1M")
    folder.add_argument("--output", type=Path, help="folder to write (default: bench/data/, cached)")
    for p in (combined, dense, folder):
        p.add_argument("--ranks", type=int, default=None, help="world size (default 512 combined, 1024 folder)")
        p.add_argument("--gpus-per-node", type=int, default=8)
        p.add_argument("--style", choices=STYLES, default="plain" if p is folder else "c10")
        p.add_argument("--culprit", type=int, default=37, help="the rank that runs out of memory")
        p.add_argument("--position", type=float, default=0.6, help="where the cascade starts (fraction of the file)")
        p.add_argument("--seed", type=int, default=Scenario.seed)
    args = parser.parse_args(argv)
    ranks = args.ranks or getattr(args, "files", None) or (1024 if args.kind == "folder" else 512)
    scenario = Scenario(ranks=ranks, gpus_per_node=args.gpus_per_node, style=args.style,
                        culprit_rank=args.culprit, position=args.position, seed=args.seed)
    started = time.perf_counter()
    # Per kind: the writer to a given path, the cached generator in bench/data/, and the size argument.
    write, cached, size_text = {
        "combined": (write_combined, combined_log, getattr(args, "size", "")),
        "dense": (write_failure_dense, failure_dense_log, getattr(args, "size", "")),
        "folder": (write_rank_folder, rank_folder, getattr(args, "file_size", "")),
    }[args.kind]
    size = parse_size(size_text)
    if args.output:
        expected = write(args.output, size, scenario)
        path = args.output
    else:
        path, expected = cached(size, scenario)
    elapsed = time.perf_counter() - started
    print(f"{path}: {expected.bytes / 2**20:.1f} MiB, {expected.lines} lines, {expected.files} file(s) "
          f"in {elapsed:.1f} s; root cause {expected.root_cause_file}:{expected.root_cause_line} "
          f"(rank {expected.initiating_rank})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
