"""Where the root cause was raised: the traceback above it, read again from the source, names the frame, and a
generic exception's fix starts at that frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.inputs import Source
from faultline.render import render_markdown
from faultline.render.json_out import diagnosis_json
from faultline.scan import window

USER_TRACEBACK = """step 10 loss 2.3
Traceback (most recent call last):
  File "/home/u/proj/train.py", line 120, in <module>
    main()
  File "/home/u/proj/train.py", line 90, in main
    for batch in loader:
  File "/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 633, in __next__
    data = self._next_data()
  File "/home/u/proj/data.py", line 41, in __getitem__
    return self.items[idx]["text"]
           ~~~~~~~~~~~~~~^^^^^^^^
KeyError: 'text'
"""

LIBRARY_TRACEBACK = """Traceback (most recent call last):
  File "train.py", line 45, in <module>
    out = model(x)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1532, in _call_impl
    return forward_call(*args, **kwargs)
  File "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", line 116, in forward
    return F.linear(input, self.weight, self.bias)
TypeError: linear(): argument 'input' (position 1) must be Tensor, not list
"""


def test_a_generic_exception_names_the_users_frame_and_the_fix_starts_there(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(USER_TRACEBACK, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 12
    site = diagnosis.frames
    assert site is not None
    assert (site.deepest.path, site.deepest.line, site.deepest.function) == ("/home/u/proj/data.py", 41, "__getitem__")
    assert site.deepest.package is None and site.own == site.deepest
    sig = diagnosis.root_signature
    assert sig is not None and "data.py:41 in __getitem__" in sig.fix.steps[0]
    assert engine.library.get(sig.id) is not None
    assert sig.fix.steps[1:] == engine.library.get(sig.id).fix.steps  # type: ignore[union-attr]
    assert "Raised at `/home/u/proj/data.py:41 in __getitem__` (your code)" in render_markdown(diagnosis)


def test_inside_a_library_the_fix_points_at_the_users_call(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(LIBRARY_TRACEBACK, "run.log")
    site = diagnosis.frames
    assert site is not None and site.deepest.package == "torch"
    assert str(site.deepest) == "torch/nn/modules/linear.py:116 in forward"
    assert site.own is not None and str(site.own) == "train.py:45 in <module>"
    sig = diagnosis.root_signature
    assert sig is not None
    assert "inside torch (torch/nn/modules/linear.py:116 in forward)" in sig.fix.steps[0]
    assert "train.py:45" in sig.fix.steps[0]
    frames = diagnosis_json(diagnosis)["root_cause"]["frames"]
    assert frames["raised"]["package"] == "torch" and frames["user"]["path"] == "train.py"
    assert frames["library"] == frames["raised"]
    json.dumps(frames)


def test_a_specific_signature_keeps_its_own_fix_and_names_the_frames(engine: Engine) -> None:
    text = LIBRARY_TRACEBACK.replace(
        "TypeError: linear(): argument 'input' (position 1) must be Tensor, not list",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.14 GiB of which 1.00 GiB is free.")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "cuda-oom"
    assert diagnosis.frames is not None and str(diagnosis.frames.deepest) == "torch/nn/modules/linear.py:116 in forward"
    assert diagnosis.frames.own is not None and diagnosis.frames.own.path == "train.py"
    own = diagnosis.signature_of(diagnosis.root_cause)
    assert diagnosis.root_signature is not None and own is not None
    assert diagnosis.root_signature.fix.steps[0] == own.fix.steps[0]  # no step added at the frame


def test_another_ranks_frames_in_a_combined_log_are_not_this_ranks(engine: Engine) -> None:
    text = ("[rank0]: Traceback (most recent call last):\n"
            '[rank1]:   File "/work/other.py", line 7, in helper\n'
            '[rank0]:   File "/work/train.py", line 30, in step\n'
            "[rank0]:     loss = compute(batch)\n"
            '[rank1]:   File "/work/other.py", line 9, in helper2\n'
            "[rank0]: ZeroDivisionError: division by zero\n")
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.rank == 0
    assert diagnosis.frames is not None and str(diagnosis.frames.deepest) == "/work/train.py:30 in step"


def test_no_traceback_above_the_line_names_no_frame(engine: Engine) -> None:
    diagnosis = engine.diagnose_text("starting\nValueError: bad config value for lr\n", "run.log")
    assert diagnosis.root_cause is not None
    assert diagnosis.frames is None


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_reading_the_lines_before_does_not_depend_on_block_size(tmp_path: Path, block: int,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(window, "_BLOCK_BYTES", block)
    lines = [f"line {i} " + "x" * (i % 13) for i in range(1, 400)]
    path = tmp_path / "log.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for target in (1, 2, 3, 57, 399):
        expected = lines[max(0, target - 1 - 5):target - 1]
        assert window.lines_before(Source.from_path(path), target, 5) == expected
        assert window.lines_before(Source.from_text("\n".join(lines)), target, 5) == expected


def test_a_stream_cannot_be_read_again() -> None:
    import io

    assert window.lines_before(Source("<stdin>", stream=io.BytesIO(b"a\nb\n")), 2, 5) is None
