"""A root line whose failure an earlier line states first: the root moves up to that line.

An exception that repeats a message its program logged a little earlier: that earlier line states it first.

A library that logs an error before raising it (LightGBM's ``[LightGBM] [Fatal] Socket recv error, code: 54``,
then ``lightgbm.basic.LightGBMError: Socket recv error, code: 54``), or a runner that prints a worker's failure
before its traceback (torch_xla's ``Exception in device=TPU:0: <message>``, then the ``TypeError: <message>``),
states the failure on the earlier line. When only a generic signature (the exception's class) reads the root line,
or it is the ``what():`` line of an uncaught C++ exception (protobuf's ``[libprotobuf FATAL ...] <message>``, then
``terminate called ...`` and ``what():  <message>``), the root moves to the earlier line that carries the same
message. Lines that only quote it do not count: the source
line of the ``raise`` or ``assert`` in the traceback, a frame, an indented line.

An abort whose own message is generic (its signature captures a ``generic`` field: ggml's 250-odd
``GGML_ABORT("fatal error")`` sites, each printing what was wrong first, as ``fattn-common.cuh``'s
``Unsupported KV type combination for head_size 576.``): the root moves to the first line, in the block of lines
printed just above it, that says something failed or is unsupported.
"""

from __future__ import annotations

import re

from ..lines.prefixes import parse_line
from ..model import Event
from .frames import REREAD_MAX_BYTES
from .root_cause import SPECIFIC_PRIORITY
from .state import Reasoning

LOOKBACK_LINES = 30  # the logged line and the traceback of the raise that follows it
MIN_MESSAGE_CHARS = 20  # a shorter message ("CUDA error", "timeout") is said by unrelated lines too
_QUOTING = ("raise ", "assert ", "File \"", "Traceback", "During handling", "The above exception")
REASON_LOOKBACK_LINES = 6  # a generic abort's reason: the few lines printed right before it
# What a line that states a failure says (the reason printed before a generic abort)
_FAILURE_WORDS = re.compile(r"\b(?:unsupported|not supported|not implemented|invalid|error|failed|failure|cannot|can't|"
                            r"unable|mismatch|not found|out of memory|too (?:large|small|many))\b", re.IGNORECASE)


def move_to_earlier_statement(r: Reasoning) -> None:
    root, sig = r.diagnosis.root_cause, r.diagnosis.root_signature
    if root is None or sig is None:
        return
    # A generic exception's message, or the what() of an uncaught C++ exception (a library that LOG(FATAL)s and
    # throws, as protobuf's version check does, prints the message first)
    carried = root.fields.get("what") if sig.priority >= SPECIFIC_PRIORITY else root.fields.get("detail")
    message = (carried or "").strip()
    lines = _lines_above(r, root, LOOKBACK_LINES) if len(message) >= MIN_MESSAGE_CHARS else []
    for offset, text in enumerate(lines):
        if message not in text:
            continue
        context, said = parse_line(text)
        if said[:1].isspace() or said.startswith(_QUOTING) or (context.rank is not None and context.rank != root.rank):
            continue
        _move_root(root, lines, offset, f"stated first on this line; line {root.line} raises it again as "
                                        f"{root.fields.get('exc') or 'an exception'}")
        return


def move_generic_abort_to_its_reason(r: Reasoning) -> None:
    root = r.diagnosis.root_cause
    if root is None or not root.fields.get("generic"):
        return
    lines = _lines_above(r, root, REASON_LOOKBACK_LINES)
    reason: int | None = None  # the earliest line of the block above that states a failure
    for offset in range(len(lines) - 1, -1, -1):
        context, said = parse_line(lines[offset])
        if not said.strip() or (context.rank is not None and context.rank != root.rank):
            break  # the block printed before the abort ends at a blank line or another rank's line
        if not said[:1].isspace() and _FAILURE_WORDS.search(said):
            reason = offset
    if reason is not None:
        _move_root(root, lines, reason, f"printed just before the abort at line {root.line}, whose own message is generic")


def _lines_above(r: Reasoning, root: Event, count: int) -> list[str]:
    """The ``count`` lines above the root line, when its file is small enough to read again ([] otherwise)."""
    summary = r.files.get(root.file)
    if r.lines_before_lookup is None or summary is None or summary.bytes > REREAD_MAX_BYTES:
        return []
    return r.lines_before_lookup(root.file, root.line, count) or []


def _move_root(root: Event, lines: list[str], offset: int, note: str) -> None:
    """Root the failure at ``lines[offset]`` (``lines`` end just above the root line), saying why."""
    text = lines[offset]
    root.note = note
    root.line = root.line - len(lines) + offset
    root.text = text
    root.time = parse_line(text)[0].time or root.time
