"""A diagnosis makes (almost) no reference cycles, so the CLI may run it with the cyclic collector off.

``faultline diagnose`` turns Python's cycle collector off for its one diagnosis (cli._no_cycle_collection):
the collector cost 35-40 ms of a 10 MiB diagnosis re-walking live objects. That is only safe while the
garbage it would have found stays small and does not grow with the input, which these tests check: a
cycle per line, per event or per rank would show up here as thousands of objects.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from faultline import cli
from faultline.engine import Engine
from faultline.render.json_out import render_json

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import generate

CYCLIC_GARBAGE_BOUND = 200  # objects; measured: 33-44 for 571 to 4,973 events


def _cyclic_garbage(engine: Engine, path: Path) -> tuple[int, int]:
    """(objects in unreachable cycles left by diagnosing and rendering ``path``, events found)."""
    gc.collect()
    gc.disable()
    try:
        diagnosis = engine.diagnose_paths([path])
        render_json(diagnosis)
        return gc.collect(), len(diagnosis.events)
    finally:
        gc.enable()


@pytest.mark.parametrize("jobs", [1, 2])
def test_garbage_cycles_do_not_grow_with_the_input(tmp_path: Path, jobs: int) -> None:
    engine = Engine.load(jobs=jobs, helpers=1)
    small, big = tmp_path / "small.log", tmp_path / "big.log"
    generate.write_combined(small, 512 * 1024, generate.Scenario(ranks=64))
    generate.write_combined(big, 6 * 1024 * 1024, generate.Scenario(ranks=512))
    _cyclic_garbage(engine, small)  # first use: lazily compiled patterns, caches
    small_garbage, small_events = _cyclic_garbage(engine, small)
    big_garbage, big_events = _cyclic_garbage(engine, big)
    assert big_events > 7 * small_events  # a 512-rank cascade (forked helpers read it) against a 64-rank one
    assert small_garbage < CYCLIC_GARBAGE_BOUND
    assert big_garbage < CYCLIC_GARBAGE_BOUND


def test_the_cli_turns_the_collector_back_on(tmp_path: Path) -> None:
    """In-process callers (these tests, an embedding program) get the collector back as they had it."""
    log = tmp_path / "run.log"
    generate.write_combined(log, 256 * 1024, generate.Scenario(ranks=16, culprit_rank=5))
    assert gc.isenabled()
    assert cli.main(["diagnose", str(log), "--format", "json", "--output", str(tmp_path / "out.json")]) == 1
    assert gc.isenabled()
    gc.disable()
    try:
        cli.main(["diagnose", str(log), "--format", "json", "--output", str(tmp_path / "out.json")])
        assert not gc.isenabled()
    finally:
        gc.enable()
