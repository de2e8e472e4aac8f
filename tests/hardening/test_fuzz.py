"""Fuzzing in the test suite: a bounded coverage-guided run (atheris) of each target in fuzz_targets.py, a
replay of the stored corpus, and the output checks the targets rely on, each shown able to fail."""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.render import render_html, render_markdown
from faultline.render.markdown import render_event_markdown

from .fuzz_targets import CORPUS, MAX_LEN, TARGETS
from .output_checks import check_html, check_json, check_markdown, check_text

HERE = Path(__file__).resolve().parent
FUZZ_SECONDS = {"line_reader": 2, "matcher": 2, "pipeline": 4}
# One fixed seed, so that the suite's verdict does not hang on a draw: the same mutations are tried on every run
# (as many as the seconds allow). `make fuzz` searches for long with a new seed each time; FAULTLINE_FUZZ_SEED=0
# gives the suite's pass a new one too.
FUZZ_SEED = int(os.environ.get("FAULTLINE_FUZZ_SEED", "1"))
REAL_TARGETS = sorted(FUZZ_SECONDS)


def _corpus(target: str) -> list[Path]:
    return sorted((CORPUS / target).iterdir())


def test_the_corpus_stays_small() -> None:
    for target in REAL_TARGETS:
        files = _corpus(target)
        assert 5 <= len(files) <= 400, target
        assert all(f.stat().st_size <= MAX_LEN for f in files), target
    assert sum(f.stat().st_size for t in REAL_TARGETS for f in _corpus(t)) < 512 * 1024


@pytest.mark.parametrize("target", REAL_TARGETS)
def test_replay_the_corpus(target: str) -> None:
    """Every stored input still passes (a regression test per input the fuzzer ever kept)."""
    failures = []
    for path in _corpus(target):
        try:
            TARGETS[target](path.read_bytes())
        except Exception as exc:  # report them all, by file
            failures.append(f"{path.name}: {type(exc).__name__}: {exc}")
    assert failures == []


def _fuzz(target: str, seconds: int, work: Path, seeds: Path | None) -> subprocess.CompletedProcess[str]:
    found = work / "found"
    found.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, str(HERE / "fuzz_targets.py"), target, str(found)]
    if seeds is not None:
        command.append(str(seeds))
    command += [f"-max_total_time={seconds}", f"-max_len={MAX_LEN}", "-timeout=20", "-rss_limit_mb=2048",
                "-print_final_stats=1", f"-artifact_prefix={work}/", f"-seed={FUZZ_SEED}"]
    # libFuzzer reports on stderr, atheris prints the Python traceback on stdout: keep both, in order.
    return subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=seconds + 120, cwd=HERE)


def _crashes(work: Path) -> list[str]:
    return [f"{p.name}: {base64.b64encode(p.read_bytes()[:300]).decode()}" for p in sorted(work.glob("crash-*"))]


@pytest.mark.parametrize("target", REAL_TARGETS)
def test_a_bounded_fuzzing_pass(target: str, tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    result = _fuzz(target, FUZZ_SECONDS[target], tmp_path, CORPUS / target)
    runs = [line for line in result.stdout.splitlines() if line.startswith("stat::number_of_executed_units")]
    assert result.returncode == 0, "\n".join([*_crashes(tmp_path), result.stdout[-4000:]])
    assert runs and int(runs[0].split()[-1]) > 50, result.stdout[-2000:]


def test_the_fuzzing_pass_reports_what_it_finds(tmp_path: Path) -> None:
    """A target with a planted bug: the run fails and leaves the input that triggers it."""
    pytest.importorskip("atheris")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "one").write_bytes(b"FL?")
    result = _fuzz("planted_bug", 30, tmp_path / "run", seeds)
    assert result.returncode != 0 and "planted bug found" in result.stdout
    assert [p.read_bytes()[:3] for p in (tmp_path / "run").glob("crash-*")] == [b"FL!"]


# -- the checks can fail -------------------------------------------------------------------------------------
def test_check_json_rejects_broken_output() -> None:
    for bad in ('{"schema_version": 1', '{"schema_version": 2}', '{"schema_version": 1, "verdict": "failure"}'):
        with pytest.raises((AssertionError, ValueError)):
            check_json(bad)
    with pytest.raises(UnicodeEncodeError):
        check_json('{"file": "rank\udcff.log"}')


def test_check_html_and_markdown_and_text_reject_injected_markup() -> None:
    engine = Engine.load()
    diagnosis = engine.diagnose_text("[rank1]: ValueError: bad batch\n", "x.log")
    page = render_html(diagnosis)
    check_html(page, diagnosis)
    for injected in ("<script>alert(1)</script>", "<img src=x onerror=alert(1)>", "<a href='https://e'>x</a>",
                     "<p onclick='x()'>", "<style>body{}</style>"):
        with pytest.raises(AssertionError):
            check_html(page.replace("</body>", injected + "</body>"), diagnosis)
    report = render_markdown(diagnosis)
    check_markdown(report)
    for injected in ("<b>x</b>", "![i](https://e/i.png)", "[x](https://e)", "# Owned", "| a | b |\n|---|---|"):
        with pytest.raises(AssertionError):
            check_markdown(report + "\n\n" + injected + "\n")
    with pytest.raises(AssertionError):
        check_markdown(report + "\n\nsee https://evil.example/x\n", autolinks=True)
    with pytest.raises(AssertionError):
        check_text("Faultline: FAILURE\n\x1b]52;c;ZXZpbA==\x07\n")


def test_a_url_in_a_log_line_is_not_a_link_in_the_hover() -> None:
    engine = Engine.load()
    diagnosis = engine.diagnose_text("[rank3]: ValueError: see https://evil.example/x or www.evil.example\n", "x.log")
    assert diagnosis.root_cause is not None
    check_markdown(render_event_markdown(diagnosis.root_cause, diagnosis),
                   hover_title=diagnosis.root_cause.title, autolinks=True)
    check_markdown(render_markdown(diagnosis), autolinks=True)


@pytest.mark.parametrize("text", ["user@ev\ufffd\ufffd.com", "mail user@ev\u00e9.com now", "see \u00e9t\u00e9.org", "train.py",
                                  "see https@//evil.example/x", "//evil.example/x", "(//evil.example/x)"])
def test_escaped_domains_with_non_ascii_letters_are_no_links(text: str) -> None:
    """linkify takes non-ASCII letters (and U+FFFD from invalid UTF-8) as a domain's, and "//host" after anything but
    ":" or "/" as a protocol-relative link: the fuzzer's finds."""
    from faultline.render.markdown import escape

    check_markdown(escape(text) + "\n", autolinks=True)
