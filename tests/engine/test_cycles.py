"""A diagnosis makes no reference cycles, so it may run with the cyclic collector paused (collector.py).

The collector cost 35-40 ms of a 10 MiB diagnosis re-walking live objects. Pausing it is only safe while
what it would have found stays nothing (or a constant), whatever the input: a cycle per line, per event or
per rank would show up here as thousands of objects.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pygls.workspace import PositionCodec

from faultline import cli
from faultline.collector import cycle_collection_paused
from faultline.engine import Engine
from faultline.lsp.diagnostics import DiagnosticOptions
from faultline.lsp.log_documents import analyse_document
from faultline.lsp.settings import Severities
from faultline.render.json_out import render_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import generate


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A 64-rank cascade and a 512-rank one (forked helpers share the latter in the CLI's engine)."""
    folder = tmp_path_factory.mktemp("cascades")
    small, big = folder / "small.log", folder / "big.log"
    generate.write_combined(small, 512 * 1024, generate.Scenario(ranks=64))
    generate.write_combined(big, 6 * 1024 * 1024, generate.Scenario(ranks=512))
    return small, big


@pytest.fixture
def collector_on() -> Iterator[None]:
    gc.enable()
    yield
    gc.set_debug(0)
    gc.garbage.clear()
    gc.enable()


def _garbage(work: Callable[[], Any], check: Callable[[Any], None]) -> list[object]:
    """The objects ``work`` leaves in unreachable cycles once its result (given to ``check``) is let go."""
    gc.collect()
    gc.garbage.clear()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # unreachable objects go to gc.garbage instead of being freed
    try:
        check(work())  # the result is dropped here: reference counting frees all of it but cycles
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


def _failed_root(diagnosis: Any) -> None:
    assert diagnosis.initiating_rank == 37


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_diagnosis_makes_no_cycles(logs: tuple[Path, Path], collector_on: None, jobs: int) -> None:
    engine = Engine.load(jobs=jobs, helpers=1)
    small, big = logs
    for log in (small, big):  # first use: lazily compiled patterns, caches, modules imported on demand
        engine.diagnose_paths([log])
    for log in (small, big):
        garbage = _garbage(lambda log=log: engine.diagnose_paths([log]), _failed_root)
        assert garbage == [], f"{len(garbage)} objects in cycles, e.g. {garbage[:3]}"


def test_the_compact_json_report_makes_no_cycles(logs: tuple[Path, Path], collector_on: None) -> None:
    engine = Engine.load()
    for log in logs:
        diagnosis = engine.diagnose_paths([log])
        garbage = _garbage(lambda diagnosis=diagnosis: render_json(diagnosis, indent=None),
                           lambda report: json.loads(report))
        assert garbage == [], f"{len(garbage)} objects in cycles, e.g. {garbage[:3]}"


def test_a_document_analysis_in_the_language_server_makes_no_cycles(logs: tuple[Path, Path],
                                                                     collector_on: None) -> None:
    """The server freezes what it keeps after each diagnosis (log_documents.py): a cycle left then is never
    collected, so its diagnosis, diagnostics and their JSON must make none."""
    engine = Engine.load()
    text = logs[1].read_text(encoding="utf-8")

    def analyse() -> Any:
        return analyse_document(engine, "file:///run/big.log", 1, text, max_bytes=None, codec=PositionCodec(),
                                options=DiagnosticOptions(Severities()), cancel=threading.Event())

    def published(result: Any) -> None:
        assert result.diagnostics and result.publish_body

    analyse()
    garbage = _garbage(analyse, published)
    assert garbage == [], f"{len(garbage)} objects in cycles, e.g. {garbage[:3]}"


def test_the_collector_is_paused_during_a_diagnosis_and_restored_after(logs: tuple[Path, Path],
                                                                       collector_on: None) -> None:
    seen: list[bool] = []
    Engine.load().diagnose_paths([logs[0]], progress=lambda fraction, message: seen.append(gc.isenabled()))
    assert seen and not any(seen)
    assert gc.isenabled()


def test_overlapping_pauses_restore_the_state_of_the_first(collector_on: None) -> None:
    first = cycle_collection_paused()
    second = cycle_collection_paused()
    first.__enter__()
    second.__enter__()
    first.__exit__(None, None, None)  # another thread's diagnosis still runs
    assert not gc.isenabled()
    second.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()  # a caller that had switched it off keeps it off
    with cycle_collection_paused():
        pass
    assert not gc.isenabled()


def test_the_cli_turns_the_collector_back_on(tmp_path: Path, collector_on: None) -> None:
    """In-process callers (these tests, an embedding program) get the collector back as they had it."""
    log = tmp_path / "run.log"
    generate.write_combined(log, 256 * 1024, generate.Scenario(ranks=16, culprit_rank=5))
    out = tmp_path / "out.json"
    assert cli.main(["diagnose", str(log), "--format", "json", "--output", str(out)]) == 1
    assert gc.isenabled()
    gc.disable()
    cli.main(["diagnose", str(log), "--format", "json", "--output", str(out)])
    assert not gc.isenabled()
