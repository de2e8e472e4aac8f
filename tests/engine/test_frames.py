"""Where the root cause was raised: the traceback above it, read again from the source, names the frame, and a
generic exception's fix starts at that frame."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from faultline.engine import Engine
from faultline.inputs import Source
from faultline.reasoning.frames import parse_frame
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


# A compiled (Cython) package's frames name their source relative to the package's root (CuPy under Chainer).
CYTHON_TRACEBACK = """Traceback (most recent call last):
  File "train_mnist.py", line 77, in main
    chainer.cuda.get_device_from_id(device).use()
  File "cupy/cuda/device.pyx", line 124, in cupy.cuda.device.Device.use
  File "cupy/cuda/runtime.pyx", line 137, in cupy.cuda.runtime.check_status
cupy.cuda.runtime.CUDARuntimeError: cudaErrorInvalidDevice: invalid device ordinal
"""


@pytest.mark.parametrize(("path", "package"), [("cupy/cuda/runtime.pyx", "cupy"), ("python/ray/_raylet.pyx", "ray"),
                                               ("pyarrow/error.pxi", "pyarrow"), ("/home/u/proj/fast.pyx", None)])
def test_a_compiled_modules_frame_is_its_packages(path: str, package: str | None) -> None:
    frame = parse_frame(f'  File "{path}", line 137, in check_status')
    assert frame is not None and frame.package == package


def test_a_cuda_error_raised_in_cupy_is_cupys_called_from_the_users_line(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(CYTHON_TRACEBACK, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "device-index-invalid"
    site = diagnosis.frames
    assert site is not None and site.deepest.package == "cupy"
    assert site.own is not None and str(site.own) == "train_mnist.py:77 in main"


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
    unconditional = [step for i, step in enumerate(own.fix.steps) if own.fix.when_of(i) is None]
    assert diagnosis.root_signature.fix.steps[0] == unconditional[0]  # no step added at the frame
    assert not any("raised inside" in step for step in diagnosis.root_signature.fix.steps)


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


FSDP_TRACEBACK = """Traceback (most recent call last):
  File "/home/me/finetune/train.py", line 88, in <module>
    model = FSDP(model, auto_wrap_policy=policy)
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 463, in __init__
    _init_param_handle_from_module(
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/flat_param.py", line 440, in _init_flat_param
    raise RuntimeError(f"unexpected handle state {state}")
RuntimeError: unexpected handle state 3
"""


@pytest.mark.parametrize("frames, component", [
    (FSDP_TRACEBACK, "FSDP:"),
    (FSDP_TRACEBACK.replace("fsdp/fully_sharded_data_parallel.py", "checkpoint/state_dict_loader.py")
     .replace("fsdp/flat_param.py", "checkpoint/utils.py"), "Distributed checkpoint"),
    # a trimmed path ("torch/..." without site-packages) is still torch's code
    (FSDP_TRACEBACK.replace("/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/flat_param.py",
                            "torch/serialization.py"), "torch.save / torch.load"),
])
def test_an_exception_inside_a_known_component_gets_its_checklist(engine: Engine, frames: str, component: str) -> None:
    sig = engine.diagnose_text(frames, "run.log").root_signature
    assert sig is not None and sig.id == "python-exception"
    assert sig.fix.steps[1].startswith(component), sig.fix.steps[:2]


def test_a_frames_source_line_quoting_the_message_is_not_the_failure(engine: Engine) -> None:
    """The frame that raises shows the message's template in its source line, a line above the message."""
    text = FSDP_TRACEBACK.replace('raise RuntimeError(f"unexpected handle state {state}")',
                                  'raise ValueError(f"`FlatParameter` requires uniform dtype but got {dtype} and '
                                  '{tensor.dtype}")').replace(
        "RuntimeError: unexpected handle state 3",
        "ValueError: `FlatParameter` requires uniform dtype but got torch.bfloat16 and torch.float32")
    for prefix in ("", "[rank1]: "):
        prefixed = "".join(prefix + line + "\n" for line in text.splitlines())
        diagnosis = engine.diagnose_text(prefixed, "run.log")
        assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "fsdp-flat-param-uniform"
        assert diagnosis.root_cause.line == 8  # the exception line, not the source line above it


def test_a_source_line_deep_above_the_exception_is_still_source(engine: Engine) -> None:
    """The caller's source line quotes the message in a comment and more frames follow before the exception (a
    user's note in their code): still source, in a plain paste and with a tool's stamps on the unindented lines."""
    frames = "".join(f'  File "torch/distributed/checkpoint/utils.py", line {n}, in f{n}\n    g{n}()\n' for n in range(12))
    text = ("Traceback (most recent call last):\n"
            '  File "scratch.py", line 103, in <module>\n'
            "    load()  # RuntimeError: Missing key in checkpoint state_dict: model.2.weight\n"
            + frames + "RuntimeError: Missing key in checkpoint state_dict: model.2.weight.\n")
    last = len(text.splitlines())
    stamped = "".join(line if line.startswith(" ") else "2024-03-08 16:33:21,416 " + line
                      for line in text.splitlines(keepends=True))
    for form in (text, stamped):
        root = engine.diagnose_text(form, "run.log").root_cause
        assert root is not None and root.line == last and root.signature_id == "ckpt-state-dict-mismatch"


def test_process_group_setup_advice_is_for_init_process_group_only(engine: Engine) -> None:
    tb = """Traceback (most recent call last):
  File "train.py", line 10, in <module>
    dist.{func}(backend="nccl")
  File "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py", line 611, in {func}
    raise RuntimeError("x")
RuntimeError: Connection reset by peer
"""
    setup = engine.diagnose_text(tb.format(func="init_process_group"), "run.log").root_signature
    assert setup is not None and any("MASTER_ADDR:MASTER_PORT" in step for step in setup.fix.steps)
    reduce = engine.diagnose_text(tb.format(func="all_reduce"), "run.log").root_signature
    assert reduce is not None and not any("MASTER_ADDR:MASTER_PORT" in step for step in reduce.fix.steps)


def test_the_users_own_frame_below_a_component_ends_the_search(engine: Engine) -> None:
    """The user's code called from FSDP (a wrapped module's forward) raised: FSDP's checklist is not the fix."""
    tb = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/fully_sharded_data_parallel.py", line 839, in forward
    output = self._fsdp_wrapped_module(*args, **kwargs)
  File "/home/me/model.py", line 42, in forward
    return x @ self.w
KeyError: 'w'
"""
    sig = engine.diagnose_text(tb, "run.log").root_signature
    assert sig is not None and not any(step.startswith("FSDP:") for step in sig.fix.steps)
    assert "raised by your code at /home/me/model.py:42" in sig.fix.steps[0]


def test_a_source_line_stays_the_statement_when_the_paste_ends_before_the_exception(engine: Engine) -> None:
    """vLLM's engine core, cut after the raise: the quoted message is the only statement of the cause."""
    text = ('(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]   File "/opt/conda/lib/python3.13/'
            'site-packages/vllm/v1/core/kv_cache_utils.py", line 699, in check_enough_kv_cache_memory\n'
            '(EngineCore_DP0 pid=223840) ERROR 10-25 13:08:43 [core.py:708]     raise ValueError("No available memory '
            'for the cache blocks. "\n'
            '(APIServer pid=223598)   File "/opt/conda/lib/python3.13/contextlib.py", line 148, in __exit__\n')
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 2
    assert diagnosis.root_cause.signature_id == "vllm-kv-cache"


def test_a_native_assertion_in_a_known_component_gets_its_checklist(engine: Engine) -> None:
    text = ("python: /opt/conda/lib/python3.8/site-packages/deepspeed/ops/csrc/aio/py_lib/deepspeed_py_aio_handle.cpp:"
            "159: void deepspeed_aio_handle_t::_stop_threads(): Assertion `0 == _num_pending_ops' failed.\n")
    sig = engine.diagnose_text(text, "run.log").root_signature
    assert sig is not None and sig.id == "native-assertion"
    assert sig.fix.steps[0].startswith("DeepSpeed async I/O")
    other = text.replace("deepspeed/ops/csrc/aio/py_lib", "myext/csrc")
    plain = engine.diagnose_text(other, "run.log").root_signature
    assert plain is not None and not plain.fix.steps[0].startswith("DeepSpeed")


def test_an_exception_class_of_a_known_component_gets_its_checklist(engine: Engine) -> None:
    """No traceback at all: the exception's qualified class names the component (Megatron's dist checkpointing)."""
    # (megatron/core/dist_checkpointing/validation.py _verify_integrity_manifest_impl, core_v0.18+; a message no
    # signature describes)
    text = ("megatron.core.dist_checkpointing.core.CheckpointingException: Checkpoint integrity verification failed "
            "for 1 file(s) in /ckpt/iter_0001000:\n")
    sig = engine.diagnose_text(text, "run.log").root_signature
    assert sig is not None and sig.fix.steps[0].startswith("Megatron distributed checkpoint")
    plain = engine.diagnose_text(text.replace("megatron.core.dist_checkpointing.core.", "mylib.ckpt."), "run.log")
    assert plain.root_signature is not None and not plain.root_signature.fix.steps[0].startswith("Megatron")


@pytest.mark.parametrize(("line", "package"), [
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: RET_CHECK failure (external/xla/service/gpu/x.cc:75) 0 <= ordinal",
     "jaxlib"),
    ("tensorflow.python.framework.errors_impl.UnknownError: Graph execution error:", "tensorflow"),
])
def test_a_library_exception_class_without_a_traceback_points_at_the_library(engine: Engine, line: str,
                                                                             package: str) -> None:
    """No frame in the paste, but the qualified class is a known library's: the fix starts with what was given to
    that library and its version, as for a traceback with none of the user's frames."""
    sig = engine.diagnose_text(line + "\n", "run.log").root_signature
    assert sig is not None and sig.fix.steps[0].startswith(f"The exception's class is {package}'s")
    assert f"upgrade {package}" in sig.fix.steps[0]
    own = engine.diagnose_text(line.replace(package + ".", "myproject.", 1) + "\n", "run.log").root_signature
    assert own is not None and not own.fix.steps[0].startswith("The exception's class")


