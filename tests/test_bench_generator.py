"""The benchmark log generator (bench/generate.py): same seed, same bytes; its buried cascade is diagnosed right.

No timings here: the benchmarks themselves run with ``python bench/run.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from faultline.engine import Engine

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import generate

SIZE = 1024 * 1024  # large enough that healthy output resumes after the 64-rank cascade


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine.load()


def test_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    scenario = generate.Scenario(ranks=64, style="tee")
    first = generate.write_combined(tmp_path / "first.log", 200 * 1024, scenario)
    second = generate.write_combined(tmp_path / "second.log", 200 * 1024, scenario)
    reseeded = generate.write_combined(tmp_path / "reseeded.log", 200 * 1024,
                                       generate.Scenario(ranks=64, style="tee", seed=7))
    assert (tmp_path / "first.log").read_bytes() == (tmp_path / "second.log").read_bytes()
    assert (first.lines, first.bytes, first.root_cause_line) == (second.lines, second.bytes, second.root_cause_line)
    assert (tmp_path / "reseeded.log").read_bytes() != (tmp_path / "first.log").read_bytes()
    assert reseeded.initiating_rank == first.initiating_rank == 37


def test_rank_folder_is_deterministic(tmp_path: Path) -> None:
    scenario = generate.Scenario(ranks=16, culprit_rank=5)
    generate.write_rank_folder(tmp_path / "a", 16 * 1024, scenario)
    generate.write_rank_folder(tmp_path / "b", 16 * 1024, scenario)
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "b").iterdir())
    assert len(names) == 16
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


@pytest.mark.parametrize("style", generate.STYLES)
def test_buried_cascade_is_diagnosed(tmp_path: Path, engine: Engine, style: str) -> None:
    path = tmp_path / f"{style}.log"
    expected = generate.write_combined(path, SIZE, generate.Scenario(ranks=64, style=style))
    lines = path.read_text(encoding="ascii").splitlines()
    assert len(lines) == expected.lines
    oom_line = lines[expected.root_cause_line - 1]
    assert oom_line == expected.root_cause_text
    assert "[rank37]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.50 GiB" in oom_line
    assert expected.root_cause_line < 0.8 * len(lines), "the cascade should be buried, with healthy output after it"
    assert any("Watchdog caught collective operation timeout" in line for line in lines[expected.root_cause_line:])
    assert "step" in lines[-1] and "loss" in lines[-1], "training resumes after the failure"

    diagnosis = engine.diagnose_paths([path])

    assert diagnosis.verdict.value == "failure"
    assert diagnosis.initiating_rank == 37
    assert diagnosis.root_cause is not None
    assert Path(diagnosis.root_cause.file) == path
    assert diagnosis.root_cause.line == expected.root_cause_line
    assert diagnosis.root_cause.signature_id.startswith("cuda-oom")


def test_rank_folder_cascade_is_diagnosed(tmp_path: Path, engine: Engine) -> None:
    folder = tmp_path / "ranks"
    expected = generate.write_rank_folder(folder, 24 * 1024, generate.Scenario(ranks=64, style="plain"))
    assert expected.files == len(list(folder.iterdir())) == 64

    diagnosis = engine.diagnose_paths([folder])

    assert diagnosis.initiating_rank == 37
    assert diagnosis.root_cause is not None
    assert Path(diagnosis.root_cause.file) == Path(expected.root_cause_file) == folder / "train_rank37.log"
    assert diagnosis.root_cause.line == expected.root_cause_line
    assert diagnosis.root_cause.signature_id.startswith("cuda-oom")


def test_no_keyword_piece_makes_routine_cascade_lines_candidates(tmp_path: Path) -> None:
    """A keyword of 20 bytes or more is indexed by its first and last 14 bytes (matcher.py), so a piece that is a
    common phrase ("ProcessGroupNC", "terminated wit") sends every watchdog or teardown line of a cascade through
    that signature's patterns: one such keyword doubled the editor benchmark's diagnosis. No piece of a built-in
    keyword may hit more than a few lines of a generated 512-rank log that only the cascade's own signatures match."""
    from faultline.library import SignatureLibrary
    from faultline.matcher import keyword_pieces

    generate.write_combined(tmp_path / "run.log", 2 * 1024 * 1024, generate.Scenario(ranks=512, style="c10"))
    lines = (tmp_path / "run.log").read_bytes().split(b"\n")
    common = []
    for sig in SignatureLibrary.load():
        whole = [k.encode() for k in sig.keywords]
        for keyword in sig.keywords:
            pieces = keyword_pieces(keyword)
            if len(pieces) == 1:
                continue  # looked for whole
            for piece in pieces:
                # lines this piece alone makes candidates of the signature (lines holding one of its keywords
                # whole are candidates anyway)
                extra = sum(piece in line and not any(w in line for w in whole) for line in lines)
                if extra > len(lines) // 100:
                    common.append((sig.id, keyword, piece, extra))
    assert common == [], common
