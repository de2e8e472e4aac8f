"""Shared pieces of signature patterns: one condition, every way programs write it.

The same condition reaches a log in many framings: a CUDA error as ``CUDA error: X`` (PyTorch >= 1.x),
``cuda runtime error (N) : X`` (PyTorch 0.x), ``THCudaCheck FAIL file=... error=N : X`` (THC), ``Cuda failure
N 'X'`` (NCCL), ``CUDA error N at file:line: X`` (ggml), ``CUDA runtime error in call: X`` (TensorRT-LLM);
ENOSPC as ``No space left on device``, ``[Errno 28]``, ``os error 28`` (Rust), ``errno 28``.
A pattern names the condition once, as ``{{cuda_error}}`` or ``{{errno:ENOSPC}}``, and the library expands
it when the pattern is compiled (signatures/README.md lists the pieces). Signature files stay data: a piece
is regex text from the table below, never anything a file supplies.
"""

from __future__ import annotations

import re

# Every framing of a CUDA runtime/driver error message, up to the message itself.
# (ggml's CUDA check in older llama.cpp releases: "CUDA error 719 at .../ggml-cuda.cu:8008: unspecified launch failure";
# TensorRT-LLM's cudaUtils.h check(), FasterTransformer and TensorRT plugins: "CUDA runtime error in <call>: <error>";
# PaddlePaddle's enforce.h: "CUDA error(700), an illegal memory access was encountered.", "Hip error(98), ...";
# PaddlePaddle's legacy CHECK_CUDA (paddle/cuda/src/hl_cuda_device.cc): "Check failed: cudaSuccess == cudaStat (0 vs.
# 39) Cuda Error: uncorrectable ECC error encountered";
# torch_memory_saver's csrc/utils.h (SGLang, verl): "[torch_memory_saver.cpp] CUresult error: 2 (out of memory)  file=...";
# the error's name, then its string: CuPy's CUDARuntimeError and CUDADriverError ('%s: %s' of cudaGetErrorName /
# cuGetErrorName and the error string: "cudaErrorInvalidDevice: invalid device ordinal",
# "CUDA_ERROR_OUT_OF_MEMORY: out of memory"), as XLA's and JAX's CUDA driver checks quote it too)
CUDA_ERROR = (r"(?:(?:CUDA error|CUDA Error|Cuda Error|CUDA driver error|Triton Error \[CUDA\]|cuda runtime error \(\d{1,4}\)"
              r"|THCudaCheck FAIL file=\S{1,300} line=\d{1,7} error=\d{1,4}|CUDA error \d{1,4} at [^\s:]{1,400}:\d{1,7}"
              r"|CUDA runtime error in [^\n]{1,200}?)"
              r" ?: ?|Cuda failure (?:\d{1,4} )?'|(?:CUDA|Hip) error\(\d{1,4}\), |(?:CUresult|cudaError) error: \d{1,4} \("
              r"|\bcudaError[A-Z][A-Za-z]{1,60}: |\bCUDA_ERROR_[A-Z_]{2,60}: )")

# TensorFlow's and XLA's status codes as a status prints them (tensorflow/core/platform/status.cc before TF 2.4,
# absl::StatusCodeToString since: "Invalid argument" / "INVALID_ARGUMENT"), each family in a named group a fix step's
# `when` can test. Out of range (a tf.data iterator's end of input) and Cancelled (the consequence of another
# failure) are left out: neither is a cause.
TF_CODE = ("(?:(?P<invalid>Invalid argument|INVALID_ARGUMENT)|(?P<precondition>Failed precondition|FAILED_PRECONDITION)"
           "|(?P<missing>Not found|NOT_FOUND|Unimplemented|UNIMPLEMENTED|Already exists|ALREADY_EXISTS)"
           "|(?P<internal>Internal|INTERNAL|Unknown|UNKNOWN|Data loss|DATA_LOSS)"
           "|(?P<peer>Unavailable|UNAVAILABLE|Deadline exceeded|DEADLINE_EXCEEDED|Aborted|ABORTED)"
           "|(?P<access>Permission denied|PERMISSION_DENIED|Unauthenticated|UNAUTHENTICATED))")

# errno names: (number on Linux, strerror texts of glibc and musl, other common wordings)
ERRNO: dict[str, tuple[int, tuple[str, ...]]] = {
    "ENOENT": (2, ("No such file or directory",)),
    "EIO": (5, ("Input/output error", "I/O error")),
    "ENOMEM": (12, ("Cannot allocate memory", "Out of memory")),
    "EACCES": (13, ("Permission denied",)),
    "ENOSPC": (28, ("No space left on device",)),
    "EROFS": (30, ("Read-only file system",)),
    "EMFILE": (24, ("Too many open files",)),
    "EPIPE": (32, ("Broken pipe",)),
    "EADDRINUSE": (98, ("Address already in use", "Address in use")),
    "ECONNRESET": (104, ("Connection reset by peer",)),
    "ETIMEDOUT": (110, ("Connection timed out", "Operation timed out")),
    "ECONNREFUSED": (111, ("Connection refused",)),
    "EDQUOT": (122, ("Disk quota exceeded", "Quota exceeded")),
}

# getaddrinfo() failures (not errno): glibc's gai_strerror texts, musl's, and a shell tool's.
RESOLVER: dict[str, tuple[str, ...]] = {
    "EAI_NONAME": ("Name or service not known", "nodename nor servname provided, or not known",
                   "Name does not resolve", "No address associated with hostname"),
    "EAI_AGAIN": ("Temporary failure in name resolution", "Try again"),
}

_PIECE = re.compile(r"\{\{([a-z_]{1,20}(?::[A-Z_]{1,20})?)\}\}")


def _errno(name: str) -> str:
    number, texts = ERRNO[name]
    forms = [re.escape(text) for text in texts]
    forms += [rf"\[Errno {number}\]", rf"os error {number}\b", rf"errno(?: =|:)? ?{number}\b", rf"\b{name}\b"]
    return "(?:" + "|".join(forms) + ")"


def _resolver(name: str) -> str:
    return "(?:" + "|".join([*(re.escape(text) for text in RESOLVER[name]), rf"\b{name}\b"]) + ")"


def expand(source: str) -> str:
    """A pattern with its ``{{piece}}`` references replaced by their regex text. Raises ValueError for an
    unknown piece, so a signature that names one is reported when it is loaded."""
    def piece(m: re.Match[str]) -> str:
        name = m.group(1)
        if name == "cuda_error":
            return CUDA_ERROR
        if name == "tf_code":
            return TF_CODE
        kind, _, which = name.partition(":")
        if kind not in ("errno", "resolver"):
            raise ValueError(f"unknown pattern piece {{{{{name}}}}}, expected cuda_error, tf_code, errno:NAME or "
                             "resolver:NAME")
        table = ERRNO if kind == "errno" else RESOLVER
        if which not in table:
            raise ValueError(f"unknown pattern piece {{{{{name}}}}}, expected one of "
                             f"{', '.join(kind + ':' + key for key in table)}")
        return _errno(which) if kind == "errno" else _resolver(which)

    if "{{" not in source:
        return source
    return _PIECE.sub(piece, source)
