"""Coverage-guided fuzz targets (atheris + libFuzzer) for the line reader, the matcher and the whole pipeline.

Each target takes raw bytes and raises on any broken promise: an exception escaping the engine, a JSON
report that does not parse, HTML or Markdown that log text could shape, a control character reaching the
terminal, a secret surviving masking twice, a built-in pattern running past its time limit, the Hyperscan
prefilter disagreeing with the pure-Python one.

``test_fuzz.py`` runs every target for a few seconds and replays the stored corpus. To fuzz longer and grow
the corpus (then keep it small with libFuzzer's merge, which keeps only inputs that add coverage)::

    .venv/bin/python tests/hardening/fuzz_targets.py pipeline /tmp/new tests/hardening/fuzz_corpus/pipeline \\
        -max_total_time=600 -max_len=4096
    .venv/bin/python tests/hardening/fuzz_targets.py pipeline -merge=1 tests/hardening/fuzz_corpus/pipeline /tmp/new

Nothing here imports the engine at module level: ``main`` has atheris instrument ``faultline`` first.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "fuzz_corpus"
MAX_LEN = 4096


@lru_cache(maxsize=1)
def _engine() -> Any:
    from faultline.engine import Engine

    return Engine.load()


@lru_cache(maxsize=1)
def _python_index() -> Any:
    from faultline.prefilter import KeywordIndex

    return KeywordIndex(_engine().matcher.index.keywords, use_hyperscan=False)


def line_reader(data: bytes) -> None:
    """normalize_line, then the prefix parser, the time parsers and masking, on one raw line."""
    from faultline.lines.normalize import normalize_line
    from faultline.lines.prefixes import inline_rank_hint, parse_line, rank_from_path
    from faultline.lines.timestamps import (
        find_timestamp,
        parse_dmesg_wallclock,
        parse_iso,
        parse_mmdd,
        parse_month_day,
        parse_syslog,
    )
    from faultline.masking import mask_secrets

    limit = 64 + (data[0] if data else 0) * 16  # small limits too, so that cutting is exercised
    text = normalize_line(data.split(b"\n", 1)[0], limit)  # the scanner hands over one line at a time
    assert isinstance(text, str) and "\n" not in text and len(text) <= limit
    assert not any((ord(c) < 32 and c != "\t") or 0x7F <= ord(c) <= 0x9F for c in text), "control character kept"
    context, message = parse_line(text)
    assert text.endswith(message), "the message is not the rest of the line"
    for value in (context.rank, context.local_rank, context.pid, inline_rank_hint(message), rank_from_path(text)):
        assert value is None or value >= 0
    for parse in (parse_iso, parse_mmdd, parse_month_day, parse_dmesg_wallclock, parse_syslog, find_timestamp):
        stamp = parse(text)
        assert stamp is None or 0 <= stamp.seconds < 367 * 86400
    if context.time is not None and not context.time.uptime:
        assert 0 <= context.time.seconds < 367 * 86400
    masked = mask_secrets(text)
    assert mask_secrets(masked) == masked, "masking is not idempotent"
    assert mask_secrets(text, truncated=True).count("\n") == 0


def matcher(data: bytes) -> None:
    """Every built-in pattern against one line: no pattern times out; both prefilters agree."""
    from faultline.lines.normalize import normalize_line
    from faultline.lines.prefixes import parse_line
    from faultline.matcher import fill_message

    engine = _engine()
    raw = data.replace(b"\n", b" ") + b"\n"
    hits = sorted(engine.matcher.index.scan(raw))
    assert hits == _python_index().scan(raw), "hyperscan and the pure-Python prefilter disagree"
    _context, message = parse_line(normalize_line(raw[:-1]))
    match = engine.matcher.match(message, range(len(engine.matcher.signatures)), "fuzz")
    assert engine.matcher.timeouts == [], f"a built-in pattern ran past its time limit: {engine.matcher.timeouts}"
    if match is not None:
        filled = fill_message(match.signature.message, match.fields)
        assert isinstance(filled, str)


def pipeline(data: bytes) -> None:
    """diagnose_text and every renderer on a whole log."""
    from faultline.render import render_html, render_json, render_markdown, render_text
    from faultline.render.markdown import render_event_markdown
    from hardening.output_checks import check_html, check_json, check_markdown, check_text

    engine = _engine()
    diagnosis = engine.diagnose_text(data, "fuzz.log")
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert all(1 <= e.line <= max(lines, 1) for e in diagnosis.events), "an event outside the input"
    assert [e.order for e in diagnosis.events] == sorted(e.order for e in diagnosis.events)
    check_json(render_json(diagnosis))
    check_html(render_html(diagnosis), diagnosis)
    check_markdown(render_markdown(diagnosis))
    for event in diagnosis.events[:3]:
        check_markdown(render_event_markdown(event, diagnosis), hover_title=event.title)
    check_text(render_text(diagnosis, color=False))
    render_text(diagnosis, color=True)
    assert engine.matcher.timeouts == [], f"a built-in pattern ran past its time limit: {engine.matcher.timeouts}"


def planted_bug(data: bytes) -> None:
    """Fails on inputs that start with b"FL!": proves the fuzzing run reports what it finds (test_fuzz.py)."""
    if data[:3] == b"FL!":
        raise RuntimeError("planted bug found")


TARGETS: dict[str, Callable[[bytes], None]] = {"line_reader": line_reader, "matcher": matcher, "pipeline": pipeline,
                                               "planted_bug": planted_bug}


def main() -> None:
    import atheris

    sys.path.insert(0, str(HERE.parent))  # tests/: for hardening.output_checks
    target = TARGETS[sys.argv[1]]
    if target is planted_bug:
        target = atheris.instrument_func(planted_bug)
    with atheris.instrument_imports(include=["faultline"]):
        import faultline.engine  # instrumented here, before the targets import the rest
        import faultline.render.html  # each view, since the render package imports them on first use
        import faultline.render.json_out
        import faultline.render.markdown
        import faultline.render.text  # noqa: F401
    program = sys.argv[0]
    if any(arg.startswith(("-merge=", "-set_cover_merge=", "-fork=", "-jobs=")) for arg in sys.argv[2:]):
        # libFuzzer re-runs its own argv[0] for these modes: give it an executable that runs this target.
        import stat
        import tempfile

        wrapper = Path(tempfile.mkdtemp()) / "fuzz-target"
        wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__).resolve()}" {sys.argv[1]} "$@"\n')
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
        program = str(wrapper)
    atheris.Setup([program, *sys.argv[2:]], target)
    _engine()  # load the library before fuzzing starts, not in the first input's time budget
    atheris.Fuzz()


if __name__ == "__main__":
    main()
