"""Scanning on several processes gives exactly the answer of one process: same events, same line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.inputs import Source
from faultline.render.json_out import diagnosis_json
from faultline.scan import parallel
from faultline.scan.forked import ForkedCall


def write_log(path: Path, lines: int, oom_at: int, rank: int) -> None:
    with open(path, "w") as out:
        for i in range(1, lines + 1):
            if i == oom_at:
                out.write(f"[rank{rank}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
            elif i % 5000 == 0:
                out.write(f"[rank{i % 8}]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer\n")
            else:
                out.write(f"[rank{i % 8}]: step {i} loss {i % 97 / 10:.2f} tokens/s 18234\n")


@pytest.mark.parametrize("jobs", [2, 3])
def test_parallel_scan_matches_single_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 1)
    monkeypatch.setattr(parallel, "MIN_SEGMENT_BYTES", 200_000)
    big = tmp_path / "big.log"
    write_log(big, 60_000, oom_at=41_234, rank=5)
    folder = tmp_path / "ranks"
    folder.mkdir()
    for rank in range(6):
        write_log(folder / f"rank{rank}.log", 3_000, oom_at=2_000 if rank == 4 else -1, rank=rank)
    library = Engine.load().library
    for target in (big, folder):
        single = Engine(library, jobs=1).diagnose_paths([target])
        multi = Engine(library, jobs=jobs).diagnose_paths([target])
        assert multi.root_cause is not None and single.root_cause is not None
        assert (multi.root_cause.file, multi.root_cause.line) == (single.root_cause.file, single.root_cause.line)
        assert multi.initiating_rank == single.initiating_rank
        assert [(e.file, e.line, e.signature_id) for e in multi.events] == \
               [(e.file, e.line, e.signature_id) for e in single.events]
        assert [f.lines for f in multi.files] == [f.lines for f in single.files]
    assert Engine(library, jobs=jobs).diagnose_paths([big]).root_cause.line == 41_234  # type: ignore[union-attr]


def write_cascade(path: Path, ranks: int) -> None:
    """Healthy steps, an OOM, then every other rank's watchdog block (stamped and unstamped lines), with error
    lines no signature describes (suspects) and a file end without a newline."""
    with open(path, "w") as out:
        for i in range(2000):
            out.write(f"[rank{i % ranks}]:[I1129 08:0{i // 1000}:{i % 60:02d}.{i:06d} train.py:241] step={i} loss=9.4\n")
        out.write("[rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB.\n")
        for r in range(ranks):
            if r == 7:
                continue
            out.write(f"[rank{r}]:[E1129 08:12:00.{r:06d} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught collective "
                      f"operation timeout: WorkNCCL(SeqNum=341, OpType=ALLREDUCE, NumelIn=12, NumelOut=12, "
                      f"Timeout(ms)=600000) ran for 600087 milliseconds before timing out.\n")
            out.write(f"[rank{r}]: Error: odd thing {r} happened\n")
            out.write("terminate called after throwing an instance of 'c10::DistBackendError'\n")
            out.write(f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {r}] Process group watchdog thread terminated "
                      f"with exception: [Rank {r}] Watchdog caught collective operation timeout\n")
            out.write(f"ValueError: unexplained failure number {r}\n")
        out.write("E1129 08:12:01.036393 3951 api.py:869] failed (exitcode: -6) local_rank: 7 (pid: 4177) of binary: python")


@pytest.mark.parametrize("helpers", [1, 2])
def test_a_dense_cascade_shared_with_helpers_gives_the_same_diagnosis(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, helpers: int) -> None:
    """Every field of the report (events, their order, suspects under the per-file cap, ranks, notes) is equal."""
    from faultline.scan import chunks, dense, scanner, sink

    log = tmp_path / "cascade.log"
    write_cascade(log, ranks=160)
    library = Engine.load().library
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64 * 1024)  # the cascade spans several buffers
    monkeypatch.setattr(sink, "MAX_SUSPECTS_PER_FILE", 40)  # the cap falls inside a helper's piece
    monkeypatch.setattr(dense, "DENSE_LINES", 50)
    single = diagnosis_json(Engine(library, jobs=1).diagnose_paths([log]))
    shared = diagnosis_json(Engine(library, jobs=helpers + 1).diagnose_paths([log]))
    assert shared == single
    assert len(single["events"]) > 300 and single["root_cause"]["line"] == 2001

    def scan(helper_count: int) -> tuple[object, ...]:
        scan = scanner.Scanner(Engine(library).matcher, helpers=helper_count)
        scan.scan(Source.from_path(log))
        return (scan.sink.output.events, scan.sink.output.suspects, scan.sink.output.files)

    alone = scan(0)
    assert scan(helpers) == alone
    assert len(alone[1]) == 40  # type: ignore[arg-type]  # suspects: the cap was reached in a helper's piece

    # A helper that fails (here: every one) leaves its share to the parent: still the same answer.
    monkeypatch.setattr(ForkedCall, "result", lambda self: None)
    assert diagnosis_json(Engine(library, jobs=helpers + 1).diagnose_paths([log])) == single
    assert scan(helpers) == alone


def test_forked_call_returns_the_value_or_none_when_the_child_fails() -> None:
    import os
    import signal

    from faultline.scan.forked import ForkedCall

    assert ForkedCall(lambda: {"answer": [42] * 100_000}).result() == {"answer": [42] * 100_000}

    def boom() -> int:
        raise RuntimeError("child failed")

    assert ForkedCall(boom).result() is None

    def killed() -> int:
        os.kill(os.getpid(), signal.SIGKILL)
        return 1

    assert ForkedCall(killed).result() is None


def test_events_and_stamps_survive_pickling_between_processes() -> None:
    import pickle

    from faultline.model import Event, Role, Timestamp

    stamp = Timestamp(2024, 12.5, "E1129 08:12:00", uptime=False, inferred=True)
    event = Event("cuda-oom", "CUDA OOM", "memory", Role.ROOT_CAUSE, 90, "a.log", 3, "text", "message",
                  {"size": "2 GiB"}, 7, local_rank=1, host="node", pid=12, time=stamp, level="E", order=4,
                  rank_from_field=True, role=Role.COLLATERAL, note="n")
    assert pickle.loads(pickle.dumps(event)) == event
    assert pickle.loads(pickle.dumps(stamp)) == stamp


def test_a_claim_queue_gives_every_number_to_exactly_one_process() -> None:
    import os

    from faultline.scan.forked import ClaimQueue, ForkedCall

    queue = ClaimQueue(ClaimQueue.MAX_CLAIMS)

    def claim_all() -> list[int]:
        taken = []
        while (number := queue.claim()) is not None:
            taken.append(number)
            os.sched_yield()
        return taken

    children = [ForkedCall(claim_all) for _ in range(3)]
    mine = claim_all()
    theirs = [child.result() for child in children]
    queue.close()
    everyone = mine + [n for taken in theirs for n in taken or []]
    assert sorted(everyone) == list(range(ClaimQueue.MAX_CLAIMS))
    assert all(taken == sorted(taken) for taken in [mine, *theirs] if taken)  # each in increasing order
    assert ClaimQueue(0).claim() is None
    with pytest.raises(ValueError):
        ClaimQueue(ClaimQueue.MAX_CLAIMS + 1)


def test_no_helper_process_to_be_had_leaves_the_dense_buffer_to_the_scan(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from faultline.scan import dense

    log = tmp_path / "cascade.log"
    write_cascade(log, ranks=160)
    library = Engine.load().library
    monkeypatch.setattr(dense, "DENSE_LINES", 50)
    single = diagnosis_json(Engine(library, jobs=1).diagnose_paths([log]))

    def no_fork(self: object, function: object) -> None:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(ForkedCall, "__init__", no_fork)
    assert diagnosis_json(Engine(library, jobs=2).diagnose_paths([log])) == single


class _FailingStream:
    """A stream whose reads fail once ``fail_after`` bytes have been read."""

    def __init__(self, data: bytes, fail_after: int) -> None:
        self.data, self.position, self.fail_after = data, 0, fail_after

    def readinto(self, target: memoryview) -> int:
        if self.position >= self.fail_after:
            raise OSError(5, "Input/output error")
        count = min(len(target), len(self.data) - self.position, self.fail_after - self.position)
        target[:count] = self.data[self.position:self.position + count]
        self.position += count
        return count

    def close(self) -> None:
        pass


def test_a_read_error_after_a_shared_buffer_keeps_what_was_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helpers' blocks and the lines read before the error are merged as a scan alone would have them."""
    from faultline.scan import chunks, dense, scanner

    log = tmp_path / "cascade.log"
    write_cascade(log, ranks=160)
    data = log.read_bytes()
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 64 * 1024)
    monkeypatch.setattr(dense, "DENSE_LINES", 50)
    matcher = Engine.load().matcher

    def scan(helpers: int) -> tuple[object, ...]:
        scan = scanner.Scanner(matcher, helpers=helpers)
        stream = _FailingStream(data, fail_after=len(data) - 20_000)
        summary = scan.scan(Source("cascade.log", stream=stream))  # type: ignore[arg-type]
        assert summary.error is not None and "Input/output error" in summary.error
        return (scan.sink.output.events, scan.sink.output.suspects, scan.sink.output.files)

    alone = scan(0)
    assert len(alone[0]) > 100  # type: ignore[arg-type]
    assert scan(1) == alone
