"""Re-diagnosing with the readings of an earlier diagnosis gives exactly a fresh diagnosis."""

from __future__ import annotations

from pathlib import Path

from faultline.engine import Engine
from faultline.lines.cache import LineCache
from faultline.render.json_out import diagnosis_json

FIXTURE = Path(__file__).resolve().parent.parent / "lsp" / "fixtures" / "oom-cascade" / "console.log"


def test_a_cached_rediagnosis_equals_a_fresh_one(engine: Engine) -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    cache = LineCache()
    first = engine.diagnose_text(text, "console.log", line_cache=cache)
    assert diagnosis_json(first) == diagnosis_json(engine.diagnose_text(text, "console.log"))
    assert cache.misses > 0 and len(cache) > 0
    edits = [text.replace("[rank1]", "[rank3]", 1),  # one line changed
             "[default0]:[rank0]: RuntimeError: an extra line\n" + text,  # every line moves down
             text + "[rank0]: torch.OutOfMemoryError: CUDA out of memory.\n"]  # appended
    for edited in edits:
        hits = cache.hits
        cached = engine.diagnose_text(edited, "console.log", line_cache=cache)
        assert diagnosis_json(cached) == diagnosis_json(engine.diagnose_text(edited, "console.log"))
        assert cache.hits > hits  # unchanged lines were not read again


def test_the_cache_forgets_when_the_library_changes(engine: Engine) -> None:
    text = FIXTURE.read_text(encoding="utf-8")
    fresh = Engine(Engine.load().library)  # its own library, so that switching a pattern off stays here
    cache = LineCache()
    fresh.diagnose_text(text, "console.log", line_cache=cache)
    assert len(cache) > 0
    root = fresh.diagnose_text(text, "console.log", line_cache=cache).root_cause
    assert root is not None
    signature = fresh.library.get(root.signature_id)
    assert signature is not None
    for index in range(len(signature.pattern_sources)):
        fresh.library.disable_pattern(signature, index, "switched off by the test")
    after = fresh.diagnose_text(text, "console.log", line_cache=cache)
    assert diagnosis_json(after) == diagnosis_json(fresh.diagnose_text(text, "console.log"))
    assert after.root_cause is None or after.root_cause.signature_id != root.signature_id
    other = Engine.load()
    other.diagnose_text(text, "console.log", line_cache=cache)  # another matcher: readings made anew
    assert diagnosis_json(other.diagnose_text(text, "console.log", line_cache=cache)) == \
        diagnosis_json(other.diagnose_text(text, "console.log"))


def test_a_full_cache_starts_over() -> None:
    cache = LineCache(max_entries=2)
    engine = Engine.load()
    engine.diagnose_text(FIXTURE.read_text(encoding="utf-8"), "console.log", line_cache=cache)
    assert len(cache) <= 2
