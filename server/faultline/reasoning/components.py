"""What to check when an exception that no specific signature describes was raised inside a known library
component: the component says more about the usual cause than the exception's class does.

A ``ValueError`` from ``torch/distributed/fsdp/_flat_param.py`` and one from the user's data code share a class
and nothing else. The traceback's library frames name the component (FSDP, distributed checkpointing,
``torch.save``, process-group set-up, the DataLoader, ...); the deepest frame with advice, below the user's own
last frame, adds that component's checklist to the generic fix. The advice is the component's documented
requirements, not any one failure: a specific failure of it keeps its own signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import Frame


@dataclass(frozen=True)
class ComponentAdvice:
    """A component's checklist: for frames in ``module`` (a dotted prefix), in any of ``functions`` (all if empty)."""

    module: str
    advice: str
    functions: frozenset[str] = frozenset()

    def covers(self, module: str, function: str) -> bool:
        inside = module == self.module or module.startswith(self.module + ".")
        return inside and (not self.functions or function in self.functions)


_PROCESS_GROUP_SETUP = (
    "Setting up the process group: every rank must reach the store at MASTER_ADDR:MASTER_PORT (rank 0's TCPStore or "
    "the rendezvous endpoint). Check that all ranks use the same address, port and WORLD_SIZE, that the port is "
    "open between the nodes (firewall) on the right network interface (NCCL_SOCKET_IFNAME / GLOO_SOCKET_IFNAME), "
    "and that rank 0 started and is still alive; a reset or closed connection means the store's process went away.")

_DEEPSPEED_AIO = (
    "DeepSpeed async I/O (NVMe offload of parameters or optimizer state): nvme_path must be a local NVMe file "
    "system with free space for the swapped tensors, libaio must be installed (`ds_report` lists async_io as "
    "compatible), and the aio settings (block_size, queue_depth) and the swap buffers (buffer_count, buffer_size) "
    "must fit the model; try offloading to cpu instead of nvme to confirm.")

# Most specific first: the first entry that covers a frame gives its advice.
COMPONENTS: tuple[ComponentAdvice, ...] = (
    ComponentAdvice("torch.distributed.fsdp", (
        "FSDP: the parameters of one wrapped unit must agree in dtype and requires_grad (wrap with "
        "use_orig_params=True when some are frozen, e.g. PEFT/LoRA), every rank must wrap the same modules with the "
        "same auto_wrap_policy, and state dicts must go through FSDP's own state_dict_type APIs.")),
    ComponentAdvice("torch.distributed.checkpoint", (
        "Distributed checkpoint (torch.distributed.checkpoint): the exception lists the ranks that failed and holds "
        "each one's own error. Compare the checkpoint's keys with the model's state_dict (missing or unexpected keys "
        "after a change of model, wrapping or parallelism), load with a planner that allows what you intend "
        "(DefaultLoadPlanner(allow_partial_load=True) for a partial load), and check that every rank can read the "
        "whole checkpoint folder.")),
    ComponentAdvice("torch.distributed.distributed_c10d", _PROCESS_GROUP_SETUP, frozenset({
        "init_process_group", "_new_process_group_helper", "new_group", "_store_based_barrier", "init_device_mesh",
        "_get_default_store"})),
    ComponentAdvice("torch.distributed.rendezvous", _PROCESS_GROUP_SETUP),
    ComponentAdvice("torch.distributed.elastic.rendezvous", _PROCESS_GROUP_SETUP),
    ComponentAdvice("torch.nn.parallel.distributed", (
        "DDP: every rank must build the same model (the same parameters, in the same order, with the same "
        "requires_grad) and run the same collectives in the same order; parameters that forward does not use need "
        "find_unused_parameters=True (or static_graph=True), and the model must be on its rank's GPU before it is "
        "wrapped.")),
    ComponentAdvice("torch.serialization", (
        "torch.save / torch.load: check the path (it exists; its folder is writable; the disk or quota has free "
        "space: `df -h`), that the file is complete (an interrupted save leaves a truncated file), and for loads the "
        "map_location and weights_only defaults of your PyTorch version.")),
    ComponentAdvice("torch.utils.data", (
        "DataLoader: a worker's error is raised again in the main process. Rerun with num_workers=0 to get the "
        "dataset's own traceback, print the index of the sample it fails on, and fix __getitem__ or the collate "
        "function for it.")),
    ComponentAdvice("torch.cuda", (
        "CUDA set-up: check that the driver works (`nvidia-smi`), supports the CUDA version of this PyTorch build "
        "(`python -c 'import torch; print(torch.version.cuda)'`), that CUDA_VISIBLE_DEVICES names GPUs that exist, "
        "and that no process forked after CUDA was initialised (use the 'spawn' start method).")),
    ComponentAdvice("transformers.modeling_utils", (
        "Loading a pretrained model: the checkpoint must match the model class and config (missing, unexpected or "
        "differently sized keys), its files must be complete, and the transformers version must support the "
        "architecture (upgrade transformers for a newer model).")),
    ComponentAdvice("deepspeed.ops.csrc.aio", _DEEPSPEED_AIO),
    ComponentAdvice("deepspeed.ops.aio", _DEEPSPEED_AIO),
    ComponentAdvice("deepspeed.runtime.swap_tensor", _DEEPSPEED_AIO),
    ComponentAdvice("megatron.core.dist_checkpointing", (
        "Megatron distributed checkpoint: it was saved with another tensor/pipeline-parallel layout or model "
        "configuration than the one loading it (a shape mismatch, missing keys): load with the same TP/PP sizes and "
        "model arguments, or convert it (tools/checkpoint/convert.py; the torch_dist format reshards across TP/PP "
        "sizes), and check the checkpoint format flags (--ckpt-format, legacy vs dist).")),
    ComponentAdvice("vllm.config", (
        "vLLM's engine configuration: check the arguments against the model and the GPUs: max_model_len, "
        "gpu_memory_utilization, tensor_parallel_size (it must divide the attention heads), a dtype and quantization "
        "the GPU supports, and whether this vLLM version supports the architecture.")),
    ComponentAdvice("vllm.engine.arg_utils", (
        "vLLM's engine arguments: check max_model_len, gpu_memory_utilization, tensor_parallel_size, dtype and "
        "quantization against the model and GPUs, and the flags this vLLM version accepts.")),
)

