"""Score faultline on a corpus of real, labelled failure logs, against two baselines a user has today.

    .venv/bin/python bench/accuracy.py                  # the real-log corpus, both splits, one table
    .venv/bin/python bench/accuracy.py --split test     # one split
    .venv/bin/python bench/accuracy.py --json           # the same figures as JSON
    .venv/bin/python bench/accuracy.py --split dev --cases   # one row per case (what went wrong where)
    .venv/bin/python bench/accuracy.py --publish        # write the README table and bench/accuracy_published.json

The corpus (default ``tests/corpus/real``) is a folder of ``NNN.log`` files and a ``labels.json`` written by
people who read each log and its public thread (how: ``tests/corpus/real/README.md``). Each case is diagnosed
on its own, in this process, exactly as ``faultline diagnose NNN.log`` would.

What counts as right (every metric over the cases where it is defined):

* initiating rank: the diagnosis's ``initiating_rank`` equals the labelled one (cases with a labelled rank);
* root line exact / within 3: the root cause's line is the labelled line, or at most 3 lines from it
  (cases whose log holds the line that states the cause);
* collateral as root: cases whose root-cause line is one the label calls collateral (lower is better);
* fix keyword: the fix (summary, steps, environment variables) mentions at least one of the case's
  ``fix_keywords``: a word of the fix starts with it (failure cases);
* failures called no_failure: failure cases given ``no_failure`` (lower is better);
* benign called no_failure: benign traps (scary lines in a run that went on) given ``no_failure``.

The baselines: **first error line**, the first line that says error, exception, failed or timeout, with the
rank its prefix names (what ``grep -m1`` gives); **torchrun root cause**, the rank torchrun prints under
"Root Cause (first observed failure)" (no line and no fix). Both call a log without such a line a success.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = ROOT / "tests" / "corpus" / "real"
SPLITS = ("dev", "test")
PUBLISHED = ROOT / "bench" / "accuracy_published.json"  # the ratchet test's floor (tests/corpus/test_real_corpus.py)
README = ROOT / "README.md"
_TABLE_START, _TABLE_END = "<!-- accuracy table: bench/accuracy.py --publish -->", "<!-- end of accuracy table -->"


@dataclass(frozen=True)
class Case:
    """One labelled log (the fields of ``labels.json`` that scoring reads)."""

    id: str
    path: Path
    split: str
    benign: bool
    initiating_rank: int | None
    root_cause_line: int | None
    collateral_lines: tuple[int, ...]
    fix_keywords: tuple[str, ...]
    category: str

    @classmethod
    def of(cls, record: dict[str, Any], folder: Path) -> Case:
        return cls(id=record["id"], path=folder / record["file"], split=record["split"],
                   benign=bool(record.get("benign")), initiating_rank=record.get("initiating_rank"),
                   root_cause_line=record.get("root_cause_line"),
                   collateral_lines=tuple(record.get("collateral_lines") or ()),
                   fix_keywords=tuple(k.lower() for k in record.get("fix_keywords") or ()),
                   category=record["category"])


@dataclass
class Answer:
    """What one tool said about one log."""

    verdict: str  # failure | unknown | no_failure
    rank: int | None = None
    line: int | None = None
    fix_text: str = ""
    seconds: float = 0.0
    signature: str = ""


@dataclass
class Score:
    """One tool's figures on one split; each rate with its count and the cases it is over."""

    tool: str
    split: str
    cases: int = 0
    rank_right: int = 0
    rank_cases: int = 0
    line_exact: int = 0
    line_near: int = 0
    line_cases: int = 0
    collateral_as_root: int = 0
    fix_hit: int = 0
    fix_cases: int = 0
    failures_no_failure: int = 0
    failure_cases: int = 0
    benign_no_failure: int = 0
    benign_cases: int = 0
    seconds: list[float] = field(default_factory=list)

    def add(self, case: Case, answer: Answer) -> None:
        self.cases += 1
        self.seconds.append(answer.seconds)
        if case.benign:
            self.benign_cases += 1
            self.benign_no_failure += answer.verdict == "no_failure"
            return
        self.failure_cases += 1
        self.failures_no_failure += answer.verdict == "no_failure"
        if case.initiating_rank is not None:
            self.rank_cases += 1
            self.rank_right += answer.rank == case.initiating_rank
        if case.root_cause_line is not None:
            self.line_cases += 1
            self.line_exact += answer.line == case.root_cause_line
            self.line_near += answer.line is not None and abs(answer.line - case.root_cause_line) <= 3
        if answer.line is not None and answer.line in case.collateral_lines:
            self.collateral_as_root += 1
        if case.fix_keywords:
            self.fix_cases += 1
            self.fix_hit += fix_mentions(answer.fix_text, case.fix_keywords)

    def figures(self) -> dict[str, float | int | None]:
        def rate(hits: int, over: int) -> float | None:
            return round(hits / over, 3) if over else None

        return {
            "cases": self.cases,
            "initiating_rank": rate(self.rank_right, self.rank_cases),
            "root_line_exact": rate(self.line_exact, self.line_cases),
            "root_line_within_3": rate(self.line_near, self.line_cases),
            "collateral_as_root": self.collateral_as_root,
            "fix_keyword": rate(self.fix_hit, self.fix_cases),
            "failures_called_no_failure": rate(self.failures_no_failure, self.failure_cases),
            "benign_called_no_failure": rate(self.benign_no_failure, self.benign_cases),
            "median_seconds": round(statistics.median(self.seconds), 4) if self.seconds else None,
        }


