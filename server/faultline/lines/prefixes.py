"""Attribute a line to a rank, host, process and time by peeling the prefixes launchers and loggers add.

Recognised (see the field guide, section 1): c10 ``[rankN]:``, torchrun ``--tee`` ``[default3]:`` (a LOCAL
rank), srun ``--label`` `` 3: ``, OpenMPI ``[1,3]<stderr>:`` and horovodrun ``[3]<stderr>:``, pdsh ``host: ``, Ray/vLLM
``(RayTrainWorker pid=N, ip=...)``, Lightning ``[rank: 3]``, Open MPI 5 ``[prterun-host-1@1,3]<stderr>:``, TensorRT-LLM
``[TRT-LLM] [RANK 3] [E]``, NCCL ``host:pid:tid [dev]``, c10 ``[E1129 18:02:21.1 File.cpp:616]``,
glog/torch logging ``E1129 18:02:21.123 1234 file.py:12]``, DeepSpeed ``[2024-03-12 02:29:19,487] [INFO]
[launch.py:256:main]``, ISO 8601 and kernel stamps. What is left is the line's *message*, which the
signature patterns search.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..model import LineContext, Timestamp
from . import timestamps

_MAX_PREFIXES = 8
# A line number in front of a line, as `cat -n` or an editor's gutter adds it; taken only before a prefix.
# What a paste puts in front of a prefixed line: a line number (cat -n, an editor's gutter), Markdown's bold or
# quote marker (``**(VllmWorker rank=5 pid=1)``, ``> [rank3]: ...``), a report's rule before the output it quotes
# (milabench: ``        | [rank0]: ...``), a web viewer's line marker (Determined's trial logs: ``<>        [...``).
_GUTTER = re.compile(r" {0,6}\d{1,7}(?:\t| {1,4})(?=\S)|\*\*(?=\S)|> ?(?=\S)| {0,12}\| (?=\S)|<> {1,12}(?=\S)")
_GUTTER_FIRST = frozenset(" 0123456789*>|<")


@dataclass
class _Acc:
    rank: int | None = None
    local_rank: int | None = None
    task: int | None = None
    host: str | None = None
    pid: int | None = None
    time: Timestamp | None = None
    level: str | None = None


# The prefixes that name a rank, each written once: the str patterns below parse a line, and the bytes ones
# built from the same text let the scanner sample a file's ranks and pass other ranks' lines unparsed. In
# each, the rank is the last group.
_GLOBAL_RANK_TEXT = r"\[rank(\d{1,6})\]:"  # c10's excepthook and log prefix: a global rank
_TEE_TEXT = r"\[([A-Za-z_][A-Za-z_]*?)(\d{1,6})\]:"  # torchrun --tee: a LOCAL rank
# OpenMPI --tag-output "[1,3]<stderr>:", Open MPI 5 (PRRTE) "[prterun-host-4242@1,3]<stderr>:" (the job's name before
# "@"); horovodrun's gloo launcher "[3]<stderr>:" (safe_shell_exec.prefix_connection)
_MPI_TEXT = r"\[(?:[\w.-]{1,100}@)?(?:\d+,)?(\d{1,6})\]<(?:stdout|stderr|stddiag)>:"
# Lightning's rank_prefixed_message (lightning/fabric/utilities/rank_zero.py): "[rank: 3] " before a message one rank
# logs (its launcher's "Child process with PID ... terminated with code 1", rank-zero warnings): the global rank
_LIGHTNING_RANK_TEXT = r"\[rank: (\d{1,6})\] "
_SRUN_TEXT = r" *(?:P\d+ +)?(\d{1,6}): "  # srun --label: the task id

_GLOBAL_RANK = re.compile(_GLOBAL_RANK_TEXT + r"\s?")
_TEE = re.compile(_TEE_TEXT + r"\s?")
_MPI = re.compile(_MPI_TEXT + r"\s?")
_LIGHTNING_RANK = re.compile(_LIGHTNING_RANK_TEXT)
_SRUN = re.compile(_SRUN_TEXT)

# A line that starts with a rank-naming prefix (after at most one bracketed name without digits).
# Led by the newline before the line (the caller puts one before the first): a pattern that starts with a literal
# is searched for that byte in C, where ``(?m)^`` is tried at every position (4x slower on 64 KiB samples).
RANK_PREFIX_AFTER_NEWLINE = re.compile(
    rb"\n(?:\[[A-Za-z_]{1,40}\]:)?(?:"
    + b"|".join(text.encode() for text in (_GLOBAL_RANK_TEXT, _TEE_TEXT, _SRUN_TEXT, _MPI_TEXT, _LIGHTNING_RANK_TEXT))
    + rb")")
# c10's [rankN]: at a line's start gives rank N (it is tried first, and only a later [rankM]: could change it).
GLOBAL_RANK_LED = re.compile(_GLOBAL_RANK_TEXT.encode())
# How training output names ranks, for telling a log from other text (the language server's documents).
RANK_MARKERS = f"{_GLOBAL_RANK_TEXT}|{_TEE_TEXT}"

# Ray's and vLLM's process prefix: "(RayWorkerWrapper pid=1, ip=10.0.0.2) ", vLLM V1's multiprocessing executor
# "(VllmWorker rank=5 pid=50999) " (multiproc_executor.py: the worker's name holds its rank), and an actor whose repr
# holds its rank, which Ray prints in place of the class name (NeMo-RL: "(MegatronPolicyWorker[rank=0] pid=4182) ").
_RAY = re.compile(r"\(([\w.-]{1,80})(?: rank=(\d{1,6})|\[rank=(\d{1,6})\])? pid=(\d+)(?:, ip=([\d.:a-fA-F]+))?\)\s?")
_NCCL = re.compile(r"(?:\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] )?([\w.-]{1,100}):(\d+):(\d+) \[\d+\] ")
# The same with its host name taken out by the person who pasted it: ":16674:17023 [0] ", "::16674:17023 [0] ",
# "<cluster_name>:922:1158 [3] "
_NCCL_HOST_REDACTED = re.compile(r"(?:<[\w .-]{1,60}>)?:{1,2}(\d+):(\d+) \[\d+\] ")
# Determined (determined-ai/determined): the harness's launch/wrap_rank.py writes "[rank=N] " before every line of a
# worker, and the master's trial logs show "[<time>] <container id, 8 hex> [rank=N] || <level>: <line>"
# (master/pkg/model/experiment.go): a global rank.
_DETERMINED = re.compile(r"(?:[0-9a-f]{8} )?\[rank=(\d{1,6})\] (?:\|\| (?:(?:DEBUG|INFO|WARNING|ERROR|CRITICAL): )?)?")
# torch_npu (Ascend/pytorch) error lines: "[ERROR] 2024-10-09-10:06:30 (PID:1506967, Device:1, RankID:1) ERR02200 ...";
# RankID is the process's global rank (from RANK), -1 when it is not set (docs: error_code_mechanism.md).
_NPU_ERROR = re.compile(r"\[(ERROR|WARNING|INFO|DEBUG)\] \d{4}-\d\d-\d\d-\d\d:\d\d:\d\d \(PID:(\d{1,10}), "
                        r"Device:-?\d{1,4}, RankID:(-1|\d{1,6})\) ")
_C10 = re.compile(r"\[([IWEF])(?:(\d{3,4} \d\d:\d\d:\d\d(?:\.\d+)?) | )[\w./-]{1,200}:\d+\]\s?")
# TensorRT-LLM's logger (tensorrt_llm/logger.py, and the C++ tllm logger): "[TRT-LLM] " with "[RANK N] " when it runs
# under MPI, then the level ("[I] ", "[W] ", "[E] ", "[V] "); the C++ side puts its time first ("[06/21/2025-01:30:42] ")
_TRTLLM = re.compile(r"(?:\[\d\d/\d\d/\d{4}-\d\d:\d\d:\d\d\] )?\[TRT-LLM\] (?:\[RANK (\d{1,6})\] )?(?:\[([IWEV])\] )?")
# LightGBM's logger (include/LightGBM/utils/log.h, Log::Write): "[LightGBM] [%s] " with Debug, Info, Warning or Fatal; a
# Fatal message is then thrown (std::runtime_error, LightGBMError in Python) or ends the process
_LIGHTGBM = re.compile(r"\[LightGBM\] \[(Debug|Info|Warning|Fatal)\] ")
# Docker Compose's log prefix (docker compose logs / up): the service's name (v1 "web_1", v2 "web-1"), padded with
# spaces to the longest one's width, then "| ".
_COMPOSE = re.compile(r"[A-Za-z][\w.-]{0,63} +\| (?=\S)")
_GLOG = re.compile(r"([VIWEFC])(\d{4} \d\d:\d\d:\d\d\.\d+) +(\d+) [\w./-]{1,200}:\d+\]\s?")
_DEEPSPEED = re.compile(
    r"\[((?:19|20)\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?)\] \[([A-Z]+)\] (?:\[[\w./-]+:\d+:[\w<>]+\] )?")
# SGLang's logger (srt/utils.py configure_logger): "[%(asctime)s{prefix}] " with " DP1", " PP0", " TP3", " EP3" in its
# prefix, the date left out by older releases ("[23:17:08 TP4] "). TP alone (or with EP, which shares the TP group)
# names the rank within the engine; with DP or PP the TP index repeats in every group and names no rank.
_SGLANG = re.compile(r"\[((?:(?:19|20)\d\d-\d\d-\d\d )?\d\d:\d\d:\d\d)((?: (?:DP|PP|TP|EP|CP|ATTN_CP)\d{1,5}){1,4})\] ")
_SGLANG_PART = re.compile(r"([A-Z_]+)(\d{1,5})")
# vLLM V1's multiprocessing executor names a worker by its parallel indices (multiproc_executor.py: "Worker", then
# "_DP{dp}", "_PP{pp}", "_TP{tp}", "_EP{ep}" for each parallelism in use): "(Worker_TP1 pid=15193) ".
_VLLM_WORKER = re.compile(r"Worker((?:_(?:DP|PP|TP|EP|DCP|PCP)\d{1,5}){1,5})$")
_VLLM_WORKER_PART = re.compile(r"_([A-Z]{2,3})(\d{1,5})")
_BRACKET_ISO = re.compile(r"\[((?:19|20)\d\d-\d\d-\d\d[T _]\d\d:\d\d:\d\d(?:[.,]\d+)?Z?)\]\s?")
# TensorFlow's C++ log (tsl/platform/default/logging.cc): "2019-10-19 12:14:23.197742: W tensorflow/core/x.cc:216] "
_TF_LOG = re.compile(r"((?:19|20)\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?): ([IWEF]) [\w./-]{1,200}:\d+\] ")
_TF_LOG_UNSTAMPED = re.compile(r"([IWEF]) [\w./-]{1,200}\.(?:cc|cpp|h):\d+\] ")  # the same, its stamp cut off
_ISO = re.compile(r"((?:19|20)\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\s+(?:-\s+)?")
_KERNEL = re.compile(r"\[ *(\d{1,8}\.\d{3,9})\]\s?")
# torch_xla's xla_dist (torch_xla/distributed/xla_dist.py, DistributedExecutor._get_logger) streams each TPU VM's
# output as "%(asctime)-12s %(clientip)s [%(ordinal)s] %(message)s": "2021-04-23 18:14:43 10.164.0.29 [3] ". The
# ordinal is the host's index among the client workers, not a rank: each host runs several processes. The stamp is
# read as an ISO stamp first (_ISO), so this is what follows it, or the line's start when the stamp was taken off.
_XLA_DIST = re.compile(r"((?:\d{1,3}\.){3}\d{1,3}) \[\d{1,6}\] ")
# A tool's stream tag in front of a child's line: "[stderr] ", "[stdout] ". milabench's TagConsole (milabench/log.py)
# writes the benchmark's tag first: "dinov2-giant-nodes.cn-d004 [stderr] ".
_STREAM_TAG = re.compile(r"\[(?:stderr|stdout)\] ")
_TAGGED_STREAM = re.compile(r"[\w.-]{1,120} \[(?:stderr|stdout)\] ")
# horovodrun --prefix-output-with-timestamp: "Tue Jun 15 12:25:59 2021[1]<stderr>:" (time.asctime, then the index)
_ASCTIME_LED = re.compile(r"((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4})(?=\[\d)")
_DMESG_T = re.compile(r"\[((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4})\]\s?")
# syslog / kern.log: "Jun 18 03:41:57 gpu-b07 kernel: " (journalctl's short format is the same)
# A CI runner's or a time-stamping tool's stamp of each line, without a host: "Jun 03 23:34:34 " (PyTorch's CircleCI
# logs, Jenkins' timestamper, ``ts '%b %d %H:%M:%S'``). A syslog line has a host and a program after its stamp.
_MONTH_STAMP = re.compile(r"((?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d\d:\d\d:\d\d)(?:\.\d+)? ")
_SYSLOG = re.compile(
    r"([A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d)(?:\.\d+)? ([\w.-]{1,100}) [\w./-]{1,60}(?:\[\d+\])?: ")
# vLLM's logger: "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s", before 0.8 without the "[".
# submitit's logger ("%(name)s %(levelname)s (%(asctime)s) - %(message)s", submitit/core/logger.py)
_SUBMITIT = re.compile(r"submitit (INFO|WARNING|ERROR|DEBUG|CRITICAL) \(((?:19|20)\d\d-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?)\) - ")
_VLLM = re.compile(r"(INFO|WARNING|ERROR|DEBUG|CRITICAL) (\d\d-\d\d \d\d:\d\d:\d\d) (?:\[?[\w./-]{1,200}:\d+\] )?")
# pdsh's "host: " — a host name holds a digit, '-' or '.', and is not an exception name or a log word.
_PDSH = re.compile(r"([a-z][a-z0-9-]{0,62}(?:\.[a-z0-9-]{1,63}){0,5}): (?=\S)")
# pdsh's "host: " where the hostfile lists addresses (DeepSpeed's multi-node launcher): "10.0.87.143: "
_PDSH_ADDRESS = re.compile(r"((?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}): (?=\S)")
_NOT_HOSTS = re.compile(r"(?:rank|step|epoch|iter|iteration|loss|gpu|cuda|device|error|warning|time|host|exitcode)\d*$|worker$")
# A rank written inside a message: ProcessGroupNCCL's log prefix in each PyTorch version ("[Rank 3] ",
# "[PG 0 Rank 3] ", "[PG 1 (desc) Rank 3] ", "[PG ID 0 PG GUID 0(default_pg) Rank 3] "), DeepSpeed's log_dist, and a
# program's own "[rank3] " (c10's prefix without its colon, as scripts print it)
_INLINE_RANK = re.compile(
    r"\[(?:PG (?:ID )?(\d{1,6})(?: PG GUID [^\s\]]{1,80})?(?: ?\([^)\]\n]{0,80}\))? )?Rank ?(\d{1,6})\]", re.IGNORECASE)
# A file name (up to its first dot) that ENDS in the rank: "rank3", "train_rank12", "log_rank_3", "worker-3".
# A descriptive name with a rank inside it ("hang-rank3-test") says nothing about the lines of the file.
_RANK_IN_FILENAME = re.compile(r"(?:^|[^a-z0-9])(?:rank|worker|proc)[_-]?(\d{1,6})$", re.IGNORECASE)


def _set_time(acc: _Acc, time: Timestamp | None) -> None:
    """An inner prefix's time replaces an outer one's: a collector's or a tool's stamp in front of a line says
    when it was seen, the program's own says when it was printed (what orders ranks). A kernel uptime never
    replaces a wall-clock time (they cannot be compared)."""
    if time is not None and (acc.time is None or not (time.uptime and not acc.time.uptime)):
        acc.time = time


def _rank_of_parallel_indices(parts: dict[str, str], zero_groups_ok: bool) -> int | None:
    """The rank that a worker's parallel indices name, when they name one without the group sizes: the TP index
    (EP shares the TP group) when there is no DP or PP group, or (``zero_groups_ok``: a name that lists every
    group in use) when the worker is in the first of each; the PP index when there is no TP group."""
    others = {k: v for k, v in parts.items() if k in ("DP", "PP")}
    first_groups = zero_groups_ok and all(int(v) == 0 for v in others.values())
    if "TP" in parts and (not others or first_groups):
        return int(parts["TP"])
    if zero_groups_ok and "TP" not in parts and "PP" in parts and "DP" not in parts:
        return int(parts["PP"])
    return None


def _nccl(m: re.Match[str], acc: _Acc) -> int:
    """NCCL's ``[<time>] <host>:<pid>:<tid> [<dev>] ``, matched: its time, host and pid; where it ends."""
    if m[1]:
        _set_time(acc, timestamps.parse_iso(m[1]))
    acc.host = acc.host or m[2]
    acc.pid = acc.pid or int(m[3])
    return m.end()


