"""The remedy an exception's own message states comes first in a generic exception's fix (reasoning/message_remedy.py):
its instructions quoted, the settings it names listed; nothing added when it states none, and never for a specific
signature, which has its own fix."""

from __future__ import annotations

import pytest

from faultline.engine import Engine
from faultline.reasoning.message_remedy import named_settings, remedy_step

# accelerate src/accelerate/state.py (AcceleratorState._check_initialized), a second Accelerator(...) in one process
ACCELERATOR_TWICE = (
    "Traceback (most recent call last):\n"
    '  File "/home/u/train.py", line 145, in main\n'
    '    accelerator = Accelerator(mixed_precision="bf16")\n'
    '  File "/opt/conda/lib/python3.10/site-packages/accelerate/state.py", line 1042, in _check_initialized\n'
    "    raise ValueError(err.format(flag=f\"mixed_precision='{mixed_precision}'\"))\n"
    "ValueError: AcceleratorState has already been initialized and cannot be changed, restart your runtime completely "
    "and pass `mixed_precision='bf16'` to `Accelerator()`.\n")

# DeepSpeed deepspeed/runtime/engine.py (_configure_basic_optimizer), printed over several lines
ZERO_OFFLOAD_OPTIMIZER = """Traceback (most recent call last):
  File "/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", line 1220, in _configure_basic_optimizer
    raise ZeRORuntimeException(msg)
deepspeed.runtime.zero.utils.ZeRORuntimeException: You are using ZeRO-Offload with a client provided
optimizer (<class 'torch.optim.adamw.AdamW'>) which in most cases will yield poor performance. Please either use
deepspeed.ops.adam.DeepSpeedCPUAdam or set an optimizer in your ds-config
(https://www.deepspeed.ai/docs/config-json/#optimizer-parameters). If you really want to use a custom optimizer w.
ZeRO-Offload and understand the performance impacts you can also set <"zero_force_ds_cpu_optimizer": false> in your
configuration file.
"""

NO_REMEDY = """Traceback (most recent call last):
  File "/home/u/proj/data.py", line 41, in __getitem__
    return self.items[idx]["text"]
KeyError: 'text'
"""


def _steps(engine: Engine, text: str) -> tuple[str, ...]:
    diagnosis = engine.diagnose_text(text, "run.log")
    assert diagnosis.root_signature is not None
    return diagnosis.root_signature.fix.steps


def test_the_settings_a_message_names_lead_the_fix(engine: Engine) -> None:
    steps = _steps(engine, ACCELERATOR_TWICE)
    assert steps[0] == "The message names what to change: `mixed_precision='bf16'`."
    assert "train.py:145 in main" in steps[1]  # the frame's step follows


def test_an_instruction_printed_over_several_lines_is_read_to_its_end(engine: Engine) -> None:
    first = _steps(engine, ZERO_OFFLOAD_OPTIMIZER)[0]
    assert first.startswith("The message says what to do: \u201cPlease either use deepspeed.ops.adam.DeepSpeedCPUAdam")
    assert "you can also set" in first  # from the fourth line of the message
    assert first.endswith("It names what to change: `zero_force_ds_cpu_optimizer`.")


# Spark's DAGScheduler (checkBarrierStageWithDynamicAllocation), as Py4J prints a Java exception with its frames
SPARK_BARRIER = (
    "py4j.protocol.Py4JJavaError: An error occurred while calling "
    "z:org.apache.spark.api.python.PythonRDD.collectAndServe.\n"
    ": org.apache.spark.scheduler.BarrierJobRunWithDynamicAllocationException: [SPARK-24942]: Barrier execution mode "
    "does not support dynamic resource allocation for now. You can disable dynamic resource allocation by setting "
    "Spark conf \"spark.dynamicAllocation.enabled\" to \"false\".\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.checkBarrierStageWithDynamicAllocation(DAGScheduler.scala:500)\n"
    "\tat org.apache.spark.scheduler.DAGScheduler.createResultStage(DAGScheduler.scala:588)\n")


