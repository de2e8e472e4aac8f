"""Turn one raw log line (bytes) into clean text without losing its line number.

Handles invalid UTF-8 (replaced), ANSI/VT escape sequences (also as syslog escapes them, ``#033[31m``),
``\\r`` progress-bar rewrites (the text a terminal would finally show), CRLF endings, NUL and other C0/C1
control characters, and absurdly long lines (the kept text is capped; the line itself still counts).
"""

from __future__ import annotations

import re

# CSI (ESC [ ... final), OSC (ESC ] ... BEL/ST), and two-byte ESC sequences.
_ANSI_SOURCE = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
_ANSI = re.compile(_ANSI_SOURCE)
_ANSI_BYTES = re.compile(_ANSI_SOURCE.encode())
# The same CSI sequences as rsyslog writes them (control characters escaped as '#' and three octal digits: ESC
# is "#033"), in logs collected through syslog or journald: "#033[2m#033[33m(raylet)#033[0m ...".
_SYSLOG_ANSI = re.compile(r"#033\[[0-?]*[ -/]*[@-~]")
# C0 controls but tab, DEL, and the C1 controls (U+0080-U+009F: U+009B is CSI and U+009D OSC, which some
# terminals obey): a log line must not be able to drive the terminal that shows a report.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

DEFAULT_MAX_LINE_CHARS = 64 * 1024


def normalize_line(raw: bytes | bytearray | str, max_chars: int = DEFAULT_MAX_LINE_CHARS) -> str:
    """Return the readable text of one line (no trailing newline)."""
    if not isinstance(raw, str):
        if len(raw) > max_chars * 4:
            raw = raw[: max_chars * 4]
        text = raw.decode("utf-8", errors="replace")
    else:
        text = raw[: max_chars * 4] if len(raw) > max_chars * 4 else raw
    text = text.rstrip("\n")
    if text.endswith("\r"):
        text = text.rstrip("\r")
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "#033[" in text:
        text = _SYSLOG_ANSI.sub("", text)
    if "\r" in text:
        text = last_visible_segment(text)
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    if len(text) > max_chars:
        text = text[:max_chars]
    return text


def has_escapes(buf: bytes | bytearray, end: int) -> bool:
    """Whether ``buf[:end]`` may hold an escape sequence or a CRLF (two single-byte searches, no copy)."""
    return buf.find(b"\x1b", 0, end) != -1 or buf.find(b"\r", 0, end) != -1


def without_escapes(buf: bytes | bytearray) -> bytes | bytearray:
    """A buffer of whole lines with its ANSI escape sequences and the CRs of CRLF line ends removed, so that a
    keyword coloured in the middle ("NCCL \\x1b[31merror") or a line's CR is not between the prefilter and the
    text; unchanged (the same object) when it holds neither. No sequence holds a newline: line numbers stay."""
    if b"\x1b" in buf:
        buf = _ANSI_BYTES.sub(b"", buf)
    if b"\r\n" in buf:
        buf = buf.replace(b"\r\n", b"\n")
    return buf


def last_visible_segment(text: str) -> str:
    """What a terminal shows after carriage-return rewrites: the last non-empty segment."""
    for segment in reversed(text.split("\r")):
        if segment.strip():
            return segment
    return ""


_CONTROL_BYTES = bytes([*range(0, 9), *range(14, 32)])


def looks_binary(sample: bytes) -> bool:
    """True when a sample of a file is mostly not text (NULs or many control bytes)."""
    if not sample:
        return False
    if sample.count(b"\x00") > len(sample) // 100:
        return True
    controls = len(sample) - len(sample.translate(None, _CONTROL_BYTES))
    return controls > len(sample) // 10