def _determined(text: str, pos: int, acc: _Acc) -> int:
    """Determined's ``[rank=N] `` (or ``<container id> [rank=N] || ``) at ``pos``: the global rank."""
    m = _DETERMINED.match(text, pos)
    if m is None:
        return pos
    acc.rank = int(m[1])
    return m.end()


def _try_prefix(text: str, pos: int, acc: _Acc) -> int:
    """Consume one prefix at ``pos``; return the new position (unchanged when none matched)."""
    ch = text[pos] if pos < len(text) else ""
    if ch == "[":
        m = _GLOBAL_RANK.match(text, pos)
        if m:
            acc.rank = int(m[1])
            return m.end()
        m = _C10.match(text, pos)
        if m:
            acc.level = m[1]
            if m[2]:
                _set_time(acc, timestamps.parse_mmdd(m[2]))
            return m.end()
        m = _LIGHTGBM.match(text, pos)
        if m:
            acc.level = acc.level or m[1][:1]
            return m.end()
        m = _LIGHTNING_RANK.match(text, pos)
        if m:
            acc.rank = int(m[1])
            return m.end()
        m = _TRTLLM.match(text, pos)
        if m:
            if m[1]:
                acc.rank = int(m[1])
            acc.level = acc.level or m[2]
            return m.end()
        m = _MPI.match(text, pos)
        if m:
            acc.task = int(m[1])
            return m.end()
        m = _DEEPSPEED.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_iso(m[1]))
            acc.level = acc.level or m[2][:1]
            return m.end()
        m = _NCCL.match(text, pos)
        if m:
            return _nccl(m, acc)
        m = _SGLANG.match(text, pos)
        if m:
            if len(m[1]) > 8:
                _set_time(acc, timestamps.parse_iso(m[1]))
            rank = _rank_of_parallel_indices(dict(_SGLANG_PART.findall(m[2])), zero_groups_ok=False)
            if rank is not None:
                acc.rank = rank
            return m.end()
        m = _STREAM_TAG.match(text, pos)
        if m:
            return m.end()
        m = _BRACKET_ISO.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_iso(m[1]))
            return m.end()
        m = _KERNEL.match(text, pos)
        if m:
            _set_time(acc, timestamps.uptime(m[1]))
            return m.end()
        m = _DMESG_T.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_dmesg_wallclock(m[1]))
            return m.end()
        if (end := _determined(text, pos, acc)) != pos:
            return end
        m = _NPU_ERROR.match(text, pos)
        if m:
            acc.level = acc.level or m[1][:1]
            acc.pid = acc.pid or int(m[2])
            if m[3] != "-1":
                acc.rank = int(m[3])
            return m.end()
        m = _TEE.match(text, pos)
        if m and m[1].lower() not in ("rank",):
            acc.local_rank = int(m[2])
            return m.end()
        return pos
    if ch == "(":
        m = _RAY.match(text, pos)
        if m:
            # Nested ones ("(VLLM pid=1) (VllmWorkerProcess pid=2) ...") name the process that printed last.
            acc.pid = int(m[4])
            if m[2] or m[3]:
                acc.rank = int(m[2] or m[3])
            elif (worker := _VLLM_WORKER.match(m[1])) is not None:
                acc.rank = _rank_of_parallel_indices(dict(_VLLM_WORKER_PART.findall(worker[1])), zero_groups_ok=True)
            if m[5]:
                acc.host = acc.host or m[5]
            return m.end()
        return pos
    if ch == " " or ch.isdigit():
        # srun writes its label first on a line: after an MPI launcher's task prefix, "6: " is the program's text
        # (Horovod's stall report lists each missing rank as "<rank>: [<tensors>]").
        m = _SRUN.match(text, pos) if acc.task is None else None
        if m:
            acc.task = int(m[1])
            return m.end()
        if ch == " ":
            return pos
        m = _PDSH_ADDRESS.match(text, pos)
        if m:
            acc.host = acc.host or m[1]
            return m.end()
        m = _TF_LOG.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_iso(m[1]))
            acc.level = m[2]
            return m.end()
        m = _XLA_DIST.match(text, pos)
        if m:
            acc.host = acc.host or m[1]
            return m.end()
        m = _ISO.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_iso(m[1]))
            return m.end()
        m = _NCCL.match(text, pos)  # a host name that starts with a digit: a container id ("062fc37504b7:350:457 [0] ")
        if m and not m[2].isdigit():  # not a clock time ("12:30:45 [0] ")
            return _nccl(m, acc)
        return pos
    if "A" <= ch <= "Z":
        m = _ASCTIME_LED.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_dmesg_wallclock(m[1]))
            return m.end()
        m = _SYSLOG.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_syslog(m[1]))
            acc.host = acc.host or m[2]
            return m.end()
        m = _MONTH_STAMP.match(text, pos)
        if m:
            _set_time(acc, timestamps.parse_syslog(m[1]))
            return m.end()
        m = _NCCL.match(text, pos)  # a host name in capitals ("A100-GPU-50:343:1213 [5] NCCL INFO ...")
        if m:
            return _nccl(m, acc)
    if ch in ":<":
        m = _NCCL_HOST_REDACTED.match(text, pos)
        if m:
            acc.pid = acc.pid or int(m[1])
            return m.end()
    if ch in "VIWEFC":
        m = _GLOG.match(text, pos)
        if m:
            acc.level = m[1]
            _set_time(acc, timestamps.parse_mmdd(m[2]))
            acc.pid = acc.pid or int(m[3])
            return m.end()
        m = _TF_LOG_UNSTAMPED.match(text, pos)
        if m:
            acc.level = m[1]
            return m.end()
        m = _VLLM.match(text, pos)
        if m:
            acc.level = m[1][:1]
            _set_time(acc, timestamps.parse_month_day(m[2]))
            return m.end()
    if (("a" <= ch <= "z" or ch.isdigit()) and text.startswith(" [rank=", pos + 8)  # after a container id
            and (end := _determined(text, pos, acc)) != pos):
        return end
    if ch.isalnum() and text.find(" [std", pos, pos + 122) != -1 and (m := _TAGGED_STREAM.match(text, pos)):
        return m.end()
    if "a" <= ch <= "z":
        if ch == "s" and (m := _SUBMITIT.match(text, pos)):
            acc.level = acc.level or m[1][:1]
            _set_time(acc, timestamps.parse_iso(m[2]))
            return m.end()
        m = _NCCL.match(text, pos)
        if m:
            return _nccl(m, acc)
        m = _PDSH.match(text, pos)
        if m and acc.host is None and _looks_like_host(m[1]):
            acc.host = m[1]
            return m.end()
    if pos == 0 and ch.isalpha():  # it heads the line: docker writes it before everything the service printed
        m = _COMPOSE.match(text, pos)
        if m:
            return m.end()
    return pos


