"""Join a line's continuations before it is matched: one logical line, numbered as its first physical line.

Pasted and terminal-captured logs break long lines: a terminal or a viewer wraps them at a fixed width (the
pieces after the first have no prefix of their own), and the kernel indents the continuation of a
multi-line message to where the first line's text began. A signature written for the whole message would
miss every piece (a keyword can even be cut in two). These rules are conservative: a piece
joins only when nothing about it looks like a record of its own (a prefix, a time stamp, a traceback frame).

Only candidate lines and their neighbours are looked at, a few byte comparisons each.

A paste can also be word-wrapped (``fmt``, ``fold -s``, an editor's or a mail client's hard wrap): its pieces end
before a terminal's width and each break falls between words, where the next word would not have fitted.
:func:`_word_wrapped` reads that: the line before ends short of a width by less than the piece's first word needs.

A paste wrapped at a width that is not a usual terminal's (a window 149 columns wide) shows it: its longest
lines all have that one length. :func:`wrap_widths` finds such a width in the head of a file, and it counts as a
terminal's width for that file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .chunks import Buffer

MAX_PIECES = 8
MIN_WRAP_WIDTH = 80
# The widths terminals, CI log viewers and ``fold``/``fmt`` defaults wrap at.
TERMINAL_WIDTHS = frozenset({80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256})
MAX_WRAP_WIDTH = 400  # wider than any terminal or viewer a paste is copied from
_MIN_WRAPPED = 3  # distinct lines of the longest length: a width, not a coincidence
_WRAPPED_SHARE = 4  # ... and at least one in this many long lines has it
_REPEAT_HEAD = 12  # a line that starts as the one before does is another record of that kind
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")  # "=> STEP  749" starts as "=> STEP  748" does
# First bytes of a line that is a record of its own (a prefix, a stamp, indentation): such a line never
# continues the one before, so most candidate lines of a prefixed log are settled by two byte tests.
OWN_FIRST_BYTES = frozenset(b"[(<0123456789 \t")
# The start of a line that is a record of its own: a bracket or digit-led prefix or stamp, indentation, a
# host:pid prefix, a traceback header or frame, a C++ frame, an exception or log level word, a logger's name and
# level ("submitit INFO (<time>) - "), a rule.
_OWN_RECORD = re.compile(
    rb"\s|\[|\(|<|\d|Traceback|File \"|frame #|Exception raised from|terminate called|During handling"
    rb"|The above exception|[A-Z][A-Za-z]{0,40}(?:Error|Exception|Warning)\b|[A-Z]{3,9}[ :]|[IWEFDC]\d{4} "
    rb"|[\w.-]{1,100}:\d{1,10}:\d{1,10} |[\w.-]{1,64}: |[\w.-]{1,64} (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \("
    rb"|\*\*\*|==|--|\|")
# After a line of a terminal's width, a word's tail before a colon ("d: 65506) of binary") is the wrap's cut,
# not a logger's name.
_CUT_WORD = re.compile(rb"[a-z][A-Za-z0-9_]{0,11}[:)\],] ")
# After a line of a terminal's width, an opening parenthesis is the wrap's cut ("... segment /dev/shm/nccl-x "
# then "(size 14156128), error: ..."), unless it opens a prefix ("(raylet) ", "(RayWorker pid=1, ip=10.0.0.2) ");
# so is a bracket that a comma, a dot, a parenthesis or an equals sign follows once it closes: an index or a field of
# the text ("... socket type" then "[1], listen on ip[...]"), never a prefix ("[rank3]:", "[1,0]<stderr>:",
# "[E1129 ...] ", "[INFO] " go on with a colon, a space, a bracket or "<").
_CUT_BEFORE_OPENER = re.compile(rb"\((?![\w.-]{1,80}(?:[ ,][^)\n]{0,160})?\) )|\[[^\]\n]{0,40}\][,.;)=]")
_KERNEL_INDENT = b" " * 8
# gRPC core's error details, which TensorFlow and XLA print on the line after "Additional GRPC error information from
# remote target <t> while calling <method>:" (grpc's status debug string, a JSON object that starts with its "created"
# time): part of the error message above, not a record of its own.
_GRPC_DETAILS = b':{"created":"@'
_DIGITS = frozenset(b"0123456789")
_CAPITALS = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_PIECE_FIRST_BYTES = frozenset(b" abcdefghijklmnopqrstuvwxyz0123456789([")  # how _piece_after_filled's pieces begin
# A line that starts with a date or a time of day is a record of its own, whatever its width.
_STAMP_START = re.compile(rb"\d{4}[-/]\d\d[-/]\d\d|\d{1,2}:\d\d:\d\d|\d{2}-\d{2} \d\d:|\d{8}[ T]")
_NAME_TAIL = re.compile(rb"[\w<>.]{1,80}")
# A Python traceback frame ends with its function's name: only the rest of a cut name may follow it.
_COMPLETE_FRAME = re.compile(rb' *File "[^"\n]+", line \d+, in [\w<>.]+$')
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_STAMPED_PREFIX = re.compile(rb"\[ *\d{1,8}\.\d{3,9}\] |\[[^\]\n]{4,40}\] ")
# A word wrap breaks at the last space before its width: a line that ends shorter than a width by more than a long
# word's length was not broken by one.
MIN_WORD_WRAP = 56
_FIRST_WORD = re.compile(rb"[^ \n]{1,24}")
# What a word-wrapped line ends with (where the wrap fell): a word, or a comma, colon, semicolon or an opening bracket
# after one. A line that ends a sentence, a quotation, a rule or a bracket often ends a record as well.
_WRAPPED_LAST = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_,:;(")
# How a word-wrapped piece starts: with a lowercase word, or with a short number and what follows one in a sentence
# ("98 - Address already in use"); a capitalised word or a host or id that starts with a digit begins records too.
_WRAPPED_PIECE = re.compile(rb"[a-z]|\d{1,6}(?:[ ,.;:)\]]|$)")


@dataclass(frozen=True)
class WrapWidths:
    """The widths a file's lines may have been wrapped at (the usual terminals', and its own when its longest lines
    all share one length: at least three different lines, and a quarter of its long lines), and its widest line:
    a wrap at a width nobody knows cuts words only in lines that wide (0: not known)."""

    widths: frozenset[int] = TERMINAL_WIDTHS
    widest: int = 0
    # Two different lines have the widest length, or it is a terminal's: a viewer may have cut lines there. After the
    # one line that is the widest (a command line, a long message, or a cut one) only a word's lowercase rest is a piece.
    widest_shared: bool = True


USUAL_WRAP = WrapWidths()


def wrap_widths(sample: Buffer) -> WrapWidths:
    """The wrap widths of a file, from its head."""
    lengths: dict[int, set[bytes]] = {}
    long_lines = 0
    for line in bytes(sample).split(b"\n")[:-1]:  # the last piece may be cut by the sample's end
        if len(line) >= MIN_WRAP_WIDTH:
            long_lines += 1
            lengths.setdefault(len(line), set()).add(line)
    if not lengths:
        return WrapWidths(TERMINAL_WIDTHS, MIN_WRAP_WIDTH)
    widest = max(lengths)
    distinct = len(lengths[widest])
    shared = distinct >= 2 or widest in TERMINAL_WIDTHS
    if widest > MAX_WRAP_WIDTH or distinct < _MIN_WRAPPED or distinct * _WRAPPED_SHARE < long_lines:
        return WrapWidths(TERMINAL_WIDTHS, widest, shared)
    return WrapWidths(TERMINAL_WIDTHS | {widest}, widest)


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
               before_prev: tuple[int, int] | None, wrap: WrapWidths) -> bytes | None:
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
    if buf.startswith(_GRPC_DETAILS, c_start):
        return b" "  # the gRPC status details of the error above: the rest of its message, whatever its width
    if width < MIN_WRAP_WIDTH:
        if _word_wrap_break(buf, prev, cur, wrap) and not _same_head(buf, p_start, c_start):
            return b" "
        return None
    if _COMPLETE_FRAME.match(buf, p_start, p_end):
        # A frame that reads as complete continues only with the rest of a cut function name ("dler" after
        # "in _env_rendezvous_han"), never with another process's output printed after it.
        return b"" if _NAME_TAIL.fullmatch(buf, c_start, c_end) else None
    middle = c_end - c_start == width
    # The line before filled a terminal's width: what follows may be its rest, unless it is longer than that width
    # (no piece of a wrap is: the line before only has that width by chance). In bytes, so only for ASCII text: a
    # piece of multi-byte characters can take more bytes than the width in columns it was wrapped at.
    filled = width in wrap.widths and not (c_end - c_start > width and buf[c_start:c_end].isascii())
    if _OWN_RECORD.match(buf, c_start, c_end) and not (
            _digits_piece(buf, prev, cur, wrap) or ((filled or middle) and _space_piece(buf, c_start, c_end))
            or (filled and (_CUT_WORD.match(buf, c_start, c_end) or _CUT_BEFORE_OPENER.match(buf, c_start, c_end)))):
        return None
    if _same_head(buf, p_start, c_start):
        return None  # the same record again (repeated lines often share a width), not a piece of it
    # Wrapped at a fixed width: a middle piece has that width too; the last piece follows a middle one or a
    # first one of a terminal's width; a line cut in two is cut inside a word.
    last = (before_prev is not None and before_prev[1] - before_prev[0] == width
            and not _OWN_RECORD.match(buf, p_start, p_end))
    # A number followed by a capital ("max mem: 5038" then "Loss is nan") is two records, not one word cut.
    # (Only in a line as wide as the file's widest: a shorter line was not cut by the viewer; and when no other line
    # is that wide, "...benchmark.py" then "Process 1 exit ..." is two records too.)
    inside_word = (buf[p_end - 1] in _WORD and buf[c_start] in _WORD and width >= wrap.widest
                   and (wrap.widest_shared or buf[c_start] not in _CAPITALS)
                   and not (buf[p_end - 1] in _DIGITS and buf[c_start] in _CAPITALS))
    return b"" if middle or last or inside_word or filled else None


def _same_head(buf: Buffer, p_start: int, c_start: int) -> bool:
    """The line at ``c_start`` starts as the one at ``p_start`` does, numbers aside (a step's or an epoch's
    counter): another record of the same kind, not a piece of the one before."""
    cur = buf[c_start:c_start + _REPEAT_HEAD].translate(_DIGITS_AS_ZERO)
    return cur == buf[p_start:p_start + _REPEAT_HEAD].translate(_DIGITS_AS_ZERO)


def _word_wrapped(buf: Buffer, prev: tuple[int, int], cur: tuple[int, int], wrap: WrapWidths) -> bool:
    """``prev`` may end where a word wrap broke a line: it is shorter than a width that ``cur`` is not longer
    than, ends in a word (a wrap drops the space it breaks at), and ``cur``'s first word would not have fitted."""
    p_start, p_end = prev
    c_start, c_end = cur
    if buf[p_end - 1] not in _WRAPPED_LAST or buf[p_start] == 0x20 or buf.rfind(b" ", p_start, p_end) <= p_start:
        return False  # a wrap breaks an unindented line of several words after a word, at a space it drops
    if buf.startswith(b'File "', p_start):
        return False  # a traceback frame, then its source line
    first = _FIRST_WORD.match(buf, c_start, c_end)
    if first is None:
        return False
    width, piece = p_end - p_start, c_end - c_start
    fits = min((w for w in wrap.widths if w >= width), default=0)
    return fits >= piece and width + 1 + (first.end() - c_start) > fits


