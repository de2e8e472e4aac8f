"""Never a false all-clear from the form of the input: compressed logs (gzip, bzip2, xz, zstd) read as the
text they hold in paths, folders and stdin; empty, unreadable or cut-short input is an error or a note, never
"no failure"; a log whose only sign of failure is a FATAL line, a C++ abort or a failed CHECK is no all-clear;
an input with several runs is diagnosed for the most recent one and says so. Through the real CLI."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
RUN = ROOT / "tests" / "fixtures" / "real" / "exception-rank2-plain" / "console.log"  # a real 4-rank gloo run
BANNER = "I1129 18:02:21.123000 4242 torch/distributed/launcher/api.py:194] Starting elastic_operator with launch configs:\n"
HEALTHY = "step 1 loss 2.0\nstep 2 loss 1.9\ntraining completed\n"


def _zstd(data: bytes) -> bytes:
    try:
        from compression import zstd  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from backports import zstd
    return zstd.compress(data)  # type: ignore[no-any-return]


COMPRESSORS = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress, "zst": _zstd}


def cli(*args: str, stdin: bytes | None = None) -> tuple[int, dict[str, Any] | None, str]:
    done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--format", "json", *args],
                          input=stdin, capture_output=True, check=False)
    report = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, report, done.stderr.decode()


def answer(report: dict[str, Any]) -> tuple[Any, ...]:
    root = report["root_cause"] or {}
    return report["verdict"], report["initiating_rank"], root.get("signature_id"), root.get("line")


@pytest.fixture(scope="module")
def plain() -> tuple[Any, ...]:
    code, report, _ = cli(str(RUN))
    assert code == 1 and report is not None and report["verdict"] == "failure"
    return answer(report)


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_a_compressed_log_is_read_as_its_text(suffix: str, tmp_path: Path, plain: tuple[Any, ...]) -> None:
    packed = COMPRESSORS[suffix](RUN.read_bytes())
    path = tmp_path / f"console.log.{suffix}"
    path.write_bytes(packed)
    code, report, _ = cli(str(path))
    assert code == 1 and report is not None and answer(report) == plain
    assert report["inputs"][0]["lines"] == RUN.read_bytes().count(b"\n")
    # without its suffix, and through stdin: told by its first bytes
    bare = tmp_path / "console"
    bare.write_bytes(packed)
    assert answer(cli(str(bare))[1] or {}) == plain
    assert answer(cli("-", stdin=packed)[1] or {}) == plain
    # in a folder, next to a compressed archive (skipped, with a note)
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / f"rank.log.{suffix}").write_bytes(packed)
    (folder / f"old.tar.{suffix}").write_bytes(packed)
    code, report, _ = cli(str(folder))
    assert report is not None and answer(report)[:3] == plain[:3]
    assert any("old.tar" in note and "skipped" in note for note in report["notes"])


def test_concatenated_members_are_all_read(tmp_path: Path) -> None:
    path = tmp_path / "two.log.gz"
    path.write_bytes(gzip.compress(HEALTHY.encode()) + gzip.compress(RUN.read_bytes()))
    _code, report, _ = cli(str(path))
    assert report is not None and report["verdict"] == "failure"
    assert report["inputs"][0]["lines"] == 3 + RUN.read_bytes().count(b"\n")


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_a_cut_short_compressed_log_keeps_its_lines_and_is_no_all_clear(suffix: str, tmp_path: Path) -> None:
    lines = 200_000  # bzip2 hands out whole 900 kB blocks: several of them
    healthy = "".join(f"step {i} loss 2.{i % 10}\n" for i in range(lines)).encode()
    packed = COMPRESSORS[suffix](healthy)
    path = tmp_path / f"cut.log.{suffix}"
    path.write_bytes(packed[: len(packed) // 2])
    code, report, _ = cli(str(path))
    assert report is not None
    assert report["verdict"] == "unknown" and code == 1
    assert 0 < report["inputs"][0]["lines"] < lines  # what came before the cut was read
    assert any("damaged" in note for note in report["notes"])


def test_empty_input_is_an_error_not_a_verdict(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    code, report, err = cli(str(empty))
    assert code == 2 and report is None and "empty" in err
    code, report, err = cli("-", stdin=b"")
    assert code == 2 and report is None and "empty" in err


def test_unreadable_and_empty_files_in_a_folder_are_noted(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "rank0.log").write_text(HEALTHY, encoding="utf-8")
    (folder / "stderr.log").write_bytes(b"")  # torchrun --log-dir leaves these empty on a healthy run
    code, report, _ = cli(str(folder))
    assert code == 0 and report is not None and report["verdict"] == "no_failure"
    assert any("stderr.log" in note and "empty" in note for note in report["notes"])
    (folder / "rank1.log").symlink_to(tmp_path / "gone.log")  # a file that cannot be read
    code, report, _ = cli(str(folder))
    assert report is not None and report["verdict"] == "unknown" and code == 1
    assert any("rank1.log" in note for note in report["notes"])
    assert any("not every input was read" in reason["text"] for reason in report["reasons"])


@pytest.mark.parametrize("text, signature", [
    ("step 1 loss 2.0\nFATAL: could not allocate the workspace\n", None),
    ("step 1\nterminate called after throwing an instance of 'std::runtime_error'\n  what():  boom\n",
     "cpp-exception-what"),
    ("I0101 12:00:00.000 123 x.cc:1] ok\nF0101 12:00:01.000 123 x.cc:9] Check failed: ptr != nullptr\n",
     "cpp-check-failed"),
])
def test_a_fatal_line_alone_is_no_all_clear(text: str, signature: str | None, tmp_path: Path) -> None:
    path = tmp_path / "run.log"
    path.write_text(text, encoding="utf-8")
    code, report, _ = cli(str(path))
    assert report is not None and code == 1 and report["verdict"] != "no_failure"
    if signature is not None:
        assert report["root_cause"]["signature_id"] == signature


def test_the_most_recent_of_several_runs_is_diagnosed(tmp_path: Path, plain: tuple[Any, ...]) -> None:
    run = RUN.read_text(encoding="utf-8")
    failed_then_fixed = tmp_path / "appended.log"
    failed_then_fixed.write_text(BANNER + run + BANNER + HEALTHY, encoding="utf-8")
    code, report, _ = cli(str(failed_then_fixed))
    assert report is not None and report["verdict"] == "no_failure" and code == 0
    assert any("more than one run" in note and "failed first" in note for note in report["notes"])
    fixed_then_failed = tmp_path / "again.log"
    fixed_then_failed.write_text(BANNER + HEALTHY + BANNER + run, encoding="utf-8")
    code, report, _ = cli(str(fixed_then_failed))
    shift = 1 + HEALTHY.count("\n") + 1
    assert report is not None and answer(report) == (*plain[:3], plain[3] + shift)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "slurm-100.out").write_text(run, encoding="utf-8")
    (jobs / "slurm-101.out").write_text(HEALTHY, encoding="utf-8")
    code, report, _ = cli(str(jobs))
    assert report is not None and report["verdict"] == "no_failure"
    assert any("more than one Slurm job" in note and "slurm-100.out" in note for note in report["notes"])
