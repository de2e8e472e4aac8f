"""Tell the source line of a traceback frame from the message it may quote.

Python prints each frame as ``File "...", line N, in f`` and, indented under it, that frame's source line. A
frame that raises shows the message's template there (``raise ValueError(f"`FlatParameter` requires uniform
dtype but got {dtype}")``), a line above the exception line itself: a signature matches both, and the source
line, being earlier, would be taken for the failure. A line indented under a frame line, behind the same
prefix (``[rank0]:``), is source code, not the failure, when the exception line follows it (after the rest of
the statement, its caret marks and the deeper frames); when the paste was cut before that line, the source line is the only
statement of the cause there is, and it stays. A look at a few lines around, only for lines a signature
matched.
"""

from __future__ import annotations

import re

from .chunks import Buffer

_FILE = b'File "'
_LINE_MARK = b'", line '
_MAX_PREFIX = 200  # a rank or time prefix and the frame's indentation
_LOOK_AHEAD_LINES = 80  # the rest of the statement, its caret marks, and the frames below it down to the exception
# An exception line: "ValueError: ...", "torch.OutOfMemoryError: ...", "KeyboardInterrupt", with the time stamp a tool
# put before each unindented line (``ts``, a collector), which the indented frame lines above it do not carry
_EXCEPTION_LINE = re.compile(
    rb"(?:(?:19|20)\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?Z? )?[A-Za-z_][\w.]{0,200}(?::|\s*$)")


def is_frame_source(buf: Buffer, start: int) -> bool:
    """Whether the line that starts at ``start`` is the source line printed under a traceback frame."""
    if start <= 0:
        return False
    prev_start = buf.rfind(b"\n", 0, start - 1) + 1
    at = buf.find(_FILE, prev_start, min(start - 1, prev_start + _MAX_PREFIX))
    if at < 0 or buf.find(_LINE_MARK, at, start - 1) < 0:
        return False
    if buf[at - 1:at] not in (b" ", b"\t", b":", b"]", b">") and at != prev_start:
        return False  # "File" inside a message, not the start of a frame
    prefix = bytes(buf[prev_start:at])
    # the same prefix and indentation as the frame line, then deeper indentation: its source line
    head = bytes(buf[start:start + len(prefix) + 2])
    if not _same_prefix(head, prefix + b"  "):
        return False
    return _exception_line_follows(buf, start, prefix)


_DIGITS = b"0123456789"


def _same_prefix(text: bytes, prefix: bytes) -> bool:
    """Whether ``text`` is ``prefix``, or the same but for its digits: a time stamp before each line (a collector's,
    ``ts``) differs from line to line in its digits only."""
    return text == prefix or (len(text) == len(prefix)
                              and text.translate(None, _DIGITS) == prefix.translate(None, _DIGITS))


def _exception_line_follows(buf: Buffer, start: int, frame_prefix: bytes) -> bool:
    """Whether the lines after this source line reach an exception line: behind the same prefix, two columns
    left of the frame lines (Python indents frames by two under ``Traceback``)."""
    if not frame_prefix.endswith(b"  "):
        return False
    prefix = frame_prefix[:-2]
    end = buf.find(b"\n", start)
    for _ in range(_LOOK_AHEAD_LINES):
        if end < 0:
            return False
        line_start = end + 1
        end = buf.find(b"\n", line_start)
        stop = end if end >= 0 else len(buf)
        if not _same_prefix(bytes(buf[line_start:line_start + len(prefix)]), prefix) or stop == line_start:
            return False  # another process's line, or a blank: the traceback was cut here
        text_start = line_start + len(prefix)
        if buf[text_start:text_start + 1] in (b" ", b"\t"):
            continue  # more of the statement, its caret marks, or the next frame
        return _EXCEPTION_LINE.match(buf, text_start, stop) is not None
    return False
