"""The remedy an exception's own message states: a library that knows what went wrong often says what to do.

``ValueError: AcceleratorState has already been initialized and cannot be changed, restart your runtime completely
and pass `mixed_precision='bf16'` to `Accelerator()`.`` names the setting to change; ``... Please set
`--mem-fraction-static` to a smaller value`` says what to set.
A root line that only a generic signature describes (one that names the exception's class, nothing more) gets
that remedy as the first step of its fix: the sentences of the message that tell the reader what to do, and the
settings, options and environment variables it names; for an ``AssertionError``, the failed ``assert`` statement
the traceback quotes just above it and the settings its condition reads (``args.sequence_parallel``). The message is
read from the root line and the few lines under it that continue it (a message printed over several lines), read
again from an input of at most ``REREAD_MAX_BYTES`` (beyond, the root line alone). Nothing is invented: a message
with no instruction and no named setting leaves the fix as it is. Every quoted piece is secret-masked.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..library import Fix
from ..lines.prefixes import parse_line
from ..masking import mask_secrets
from .frames import REREAD_MAX_BYTES
from .root_cause import SPECIFIC_PRIORITY  # below it a signature names only the exception's class
from .state import Reasoning

CONTINUATION_LINES = 4  # lines under the root line that may continue its message
ASSERT_LOOKBACK = 4  # the root line and the lines above it where the failed assert statement may be
MIN_PIECE_CHARS = 60  # a wrapped root line's first piece is at least this long (terminal widths start at 80)
MAX_QUOTED_CHARS = 400
MAX_SETTINGS = 5

# A sentence that tells the reader what to do: it starts with an imperative or a suggestion, or asks politely.
_INSTRUCTION = re.compile(
    r"^(?:(?:if|when|to)\b[^,]{0,120},\s*)?"  # "If you want X, ..." / "To fix this, ..."
    r"(?:please|make sure|ensure|try|consider|set|use|pass|specify|increase|decrease|reduce|lower|raise|enable"
    r"|disable|install|upgrade|downgrade|update|remove|add|call|run|check that|you (?:can|could|should|may|might"
    r"|must|need to|have to|will need to|may want to))\b"
    r"|\b(?:please|make sure|did you mean|you (?:should|need to|must|may want to|can try)"
    r"|you can (?:also |instead )?(?:set|use|pass|try|disable|enable|increase|reduce|lower|install|upgrade))\b",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-Z`'\"(])")
# Settings a message names: code spans, command-line options, environment variables, keyword arguments.
_CODE_SPAN = re.compile(r"`([^`\s][^`]{0,80})`")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)")
# Not a macro: "RET_CHECK failure", "TORCH_CHECK failed", "C10_CUDA_CHECK(" name the check that failed, not a setting
_ENV_VAR = re.compile(r"\b([A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+)\b(?!\s*(?:\(|fail))")
_KEYWORD_ARG = re.compile(r"(?<![\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?==)")
_QUOTED_NAME = re.compile(r"['\"]([a-z][a-z0-9]*(?:_[a-z0-9]+)+)['\"]")
# The failed statement of an AssertionError, as the traceback quotes it, and the settings its condition reads.
_ASSERT_SOURCE = re.compile(r"^\s*assert\s+(?P<condition>.+?)\s*(?:,\s*\\?.*)?$")
_FRAME_LINE = re.compile(r'^\s*File "[^"]+", line \d+')
# A quoted source line that is a condition, not a statement (the middle line of a multi-line assert).
_CONDITION = re.compile(r"^\s*(?!(?:raise|return|if|elif|while|for|def|class|with|yield|import|from|del|print)\b)"
                        r"[^=]*?(?:==|!=|<=|>=| < | > |\bnot in\b|\bin\b|\bis\b|\band\b|\bor\b|\bisinstance\(|\ball\(|\bany\()")
_SETTING_READ = re.compile(r"\b(?:self\.)?(?:args|config|cfg|conf|opt|opts|hparams|params|training_args|model_args"
                           r"|data_args)\.(?P<name>[A-Za-z_]\w{0,60})")
# A line under the exception line that is not more of its message (a JVM stack frame, "\tat org.x.Y.f(Y.java:12)",
# or its "Caused by: ..." and "... 12 more" lines, end a Java exception's message).
_NOT_MESSAGE = re.compile(r'^\s*(?:$|Traceback \(|File "|During handling|The above exception|\[|\w+(?:\.\w+)*(?:Error|'
                          r'Exception|Warning|Interrupt)\b:?|\d{4}-\d\d-\d\d|[IWEF]\d{4} '
                          r'|at [\w$.<>]{1,300}\(|Caused by: |\.\.\. \d{1,6} more\b)')


def remedy_from_message(r: Reasoning) -> None:
    root, sig = r.diagnosis.root_cause, r.diagnosis.root_signature
    if root is None or sig is None or sig.priority >= SPECIFIC_PRIORITY:
        return
    _, message = parse_line(root.text)  # the whole logical line: its wrapped pieces are joined in it
    summary = r.files.get(root.file)
    lookup = r.lines_before_lookup if summary is None or summary.bytes <= REREAD_MAX_BYTES else None
    above: list[str] = []  # the lines above the root line, and the root line last
    if lookup is not None:
        count = CONTINUATION_LINES + _pieces(root.text)
        # one read: the lines above the root (where the failed assert is quoted), the root, those under it
        window = lookup(root.file, root.line + 1 + count, count + ASSERT_LOOKBACK) or []
        at = _root_index(window, root.text, min(ASSERT_LOOKBACK - 1, root.line - 1))
        if at is not None:
            above = window[:at + 1]
            message = " ".join([message, *_continuation(window[at + 1:], root.text)])
    step = remedy_step(message)
    check = _failed_check(above, root.text)
    if check is not None:
        step = f"{step} {check}" if step is not None else check
    if step is not None and step not in sig.fix.steps:
        fix = sig.fix  # a step's condition stays with its step
        when = (None, *fix.step_when) if fix.step_when else ()
        r.diagnosis.root_signature = replace(sig, fix=Fix(fix.summary, (step, *fix.steps), fix.env, when))


def remedy_step(message: str) -> str | None:
    """The fix step a message's own words give (None: it states no remedy)."""
    sentences = [s.strip() for s in _SENTENCE_END.split(message) if s.strip()]
    instructions = [s for s in sentences if _INSTRUCTION.search(s)]
    settings = named_settings(message)
    parts = []
    if instructions:
        quoted = " ".join(instructions)
        if len(quoted) > MAX_QUOTED_CHARS:
            quoted = quoted[:MAX_QUOTED_CHARS - 1].rstrip() + "…"
        parts.append(f"The message says what to do: \u201c{mask_secrets(quoted)}\u201d")
    if settings:
        names = ", ".join(f"`{mask_secrets(name)}`" for name in settings)
        parts.append(f"{'It' if parts else 'The message'} names what to change: {names}")
    return ". ".join(parts) + "." if parts else None


