"""Join a line's continuations before it is matched: one logical line, numbered as its first physical line.

Pasted and terminal-captured logs break long lines: a terminal or a viewer wraps them at a fixed width (the
pieces after the first have no prefix of their own), and the kernel indents the continuation of a
multi-line message to where the first line's text began. A signature written for the whole message would
miss every piece (a keyword can even be cut in two). These rules are conservative: a piece
joins only when nothing about it looks like a record of its own (a prefix, a time stamp, a traceback frame).

Only candidate lines and their neighbours are looked at, a few byte comparisons each.
"""

from __future__ import annotations

import re

from .chunks import Buffer

MAX_PIECES = 8
MIN_WRAP_WIDTH = 80
_REPEAT_HEAD = 12  # a line that starts as the one before does is another record of that kind
# First bytes of a line that is a record of its own (a prefix, a stamp, indentation): such a line never
# continues the one before, so most candidate lines of a prefixed log are settled by two byte tests.
OWN_FIRST_BYTES = frozenset(b"[(<0123456789 \t")
# The start of a line that is a record of its own: a bracket or digit-led prefix or stamp, indentation, a
# host:pid prefix, a traceback header or frame, a C++ frame, an exception or log level word, a rule.
_OWN_RECORD = re.compile(
    rb"\s|\[|\(|<|\d|Traceback|File \"|frame #|Exception raised from|terminate called|During handling"
    rb"|The above exception|[A-Z][A-Za-z]{0,40}(?:Error|Exception|Warning)\b|[A-Z]{3,9}[ :]|[IWEFDC]\d{4} "
    rb"|[\w.-]{1,100}:\d{1,10}:\d{1,10} |[\w.-]{1,64}: |\*\*\*|==|--|\|")
_KERNEL_INDENT = b" " * 8
# A Python traceback frame ends with its function's name: a word at its end is not cut.
_COMPLETE_FRAME = re.compile(rb' *File "[^"\n]+", line \d+, in [\w<>.]+$')
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_STAMPED_PREFIX = re.compile(rb"\[ *\d{1,8}\.\d{3,9}\] |\[[^\]\n]{4,40}\] ")


def _line_before(buf: Buffer, start: int) -> tuple[int, int] | None:
    """Bounds (start, end) of the line before the one that starts at ``start`` (end excludes the newline)."""
    if start <= 0:
        return None
    end = start - 1
    return buf.rfind(b"\n", 0, end) + 1, end


def _line_after(buf: Buffer, end: int, limit: int) -> tuple[int, int] | None:
    """Bounds of the line after the one that ends at ``end`` (its newline), within ``buf[:limit]``."""
    start = end + 1
    if start >= limit:
        return None
    stop = buf.find(b"\n", start, limit)
    return start, stop if stop != -1 else limit


def _continues(buf: Buffer, prev: tuple[int, int], cur: tuple[int, int],
               before_prev: tuple[int, int] | None) -> bytes | None:
    """The separator to join ``cur`` onto ``prev`` with, when ``cur`` continues it; None when it does not."""
    p_start, p_end = prev
    c_start, c_end = cur
    if c_end <= c_start:
        return None
    width = p_end - p_start
    head = buf[c_start:c_start + 64]
    indent = len(head) - len(head.lstrip(b" "))
    if indent >= len(_KERNEL_INDENT):
        # The kernel (and dmesg) indent a message's continuation to where the first line's text began.
        stamp = _STAMPED_PREFIX.match(buf, p_start, p_end)
        if stamp is not None and indent == stamp.end() - p_start:
            return b" "
        p_head = buf[p_start:p_start + 64]
        if len(p_head) - len(p_head.lstrip(b" ")) == indent and not buf.startswith(b"File", p_start + indent):
            return b" "  # a further line of the same indented continuation
        return None
    if width < MIN_WRAP_WIDTH or _OWN_RECORD.match(buf, c_start, c_end):
        return None
    if buf[c_start:c_start + _REPEAT_HEAD] == buf[p_start:p_start + _REPEAT_HEAD]:
        return None  # the same record again (repeated lines often share a width), not a piece of it
    # Wrapped at a fixed width: a middle piece has that width too; the last piece follows a middle one; a
    # line cut in two is cut inside a word.
    middle = c_end - c_start == width
    last = (before_prev is not None and before_prev[1] - before_prev[0] == width
            and not _OWN_RECORD.match(buf, p_start, p_end))
    inside_word = (buf[p_end - 1] in _WORD and buf[c_start] in _WORD
                   and _COMPLETE_FRAME.match(buf, p_start, p_end) is None)
    return b"" if middle or last or inside_word else None


def stands_alone(buf: Buffer, start: int, end: int, limit: int) -> bool:
    """A quick, sure answer for most lines: this line neither continues the one before (it is a record of its
    own) nor is continued by the next (too short to have been wrapped, or the next line is a record)."""
    if buf[start] not in OWN_FIRST_BYTES and _OWN_RECORD.match(buf, start, end) is None:
        return False  # it may continue the line before
    if buf.startswith(_KERNEL_INDENT, start):
        return False  # it may be the indented continuation of a kernel message
    after = end + 1
    if after >= limit:
        return True
    following = buf[after]
    if following == 0x20:  # an indented next line continues only a stamped one (the kernel's)
        return buf[start] != 0x5B
    if end - start < MIN_WRAP_WIDTH or following in OWN_FIRST_BYTES:
        return True
    stop = buf.find(b"\n", after, limit)
    return _OWN_RECORD.match(buf, after, stop if stop != -1 else limit) is not None


def logical_line(buf: Buffer, start: int, end: int, limit: int) -> tuple[int, int, bytes | None]:
    """The logical line the physical line ``buf[start:end]`` belongs to: its first line's start, its last line's
    end, and its joined bytes (None when the line stands alone, which is nearly always)."""
    pieces: list[tuple[int, int]] = [(start, end)]
    seps: list[bytes] = []
    first = (start, end)
    for _ in range(MAX_PIECES):  # backwards: is this line a continuation of the one before?
        prev = _line_before(buf, first[0])
        if prev is None:
            break
        sep = _continues(buf, prev, first, _line_before(buf, prev[0]))
        if sep is None:
            break
        pieces.insert(0, prev)
        seps.insert(0, sep)
        first = prev
    last = (start, end)
    for _ in range(MAX_PIECES):  # forwards: does the next line continue this one?
        nxt = _line_after(buf, last[1], limit)
        if nxt is None:
            break
        sep = _continues(buf, last, nxt, _line_before(buf, last[0]))
        if sep is None:
            break
        pieces.append(nxt)
        seps.append(sep)
        last = nxt
    if len(pieces) == 1:
        return start, end, None
    joined = bytearray(buf[pieces[0][0]:pieces[0][1]])
    for sep, (p_start, p_end) in zip(seps, pieces[1:], strict=True):
        piece = bytes(buf[p_start:p_end])
        joined += sep + (piece.lstrip(b" ") if sep == b" " else piece)
    return pieces[0][0], pieces[-1][1], bytes(joined)
