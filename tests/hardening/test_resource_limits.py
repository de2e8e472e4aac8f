"""Resource limits: a 2 GB log is diagnosed in bounded memory, and the longest line matched is a setting
(``--max-line-bytes``, default 1 MiB) whose effect the report states instead of truncating silently."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faultline.scan.chunks import CHUNK_BYTES
from faultline.scan.scanner import DEFAULT_MAX_LINE_BYTES

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "oom-cascade" / "console.log"
EXAMPLE_ROOT_LINE, EXAMPLE_RANK = 344, 5  # examples/oom-cascade/expected.toml
BIG_BYTES = 2 * 1024**3
RSS_BOUND_MB = 250  # peak resident memory of any one faultline process, whatever the input size
TREE_RSS_BOUND_MB = 600  # the CLI and its scan workers together (at most 4 workers, see parallel.default_jobs)
OOM = "[default3]:[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total"


# Runs the CLI as its only child and reports (a) ru_maxrss of its children: the peak RSS of the largest
# process of the CLI's tree (forked scan workers included, nothing else the test session ran), and (b) the
# peak of the whole tree's summed RSS, sampled from /proc every 20 ms.
_MEASURE = """
import json, os, resource, subprocess, sys, tempfile, threading, time

def tree_rss_kb(pid):
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next((int(l.split()[1]) for l in f if l.startswith("VmRSS:")), 0)
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except (OSError, ValueError):
            pass
    return total

out, err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
start = time.perf_counter()
child = subprocess.Popen(sys.argv[1:], stdout=out, stderr=err, text=True)
peak = [0]
def sample():
    while child.poll() is None:
        peak[0] = max(peak[0], tree_rss_kb(child.pid))
        time.sleep(0.02)
threading.Thread(target=sample, daemon=True).start()
rc = child.wait()
seconds = time.perf_counter() - start
out.seek(0); err.seek(0)
print(json.dumps({"rc": rc, "out": out.read(), "err": err.read()[-2000:], "seconds": seconds,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
                  "tree_rss_mb": peak[0] / 1024}))
