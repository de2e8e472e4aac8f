"""Accuracy over the whole fixture corpus: initiating rank and root-cause line, at least 95%.

Every case folder holds its logs and an ``expected.toml`` written by a person who read the logs.
A case counts as right when the verdict, the initiating rank and (for failures) the root-cause
signature, file and line all agree.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from faultline.engine import Engine

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent.parent
CORPORA = [ROOT / "tests" / "fixtures" / "real", ROOT / "tests" / "fixtures" / "upstream", ROOT / "examples"]
THRESHOLD = 0.95


def cases() -> list[Path]:
    return sorted(p.parent for corpus in CORPORA if corpus.is_dir() for p in corpus.glob("*/expected.toml"))


@dataclass
class Outcome:
    case: str
    ok: bool
    detail: str


def evaluate(engine: Engine, case: Path) -> Outcome:
    expected = tomllib.loads((case / "expected.toml").read_text())
    logs = [p for p in sorted(case.rglob("*")) if p.is_file() and p.name not in ("expected.toml", "README.md")]
    diagnosis = engine.diagnose_paths(logs)
    want_rank = expected.get("initiating_rank")
    problems = []
    if diagnosis.verdict.value != expected["verdict"]:
        problems.append(f"verdict {diagnosis.verdict.value} != {expected['verdict']}")
    if diagnosis.initiating_rank != want_rank:
        problems.append(f"initiating rank {diagnosis.initiating_rank} != {want_rank}")
    if expected["verdict"] == "failure":
        root = diagnosis.root_cause
        want_sig = expected["root_cause_signature"].rsplit("/", 1)[-1]
        want_where = (str(case / expected["root_cause_file"]), expected["root_cause_line"])
        if root is None:
            problems.append("no root cause")
        else:
            if root.signature_id != want_sig:
                problems.append(f"signature {root.signature_id} != {want_sig}")
            if (root.file, root.line) != want_where:
                problems.append(f"root line {Path(root.file).name}:{root.line} != "
                                f"{Path(want_where[0]).name}:{want_where[1]}")
        found = {e.signature_id for e in diagnosis.collateral}
        for sig in expected.get("collateral_signatures", []):
            if sig.rsplit("/", 1)[-1] not in found:
                problems.append(f"collateral {sig} missing")
    return Outcome(str(case.relative_to(ROOT)), not problems, "; ".join(problems))


def test_corpus_is_large_enough() -> None:
    assert len(cases()) >= 20


def test_initiating_rank_and_root_cause_accuracy(engine: Engine) -> None:
    outcomes = [evaluate(engine, case) for case in cases()]
    if not outcomes:
        pytest.fail("no fixture cases found")
    right = sum(o.ok for o in outcomes)
    accuracy = right / len(outcomes)
    report = "\n".join(f"{'ok ' if o.ok else 'BAD'} {o.case} {o.detail}" for o in outcomes)
    print(f"\naccuracy {right}/{len(outcomes)} = {accuracy:.1%}\n{report}")
    assert accuracy >= THRESHOLD, f"accuracy {accuracy:.1%} below {THRESHOLD:.0%}\n{report}"