_EXCEPTION_LIKE = re.compile(r"(?:error|exception|timeout|warning|exit|interrupt|herror|gaierror)$")


# The last labels of host names that are words, so a host of letters only is told from a Python logger's name.
_DNS_SUFFIXES = frozenset({"local", "localdomain", "internal", "lan", "cluster", "com", "org", "net", "edu", "gov",
                           "io", "ai", "cloud", "svc", "cn", "de", "uk", "jp", "fr"})


def _looks_like_host(name: str) -> bool:
    if _NOT_HOSTS.match(name) or _EXCEPTION_LIKE.search(name):
        return False
    labels = name.split(".")
    if len(labels) >= 3 and all(label.isalpha() for label in labels) and labels[-1] not in _DNS_SUFFIXES:
        return False  # a logger named after its module ("torch.distributed.elastic.multiprocessing.api: ")
    return any(c.isdigit() or c in "-." for c in name)


# torchelastic's error record, the JSON its error handler logs for a failed worker or agent
# (torch/distributed/elastic/multiprocessing/errors/error_handler.py: {"message": {"message": "<Exc>: <text>",
# "extraInfo": {...}}}, indented by two per level): the exception is the string inside, with JSON's escapes
_ELASTIC_RECORD_MESSAGE = re.compile(r'\s{0,12}"message": "(?P<message>(?:[A-Za-z_]\w{0,60}\.){0,8}[A-Za-z_]\w{0,80}'
                                     r'(?:Error|Exception|Interrupt|Exit)\b(?:[^"\\]|\\.)*)",?\s*$')


