"""Memory flat in the number of failure lines: events aggregated as they stream (scan/aggregate.py), a prefilter
that keeps nothing per keyword occurrence (prefilter.py), and a JSON report that lists a bounded number of
events and collateral lines with their totals (render/json_out.py)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.model import Event
from faultline.prefilter import KeywordIndex
from faultline.render.json_out import MAX_LISTED_EVENTS, diagnosis_json
from faultline.scan import aggregate, chunks, dense, parallel

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import generate  # noqa: E402

SCENARIO = generate.Scenario(ranks=32, gpus_per_node=8, culprit_rank=13)
STEPS = 3  # healthy steps per attempt: the log is nearly all failure cascades
FEW, MANY = 20, 200  # attempts: ~4,600 and ~46,000 events
THRESHOLD = 1000  # aggregate past this many events (the default, 10,000, would keep all of the smaller log)


def dense_log(path: Path, attempts: int) -> generate.Expected:
    """A retry loop failing ``attempts`` times the same way (bench/generate.py), 32 ranks."""
    one = generate.write_failure_dense(path, 1, SCENARIO, steps=STEPS)  # one attempt: its size
    return generate.write_failure_dense(path, one.bytes * (attempts - 1) + 1, SCENARIO, steps=STEPS)


def answer(diagnosis: object) -> tuple[object, ...]:
    """Everything the report says but its lists of events and its counts of them (a rank's event count is
    approximate once repeats are counted rather than kept: a repeat counts for the rank of the kept one)."""
    d = diagnosis_json(diagnosis, all_events=True)  # type: ignore[arg-type]
    root = d["root_cause"] or {}
    return (d["verdict"], d["initiating_rank"], root.get("file"), root.get("line"), root.get("signature_id"),
            d["confidence"], d["reasons"], d["competing_causes"], d["notes"], d["suspicious_lines"],
            d["considered_lines"], {rank: (s["state"], s["exitcode"], s["first_event"]) for rank, s in d["ranks"].items()})


def reading(event: Event) -> tuple[object, ...]:
    """What the reasoning made of an event."""
    cause = event.caused_by
    return (event.role, event.rank, event.rank_from_field, event.note, cause and (cause.file, cause.line))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[Path, generate.Expected]]:
    folder = tmp_path_factory.mktemp("dense")
    made = {}
    for attempts in (FEW, MANY):
        path = folder / f"dense-{attempts}.log"
        made[attempts] = (path, dense_log(path, attempts))
    return made


def test_kept_events_stay_flat_while_failure_lines_grow_tenfold(
        engine: Engine, logs: dict[int, tuple[Path, generate.Expected]], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", THRESHOLD)
    few, many = (engine.diagnose_paths([logs[n][0]]) for n in (FEW, MANY))
    total_few, total_many = (sum(1 + e.repeats for e in d.events) for d in (few, many))
    assert total_few > THRESHOLD and total_many > 9 * total_few  # ten times the failure lines...
    assert len(many.events) < 1.25 * len(few.events)  # ...about the same events kept
    assert len(many.events) < total_many / 5
    for diagnosis, n in ((few, FEW), (many, MANY)):  # the cascade of the first attempt is the answer
        expected = logs[n][1]
        assert diagnosis.root_cause is not None
        assert (diagnosis.root_cause.line, diagnosis.initiating_rank) == (expected.root_cause_line, 13)


def test_aggregated_reasoning_is_the_reasoning_of_every_event(
        engine: Engine, logs: dict[int, tuple[Path, generate.Expected]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The same answer (verdict, root, confidence, reasons, rank states) as when every event is kept, and every
    kept event read as it was then: its role, rank, note and cause."""
    path = logs[MANY][0]
    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", THRESHOLD)
    aggregated = engine.diagnose_paths([path])
    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", 10**9)
    complete = engine.diagnose_paths([path])
    assert len(complete.events) > 5 * len(aggregated.events)
    assert answer(aggregated) == answer(complete)
    assert sum(1 + e.repeats for e in aggregated.events) == len(complete.events)
    full = {(e.line, e.signature_id): e for e in complete.events}
    assert [reading(e) for e in aggregated.events] == [reading(full[(e.line, e.signature_id)]) for e in aggregated.events]


