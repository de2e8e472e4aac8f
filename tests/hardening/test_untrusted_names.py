"""File names are untrusted input too: a log folder may hold names that are not UTF-8 or that carry terminal
escape sequences. Every CLI format still works, the JSON stays valid UTF-8, the terminal gets no control
character, and the events keep their files and lines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .output_checks import check_json, check_text

OOM = b"[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
NAMES = [b"rank\xff1.log", b"rank2\x1b]0;owned\x07\x1b[2J.log"]


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in NAMES:
        with open(os.path.join(os.fsencode(logs), name), "wb") as out:
            out.write(b"[rank0]: step 1\n" + OOM.replace(b"rank1", b"rank" + name[4:5]))
    return logs


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "faultline", *args], capture_output=True, timeout=120,
                          cwd=Path(__file__).resolve().parent, env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def test_json_of_undecodable_names_is_valid_utf8(folder: Path, tmp_path: Path) -> None:
    result = _cli("diagnose", "--format", "json", "--no-workspace-signatures", str(folder))
    assert result.returncode == 1, result.stderr
    data = check_json(result.stdout.decode("utf-8"))  # raises on bytes that are not UTF-8
    assert sorted(i["file"].rsplit("/", 1)[-1] for i in data["inputs"]) == [
        "rank2\\x1b]0;owned\\x07\\x1b[2J.log", "rank\\xff1.log"]
    assert {e["line"] for e in data["events"]} == {2}
    target = tmp_path / "report.json"
    written = _cli("diagnose", "--format", "json", "-o", str(target), "--no-workspace-signatures", str(folder))
    assert written.returncode == 1 and b"Traceback" not in written.stderr, written.stderr
    check_json(target.read_text(encoding="utf-8"))


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_names_cannot_drive_the_terminal(fmt: str, folder: Path) -> None:
    result = _cli("diagnose", "--format", fmt, "--color", "never", "--no-workspace-signatures", str(folder))
    assert result.returncode == 1, result.stderr
    check_text(result.stdout.decode("utf-8"))
    assert b"\x1b" not in result.stderr