def _word_wrap_break(buf: Buffer, prev: tuple[int, int], cur: tuple[int, int], wrap: WrapWidths) -> bool:
    """A word wrap may have broken ``prev`` (shorter than a terminal's width) before ``cur``: ``cur`` starts as a
    piece does (checked first: it needs no look at ``prev``), ``prev`` is long enough, and the break is a wrap's."""
    return (_may_be_piece(buf, *cur) and MIN_WORD_WRAP <= prev[1] - prev[0] < MIN_WRAP_WIDTH
            and _word_wrapped(buf, prev, cur, wrap))


def _may_be_piece(buf: Buffer, start: int, end: int) -> bool:
    """A word-wrapped piece: a line that starts as one and is no record of its own, or one that the wrap made start
    with a number (that is no time stamp)."""
    if _WRAPPED_PIECE.match(buf, start, end) is None:
        return False
    if _OWN_RECORD.match(buf, start, end) is None:
        return True
    return buf[start] in _DIGITS and _STAMP_START.match(buf, start, end) is None


_PIECE_AFTER_SPACE = _WORD | frozenset(b"([{'\"")  # a word, or a bracket or quote that opens one


def _space_piece(buf: Buffer, start: int, end: int) -> bool:
    """A piece the wrap made start at a space between two words (one space, then a word or an opening bracket:
    "... store_based_barrier_key:1" then " (world_size=4, ...)")."""
    return end - start > 1 and buf[start] == 0x20 and buf[start + 1] in _PIECE_AFTER_SPACE


