"""``faultline --help``, ``faultline diagnose --help`` and ``-V`` as a user reads them: what the command does,
examples, the formats and the exit codes, each checked against what the code does."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import faultline
from faultline.cli import EXIT_CODES, EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from faultline.render import FORMATS

OOM = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faultline", *args], input=stdin, capture_output=True, text=True,
                          timeout=120)


def _exit_code_lines(text: str) -> dict[int, str]:
    section = text.split("exit codes:\n", 1)[1]
    return {int(m[1]): m[2] for m in re.finditer(r"^  (\d+)\s+(.+)$", section, re.MULTILINE)}


def test_main_help_describes_examples_formats_and_exit_codes() -> None:
    result = run("--help")
    assert result.returncode == 0 and result.stderr == ""
    text = result.stdout
    assert text.startswith("usage: faultline ")
    assert "which rank failed first" in text and "nothing leaves the machine" in text
    for command in ("diagnose", "signatures", "serve"):
        assert re.search(rf"^\s+{command}\s+\S", text, re.MULTILINE), command
    assert "examples:\n  faultline diagnose " in text and "| faultline diagnose -" in text
    for name, fmt in FORMATS.items():
        assert re.search(rf"^  {name}\s+{re.escape(fmt.description)}$", text, re.MULTILINE), name
    assert set(_exit_code_lines(text)) == {0, 1, 2, 130}
    assert "-V, --version" in text


def test_diagnose_help_describes_examples_formats_and_exit_codes() -> None:
    result = run("diagnose", "--help")
    assert result.returncode == 0 and result.stderr == ""
    text = result.stdout
    assert text.startswith("usage: faultline diagnose ")
    assert "folders of per-rank logs" in text and "stdin (-)" in text
    assert "examples:\n  faultline diagnose " in text
    assert "must not be an input" in " ".join(text.split())  # --output's promise
    for name in FORMATS:
        assert re.search(rf"^  {name}\s+", text, re.MULTILINE), name
    codes = _exit_code_lines(text)
    assert codes == {code: " ".join(what.split()) for code, what in EXIT_CODES}


def test_the_exit_codes_listed_are_the_ones_returned(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("step 1\n" + OOM)
    listed = dict(EXIT_CODES)
    assert "no failure" in listed[EXIT_OK] and run("diagnose", "-", stdin="step 1 loss 2.0\n").returncode == EXIT_OK
    assert "failure was diagnosed" in listed[EXIT_FAILURE] and run("diagnose", str(log)).returncode == EXIT_FAILURE
    assert "usage or input error" in listed[EXIT_USAGE]
    assert run("diagnose", str(tmp_path / "missing.log")).returncode == EXIT_USAGE
    assert run("diagnose", str(log), "-o", str(log)).returncode == EXIT_USAGE
    assert "interrupted" in listed[130]


def test_version_short_and_long() -> None:
    expected = f"faultline {faultline.__version__}\n"
    for flag in ("-V", "--version"):
        result = run(flag)
        assert result.returncode == 0 and result.stdout == expected and result.stderr == "", flag
    assert metadata.version("faultline") == faultline.__version__  # the installed package says the same


def test_signatures_and_serve_have_help_of_their_own() -> None:
    signatures = run("signatures", "--help")
    assert signatures.returncode == 0 and "exit codes:" in signatures.stdout and "check" in signatures.stdout
    serve = run("serve", "--help")
    assert serve.returncode == 0 and "language server" in serve.stdout