def test_the_same_events_are_kept_by_any_number_of_processes(
        engine: Engine, logs: dict[int, tuple[Path, generate.Expected]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Segments read apart and dense buffers shared with helpers keep exactly what one process keeps."""
    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", 0)  # aggregate from the first event
    monkeypatch.setattr(parallel, "MIN_PARALLEL_BYTES", 1)
    monkeypatch.setattr(parallel, "MIN_SEGMENT_BYTES", 256 * 1024)
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 128 * 1024)
    monkeypatch.setattr(dense, "DENSE_LINES", 100)
    path = logs[FEW][0]

    def kept(jobs: int, helpers: int) -> list[tuple[int, str, int]]:
        diagnosis = Engine(engine.library, jobs=jobs, helpers=helpers).diagnose_paths([path])
        return [(e.line, e.signature_id, e.repeats) for e in diagnosis.events]

    alone = kept(1, 0)
    assert sum(1 + repeats for _line, _sig, repeats in alone) > 2 * len(alone)
    for jobs, helpers in ((1, 1), (2, 0), (3, 0), (3, 2)):
        assert kept(jobs, helpers) == alone, (jobs, helpers)


def test_every_event_is_kept_below_the_threshold(engine: Engine) -> None:
    """An ordinary log (here a 512-rank cascade, ~5,000 events) is read exactly as before: nothing dropped."""
    text = "".join(f"[rank{r % 512}]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer\n"
                   for r in range(5000))
    diagnosis = engine.diagnose_text(text, "run.log")
    assert len(diagnosis.events) == 5000 and not any(e.repeats for e in diagnosis.events)


_PEAK_RSS = """
import resource, sys
from faultline import engine
from faultline.scan import aggregate
aggregate.KEEP_ALL_EVENTS = int(sys.argv[2])
from faultline.scan import chunks
# What is bounded whatever the input and not measured here: the line cache (20,000 lines) and the read buffer
# (8 MiB, less for a smaller file).
engine.DIAGNOSIS_CACHE_ENTRIES = 2000
chunks.CHUNK_BYTES = 1024 * 1024
loaded = engine.Engine.load(jobs=1)
def peak_kib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
try:  # the peak from here on, not loading the library's (Linux: reset the high-water mark)
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
except OSError:
    pass
diagnosis = loaded.diagnose_paths([sys.argv[1]])
print(peak_kib() // 1024, sum(1 + e.repeats for e in diagnosis.events), len(diagnosis.events))
"""


def test_peak_memory_is_flat_in_failure_lines(logs: dict[int, tuple[Path, generate.Expected]]) -> None:
    """A fresh process per input: ten times the failure lines, the same peak resident memory (within the noise;
    keeping every event would add ~60 MiB here)."""
    measured = {}
    for n in (FEW, MANY):
        out = subprocess.run([sys.executable, "-c", _PEAK_RSS, str(logs[n][0]), str(THRESHOLD)], capture_output=True,
                             text=True, check=True, timeout=600).stdout.split()
        measured[n] = [int(x) for x in out]
    (rss_few, total_few, _), (rss_many, total_many, _) = measured[FEW], measured[MANY]
    assert total_many > 9 * total_few
    assert rss_many - rss_few < 12, measured  # MiB


def test_a_line_of_a_hundred_thousand_keywords_is_one_entry(engine: Engine) -> None:
    line = ("Error: " * 100_000).encode() + b"\n"
    index = engine.matcher.index
    tracemalloc.start()
    try:
        lines, ends = index.line_hits(line)
        index_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        diagnosis = engine.diagnose_text(line, "x.log")
        diagnose_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert list(lines) == [0] and ends == {0: len(line) - 1}
    assert index_peak < 64 * 1024  # one hit tuple each was ~21 MB
    assert diagnose_peak < 8 * 1024 * 1024  # was ~27 MB, for a 700 KB line
    assert diagnosis.verdict.value == "unknown"


def test_contains_any_stops_at_the_first_keyword_in_both_engines() -> None:
    keywords = [b"token", b"://", b"hf_"]
    for index in (KeywordIndex(keywords), KeywordIndex(keywords, use_hyperscan=False)):
        assert index.contains_any(b"export HF=hf_x and token=1 at https://x")
        assert index.contains_any(bytearray(b"...://"))
        assert not index.contains_any(b"step 10 loss 2.31 tok/s 1200")
        assert not index.contains_any(b"")


@pytest.mark.parametrize("seed", range(4))
def test_hyperscan_and_the_python_prefilter_find_the_same_lines(engine: Engine, seed: int) -> None:
    """Both engines: each line with a keyword once, with the set of its keywords, its start and its end; the
    same as the lines of every occurrence ``scan`` reports."""
    keywords = [b"Error", b"rror: ", b"NCCL WARN", b"OutOfMemory", b"Memory", b"x"]
    fast, slow = KeywordIndex(keywords), KeywordIndex(keywords, use_hyperscan=False)
    rng = random.Random(seed)
    pieces = [b"Error: ", b"NCCL WARN ", b"OutOfMemoryError ", b"x", b"step 1 ", b"\n", b"\n\n", b"loss=2 "]
    buffer = b"".join(rng.choice(pieces) for _ in range(4000))
    end = rng.randrange(len(buffer) // 2, len(buffer))
    by_occurrence: dict[int, set[int]] = {}
    for hit_end, kw_id in slow.scan(buffer, end):
        by_occurrence.setdefault(buffer.rfind(b"\n", 0, hit_end) + 1, set()).add(kw_id)
    for index in (fast, slow):
        lines, ends = index.line_hits(buffer, end)
        assert list(lines) == sorted(lines)
        assert {start: set(ids) for start, ids in lines.items()} == by_occurrence
        for start, stop in ends.items():
            assert buffer.find(b"\n", start) in (stop, -1) and (stop == len(buffer) or buffer[stop] == 0x0A)
    if fast.engine != "hyperscan":
        pytest.skip("hyperscan is not installed: only the pure-Python prefilter was checked")


def _cascade_lines(count: int) -> str:
    return "".join(f"[rank{r}]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                   f"[10.0.{r // 250}.{r % 250}]:{r}\n" for r in range(count))


def test_the_json_report_lists_a_thousand_events_and_counts_them_all(engine: Engine) -> None:
    oom = "[rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    diagnosis = engine.diagnose_text(oom + _cascade_lines(2500), "run.log")
    report = diagnosis_json(diagnosis)
    assert len(diagnosis.events) == 2501 and len(diagnosis.collateral) == 2500
    assert len(report["events"]) == len(report["collateral"]) == MAX_LISTED_EVENTS
    assert (report["events_total"], report["collateral_total"], report["truncated"]) == (2501, 2500, True)
    assert report["events"][0]["line"] == 1 and report["events"][0]["repeats"] == 0
    every = diagnosis_json(diagnosis, all_events=True)
    assert len(every["events"]) == 2501 and len(every["collateral"]) == 2500 and every["truncated"] is False
    small = diagnosis_json(engine.diagnose_text(oom + _cascade_lines(20), "run.log"))
    assert (len(small["events"]), small["events_total"], small["collateral_total"], small["truncated"]) == (21, 21, 20,
                                                                                                           False)


def test_the_json_cap_and_the_all_events_flag_through_the_cli(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text("[rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
                   + _cascade_lines(1500))

    def report(*flags: str) -> dict[str, object]:
        done = subprocess.run([sys.executable, "-m", "faultline", "diagnose", str(log), "--format", "json", "-q",
                               *flags], capture_output=True, text=True, timeout=120)
        assert done.returncode == 1, done.stderr
        result: dict[str, object] = json.loads(done.stdout)
        return result

    capped, every = report(), report("--all-events")
    assert len(capped["events"]) == MAX_LISTED_EVENTS and capped["events_total"] == 1501  # type: ignore[arg-type]
    assert capped["truncated"] is True and capped["collateral_total"] == 1500
    assert len(every["events"]) == 1501 and len(every["collateral"]) == 1500  # type: ignore[arg-type]
    assert every["truncated"] is False
    assert {k: v for k, v in capped.items() if k not in ("events", "collateral", "truncated")} == \
           {k: v for k, v in every.items() if k not in ("events", "collateral", "truncated")}


def test_repeats_are_listed_and_counted(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the threshold, one rank's identical complaint is kept as its first few and last occurrences; the
    first kept says how many more there were, and the report's counts include them."""
    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", 10)
    oom = "[rank7]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
    text = oom + "".join(f"[rank3]: RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                         f"after {i} ms\n" for i in range(50))
    diagnosis = engine.diagnose_text(text, "run.log")
    lines = [(e.line, e.repeats) for e in diagnosis.events if e.rank == 3]
    kept = aggregate.KEEP_FIRST + aggregate.KEEP_LAST
    assert lines == [(2, 50 - kept), (3, 0), (4, 0), (50, 0), (51, 0)]
    report = diagnosis_json(diagnosis)
    assert report["events_total"] == 51 and report["collateral_total"] == 50
    assert report["ranks"]["3"]["events"] == 50
    assert [e["repeats"] for e in report["collateral"]] == [50 - kept, 0, 0, 0, 0]


def test_an_aggregator_survives_the_trip_back_from_a_worker(
        engine: Engine, logs: dict[int, tuple[Path, generate.Expected]], monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker pickles its aggregator to the parent (parallel.py); one that cannot be pickled makes the parent
    scan that segment again itself: the same answer, silently twice the time."""
    import pickle

    from faultline.inputs import resolve_inputs
    from faultline.scan.scanner import Scanner
    from faultline.scan.sink import ScanSink

    monkeypatch.setattr(aggregate, "KEEP_ALL_EVENTS", 0)
    held = aggregate.EventAggregator()
    Scanner(engine.matcher, ScanSink(held)).scan(resolve_inputs([logs[FEW][0]]).sources[0])
    back = pickle.loads(pickle.dumps(held))
    assert [(e.line, e.signature_id, e.repeats) for e in back.events()] == \
           [(e.line, e.signature_id, e.repeats) for e in held.events()]
    assert any(chain.groups for chain in back._chains())  # chains, with their groups, came along


def test_a_keyword_that_begins_with_a_newline_is_found_at_the_start_of_every_line() -> None:
    """After a newline, and at the buffer's start (the scanner starts every buffer at a line's start); both
    engines alike, the hit on the line after the newline."""
    keywords = [b"Error", b"\nE1", b": E "]
    buffer = b"E1102 a\nok E1\nE1103 b\nx Error y\n2024: E z\nE1"
    for index in (KeywordIndex(keywords), KeywordIndex(keywords, use_hyperscan=False)):
        lines, ends = index.line_hits(buffer)
        assert {start: sorted(ids) for start, ids in lines.items()} == {0: [1], 14: [1], 22: [0], 32: [2], 42: [1]}
        assert list(lines) == sorted(lines) and ends[0] == 7
        assert index.line_hits(b"E1 only")[0] == {0: [1]} and index.line_hits(b"xE1")[0] == {}