def fix_mentions(fix_text: str, keywords: Iterable[str]) -> bool:
    """A keyword is mentioned when a word of the fix text starts with it, case aside: "config" is mentioned by
    "configuration", "nccl_ib_disable" by "NCCL_IB_DISABLE=1"; "mem" is not mentioned by "pythonmem"."""
    text = fix_text.lower()
    return any(re.search(rf"(?<![a-z0-9]){re.escape(k)}", text) for k in keywords)


def load_cases(corpus: Path, split: str = "all") -> list[Case]:
    labels = corpus / "labels.json"
    if not labels.is_file():
        raise SystemExit(f"accuracy: {labels}: no labels.json in the corpus folder")
    cases = [Case.of(record, corpus) for record in json.loads(labels.read_text(encoding="utf-8"))]
    return [c for c in cases if split == "all" or c.split == split]


# -- the tools -------------------------------------------------------------------------------------------
def faultline_tool() -> Callable[[Case], Answer]:
    from faultline.engine import Engine

    engine = Engine.load(jobs=1)

    def diagnose(case: Case) -> Answer:
        started = time.perf_counter()
        diagnosis = engine.diagnose_paths([case.path])
        elapsed = time.perf_counter() - started
        root, sig = diagnosis.root_cause, diagnosis.root_signature
        fix = ""
        if sig is not None:
            fix = "\n".join([sig.fix.summary, *sig.fix.steps,
                             *(f"{e.name}={e.value} {e.note}" for e in sig.fix.env)])
        return Answer(verdict=diagnosis.verdict.value, rank=diagnosis.initiating_rank,
                      line=root.line if root is not None else None, fix_text=fix, seconds=elapsed,
                      signature=root.signature_id if root is not None else "")

    return diagnose


_ERROR_WORD = re.compile(r"error|exception|failed|timeout", re.IGNORECASE)


def first_error_line(case: Case) -> Answer:
    """The first line that says error, exception, failed or timeout, and the rank its prefix names."""
    from faultline.lines.normalize import normalize_line
    from faultline.lines.prefixes import parse_line

    started = time.perf_counter()
    with open(case.path, "rb") as stream:
        for number, raw in enumerate(stream, 1):
            text = normalize_line(raw)
            if _ERROR_WORD.search(text):
                context, _ = parse_line(text)
                return Answer("failure", context.best_rank, number, seconds=time.perf_counter() - started)
    return Answer("no_failure", seconds=time.perf_counter() - started)


_ROOT_CAUSE_HEADER = re.compile(r"Root Cause \(first observed failure\):")
_SUMMARY_RANK = re.compile(r"^\W*rank\s*:\s*(\d+)")


def torchrun_root_cause(case: Case) -> Answer:
    """The rank under torchrun's "Root Cause (first observed failure)" header, if the log has one."""
    started = time.perf_counter()
    lines = case.path.read_text(encoding="utf-8", errors="replace").splitlines()
    for index, line in enumerate(lines):
        if _ROOT_CAUSE_HEADER.search(line):
            for later in lines[index + 1:index + 8]:
                m = _SUMMARY_RANK.search(later.split("]:", 1)[-1])
                if m:
                    return Answer("failure", int(m[1]), seconds=time.perf_counter() - started)
            return Answer("failure", seconds=time.perf_counter() - started)
    return Answer("no_failure", seconds=time.perf_counter() - started)


# -- the run ----------------------------------------------------------------------------------------------
TOOLS = ("faultline", "first error line", "torchrun root cause")


