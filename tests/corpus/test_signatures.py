"""Every built-in signature carries its proof: it loads cleanly and its own examples behave."""

from __future__ import annotations

import pytest

from faultline.library import BUILTIN_DIR, SignatureLibrary, parse_signature, signature_files
from faultline.signature_check import check_signature

FILES = signature_files(BUILTIN_DIR)


def test_library_loads_without_problems() -> None:
    library = SignatureLibrary.load(compile_builtin=True)
    assert not library.problems, "\n".join(map(str, library.problems))
    assert len(library) >= 60


def test_every_category_of_the_field_guide_is_covered() -> None:
    categories = {s.category for s in SignatureLibrary.load()}
    assert {"memory", "nccl", "store", "cuda", "numerics", "data", "checkpoint", "launch", "compile",
            "framework", "generic"} <= categories


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_signature_examples(path) -> None:  # type: ignore[no-untyped-def]
    sig, problems = parse_signature(path)
    assert sig is not None, "\n".join(map(str, problems))
    problems = check_signature(sig)
    assert not problems, "\n".join(map(str, problems))
    if not sig.derived:
        assert sig.examples_match and sig.examples_no_match
        assert sig.fix.steps and sig.verification.command


def test_related_ids_exist() -> None:
    library = SignatureLibrary.load()
    missing = [(s.id, r) for s in library for r in s.related if library.get(r) is None]
    assert not missing


# Text that most lines of a healthy distributed run hold: the source files c10d and torchelastic log from, and the
# prefixes of NCCL's and the launchers' own lines.
_EVERY_LINE = ("ProcessGroupNCCL.cpp", "ProcessGroupGloo.cpp", "distributed_c10d.py", "torch/distributed/elastic/",
               "NCCL INFO ", "[rank0]:[W", "[default0]:", "[INFO] [launch.py", "(RayWorkerWrapper pid=")


def test_no_keyword_piece_selects_the_lines_of_a_healthy_run() -> None:
    """A long keyword is looked for by its head and its tail (matcher.keyword_pieces): a piece that every c10d or
    NCCL line holds ("ProcessGroupNC" of "ProcessGroupNCCL does not support ") would send each of those lines through
    the signature's patterns, which the editor's re-diagnosis benchmark shows as a slower edit. The twin check in
    tests/test_bench_generator.py counts such lines in a generated c10 cascade; this one also covers prefixes that
    log does not print (torchrun --tee, Ray's workers, DeepSpeed's launcher)."""
    from faultline.matcher import keyword_pieces

    broad = [(sig.id, keyword, piece) for sig in SignatureLibrary.load() for keyword in sig.keywords
             for piece in keyword_pieces(keyword) if any(piece.decode(errors="ignore") in t for t in _EVERY_LINE)]
    assert not broad