def _digits_piece(buf: Buffer, prev: tuple[int, int], cur: tuple[int, int], wrap: WrapWidths) -> bool:
    """A piece of a wrapped line that starts with a digit (an id or a number cut by the wrap): it has the
    previous piece's width, or follows a line of a terminal's width, and is no time stamp."""
    c_start, c_end = cur
    width = prev[1] - prev[0]
    return (buf[c_start] in _DIGITS and (c_end - c_start == width or width in wrap.widths)
            and _STAMP_START.match(buf, c_start, c_end) is None)


def _piece_after_filled(buf: Buffer, start: int, end: int, wrap: WrapWidths) -> bool:
    """A line that would be a record of its own, were the line before it not of a terminal's width: the wrap
    fell on a space, after a short word before a colon, or before a digit."""
    if start == 0:
        return False
    before = buf.rfind(b"\n", 0, start - 1) + 1
    if start - 1 - before not in wrap.widths:
        return False
    if _COMPLETE_FRAME.match(buf, before, start - 1):
        return _NAME_TAIL.fullmatch(buf, start, end) is not None
    return (_space_piece(buf, start, end) or _CUT_WORD.match(buf, start, end) is not None
            or _CUT_BEFORE_OPENER.match(buf, start, end) is not None
            or _digits_piece(buf, (before, start - 1), (start, end), wrap))


