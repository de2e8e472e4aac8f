"""Check signature files: the schema, the patterns (compile, speed) and the file's own examples, each read
as the scanner reads a log line (lines/reading.py).

Used by ``faultline signatures check`` and by the language server's live diagnostics on signature files.
"""

from __future__ import annotations

import time
from pathlib import Path

from .library import LoadProblem, Signature, SignatureLibrary, parse_signature, signature_files
from .lines.reading import read_line
from .matcher import LineMatcher

SLOW_PATTERN_S = 0.05
_STRESS_LENGTH = 20_000


def check_signature(sig: Signature) -> list[LoadProblem]:
    """Run a parsed signature's examples and a stress line through the real matcher."""
    problems: list[LoadProblem] = []
    if sig.derived:
        return problems
    matcher = LineMatcher(SignatureLibrary([sig]), timeout_s=1.0, use_hyperscan=False)
    for example in sig.examples_match:
        ok, why = _matches(matcher, example)
        if not ok:
            problems.append(LoadProblem(str(sig.path), sig.line_of("examples"), "examples.match",
                                        f"'{example[:100]}' {why}, expected a match"))
    for example in sig.examples_no_match:
        ok, _ = _matches(matcher, example)
        if ok:
            problems.append(LoadProblem(str(sig.path), sig.line_of("examples"), "examples.no_match",
                                        f"'{example[:100]}' matches, expected no match"))
    problems.extend(_speed_problems(sig))
    return problems


def _matches(matcher: LineMatcher, line: str) -> tuple[bool, str]:
    """Whether an example line becomes an event, read as the scanner reads a line of a log."""
    raw = line.encode("utf-8", errors="surrogatepass").split(b"\n", 1)[0]
    keyword_ids = [kw for _end, kw in matcher.index.scan(raw + b"\n")]
    if not matcher.signatures_for(keyword_ids):
        return False, "contains none of the keywords"
    if read_line(raw, matcher, keyword_ids).signature_index is None:
        return False, "matches no pattern (or an exclusion)"
    return True, ""


def _speed_problems(sig: Signature) -> list[LoadProblem]:
    """Time each pattern on long near-miss lines built from its own examples."""
    problems: list[LoadProblem] = []
    seeds = [e for e in sig.examples_match[:2]] or ["x"]
    stress = []
    for seed in seeds:
        stress.append((seed * (_STRESS_LENGTH // max(1, len(seed)) + 1))[:_STRESS_LENGTH])
        stress.append(seed[: len(seed) // 2] + " " * _STRESS_LENGTH)
        stress.append(seed[:-1] + "a" * _STRESS_LENGTH)
    for index, pattern in enumerate(sig.patterns):
        worst = 0.0
        for line in stress:
            start = time.perf_counter()
            try:
                pattern.search(line, timeout=1.0)
            except TimeoutError:
                worst = 1.0
                break
            worst = max(worst, time.perf_counter() - start)
        if worst > SLOW_PATTERN_S:
            problems.append(LoadProblem(str(sig.path), sig.line_of("patterns"), "patterns",
                                        f"'{sig.pattern_sources[index][:80]}' takes {worst * 1000:.0f} ms on a "
                                        f"{_STRESS_LENGTH}-character line, expected under "
                                        f"{SLOW_PATTERN_S * 1000:.0f} ms (avoid nested or unbounded repeats)"))
    return problems


def check_signature_file(path: Path, builtin: bool = False) -> list[LoadProblem]:
    sig, problems = parse_signature(path, builtin=builtin)
    if sig is None:
        return problems
    return problems + check_signature(sig)


def check_paths(paths: list[Path], builtin: bool = True) -> tuple[int, list[LoadProblem]]:
    """Check every signature file under the paths; returns (files checked, problems)."""
    problems: list[LoadProblem] = []
    count = 0
    seen: dict[str, Path] = {}
    for root in paths:
        if not root.exists():
            problems.append(LoadProblem(str(root), 1, "path", "does not exist"))
            continue
        for path in signature_files(root):
            count += 1
            problems.extend(check_signature_file(path, builtin=builtin))
            if path.stem in seen and seen[path.stem] != path:
                problems.append(LoadProblem(str(path), 1, "id", f"'{path.stem}' is also defined in "
                                                               f"{seen[path.stem]}"))
            seen[path.stem] = path
    return count, problems