def named_settings(message: str) -> list[str]:
    """Settings, options and environment variables a message names, in order, each once."""
    found: list[str] = []
    for pattern in (_CODE_SPAN, _OPTION, _ENV_VAR, _KEYWORD_ARG, _QUOTED_NAME):
        for match in pattern.finditer(message):
            name = match.group(1).strip()
            if pattern is _CODE_SPAN and not re.search(r"[_=.-]|^[a-z]+[A-Z]", name):
                continue  # a quoted plain word (`True`, `model`) names no setting
            if name not in found and not any(name in other for other in found):
                found.append(name)
    return found[:MAX_SETTINGS]


def _failed_check(window: list[str], root_text: str) -> str | None:
    """An AssertionError's failed ``assert`` statement, from the source line the traceback quotes just above the
    exception line (``window`` ends with the root line), with the settings its condition reads. Of an assert written
    over several lines, Python 3.11+ quotes only the condition's line under the frame: that line is the check."""
    if not window or "AssertionError" not in root_text:
        return None
    lines = [parse_line(text)[1] for text in window[:-1]]
    lines = [line for line in lines if not line.lstrip().startswith(("^", "~"))]  # not the caret marks
    if not lines:
        return None
    found = _ASSERT_SOURCE.match(lines[-1])
    if found is not None:
        condition = found.group("condition").strip()
    elif len(lines) >= 2 and _FRAME_LINE.match(lines[-2]) and _CONDITION.search(lines[-1]):
        # a multi-line ``assert (\n    cond\n), "message"``: Python 3.11+ quotes the condition's line alone
        condition = lines[-1].strip()
    else:
        return None
    if len(condition) > MAX_QUOTED_CHARS:
        return None
    names = [n for n in dict.fromkeys(m.group(0) for m in _SETTING_READ.finditer(condition)) if n != condition]
    names = names[:MAX_SETTINGS]
    named = f": it reads {', '.join(f'`{mask_secrets(n)}`' for n in names)}" if names else ""
    return f"The check that failed is `assert {mask_secrets(condition)}`{named}."


def _pieces(text: str) -> int:
    """How many physical lines a joined logical line may span beyond its first (wrapped at 80 columns at most)."""
    return min(8, len(text) // 80)


def _root_index(window: list[str], root_text: str, expected: int) -> int | None:
    """Where the root line is in ``window``: the line that begins the root's text (all of it, or a wrapped first
    piece of a terminal's width: a short line such as a bare prefix is no piece of it) nearest to where it should be
    (a window read past the end of the input holds more lines above it); None when it is not there."""
    root = root_text.rstrip()
    found = [i for i, text in enumerate(window)
             if len(text.rstrip()) >= min(len(root), MIN_PIECE_CHARS) and root.startswith(text.rstrip())]
    return min(found, key=lambda i: abs(i - expected)) if found else None


def _continuation(lines: list[str], root_text: str) -> list[str]:
    """The lines under the root line that continue its message, up to the first that does not. The root line's
    own wrapped pieces (already joined into its text) are passed over."""
    kept: list[str] = []
    for text in lines:
        if not kept and text.strip() and text.strip() in root_text:
            continue  # a piece of the root line itself
        _, message = parse_line(text)
        if _NOT_MESSAGE.match(message):
            break
        kept.append(message.strip())
    return kept[:CONTINUATION_LINES]
