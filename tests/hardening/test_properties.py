"""Property-based attacks on every engine stage: no exception, ever, and outputs stay well-formed."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from faultline.engine import Engine
from faultline.masking import mask_secrets
from faultline.prefixes import parse_line, rank_from_path
from faultline.render import render_html, render_json, render_markdown, render_text
from faultline.render.markdown import code_block, code_span
from faultline.timestamps import find_timestamp, parse_iso, parse_mmdd

ENGINE = Engine.load()

# Fragments of real failure lines, glued with junk, so that the generated text reaches the matcher.
FRAGMENTS = [
    "[rank3]:", "[default1]:", " 7: ", "[1,2]<stderr>:", "node07: ", "(RayTrainWorker pid=1, ip=10.0.0.1) ",
    "[E1129 18:02:21.123456789 ProcessGroupNCCL.cpp:616] ", "torch.OutOfMemoryError: CUDA out of memory. "
    "Tried to allocate 4.35 GiB", "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, "
    "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds",
    "exitcode  : -9 (pid: 123)", "  rank      : 3 (local_rank: 3)", "Traceback (most recent call last)",
    "ValueError: bad", "<script>alert(1)</script>", "`` ``` [x](javascript:alert(1))", "hf_" + "a" * 34,
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


class _StrictHTML(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts = 0
        self.handlers = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts += 1
        self.handlers += sum(1 for name, _ in attrs if name.startswith("on"))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_text)
def test_whole_pipeline_and_every_renderer(text: str) -> None:
    diagnosis = ENGINE.diagnose_text(text, "fuzz.log")
    data = json.loads(render_json(diagnosis))
    assert data["schema_version"] == 1
    assert "hf_" + "a" * 34 not in json.dumps(data)
    render_text(diagnosis, color=True)
    render_markdown(diagnosis, ENGINE.library)
    page = _StrictHTML()
    page.feed(render_html(diagnosis, ENGINE.library))
    assert page.scripts == 0 and page.handlers == 0


@given(st.text(max_size=200))
def test_code_spans_cannot_be_closed_by_log_text(text: str) -> None:
    span = code_span(text)
    fence = span[: len(span) - len(span.lstrip("`"))]
    inner = span[len(fence):-len(fence)]
    assert fence not in inner.replace("\n", " ")
    block = code_block(text)
    opening = block.split("\n", 1)[0]
    assert all(not line.startswith(opening) for line in text.split("\n"))
