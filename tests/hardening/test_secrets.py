"""Secrets never reach any output: engine objects, every renderer, every CLI format; and masking leaves
what a diagnosis needs exactly as it was (the corpus is ``secrets_corpus.py``)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

import faultline.masking as masking
from faultline.cli import main as cli_main
from faultline.diagnosis import Diagnosis
from faultline.engine import Engine
from faultline.library import SignatureLibrary
from faultline.masking import MASK, mask_secrets, secret_kinds
from faultline.render import render_html, render_json, render_markdown, render_text
from faultline.render.json_out import diagnosis_json
from faultline.render.markdown import render_event_markdown

from .secrets_corpus import NON_SECRETS, SecretCase, build_secret_log, engine_strings, find_leaks, secret_cases

REPO = Path(__file__).resolve().parents[2]
CASES = secret_cases()


def _every_rendering(diagnosis: Diagnosis) -> dict[str, str]:
    return {
        "engine objects": engine_strings(diagnosis),
        "to_json": json.dumps(diagnosis_json(diagnosis), ensure_ascii=False),
        "render_json": render_json(diagnosis),
        "render_text": render_text(diagnosis, color=True),
        "render_markdown": render_markdown(diagnosis),
        "render_html": render_html(diagnosis),
        "hovers": "\n".join(render_event_markdown(e, diagnosis) for e in diagnosis.events),
    }


def test_the_corpus_covers_at_least_25_kinds() -> None:
    kinds = [case.kind for case in CASES]
    assert len(set(kinds)) == len(kinds) >= 25
    for case in CASES:
        assert case.secret in case.line and len(case.secret) >= 12, case.kind
        assert all(part in case.line for part in case.keep), case.kind


@pytest.mark.parametrize("case", CASES, ids=[c.kind for c in CASES])
def test_each_secret_is_masked_and_its_line_stays_readable(case: SecretCase) -> None:
    masked = mask_secrets(case.line)
    assert find_leaks(masked, [case]) == []
    assert MASK in masked
    assert [part for part in case.keep if part not in masked] == []
    assert mask_secrets(masked) == masked


@pytest.mark.parametrize("line", NON_SECRETS)
def test_what_a_diagnosis_needs_is_not_masked(line: str) -> None:
    assert mask_secrets(line) == line


def test_signature_examples_and_fixture_logs_are_not_masked() -> None:
    """Masking runs before matching: a false mask would break a match. Sigma-style "goodlog" check over
    every signature example and every line of the real and upstream fixture logs and bundled examples."""
    lines = [ex for sig in SignatureLibrary.load() for ex in sig.examples_match + sig.examples_no_match]
    for folder in (REPO / "tests" / "fixtures", REPO / "examples"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix not in (".py", ".toml", ".md", ".json"):
                lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    assert len(lines) > 5000
    changed = [(line, mask_secrets(line)) for line in lines if mask_secrets(line) != line]
    assert changed == []


def test_a_multi_line_key_block_is_masked_and_keeps_its_line_breaks() -> None:
    body = next(c.secret for c in CASES if c.kind == "pem-private-key")
    rows = [body[i:i + 64] for i in range(0, len(body), 64)]
    text = "\n".join(["load key:", "-----BEGIN RSA PRIVATE KEY-----", *rows, "-----END RSA PRIVATE KEY-----", "done"])
    masked = mask_secrets(text)
    assert masked.count("\n") == text.count("\n")
    assert not any(row in masked for row in rows)
    assert masked.splitlines()[0] == "load key:" and masked.splitlines()[-1] == "done"
    # The same body lines printed without their header (e.g. the tail of a `cat key.pem`) are masked too.
    assert all(mask_secrets(row) == MASK for row in rows[:-1])


def test_every_kind_documented_in_security_md() -> None:
    text = (REPO / "SECURITY.md").read_text(encoding="utf-8")
    assert [kind for kind in secret_kinds() if f"`{kind}`" not in text] == []


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


def test_no_secret_reaches_the_engine_objects_or_any_rendering(engine: Engine) -> None:
    log = build_secret_log()
    diagnosis = engine.diagnose_text(log.text, "run.log")
    # The root cause is the secret-bearing exception of rank 2, on its own line number.
    assert diagnosis.root_cause is not None and diagnosis.initiating_rank == log.root_cause_rank
    assert diagnosis.root_cause.line == log.line_of[log.root_cause_kind]
    by_line = {event.line: event for event in diagnosis.events}
    for case in log.cases:  # every secret line is an event, on its own line, still readable
        event = by_line[log.line_of[case.kind]]
        assert [part for part in case.keep if part not in event.text] == [], case.kind
        assert MASK in event.text, case.kind
    for name, output in _every_rendering(diagnosis).items():
        assert find_leaks(output, log.cases) == [], name


def test_without_masking_every_secret_would_surface(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Proves the test above can fail: with the rules switched off, every secret shows up."""
    monkeypatch.setattr(masking, "_RULES", ())
    log = build_secret_log()
    diagnosis = engine.diagnose_text(log.text, "run.log")
    assert sorted(find_leaks(render_json(diagnosis), log.cases)) == sorted(c.kind for c in log.cases)
    root_kind = log.root_cause_kind
    for name in ("render_text", "render_markdown", "render_html"):
        assert root_kind in find_leaks(_every_rendering(diagnosis)[name], log.cases), name


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "html"])
def test_no_secret_reaches_any_cli_format(fmt: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = build_secret_log()
    (tmp_path / "run.log").write_text(log.text, encoding="utf-8")
    code = cli_main(["diagnose", "--format", fmt, "--no-workspace-signatures", str(tmp_path / "run.log")])
    out, err = capsys.readouterr()
    assert code == 1 and len(out) > 1000
    assert find_leaks(out + err, log.cases) == []
    if fmt == "json":
        data = json.loads(out)
        assert data["root_cause"]["line"] == log.line_of[log.root_cause_kind]
    # The same through --output.
    target = tmp_path / f"report.{fmt}"
    assert cli_main(["diagnose", "--format", fmt, "-o", str(target), "--no-workspace-signatures",
                     str(tmp_path / "run.log")]) == 1
    assert find_leaks(target.read_text(encoding="utf-8"), log.cases) == []


def test_a_straggler_whose_last_line_is_an_env_dump(engine: Engine, tmp_path: Path) -> None:
    """The silent rank's last line becomes the root-cause text: it is masked like any other."""
    wandb = next(c for c in CASES if c.kind == "wandb-api-key")
    for rank in (0, 1, 3):
        (tmp_path / f"rank{rank}.log").write_text(
            f"[rank{rank}]: step 10 loss 2.1\n[rank{rank}]:[E1129 18:12:20.{rank}00000000 ProcessGroupNCCL.cpp:616] "
            f"[Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=404464, OpType=ALLREDUCE, "
            f"NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600025 milliseconds before timing out.\n")
    (tmp_path / "rank2.log").write_text(f"[rank2]: step 10 loss 2.1\n[rank2]: + env\n[rank2]: WANDB_API_KEY={wandb.secret}\n")
    diagnosis = engine.diagnose_paths([tmp_path])
    assert diagnosis.initiating_rank == 2 and diagnosis.root_cause is not None
    assert diagnosis.root_cause.line == 3 and diagnosis.root_cause.text == f"[rank2]: WANDB_API_KEY={MASK}"
    for name, output in _every_rendering(diagnosis).items():
        assert find_leaks(output, [wandb]) == [], name


@pytest.mark.parametrize("limit", ["kept text", "max line bytes"])
def test_a_secret_cut_by_a_length_limit_leaks_no_piece(limit: str, engine: Engine) -> None:
    """A secret that straddles the point where a long line is cut: its head alone is too short for its rule."""
    hf = next(c for c in CASES if c.kind == "huggingface")
    if limit == "kept text":
        used, cut = engine, 4000  # scanner.KEPT_TEXT_CHARS
    else:
        used, cut = Engine(engine.library, max_line_bytes=1024), 1024
    head = "[rank1]: ValueError: bad request "
    line = head + "x" * (cut - len(head) - 15) + " " + hf.secret + " (end)"
    diagnosis = used.diagnose_text(line + "\n", "cut.log")
    assert diagnosis.events and diagnosis.events[0].text.startswith(head)
    for name, output in _every_rendering(diagnosis).items():
        assert find_leaks(output, [hf]) == [], name


def test_masking_stays_cheap() -> None:
    """Masking runs on every line the scanner matches: an ordinary line costs microseconds (a rule runs only
    when its trigger words occur, the generic key=value rule only before a ':' or '='). CPU time, not wall
    time: the suite shares two cores with other work."""
    ordinary = [
        "[default3]:[rank3]: step 631 | loss 2.4031 | lr 2.9e-4 | grad_norm 0.98 | 1.92 s/step | 34,012 tokens/s",
        "[rank0]:[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 ms",
        "[rank1]: KeyError: 'model.layers.0.self_attn.q_proj.weight'",
    ]
    for line, budget, repeats in [*((line, 60e-6, 2000) for line in ordinary), (CASES[0].line, 500e-6, 300)]:
        start = time.process_time()
        for _ in range(repeats):
            mask_secrets(line)
        spent = (time.process_time() - start) / repeats
        assert spent < budget, f"{spent * 1e6:.1f} µs for {line[:40]!r}"
