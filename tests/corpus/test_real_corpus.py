"""The real-log corpus (tests/corpus/real): well-formed labels, disjoint from the held-out evaluation, and an
accuracy on its ``test`` split that never drops below the last published figures (a ratchet).

How the corpus was gathered and labelled: tests/corpus/real/README.md. The published figures are the ones in
the README's accuracy section, kept as data in bench/accuracy_published.json (``bench/accuracy.py --publish``
writes both).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus" / "real"
HELDOUT_CHECK = ROOT.parent / "shared" / "heldout" / "heldout_check.py"
sys.path.insert(0, str(ROOT / "bench"))

import accuracy  # noqa: E402

FIELDS = ("id", "file", "split", "source_url", "framework", "category", "benign", "initiating_rank",
          "root_cause_line", "root_cause_text", "collateral_lines", "fix_keywords", "confirmed_by", "versions", "notes")
LABELS: list[dict[str, Any]] = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))


def test_every_case_is_labelled_as_the_readme_says() -> None:
    ids = [case["id"] for case in LABELS]
    assert len(ids) == len(set(ids)) >= 150
    assert sorted(p.name for p in CORPUS.glob("*.log")) == sorted(case["file"] for case in LABELS)
    for case in LABELS:
        assert tuple(case) == FIELDS, case["id"]
        assert re.fullmatch(r"\d{3,4}\.log", case["file"]) and case["file"] == f"{case['id']}.log"  # neutral names
        assert case["split"] in ("dev", "test") and case["source_url"].startswith("https://"), case["id"]
        lines = (CORPUS / case["file"]).read_text(encoding="utf-8").split("\n")
        line = case["root_cause_line"]
        if case["benign"]:
            assert line is None and case["initiating_rank"] is None and case["category"] == "benign", case["id"]
        if line is not None:
            assert lines[line - 1] == case["root_cause_text"], case["id"]
            assert line not in case["collateral_lines"], case["id"]
        else:
            assert case["root_cause_text"] is None, case["id"]
        assert all(1 <= n <= len(lines) for n in case["collateral_lines"]), case["id"]
        keywords = case["fix_keywords"]  # a benign trap needs no fix
        assert (0 if case["benign"] else 2) <= len(keywords) <= 5, case["id"]
        assert all(re.fullmatch(r"[a-z0-9_./-]+", k) for k in keywords), case["id"]


def test_a_third_of_the_cases_are_the_test_split() -> None:
    test = [case for case in LABELS if case["split"] == "test"]
    assert len(test) * 3 >= len(LABELS)


@pytest.mark.skipif(not HELDOUT_CHECK.is_file(), reason="the held-out check lives in ../shared, absent here")
def test_the_corpus_is_disjoint_from_the_heldout_evaluation() -> None:
    logs = sorted(str(p) for p in CORPUS.glob("*.log"))
    by_log = subprocess.run([sys.executable, str(HELDOUT_CHECK), "--log", *logs], capture_output=True, text=True)
    by_url = subprocess.run([sys.executable, str(HELDOUT_CHECK), *sorted({c["source_url"] for c in LABELS})],
                            capture_output=True, text=True)
    held = [line for line in (by_log.stdout + by_url.stdout).splitlines() if line.startswith("HELD-OUT")]
    assert held == [] and by_log.returncode == 0 and by_url.returncode == 0


# Higher is better for rates of right answers; lower for the rates and counts of wrong ones.
_LOWER_IS_BETTER = ("collateral_as_root", "failures_called_no_failure")
_RATCHETED = ("initiating_rank", "root_line_exact", "root_line_within_3", "fix_keyword",
              "benign_called_no_failure", *_LOWER_IS_BETTER)


def test_the_test_split_is_no_worse_than_the_published_figures() -> None:
    published = json.loads((ROOT / "bench" / "accuracy_published.json").read_text(encoding="utf-8"))["test"]["faultline"]
    now = accuracy.score(accuracy.load_cases(CORPUS, "test"), ["test"])["test"]["faultline"].figures()
    worse = []
    for key in _RATCHETED:
        was, is_now = published[key], now[key]
        if was is None or is_now is None:
            continue
        if (is_now > was) if key in _LOWER_IS_BETTER else (is_now < was):
            worse.append(f"{key}: {is_now} (published {was})")
    assert worse == [], "the test split got worse than the README says: " + "; ".join(worse)
