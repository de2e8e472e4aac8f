"""Read one log line: its bytes become masked text, the context its prefixes state, its message, and its
best signature match.

This is the one reading both the scanner and ``faultline signatures check`` use, so what a signature's
author tests is what diagnoses. What it returns depends on the line's bytes and the signature library
only, which is why the language server can cache it per document (cache.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..masking import mask_secrets
from ..matcher import LineMatcher, fill_message
from ..model import LineContext
from .normalize import normalize_line
from .prefixes import parse_line

DEFAULT_MAX_LINE_BYTES = 1024 * 1024
# A line shown as evidence without a match (a file's last line, a silent rank's last words) keeps this much.
DISPLAY_CHARS = 2000
_MAX_FIELD_CHARS = 500


@dataclass(frozen=True)
class LineReading:
    """One candidate line, read: its masked text, its prefixes' context, its message, and its best match."""

    text: str
    context: LineContext
    message: str
    signature_index: int | None  # the matching signature in LineMatcher.signatures (None: no match)
    fields: dict[str, str]  # the match's captures, each cut at 500 characters ({} without a match)
    event_message: str  # the signature's message filled from them ('' without a match)


def read_line(raw: bytes | bytearray, matcher: LineMatcher, keyword_ids: Iterable[int],
              max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, where: str = "") -> LineReading:
    """Read the bytes of one line (no newline), tried against the signatures its keywords select.

    Masked before anything else sees it: captured fields and messages inherit the masking. A line cut at
    ``max_line_bytes`` may end in the head of a secret too short for its rule, so that trailing fragment is
    masked too.
    """
    text = mask_secrets(normalize_line(raw, max_line_bytes), truncated=len(raw) >= max_line_bytes)
    context, message = parse_line(text)
    signature_indexes = matcher.signatures_for(keyword_ids, context.level)
    match = matcher.match(message, signature_indexes, where) if signature_indexes else None
    if match is None:
        return LineReading(text, context, message, None, {}, "")
    fields = {k: v[:_MAX_FIELD_CHARS] for k, v in match.fields.items()}
    return LineReading(text, context, message, match.index, fields, fill_message(match.signature.message, fields))


def display_text(raw: bytes | bytearray) -> str:
    """A line as shown without being matched: clean, masked, at most ``DISPLAY_CHARS`` characters."""
    return mask_secrets(normalize_line(raw, DISPLAY_CHARS), truncated=len(raw) > DISPLAY_CHARS)
