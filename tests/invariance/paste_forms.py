"""The forms a log takes on its way into a bug report, as text transforms.

Each transform returns the new text and a map from an original line number (1-based) to its number in the new
text (None: the line is gone). They imitate what happens to real pastes (see ../shared/reference/real-logs.md):
terminal colours, Windows line ends, a time-stamping tool or its removal, another PyTorch version's c10d
prefix, a terminal that wraps at 120 columns, rank prefixes dropped where the message names the rank, and a
paste of only the last lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable

LineMap = Callable[[int], "int | None"]
Transform = Callable[[str], "tuple[str, LineMap]"]


def _same(line: int) -> int | None:
    return line


def ansi(text: str) -> tuple[str, LineMap]:
    """Colour every line, and the error words inside lines (as coloured loggers and rich tracebacks do)."""
    out = []
    for line in text.split("\n"):
        line = re.sub(r"\b(Error|ERROR|error|Exception|FAILED|failed|WARN|WARNING)\b", "\x1b[1;31m\\1\x1b[0m", line)
        out.append(f"\x1b[32m{line}\x1b[0m" if line else line)
    return "\n".join(out), _same


def crlf(text: str) -> tuple[str, LineMap]:
    return text.replace("\n", "\r\n"), _same


# A stamp at a line's start, bare or alone in its brackets ("[2024-03-08 16:33:21] "); a bracket that holds more
# than the stamp ("[2025-02-24 14:09:34 TP14] ", a logger's prefix) is the program's own and stays.
_STAMP = re.compile(r"^(?:\[\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?\]"
                    r"|\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?):?\s")


_ANY_TIME = re.compile(r"\d\d:\d\d:\d\d|\[ *\d+\.\d{3,}\]")


def add_stamps(text: str) -> tuple[str, LineMap]:
    """A log without time stamps, stamped in front of every record (a tool like ``ts``), all with one instant so
    that the stamps add no order the log did not have. Indented continuation lines stay as they are. A log
    that has times of its own is left alone: a tool's stamps next to the program's would add an order of their
    own."""
    if _ANY_TIME.search(text):
        return text, _same
    out = []
    pieces = _wrapped_pieces(text)
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip() and not line[:1].isspace() and number not in pieces:
            line = "2024-03-08 16:33:21,416 " + line
        out.append(line)
    return "\n".join(out), _same


def _wrapped_pieces(text: str) -> set[int]:
    """Numbers of the lines that go on a wrapped line before them (the paste was wrapped after it was stamped, so
    they have no stamp of their own): the engine's reading of where a wrap fell."""
    from faultline.scan.continuation import logical_line

    buf = text.encode("utf-8", "surrogateescape")
    numbers: set[int] = set()
    start, number = 0, 1
    while start < len(buf):
        end = buf.find(b"\n", start)
        end = end if end != -1 else len(buf)
        if start < end and logical_line(buf, start, end, len(buf))[0] < start:
            numbers.add(number)
        start, number = end + 1, number + 1
    return numbers


def remove_stamps(text: str) -> tuple[str, LineMap]:
    return "\n".join(_STAMP.sub("", line) for line in text.split("\n")), _same


def wrap(width: int = 120) -> Transform:
    """A terminal or a viewer that breaks every line longer than ``width`` characters."""
    def apply(text: str) -> tuple[str, LineMap]:
        out: list[str] = []
        starts: list[int] = []
        for line in text.split("\n"):
            starts.append(len(out) + 1)
            out.extend([line] if len(line) <= width else [line[i:i + width] for i in range(0, len(line), width)])
        return "\n".join(out), lambda n: starts[n - 1] if 0 < n <= len(starts) else None
    return apply


_NEW_C10 = re.compile(r"^\[rank(\d+)\]:\[([EWIF])\d{3,4} [\d:.]+ (?:\d+ )?([\w.]+:\d+)\] ")


def old_c10(text: str) -> tuple[str, LineMap]:
    """PyTorch 2.3+ ``[rank3]:[E1206 10:00:00.123 77 ProcessGroupNCCL.cpp:607] [PG ... Rank 3] ...`` lines in
    the form of 1.x-2.2, ``[E ProcessGroupNCCL.cpp:607] [Rank 3] ...`` (where the message names the rank)."""
    out = []
    for line in text.split("\n"):
        m = _NEW_C10.match(line)
        if m and re.search(rf"\[(?:PG [^\]]*)?Rank {m.group(1)}\]", line[m.end():]):
            line = f"[{m.group(2)} {m.group(3)}] " + line[m.end():]
        out.append(line)
    return "\n".join(out), _same


_RANK_PREFIX = re.compile(r"^\[rank(\d+)\]:\s?")


def strip_named_rank_prefix(text: str) -> tuple[str, LineMap]:
    """``[rankN]:`` removed from lines whose message names rank N itself."""
    out = []
    for line in text.split("\n"):
        m = _RANK_PREFIX.match(line)
        if m and re.search(rf"\b[Rr]ank[ :=]+{m.group(1)}\b", line[m.end():]):
            line = line[m.end():]
        out.append(line)
    return "\n".join(out), _same


def tail_from(first: int) -> Transform:
    """A paste of the lines from ``first`` to the end."""
    def apply(text: str) -> tuple[str, LineMap]:
        return "\n".join(text.split("\n")[first - 1:]), lambda n: n - first + 1 if n >= first else None
    return apply


FORMS: dict[str, Transform] = {
    "ansi": ansi, "crlf": crlf, "add-stamps": add_stamps, "remove-stamps": remove_stamps, "wrap-120": wrap(120),
    "old-c10-prefix": old_c10, "named-rank-prefix-removed": strip_named_rank_prefix,
}