def score(cases: Sequence[Case], splits: Sequence[str],
          per_case: Callable[[str, Case, Answer], None] | None = None) -> dict[str, dict[str, Score]]:
    tools: dict[str, Callable[[Case], Answer]] = {"faultline": faultline_tool(), "first error line": first_error_line,
                                                  "torchrun root cause": torchrun_root_cause}
    scores = {split: {name: Score(name, split) for name in tools} for split in splits}
    for case in cases:
        for name, tool in tools.items():
            answer = tool(case)
            for split in splits:
                if split in ("all", case.split):
                    scores[split][name].add(case, answer)
            if per_case is not None:
                per_case(name, case, answer)
    return scores


_ROWS = [("initiating rank top-1", "initiating_rank", "rank"), ("root line exact", "root_line_exact", "line"),
         ("root line within ±3", "root_line_within_3", "line"), ("collateral named as root (count)",
                                                                    "collateral_as_root", None),
         ("fix keyword hit", "fix_keyword", "fix"), ("failures called no_failure", "failures_called_no_failure",
                                                      "failure"),
         ("benign traps called no_failure", "benign_called_no_failure", "benign"),
         ("median seconds per case", "median_seconds", None)]


def table(scores: dict[str, dict[str, Score]]) -> str:
    """One Markdown table: a row per metric, a column per split and tool."""
    columns = [(split, tool) for split in scores for tool in scores[split]]
    head = "| metric | " + " | ".join(f"{split}: {tool}" for split, tool in columns) + " |"
    out = [head, "|" + "---|" * (len(columns) + 1)]
    for label, key, _over in _ROWS:
        cells = []
        for split, tool in columns:
            value = scores[split][tool].figures()[key]
            if value is None:
                cells.append("-")
            elif key in ("collateral_as_root",):
                cells.append(str(value))
            elif key == "median_seconds":
                cells.append(f"{value:.3f}")
            else:
                cells.append(f"{value * 100:.0f}%")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    counts = []
    for split in scores:
        s = scores[split]["faultline"]
        counts.append(f"{split}: {s.cases} cases ({s.failure_cases} failures, {s.benign_cases} benign traps; "
                      f"{s.rank_cases} with a labelled rank, {s.line_cases} with a labelled root line)")
    return "\n".join(out) + "\n\n" + "; ".join(counts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="folder with NNN.log and labels.json")
    parser.add_argument("--split", choices=(*SPLITS, "all", "both"), default="both",
                        help="which cases to score (both: dev and test side by side; the default)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--cases", action="store_true", help="also print one line per case and tool")
    parser.add_argument("--publish", action="store_true",
                        help=f"write the figures of both splits to {PUBLISHED.relative_to(ROOT)} and the table into "
                             "README.md (between its accuracy-table markers)")
    args = parser.parse_args(argv)
    if args.publish:
        return publish(args.corpus)
    splits = list(SPLITS) if args.split == "both" else [args.split]
    cases = load_cases(args.corpus, "all" if args.split == "both" else args.split)
    if not cases:
        print(f"accuracy: no cases in {args.corpus} for split {args.split}", file=sys.stderr)
        return 2
    rows: list[dict[str, Any]] = []

    def remember(tool: str, case: Case, answer: Answer) -> None:
        rows.append({"tool": tool, "id": case.id, "split": case.split, "category": case.category,
                     "want": {"rank": case.initiating_rank, "line": case.root_cause_line, "benign": case.benign},
                     "got": {k: v for k, v in asdict(answer).items() if k != "fix_text"}})

    scores = score(cases, splits, remember if args.cases else None)
    if args.json:
        result: dict[str, Any] = {split: {tool: s.figures() for tool, s in by_tool.items()}
                                  for split, by_tool in scores.items()}
        if args.cases:
            result["cases"] = rows
        print(json.dumps(result, indent=2))
        return 0
    print(table(scores), end="")
    if args.cases:
        for row in rows:
            if row["tool"] == "faultline":
                print(json.dumps(row))
    return 0


def publish(corpus: Path) -> int:
    """Both splits' figures as the new floor of the ratchet test, and the README's table from the same run."""
    scores = score(load_cases(corpus), list(SPLITS))
    figures = {split: {tool: s.figures() for tool, s in by_tool.items()} for split, by_tool in scores.items()}
    readme = README.read_text(encoding="utf-8")
    if _TABLE_START not in readme or _TABLE_END not in readme:
        print(f"accuracy: README.md has no accuracy-table markers ({_TABLE_START} ... {_TABLE_END})", file=sys.stderr)
        return 2
    head, rest = readme.split(_TABLE_START, 1)
    _old, tail = rest.split(_TABLE_END, 1)
    README.write_text(f"{head}{_TABLE_START}\n{table(scores)}{_TABLE_END}{tail}", encoding="utf-8")
    PUBLISHED.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    print(table(scores), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
