"""Every view gives the answer first: verdict, a one-line summary, the initiating rank, the root-cause line
(with when it failed), the fix in one line and its verification; then the mechanism, the steps, the
collateral by rank (the root's own rank not among it, lines without a rank counted apart), the evidence."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLE = ROOT / "examples" / "oom-cascade"


def cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--color", "never", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1, done.stderr
    return done.stdout


def positions(text: str, *markers: str) -> list[int]:
    found = [text.find(marker) for marker in markers]
    assert all(p >= 0 for p in found), [m for m, p in zip(markers, found, strict=True) if p < 0]
    return found


def test_the_text_report_reads_top_down(tmp_path: Path) -> None:
    text = cli(str(EXAMPLE))
    order = positions(text, "Faultline: FAILURE", "\nSummary: Rank 5 failed first", "\nInitiating rank: 5",
                      "\nRoot cause:", "\nFix:", "\nVerify:", "\nWhy:", "\nSteps:", "\nCollateral:", "\nEvidence:")
    assert order == sorted(order)
    assert "step 630/20000, after 21 min 30 s" in text
    summary = next(line for line in text.splitlines() if line.startswith("Summary: "))
    assert "console.log:344" in summary and "Fix: Lower the per-GPU memory" in summary  # one line to paste
    collateral = text[text.index("Collateral:"):text.index("Evidence:")]
    assert "rank    5" not in collateral  # the failing rank is not among its own collateral ...
    assert "later line(s) of rank 5 itself" in collateral  # ... its later lines are named apart
    assert "unattributed" in collateral and "on 7 other rank(s) and 6 unattributed" in collateral


def test_markdown_and_html_read_top_down() -> None:
    markdown = cli("--format", "markdown", str(EXAMPLE))
    order = positions(markdown, "# Faultline: Failure", "\n**Rank 5 failed first", "\n## Root cause", "\n**Fix:**",
                      "\n**Verify:**", "\n**Why:**", "\n**Steps:**", "\n## Collateral", "\n## Evidence")
    assert order == sorted(order)
    assert "\\(" not in markdown and "\\-" not in markdown.replace("\n\\-", "")  # readable raw
    html = cli("--format", "html", str(EXAMPLE))
    order = positions(html, "<h1>", "class='summary'", "<h2>Root cause</h2>", "<h2>Fix</h2>", "Verify:",
                      "<h2>Why</h2>", "<h2>Steps</h2>", "<h2>Collateral", "<h2>Rank timeline</h2>",
                      "<h2>Evidence</h2>")
    assert order == sorted(order)
    assert "prefers-color-scheme:dark" in html and "var(--vscode-editor-background" in html  # follows the theme


def test_json_carries_the_summary_and_when(tmp_path: Path) -> None:
    data = json.loads(cli("--format", "json", str(EXAMPLE)))
    assert data["summary"].startswith("Rank 5 failed first: CUDA out of memory")
    assert data["root_cause"]["step"] == "630/20000"
    assert data["root_cause"]["run_time_s"] == pytest.approx(1291, abs=2)


def test_the_summary_of_each_verdict(tmp_path: Path) -> None:
    healthy = tmp_path / "ok.log"
    healthy.write_text("step 1 loss 2.0\nstep 2 loss 1.9\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--format", "json", str(healthy)],
                          capture_output=True, text=True, check=False)
    assert json.loads(done.stdout)["summary"] == "No failure found in 2 line(s) of 1 file(s)."


def test_a_symptom_only_paste_names_its_first_failure_as_a_symptom(tmp_path: Path) -> None:
    """Only waiting ranks: the answer stays unknown with no initiating rank, and every view leads with the first
    failure seen, called a symptom, with the fix of its family."""
    log = tmp_path / "run.log"
    log.write_text("step 7 loss 2.1\n"  # Gloo's recv timeout (third_party/gloo/gloo/transport/tcp/unbound_buffer.cc)
                   "[E1204 10:00:00.000000 11 unbound_buffer.cc:72] Timed out waiting 30000ms for recv operation to "
                   "complete\n", encoding="utf-8")
    text = cli(str(log))
    assert "Faultline: UNKNOWN" in text and "Initiating rank" not in text and "Root cause:" not in text
    order = positions(text, "\nSummary: Unknown cause: no line states it; the first failure seen is",
                      "\nFirst failure seen: ", "run.log:2  (rank ?; a symptom", "\nFix: ")
    assert order == sorted(order)
    done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--format", "json", str(log)],
                          capture_output=True, text=True, check=False)
    answer = json.loads(done.stdout)
    assert answer["root_cause"] is None and answer["initiating_rank"] is None
    assert answer["first_failure"]["line"] == 2 and answer["first_failure"]["signature_id"] == "gloo-timeout"
    assert answer["fix"] is not None
    for form, heading in (("markdown", "## First failure seen"), ("html", "<h2>First failure seen</h2>")):
        shown = cli("--format", form, str(log))
        assert heading in shown and "run.log:2" in shown


def test_the_hover_of_the_first_failure_seen_says_it_is_a_symptom(tmp_path: Path) -> None:
    from faultline.engine import Engine
    from faultline.render.markdown import render_event_markdown

    text = ("[E1204 10:00:00.000000 11 unbound_buffer.cc:72] Timed out waiting 30000ms for recv operation to complete\n"
            "[E1204 10:00:01.000000 11 unbound_buffer.cc:72] Timed out waiting 30000ms for send operation to complete\n")
    diagnosis = Engine.load(jobs=1).diagnose_text(text, "run.log")
    first, later = sorted(diagnosis.collateral, key=lambda e: e.line)
    assert diagnosis.first_failure is first
    assert "**First failure seen** in these logs: a symptom" in render_event_markdown(first, diagnosis)
    assert "**Collateral**: a consequence" in render_event_markdown(later, diagnosis)
