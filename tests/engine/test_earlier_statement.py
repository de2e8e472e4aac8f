"""An exception that repeats a message logged just before it: the root is the line that said it first."""

from __future__ import annotations

from faultline.engine import Engine

# LightGBM's C++ Log::Fatal (include/LightGBM/utils/log.h) prints "[LightGBM] [Fatal] <message>" and throws; the
# Python package then raises LightGBMError(LGBM_GetLastError()) with the same message (python-package basic.py).
_LOGGED = "[LightGBM] [Fatal] Socket recv error, code: 54\n"
_RAISED = ("Traceback (most recent call last):\n"
           '  File "/venv/lib/python3.10/site-packages/lightgbm/basic.py", line 110, in _safe_call\n'
           "    raise LightGBMError(_LIB.LGBM_GetLastError().decode('utf-8'))\n"
           "lightgbm.basic.LightGBMError: Socket recv error, code: 54\n")


def test_the_line_that_logged_the_message_first_is_the_root(engine: Engine) -> None:
    text = "[LightGBM] [Info] Connected to rank 1\n" + _LOGGED + "[LightGBM] [Info] Finished\n" + _RAISED
    diagnosis = engine.diagnose_text(text, "run.log")
    root = diagnosis.root_cause
    assert root is not None and root.line == 2 and root.text == _LOGGED.strip()
    assert root.signature_id == "python-exception"  # still read as the exception it is
    assert diagnosis.frames is not None  # the traceback under it is still where it was raised


def test_a_line_that_only_quotes_the_message_is_not_where_it_was_stated(engine: Engine) -> None:
    """The source line of the raise in the traceback quotes the message; it does not state a failure."""
    quoted = ("Traceback (most recent call last):\n"
              '  File "/code/train.py", line 12, in main\n'
              '    raise RuntimeError("worker absolutely refuses to be rank 2")\n'
              "RuntimeError: worker absolutely refuses to be rank 2\n")
    diagnosis = engine.diagnose_text(quoted, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.line == 4


# ggml-cuda fattn-common.cuh on_no_fattn_vec_case: fprintf(stderr, "Unsupported KV type combination for head_size
# %d.\n") and what is supported, then GGML_ABORT("fatal error"), which ggml_abort prints as "<file>:<line>: fatal error".
_GGML_ABORT = "/src/llama.cpp/ggml/src/ggml-cuda/fattn-common.cuh:690: fatal error\n"


def test_a_generic_abort_is_rooted_at_the_reason_printed_above_it(engine: Engine) -> None:
    text = ("Accepted client connection, free_mem=16777216000, total_mem=16777216000\n"
            "Unsupported KV type combination for head_size 576.\n"
            "Only f16 is supported.\n" + _GGML_ABORT)
    root = engine.diagnose_text(text, "rpc.log").root_cause
    assert root is not None and root.signature_id == "ggml-abort"
    assert (root.line, root.text) == (2, "Unsupported KV type combination for head_size 576.")


def test_a_generic_abort_stays_where_no_line_above_it_states_a_failure(engine: Engine) -> None:
    for above in ("Accepted client connection, free_mem=16777216000\n",  # no failure said
                  "Unsupported KV type combination for head_size 576.\n\n"):  # the block above ends at a blank line
        root = engine.diagnose_text(above + _GGML_ABORT, "rpc.log").root_cause
        assert root is not None and root.text == _GGML_ABORT.strip()


# libstdc++'s own what() of a failed container lookup names no cause; the program logged it just before.
_STD_ABORT = "terminate called after throwing an instance of 'std::out_of_range'\n  what():  _Map_base::at\n"


def test_a_standard_library_what_is_rooted_at_the_error_logged_above_it(engine: Engine) -> None:
    logged = "[2025-11-25 17:59:09.908267] [240] [245] [llm] [ERROR] [executor.cpp:646] Invalid DP number per node: 0"
    root = engine.diagnose_text("model loaded\n" + logged + "\n" + _STD_ABORT, "server.log").root_cause
    assert root is not None and root.signature_id == "cpp-exception-what"
    assert (root.line, root.text) == (2, logged)
    assert root.fields.get("generic") == "_Map_base::at"


def test_a_what_that_names_its_cause_stays_the_root(engine: Engine) -> None:
    text = ("[ERROR] loading shard 3 failed\nterminate called after throwing an instance of 'std::runtime_error'\n"
            "  what():  could not open /data/shard3.bin: No such file or directory\n")
    root = engine.diagnose_text(text, "server.log").root_cause
    assert root is not None and root.line == 3
