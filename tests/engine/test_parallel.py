"""Scanning on several processes gives exactly the answer of one process: same events, same line numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from faultline import parallel
from faultline.engine import Engine


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
