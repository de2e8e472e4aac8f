"""The command line as a user runs it: exit codes, formats, clear one-line errors, stdin."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OOM = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faultline", *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_failure_exits_1_and_reports(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("step 1\n" + OOM)
    result = run("diagnose", str(log))
    assert result.returncode == 1, result.stderr
    assert "Initiating rank: 2" in result.stdout and "CUDA out of memory" in result.stdout


def test_json_contract(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("step 1\n" + OOM)
    result = run("diagnose", "--format", "json", str(log))
    data = json.loads(result.stdout)
    assert data["schema_version"] == 1
    assert data["verdict"] == "failure" and data["initiating_rank"] == 2
    root = data["root_cause"]
    assert (root["signature_id"], root["rank"], root["file"], root["line"]) == ("cuda-oom", 2, str(log), 2)
    for key in ("collateral", "fix", "verification", "confidence", "reasons", "ranks", "related", "references"):
        assert key in data
    assert data["fix"]["summary"] and data["verification"]["command"]


def test_no_failure_exits_0_from_stdin() -> None:
    result = run("diagnose", "-", stdin="step 1 loss 2.0\nstep 2 loss 1.9\n")
    assert result.returncode == 0
    assert "NO FAILURE" in result.stdout


def test_markdown_and_html(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(OOM)
    md = run("diagnose", "--format", "markdown", str(log)).stdout
    assert md.startswith("# Faultline: Failure")
    html = run("diagnose", "--format", "html", str(log)).stdout
    assert html.startswith("<!DOCTYPE html>") and "class='fl-event'" in html and "<script" not in html


def test_usage_and_input_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    for args in (("diagnose", str(tmp_path / "missing.log")), ("diagnose",), ("bogus",),
                 ("diagnose", "--format", "yaml", "x"), ("signatures", "show", "no-such-id")):
        result = run(*args)
        assert result.returncode == 2, args
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_signatures_list_show_check() -> None:
    listing = run("signatures", "list")
    assert listing.returncode == 0 and "memory/cuda-oom" in listing.stdout
    show = run("signatures", "show", "cuda-oom")
    assert show.returncode == 0 and "Verify:" in show.stdout
    check = run("signatures", "check")
    assert "signature file(s) checked" in check.stdout


def test_a_large_report_arrives_whole_through_a_pipe(tmp_path: Path) -> None:
    """The command exits without tearing the interpreter down (cli.run): the report must be flushed first."""
    log = tmp_path / "run.log"
    lines = [f"[rank{r}]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer [10.0.0.{r}]:{r}\n"
             for r in range(3000)]
    log.write_text("".join(lines) + OOM)
    result = run("diagnose", "--format", "json", "--all-events", str(log))  # every event, not the first 1,000
    assert result.returncode == 1, result.stderr
    assert len(result.stdout) > 256 * 1024  # several pipe buffers
    assert len(json.loads(result.stdout)["events"]) == 3001
