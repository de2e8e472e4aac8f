"""A rank-less line that can start a failure takes the one rank the other lines blame (reasoning/propagation.py
take_the_blamed_rank): a launcher that names the failed process in its own words, here TGI's
(launcher/src/main.rs: "Shard {rank} failed to start")."""

from __future__ import annotations

from collections import Counter

from faultline.engine import Engine
from faultline.reasoning.evidence import _blames

SHARD_FAILED = (
    "RuntimeError: The server socket has failed to listen on any local network address. The server socket has failed "
    "to bind to [::]:29500 (errno: 98 - Address already in use).\n"
    " rank=0\n"
    "2023-10-16T06:54:28.059380Z ERROR text_generation_launcher: Shard 0 failed to start\n"
    "2023-10-16T06:54:28.059423Z  INFO text_generation_launcher: Shutting down shards\n"
    "2023-10-16T06:54:28.106837Z  INFO shard-manager: text_generation_launcher: Shard terminated rank=1\n"
)


def test_the_shard_the_launcher_names_is_the_rank_of_the_rankless_error(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(SHARD_FAILED, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 1
    assert diagnosis.root_cause.signature_id == "store-addr-in-use"
    assert diagnosis.initiating_rank == 0
    assert "the only rank the other lines name" in diagnosis.root_cause.note


def test_two_blamed_ranks_name_none(engine: Engine) -> None:
    two = SHARD_FAILED + "2023-10-16T06:54:29.000000Z ERROR text_generation_launcher: Shard 1 crashed\n"
    diagnosis = engine.diagnose_text(two, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.rank is None


def test_a_line_that_blames_a_rank_is_not_that_ranks_own(engine: Engine) -> None:
    # torch/csrc/distributed/c10d/ProcessGroupWrapper.cpp (CollectiveFingerPrint::verify): "Rank " <<
    # backend->getRank() << " is running collective: ..., but Rank " << rank: the first rank named printed it
    desync = ("RuntimeError: Detected mismatch between collectives on ranks. Rank 4 is running collective: "
              "CollectiveFingerPrint(OpType=ALLREDUCE), but Rank 7 is running collective: "
              "CollectiveFingerPrint(OpType=BROADCAST).\n")
    diagnosis = engine.diagnose_text(desync, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.rank == 4


# torch/csrc/distributed/c10d/ProcessGroupGloo.cpp monitoredBarrier: the other ranks wait on rank 0 and point at
# it; rank 0's own line names the rank that did not arrive.
MONITORED = (
    "[rank3]:[E ProcessGroupGloo.cpp:138] Rank 3 successfully reached monitoredBarrier, but received errors while "
    "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
    "[rank0]:[E ProcessGroupGloo.cpp:138] [Rank 0]: Rank 2 failed to pass monitoredBarrier in 30000 ms\n"
    "[rank1]:[E ProcessGroupGloo.cpp:138] Rank 1 successfully reached monitoredBarrier, but received errors while "
    "waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n"
)


def test_a_blamed_rank_that_blames_another_in_its_own_lines_passes_the_blame_on(engine: Engine) -> None:
    assert engine.diagnose_text(MONITORED, "run.log").initiating_rank == 2
    without_the_monitor = "".join(line + "\n" for line in MONITORED.splitlines() if "[rank0]" not in line)
    assert engine.diagnose_text(without_the_monitor, "run.log").initiating_rank == 0


def test_ranks_that_blame_each_other_do_not_pass_the_blame_round(engine: Engine) -> None:
    # ProcessGroupNCCL: "[PG 0 Rank R] remote error detected from rank: P"
    text = ("[rank1]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 1] remote error detected from rank: 2\n"
            "[rank2]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 2] remote error detected from rank: 1\n")
    events = engine.diagnose_text(text, "run.log").events
    assert _blames(events, frozenset()) == Counter({1: 1, 2: 1})
