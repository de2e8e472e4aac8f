"""Lines of a document as the editor counts them, and how the engine's line numbers map onto them.

LSP ends a line at ``\\n``, ``\\r\\n`` or a lone ``\\r``; the engine counts ``\\n`` only and reads a line
holding progress-bar ``\\r`` rewrites as the text a terminal would finally show. For a log without lone
``\\r`` the two numberings agree; otherwise one engine line spans several editor lines and its event
belongs on the editor line holding the last visible segment (the text the engine matched).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from lsprotocol.types import PositionEncodingKind
from pygls.workspace.position_codec import PositionCodec

_BREAK = re.compile(r"\r\n|\r|\n")
_NEWLINE = re.compile(r"\n")


@dataclass(frozen=True)
class LineIndex:
    """Line starts of one text snapshot (editor numbering, 0-based) plus the engine-line mapping."""

    text: str
    starts: tuple[int, ...]
    # engine line n (1-based) spans editor lines engine_first[n-1] .. engine_first[n]-1; None when 1:1.
    engine_first: tuple[int, ...] | None = None

    @classmethod
    def build(cls, text: str) -> LineIndex:
        if "\r" not in text:
            return cls(text, (0, *(m.end() for m in _NEWLINE.finditer(text))))
        starts = [0]
        engine_first = [0]
        for match in _BREAK.finditer(text):
            starts.append(match.end())
            if match.group().endswith("\n"):
                engine_first.append(len(starts) - 1)
        return cls(text, tuple(starts), tuple(engine_first))

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line_text(self, line: int) -> str:
        """The text of editor line ``line`` (0-based), without its line break; '' past the end."""
        if not 0 <= line < len(self.starts):
            return ""
        end = self.starts[line + 1] if line + 1 < len(self.starts) else len(self.text)
        text = self.text[self.starts[line]:end]
        if text.endswith("\r\n"):
            return text[:-2]
        if text.endswith(("\n", "\r")):
            return text[:-1]
        return text

    def editor_line(self, engine_line: int) -> int:
        """The editor line (0-based) where the engine's line ``engine_line`` (1-based) shows its text."""
        last = len(self.starts) - 1
        if self.engine_first is None:
            return min(max(engine_line - 1, 0), last)
        index = min(max(engine_line - 1, 0), len(self.engine_first) - 1)
        first = self.engine_first[index]
        stop = self.engine_first[index + 1] if index + 1 < len(self.engine_first) else len(self.starts)
        for line in range(stop - 1, first - 1, -1):
            if self.line_text(line).strip():
                return line
        return first

    def engine_line(self, editor_line: int) -> int:
        """The engine's line number (1-based) of an editor line (0-based)."""
        if self.engine_first is None:
            return editor_line + 1
        return bisect_right(self.engine_first, editor_line)


def client_units(text: str, codec: PositionCodec) -> int:
    """The length of ``text`` in the client's position units (what ``codec.client_num_units`` answers, but
    computed in C: pygls counts character by character, ~0.1 s for a thousand diagnostics on long lines)."""
    if text.isascii():
        return len(text)
    if codec.encoding == PositionEncodingKind.Utf8:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if codec.encoding == PositionEncodingKind.Utf32:
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2
