"""When the culprit's own error is not in the input: say so, say where it will be, and how to make the next run
fail fast with the cause on screen.

The headline case: a rank dies of a CUDA out-of-memory whose traceback went to its own stderr, and the log
holds only the other ranks' watchdog timeouts. The answer names the rank (from the others' lines) but no line
states why; the fix is then a search, made concrete for this run: that rank's per-rank file under the
launcher's layout, what to grep for, the node's kernel log, and the settings (named as the PyTorch version
the log shows spells them) that make the next failure print its cause where it is seen. A job the logs show to be
no PyTorch one (TensorFlow, JAX, Paddle, MPI) gets the search without torchrun's and c10d's settings.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..library import EnvVar, Fix, Verification
from ..model import Event
from .state import Reasoning

_GREP = "Traceback|Error|error:|Killed|out of memory|Segmentation fault|Xid|NCCL WARN"


def where_the_cause_is(r: Reasoning) -> None:
    """Tailor the missing-cause fix to the rank the others name and the launcher and PyTorch version seen."""
    diagnosis = r.diagnosis
    missing = r.kinds.missing_cause
    sig = diagnosis.root_signature
    if missing is None or sig is None or sig.id != missing.id or diagnosis.root_cause is not None:
        return
    rank = diagnosis.initiating_rank
    who = f"rank {rank}" if rank is not None else "the rank that failed first"
    events = r.events
    pytorch = not _other_framework_only([e.text for e in events[:2000]] + [s.text for s in r.suspects[:200]])
    verification = sig.verification
    if not pytorch:  # a TensorFlow, JAX, Paddle or MXNet job: torchrun's and c10d's settings do not apply
        steps = [_where_step(who, rank, events, pytorch=False), _kernel_step(who), _timeout_step()]
        env: tuple[EnvVar, ...] = tuple(e for e in sig.fix.env if not e.name.startswith("TORCH_"))
        # no torchrun --log-dir layout to search
        verification = Verification(f"grep -n -E '{_GREP}' <each process's own log> | head", verification.expect)
    else:
        steps = [_where_step(who, rank, events), _kernel_step(who), *sig.fix.steps[2:3], _fail_fast_step(events)]
        env = (EnvVar(*_async_error_handling(events), "the failing rank's own error ends the job at once, with its "
                                                      "traceback, instead of the others' watchdog timeouts minutes "
                                                      "later"), *sig.fix.env)
    summary = (f"{who[0].upper()}{who[1:]}'s own error is not in these logs: it is in that rank's own output "
               "(its per-rank log or stderr) or, if it printed nothing, in its node's kernel log.")
    diagnosis.root_signature = replace(sig, fix=Fix(summary, tuple(steps), env), verification=verification)


_PYTORCH = re.compile(r"torch|ProcessGroup|^\[rank\d|^\[default\d")
_OTHER_FRAMEWORK = re.compile(r"tensorflow|\bjax|\bxla/|paddle|mxnet", re.IGNORECASE)


def _other_framework_only(texts: list[str]) -> bool:
    """Whether the lines that looked like trouble show another framework's job (TensorFlow, JAX/XLA, Paddle, MXNet)
    and nothing of PyTorch (its frames, c10d's lines and prefixes, torchrun's records). With no sign of either, the
    job is taken for a PyTorch one."""
    return any(_OTHER_FRAMEWORK.search(t) for t in texts) and not any(_PYTORCH.search(t) for t in texts)


def _where_step(who: str, rank: int | None, events: list[Event], pytorch: bool = True) -> str:
    number = str(rank) if rank is not None else "N"
    tee = any(e.local_rank is not None for e in events)  # torchrun --tee prefixes ([default3]:) were seen
    slurm = f"Slurm: the task's own file (srun --output/--error with %t: task {number})"
    if pytorch:
        places = [f"torchrun --log-dir: <log_dir>/<run_id>/attempt_<k>/<local rank of {who}>/stderr.log", slurm,
                  f"DeepSpeed: *_rank{number}.log"]
    else:
        places = [slurm, "mpirun: `--output-filename <dir>` keeps each rank's output apart",
                  "Kubernetes: `kubectl logs <pod>` of that worker's pod"]
    if tee:
        places.insert(0, f"this log, lines prefixed [default<local rank>]: on {who}'s node")
    return (f"Open {who}'s own output and search it: grep -n -E '{_GREP}' on it. Where it is: "
            + "; ".join(places) + ".")


def _kernel_step(who: str) -> str:
    return (f"If {who} printed nothing, it was killed: on its node run `dmesg -T | grep -i -E 'killed process|out of "
            "memory|xid'` (host OOM killer, GPU faults) and read the scheduler's record of the job "
            "(`sacct -j <job> -o JobID,State,ExitCode,MaxRSS`, `kubectl describe pod`: OOMKilled, preemption).")


def _timeout_step() -> str:
    return ("If the processes only timed out: one was stuck or slow (data loading, one process preprocessing or "
            "caching the dataset while the others wait, a checkpoint saved by one process, a different code path) or "
            "the network dropped; rerun with NCCL_DEBUG=WARN (when the job uses NCCL) so the next failure names its "
            "process.")


def _fail_fast_step(events: list[Event]) -> str:
    name, value = _async_error_handling(events)
    return (f"Make the next run fail fast with the cause on screen: `{name}={value}`, `torchrun --tee 3 "
            "--log-dir logs/` (every rank's output, prefixed and kept per rank), and `@record` on the entry point "
            "(torch.distributed.elastic.multiprocessing.errors) so torchrun's summary carries the traceback.")


def _async_error_handling(events: list[Event]) -> tuple[str, str]:
    """The variable as the PyTorch version the log shows spells it: TORCH_NCCL_ASYNC_ERROR_HANDLING since 2.2
    (whose c10d lines carry ``[rankN]:`` prefixes from 2.3 on), NCCL_ASYNC_ERROR_HANDLING before."""
    new = any(e.text.startswith("[rank") and "]:[" in e.text[:16] for e in events[:2000])
    old = any(e.text.startswith(("[E ProcessGroupNCCL", "[W ProcessGroupNCCL")) for e in events[:2000])
    if old and not new:
        return "NCCL_ASYNC_ERROR_HANDLING", "1"
    return "TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"