"""


def _measured_cli(*args: str) -> dict[str, object]:
    command = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "faultline", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=REPO / "tests")
    assert result.returncode == 0, result.stderr
    measured: dict[str, object] = json.loads(result.stdout)
    return measured


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faultline", *args], capture_output=True, text=True, timeout=300,
                          cwd=REPO / "tests")


@pytest.mark.slow
def test_a_2gb_log_is_diagnosed_in_bounded_memory(tmp_path: Path) -> None:
    """2 GiB of healthy training output (the example's first 315 lines, repeated), then the example's OOM
    cascade: the root cause is found at its exact line number and no process grows past RSS_BOUND_MB."""
    if shutil.disk_usage(tmp_path).free < 6 * 1024**3:
        pytest.skip("needs 6 GB of free disk")
    example = EXAMPLE.read_bytes()
    healthy = b"".join(example.splitlines(keepends=True)[:315])
    block = healthy * (16 * 1024 * 1024 // len(healthy))
    blocks = BIG_BYTES // len(block)
    log = tmp_path / "console.log"
    start = time.perf_counter()
    with open(log, "wb") as out:
        for _ in range(blocks):
            out.write(block)
        out.write(example)
    written = time.perf_counter() - start
    assert log.stat().st_size >= BIG_BYTES - len(block)
    measured = _measured_cli("diagnose", "--format", "json", "-q", "--no-workspace-signatures", str(log))
    assert measured["rc"] == 1, measured["err"]
    data = json.loads(str(measured["out"]))
    assert data["initiating_rank"] == EXAMPLE_RANK
    assert data["root_cause"]["line"] == blocks * block.count(b"\n") + EXAMPLE_ROOT_LINE
    assert data["inputs"][0]["bytes"] == log.stat().st_size
    print(f"\n2 GiB log: written in {written:.1f} s, diagnosed in {measured['seconds']:.1f} s, peak RSS "
          f"{measured['max_rss_mb']:.0f} MB per process, {measured['tree_rss_mb']:.0f} MB for the process tree")
    assert float(measured["max_rss_mb"]) < RSS_BOUND_MB  # type: ignore[arg-type]
    assert float(measured["tree_rss_mb"]) < TREE_RSS_BOUND_MB  # type: ignore[arg-type]


def _long_line_log(path: Path, head: int, oom_at: int | None) -> None:
    """Line 1: short; line 2: rank 3's prefix and ``head`` bytes of filler with the OOM message at ``oom_at``
    (or none); line 3: 'after'; line 4: a real OOM line of rank 5."""
    filler = bytearray(b"[rank3]: " + b"x" * head)
    if oom_at is not None:
        text = OOM.split("]: ", 2)[-1].encode()
        filler[oom_at:oom_at + len(text)] = text
    path.write_bytes(b"[rank0]: step 1 loss 2.0\n" + bytes(filler) + b"\n[rank0]: after\n"
                     + OOM.replace("3", "5").encode() + b"\n")


def test_a_line_over_max_line_bytes_is_reported_not_silently_cut(tmp_path: Path) -> None:
    log = tmp_path / "long.log"
    _long_line_log(log, 3 * 1024 * 1024, oom_at=2 * 1024 * 1024)  # the OOM text lies beyond the first MiB
    result = _cli("diagnose", "--format", "json", "--no-workspace-signatures", str(log))
    data = json.loads(result.stdout)
    assert data["inputs"][0]["truncated_lines"] == 1 and data["inputs"][0]["lines"] == 4
    assert any(f"longer than {DEFAULT_MAX_LINE_BYTES} bytes" in note for note in data["notes"])
    assert {(e["line"], e["rank"]) for e in data["events"]} == {(4, 5)}  # line 2 was matched on its head only
    text = _cli("diagnose", "--no-workspace-signatures", str(log)).stdout
    assert "Notes:" in text and f"longer than {DEFAULT_MAX_LINE_BYTES} bytes" in text
    # Raising the limit matches the whole line: rank 3's earlier OOM on line 2 is found (and is the root cause).
    raised = json.loads(_cli("diagnose", "--format", "json", "--max-line-bytes", str(4 * 1024 * 1024),
                             "--no-workspace-signatures", str(log)).stdout)
    assert raised["inputs"][0]["truncated_lines"] == 0 and not [n for n in raised["notes"] if "longer than" in n]
    assert {(e["line"], e["rank"]) for e in raised["events"]} == {(2, 3), (4, 5)}
    assert (raised["root_cause"]["line"], raised["root_cause"]["rank"]) == (2, 3)


def test_max_line_bytes_has_a_floor(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text("x\n")
    result = _cli("diagnose", "--max-line-bytes", "100", str(log))
    assert result.returncode == 2 and "--max-line-bytes must be at least 1024" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("where", ["inside a chunk", "across a chunk boundary", "at the end of the file"])
def test_line_numbers_stay_exact_around_over_long_lines(where: str, tmp_path: Path) -> None:
    """The scanner reads 8 MiB chunks and skips the tail of an over-long line: the lines after it keep their
    numbers wherever it falls."""
    short = b"[rank0]: step 1 loss 2.0\n"
    if where == "inside a chunk":
        before = 1000
    elif where == "across a chunk boundary":
        before = (CHUNK_BYTES - 1000) // len(short)
    else:
        before = 10
    long_line = b"y" * (2 * 1024 * 1024) + b" " + OOM.encode()
    body = short * before + long_line + b"\n" + (short * 3 + OOM.replace("3", "5").encode() + b"\n"
                                                 if where != "at the end of the file" else b"")
    log = tmp_path / "chunks.log"
    log.write_bytes(body)
    data = json.loads(_cli("diagnose", "--format", "json", "--no-workspace-signatures", str(log)).stdout)
    summary = data["inputs"][0]
    assert summary["truncated_lines"] == 1 and summary["bytes"] == len(body)
    if where == "at the end of the file":
        assert summary["lines"] == before + 1 and data["events"] == []
    else:
        assert summary["lines"] == before + 5
        assert [(e["line"], e["rank"]) for e in data["events"]] == [(before + 5, 5)]