_INSTALLED = re.compile(r"[/\\](?:site|dist)-packages[/\\](?P<module>.+?)\.(?:py|cpp|cc|cu|h)$")
# Packages people install rather than write: a path that starts at one of them (a trimmed or a source-tree path,
# "torch/distributed/checkpoint/utils.py") is that package's code.
KNOWN_PACKAGES = frozenset({
    "torch", "transformers", "deepspeed", "vllm", "accelerate", "peft", "datasets", "trl", "lightning",
    "pytorch_lightning", "ray", "jax", "flax", "numpy", "safetensors", "triton", "apex", "xformers", "flash_attn",
    "bitsandbytes", "torchvision", "tensorflow", "keras", "horovod", "megatron", "sglang", "tokenizers", "jaxlib"})
_SOURCE_TREE = re.compile(r"(?:^|[/\\])(?P<module>(?P<package>" + "|".join(sorted(KNOWN_PACKAGES))
                          + r")[/\\].+?)\.(?:py|cpp|cc|cu|h)$")


def known_package(path: str) -> str | None:
    """The known package a path without site-packages belongs to (``torch`` for ``torch/cuda/__init__.py``)."""
    m = _SOURCE_TREE.search(path)
    return m.group("package") if m else None


def module_of(frame: Frame) -> str | None:
    """The dotted module of a library frame (``torch.distributed.fsdp._flat_param``); None for the user's own."""
    if frame.package is None or frame.package == "python":
        return None
    return module_of_path(frame.path)


def module_of_path(path: str) -> str | None:
    """The dotted module of a library source file, Python or native (``deepspeed.ops.csrc.aio.py_lib.x`` for
    ``.../site-packages/deepspeed/ops/csrc/aio/py_lib/x.cpp``); None when it is no known library's."""
    m = _INSTALLED.search(path) or _SOURCE_TREE.search(path)
    if m is None:
        return None
    module = re.sub(r"[/\\]", ".", m.group("module"))
    return module.removesuffix(".__init__")


def advice_for_source(path: str) -> str | None:
    """The advice of the component a native source file belongs to (an assertion's ``file.cpp:LINE``)."""
    module = module_of_path(path)
    return advice_for_module(module) if module is not None else None


def advice_for_module(module: str) -> str | None:
    """The advice of the component a dotted module belongs to: a source file's, or the module of an exception's
    qualified class name (``megatron.core.dist_checkpointing.core.CheckpointingException``)."""
    return next((entry.advice for entry in COMPONENTS if not entry.functions and entry.covers(module, "")), None)


def component_advice(frames: list[Frame]) -> str | None:
    """The advice of the deepest component the failure was raised in, searching the library frames below the
    user's own last frame (outermost first in ``frames``); None when no known component is there."""
    for frame in reversed(frames):
        if frame.package is None:
            return None  # the user's own code called in here: components above it are not where it failed
        module = module_of(frame)
        if module is None:
            continue
        for entry in COMPONENTS:
            if entry.covers(module, frame.function):
                return entry.advice
    return None