def test_a_java_exceptions_message_ends_where_its_stack_frames_begin(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(SPARK_BARRIER, "run.log")
    assert diagnosis.root_cause is not None and diagnosis.root_cause.signature_id == "jvm-exception"
    assert diagnosis.root_cause.line == 2
    sig = diagnosis.root_signature
    assert sig is not None
    first = sig.fix.steps[0]
    assert '"spark.dynamicAllocation.enabled" to "false"' in first
    assert "DAGScheduler" not in first


def test_a_message_that_states_no_remedy_leaves_the_fix_as_it_is(engine: Engine) -> None:
    diagnosis = engine.diagnose_text(NO_REMEDY, "run.log")
    sig = diagnosis.root_signature
    assert sig is not None and not any(step.startswith("The message") for step in sig.fix.steps)


def test_a_specific_signature_keeps_its_own_fix(engine: Engine) -> None:
    oom = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
           "79.15 GiB of which 1.02 GiB is free. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
    diagnosis = engine.diagnose_text(oom, "run.log")
    sig = diagnosis.root_signature
    assert sig is not None and sig.id == "cuda-oom"
    assert not any(step.startswith("The message") for step in sig.fix.steps)


def test_quoted_remedies_are_secret_masked() -> None:
    step = remedy_step("Please set HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 in the environment.")
    assert step is not None and "hf_AbCdEf" not in step and "HF_TOKEN" in step


def test_named_settings_are_options_variables_and_keyword_arguments_not_plain_words() -> None:
    message = ("Set --mem-fraction-static lower, or export NCCL_P2P_DISABLE=1; got use_orig_params=False and "
               "'sharding_strategy'; `True` and `model` are plain words.")
    assert named_settings(message) == ["--mem-fraction-static", "NCCL_P2P_DISABLE", "use_orig_params",
                                       "sharding_strategy"]
    assert remedy_step("RuntimeError: expected all tensors to be on the same device") is None


@pytest.mark.parametrize("message", [
    "INTERNAL: RET_CHECK failure (external/xla/service/gpu/x.cc:75) 0 <= ordinal",
    "TORCH_CHECK failed: expected a tensor",
    "C10_CUDA_CHECK(cudaGetLastError()) hit an error",
])
def test_a_check_macro_is_no_setting(message: str) -> None:
    """An upper-case name with underscores that fails or is called is the check that failed, not a variable."""
    assert named_settings(message) == []


def test_lines_above_the_root_line_are_never_read_as_its_message(engine: Engine) -> None:
    text = "step 1 loss 2.3\nwarning: please set FOO_BAR to silence this\nValueError: bad value in batch 7\n"
    assert not any(step.startswith("The message") for step in _steps(engine, text))  # the root line is the last


# Megatron-LM megatron/training/arguments.py validate_args: the traceback quotes the failed assert statement
MOE_SEQUENCE_PARALLEL = """Traceback (most recent call last):
  File "/workspace/Megatron-LM/megatron/training/arguments.py", line 714, in validate_args
    assert args.sequence_parallel, \\
AssertionError: When using MoE and tensor parallelism, sequence parallelism must be used.
"""

LAYERS_PER_STAGE = """Traceback (most recent call last):
  File "/workspace/Megatron-LM/megatron/training/arguments.py", line 352, in validate_args
    assert num_layers_per_pipeline_stage % args.num_layers_per_virtual_pipeline_stage == 0, \\
AssertionError: number of layers per pipeline stage must be divisible number of layers per virtual pipeline stage
"""


def test_a_failed_assert_statement_and_the_settings_it_reads_lead_the_fix(engine: Engine) -> None:
    assert _steps(engine, MOE_SEQUENCE_PARALLEL)[0] == "The check that failed is `assert args.sequence_parallel`."
    first = _steps(engine, LAYERS_PER_STAGE)[0]
    assert first == ("The check that failed is `assert num_layers_per_pipeline_stage % "
                     "args.num_layers_per_virtual_pipeline_stage == 0`: it reads "
                     "`args.num_layers_per_virtual_pipeline_stage`.")  # a local name is no setting


def test_an_assert_is_read_only_from_the_source_line_just_above_an_assertion_error(engine: Engine) -> None:
    value_error = MOE_SEQUENCE_PARALLEL.replace("AssertionError", "ValueError")
    assert not any(step.startswith("The check") for step in _steps(engine, value_error))
    far = MOE_SEQUENCE_PARALLEL.replace("AssertionError:", "some other output\nAssertionError:")
    assert not any(step.startswith("The check") for step in _steps(engine, far))


def test_a_huge_input_is_not_read_again_for_the_lines_around_its_root(engine: Engine) -> None:
    filler = "step 1 loss 2.3 lr 1e-4 tokens/s 51234\n" * (9 * 1024 * 1024 // 38)  # past frames.REREAD_MAX_BYTES
    steps = _steps(engine, filler + ZERO_OFFLOAD_OPTIMIZER)
    assert not any("you can also set" in step for step in steps)  # the message's fourth line is not read again


# An assert written over several lines (`assert (\n    cond\n), "message"`): Python 3.11+ quotes the condition's line.
MULTI_LINE_ASSERT = """[rank0]: Traceback (most recent call last):
[rank0]:   File "/home/u/proj/train.py", line 88, in <module>
[rank0]:     out = model(batch)
[rank0]:   File "/home/u/proj/model/ttt_layer.py", line 321, in forward
[rank0]:     hidden_states.size(1) % self.config.mini_batch_size == 0
[rank0]: AssertionError: Sequence len must be multiple of mini batch size.
"""


def test_the_condition_line_of_a_multi_line_assert_is_the_check_that_failed(engine: Engine) -> None:
    assert _steps(engine, MULTI_LINE_ASSERT)[0] == (
        "The check that failed is `assert hidden_states.size(1) % self.config.mini_batch_size == 0`: it reads "
        "`self.config.mini_batch_size`.")
    statement = MULTI_LINE_ASSERT.replace("    hidden_states.size(1) % self.config.mini_batch_size == 0",
                                          "    return self.ttt(x, self.config.mini_batch_size)")
    assert not any(step.startswith("The check") for step in _steps(engine, statement))  # a statement, no condition