# A file that is not what its reader expects: the value error is raised inside the library's load function.
CUT_DOWNLOAD = """Traceback (most recent call last):
  File "/home/u/proj/train.py", line 207, in main
    tokenizer = Tokenizer(job_config.model.tokenizer_path)
  File "/home/u/proj/tokenizer.py", line 52, in __init__
    ranks = load_tiktoken_bpe(model_path)
  File "/usr/local/lib/python3.10/dist-packages/tiktoken/load.py", line 148, in load_tiktoken_bpe
    return {
  File "/usr/local/lib/python3.10/dist-packages/tiktoken/load.py", line 149, in <dictcomp>
    base64.b64decode(token): int(rank)
ValueError: invalid literal for int() with base 10: b'coding=utf-8'
"""


def test_a_value_error_inside_a_librarys_reader_points_at_the_file_it_read(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(CUT_DOWNLOAD, "run.log")
    assert diagnosis.root_signature is not None
    steps = diagnosis.root_signature.fix.steps
    reading = [s for s in steps if s.startswith("It was raised while tiktoken read its input")]
    assert reading and "tiktoken/load.py:148 in load_tiktoken_bpe" in reading[0] and "download" in reading[0]
    # the same error raised by a library function that reads nothing, or an error of another kind: no such step
    for text in (CUT_DOWNLOAD.replace("load_tiktoken_bpe", "merge_ranks"),
                 CUT_DOWNLOAD.replace("ValueError: invalid literal", "TypeError: invalid literal")):
        sig = engine.diagnose_text(text, "run.log").root_signature
        assert sig is not None and not any(s.startswith("It was raised while") for s in sig.fix.steps)