def _elastic_record_message(text: str) -> str | None:
    m = _ELASTIC_RECORD_MESSAGE.match(text)
    if m is None:
        return None
    try:
        decoded = json.loads(f'"{m["message"]}"')
    except ValueError:
        return m["message"]
    return decoded.split("\n", 1)[0] if isinstance(decoded, str) else m["message"]


def parse_line(text: str) -> tuple[LineContext, str]:
    """Split a normalised line into its context (rank, host, time...) and its message."""
    acc = _Acc()
    pos = 0
    gutter = _GUTTER.match(text) if text[:1] in _GUTTER_FIRST else None
    if gutter is not None and _try_prefix(text, gutter.end(), _Acc()) != gutter.end():
        pos = gutter.end()  # pasted in front of a prefixed line: a line number, a Markdown marker
    for _ in range(_MAX_PREFIXES):
        new = _try_prefix(text, pos, acc)
        if new == pos:
            break
        pos = new
    message = text[pos:]
    if message[:1] in ' "' and (inside := _elastic_record_message(message)) is not None:
        message = inside
    if message[:1] in "*`":
        message = _without_markdown_mark(message)
    rank = acc.rank
    if rank is None and acc.task is not None:
        rank = acc.task
    if acc.time is None:
        acc.time = timestamps.find_timestamp(message)
    context = LineContext(rank=rank, local_rank=acc.local_rank, host=acc.host, pid=acc.pid,
                          time=acc.time, level=acc.level)
    return context, message