def stands_alone(buf: Buffer, start: int, end: int, limit: int, wrap: WrapWidths = USUAL_WRAP) -> bool:
    """A quick, sure answer for most lines: this line neither continues the one before (it is a record of its
    own) nor is continued by the next (too short to have been wrapped, or the next line is a record)."""
    if buf[start] not in OWN_FIRST_BYTES and _OWN_RECORD.match(buf, start, end) is None:
        return False  # it may continue the line before
    if buf[start] in _DIGITS and end - start >= MIN_WRAP_WIDTH and start > 0:
        before = buf.rfind(b"\n", 0, start - 1) + 1
        if _digits_piece(buf, (before, start - 1), (start, end), wrap):
            return False  # it may be a piece of a wrapped line that the wrap made start with a digit
    if buf[start] in _PIECE_FIRST_BYTES and _piece_after_filled(buf, start, end, wrap):
        return False  # the rest of a line that filled a terminal's width
    if buf[start] in _DIGITS and start > 0 and _word_wrap_break(
            buf, (buf.rfind(b"\n", 0, start - 1) + 1, start - 1), (start, end), wrap):
        return False  # a number the word wrap moved to the start of this line
    if buf.startswith(_KERNEL_INDENT, start):
        return False  # it may be the indented continuation of a kernel message
    after = end + 1
    if after >= limit:
        return True
    following = buf[after]
    if following == 0x20:  # an indented next line continues a stamped one (the kernel's), or a line of a
        # terminal's width when the wrap fell on a space between two words
        if buf[start] == 0x5B:
            return False
        return not (end - start in wrap.widths and _space_piece(buf, after, min(after + 2, limit)))
    if end - start < MIN_WORD_WRAP:
        return True
    stop = buf.find(b"\n", after, limit)
    stop = stop if stop != -1 else limit
    if end - start < MIN_WRAP_WIDTH:
        return not _word_wrap_break(buf, (start, end), (after, stop), wrap)
    if following in OWN_FIRST_BYTES:
        # a line of a terminal's width may go on in a piece that starts with a digit, a parenthesis or a bracket
        return not (end - start in wrap.widths and (_digits_piece(buf, (start, end), (after, stop), wrap)
                                               or _CUT_BEFORE_OPENER.match(buf, after, stop) is not None))
    if end - start in wrap.widths and _CUT_WORD.match(buf, after, stop):
        return False
    return _OWN_RECORD.match(buf, after, stop) is not None


def logical_line(buf: Buffer, start: int, end: int, limit: int,
                 wrap: WrapWidths = USUAL_WRAP) -> tuple[int, int, bytes | None]:
    """The logical line the physical line ``buf[start:end]`` belongs to: its first line's start, its last line's
    end, and its joined bytes (None when the line stands alone, which is nearly always)."""
    pieces: list[tuple[int, int]] = [(start, end)]
    seps: list[bytes] = []
    first = (start, end)
    for _ in range(MAX_PIECES):  # backwards: is this line a continuation of the one before?
        prev = _line_before(buf, first[0])
        if prev is None:
            break
        sep = _continues(buf, prev, first, _line_before(buf, prev[0]), wrap)
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
        sep = _continues(buf, last, nxt, _line_before(buf, last[0]), wrap)
        if sep is None:
            break
        pieces.append(nxt)
        seps.append(sep)
        last = nxt
    if len(pieces) == 1:
        return start, end, None
    if b"" in seps and _word_wrapped_text(buf, pieces, seps):
        # A word wrap never cuts a word: its pieces that fill the width end where a space was.
        seps = [b" " if sep == b"" else sep for sep in seps]
    joined = bytearray(buf[pieces[0][0]:pieces[0][1]])
    for sep, (p_start, p_end) in zip(seps, pieces[1:], strict=True):
        piece = bytes(buf[p_start:p_end])
        joined += sep + (piece.lstrip(b" ") if sep == b" " else piece)
    return pieces[0][0], pieces[-1][1], bytes(joined)


def _word_wrapped_text(buf: Buffer, pieces: list[tuple[int, int]], seps: list[bytes]) -> bool:
    """Some break of a logical line is a word wrap's: a piece shorter than a terminal's width was continued
    without indentation."""
    return any(sep == b" " and start < end and end - start < MIN_WRAP_WIDTH and buf[nxt] != 0x20
               and not buf.startswith(_GRPC_DETAILS, nxt)
               for sep, (start, end), (nxt, _) in zip(seps, pieces[:-1], pieces[1:], strict=True))
