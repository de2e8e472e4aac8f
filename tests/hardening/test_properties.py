"""Property-based attacks on every engine stage: no exception, ever, and outputs stay well-formed."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from faultline.engine import Engine
from faultline.lines.prefixes import parse_line, rank_from_path
from faultline.lines.timestamps import find_timestamp, parse_iso, parse_mmdd
from faultline.masking import mask_secrets
from faultline.render import render_html, render_json, render_markdown, render_text
from faultline.render.markdown import code_block, code_span, render_event_markdown

from .output_checks import check_html, check_json, check_markdown, check_text
from .secrets_corpus import NON_SECRETS, SecretCase, find_leaks, secret_cases

ENGINE = Engine.load()

HF_TOKEN = "hf_" + "Ab3dEfGh1jKlMn0pQrStUvWxYz" + "98765432"  # the shape of a real token (placeholders are kept)
# Fragments of real failure lines, glued with junk, so that the generated text reaches the matcher.
FRAGMENTS = [
    "[rank3]:", "[default1]:", " 7: ", "[1,2]<stderr>:", "node07: ", "(RayTrainWorker pid=1, ip=10.0.0.1) ",
    "[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] ", "torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 4.35 GiB", "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds",
    "exitcode  : -9 (pid: 123)", "  rank      : 3 (local_rank: 3)", "Traceback (most recent call last)",
    "ValueError: bad", "<script>alert(1)</script>", "`` ``` [x](javascript:alert(1))", HF_TOKEN,
    "\x1b[31m", "\r", "\x00", "\ufffd", "é", "🙂",
]
line_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=8).map("".join)
log_text = st.lists(line_text, max_size=30).map("\n".join)


@given(line_text)
def test_prefix_parser_total(line: str) -> None:
    context, message = parse_line(line)
    assert isinstance(message, str)
    assert context.rank is None or context.rank >= 0


@given(st.text(max_size=80))
def test_time_parsers_total(text: str) -> None:
    for parse in (parse_iso, parse_mmdd, find_timestamp):
        stamp = parse(text)
        assert stamp is None or stamp.seconds >= 0


@given(st.text(max_size=200))
def test_rank_from_path_total(path: str) -> None:
    rank = rank_from_path(path)
    assert rank is None or rank >= 0


@given(st.text(max_size=300))
def test_masking_total_and_idempotent(text: str) -> None:
    once = mask_secrets(text)
    assert mask_secrets(once) == once


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_text)
def test_whole_pipeline_and_every_renderer(text: str) -> None:
    diagnosis = ENGINE.diagnose_text(text, "fuzz.log")
    data = check_json(render_json(diagnosis))
    assert HF_TOKEN not in json.dumps(data)
    check_text(render_text(diagnosis, color=False))
    render_text(diagnosis, color=True)
    check_markdown(render_markdown(diagnosis))
    for event in diagnosis.events[:3]:
        check_markdown(render_event_markdown(event, diagnosis), hover_title=event.title)
    check_html(render_html(diagnosis), diagnosis)


@given(st.text(max_size=200))
def test_code_spans_cannot_be_closed_by_log_text(text: str) -> None:
    span = code_span(text)
    fence = span[: len(span) - len(span.lstrip("`"))]
    inner = span[len(fence):-len(fence)]
    assert fence not in inner.replace("\n", " ")
    block = code_block(text)
    opening = block.split("\n", 1)[0]
    assert all(not line.startswith(opening) for line in text.split("\n"))


# -- masking: corpus secrets and trigger words glued to anything ------------------------------------------------
_CASES = secret_cases()
_BITS = [c.line for c in _CASES] + NON_SECRETS + [
    "password", "passwd", "=", ": ", "token ", "tokens/s", "://", "@", "?", "&", "'", '"', "--",
    "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "\n", " ", "eyJ", "hf_", "sk-", "Bearer ",
    "AccountKey=", "wandb login ", "login(key='",
]
masking_text = st.lists(st.one_of(st.sampled_from(_BITS), st.text(max_size=20)), max_size=10).map("".join)


@settings(max_examples=300, deadline=None)
@given(masking_text)
# found on a fresh clone: the truncated head's tail masked after '&' made the query boundary '&name=' disappear
@example("client_secret=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&CUDA_VISIBLE_DEVICES=GPU-5f3a8c2e-1b4d-4e6f-9a0b-7c8d9e0f1a2b")
def test_masking_keeps_line_breaks_and_is_idempotent(text: str) -> None:
    masked = mask_secrets(text)
    assert masked.count("\n") == text.count("\n")
    assert mask_secrets(masked) == masked
    cut = mask_secrets(text, truncated=True)
    assert cut.count("\n") == text.count("\n") and mask_secrets(cut, truncated=True) == cut


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_CASES), line_text, line_text)
def test_a_secret_line_stays_masked_whatever_surrounds_it(case: SecretCase, before: str, after: str) -> None:
    text = before + "\n" + case.line + "\n" + after
    assert find_leaks(mask_secrets(text), [case]) == []