def _without_markdown_mark(message: str) -> str:
    """A message without the Markdown mark a paste put in front of it: bold or code around the whole of it
    (``**TypeError: x**``, ```OSError: x```), or the opening mark of a pair that the paste closed on a later line
    (```Traceback ...`` then ``RuntimeError: x```). A closing mark stays (the message is the rest of its line), and
    so do marks inside it (```Trainer.fit` stopped``), a mark doubled into a rule or a fence (``*** Aborted at``,
    `````````) and balanced pairs."""
    for mark in ("**", "`"):
        count = message.count(mark)
        if not count:
            continue
        size = len(mark)
        if not (message.startswith(mark) and len(message) > size and message[size] not in " *`"):
            return message
        wraps_it = count == 2 and message.endswith(mark) and message[-size - 1] not in " *`"
        return message[size:] if wraps_it or count % 2 else message
    return message


def line_start_ranks(sample: bytes | bytearray) -> set[int]:
    """The ranks that the rank-naming prefixes at the starts of a buffer's lines name."""
    return {int(m[m.lastindex or 0]) for m in RANK_PREFIX_AFTER_NEWLINE.finditer(b"\n" + sample)}


def inline_rank(text: str) -> tuple[int, bool] | None:
    """``[Rank N]`` inside a message, and whether it is the rank of a process in the default process group.

    It is a PG-local rank in PyTorch, global in DeepSpeed's log_dist: a hint. It is the process's global rank when
    the message is ProcessGroupNCCL/Gloo's about the default group: ``[PG ID 0 ... Rank N]``, ``[PG 0 Rank N]``, or
    ``[Rank N]`` after the c10 prefix of a ``ProcessGroup*.cpp`` line (DeepSpeed's ``log_dist`` writes ``[Rank 0]``
    on lines of the launcher too)."""
    m = _INLINE_RANK.search(text, 0, 300)
    if m is None:
        return None
    default_group = m[1] == "0" or (m[1] is None and "ProcessGroup" in text[:m.start()])
    return int(m[2]), default_group


def inline_rank_hint(message: str) -> int | None:
    """The rank ``[Rank N]`` inside a message names (see ``inline_rank``)."""
    named = inline_rank(message)
    return named[0] if named is not None else None


# torchrun --log-dir: attempt_N/<local_rank>/{stdout,stderr}.log and the worker's error.json.
_LOG_DIR_FILE = re.compile(r"(?:stdout|stderr|error)\.(?:log|json)")


def is_error_record(path: str) -> bool:
    """torchrun's per-worker ``error.json`` repeats the worker's exception: evidence, not its own output."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] == "error.json"


def rank_from_path(path: str) -> int | None:
    """Rank named by a per-rank log file: ``rank3.log``, ``train_rank12.log``, ``slurm-77_3.out``,
    torchrun ``--log-dir`` ``attempt_0/3/stderr.log`` (a local rank). Strict: the name must end in the rank
    (``hang-rank3-test.log`` names none); the reasoning uses it only for a file whose lines name no rank."""
    normalized = path.replace("\\", "/")
    parts = normalized.split("/")
    name = parts[-1]
    m = _RANK_IN_FILENAME.search(name.split(".", 1)[0])
    if m:
        return int(m[1])
    m = re.fullmatch(r"slurm-\d+_(\d+)\.(?:out|err|log)", name)
    if m:
        return int(m[1])
    if len(parts) >= 3 and _LOG_DIR_FILE.fullmatch(name) and parts[-2].isdigit():
        return int(parts[-2])
    if len(parts) >= 2:
        # Only a parent folder named for a rank (``rank3/``, ``worker_3/``): a run name like
        # ``hang-rank3-test/`` says nothing about the files inside.
        m = re.fullmatch(r"(?:rank|worker|proc)[_-]?(\d{1,6})", parts[-2], re.IGNORECASE)
        if m:
            return int(m[1])
    return None
