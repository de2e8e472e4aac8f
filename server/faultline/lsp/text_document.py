"""pygls's open document, with edits that do not rebuild a large log line by line.

pygls applies an incremental edit by splitting the whole text into lines and writing every line back
(~0.15 s for a 200,000-line log, on the event loop, for each keystroke), and finds a line by splitting
again. Here the document keeps the offsets where its lines start; an edit is two offsets, one slice-and-join
of the text and an update of the offsets after it. Positions are converted by pygls's own code on the one
line concerned, and the edit has pygls's exact semantics (clamping, ranges past the end), so the text is
always what pygls would have made of it. A text holding a line break other than ``\\n`` (``\\r``, or one
of the separators ``str.splitlines`` honours) takes pygls's path.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from functools import partial
from typing import Any, overload

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

_NEWLINE = re.compile(r"\n")
# Line boundaries of str.splitlines (pygls's notion of a line) other than "\n". Tested one by one with
# ``in`` (a memchr each, ~2 ms for 30 MB): a character-class regex takes ~85 ms on the same text.
_OTHER_BREAKS = ("\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e")
_OTHER_BREAKS_NON_ASCII = ("\x85", "\u2028", "\u2029")


def _only_newlines(text: str) -> bool:
    """Whether ``text`` breaks lines with "\n" only (as ``str.splitlines`` sees it)."""
    if any(char in text for char in _OTHER_BREAKS):
        return False
    return text.isascii() or not any(char in text for char in _OTHER_BREAKS_NON_ASCII)


class _Lines(Sequence[str]):
    """The lines of a text (line ends kept, as ``str.splitlines(True)``), by offset, without splitting it."""

    def __init__(self, source: str, starts: list[int]) -> None:
        self.source = source
        self.starts = starts
        self.size = len(starts) - (1 if starts[-1] == len(source) else 0)

    def __len__(self) -> int:
        return self.size

    def span(self, index: int) -> tuple[int, int]:
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError(index)
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.source)
        return self.starts[index], end

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        start, end = self.span(index)
        return self.source[start:end]


class LogTextDocument(TextDocument):
    """A :class:`pygls.workspace.TextDocument` whose incremental edits and line look-ups do not split the text."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._starts: list[int] | None = None  # valid for the current source; None: not computed (or not simple)
        self._simple: bool | None = None  # the source breaks lines with "\n" only

    def _line_view(self) -> _Lines | None:
        source = self.source
        if self._simple is None:
            self._simple = _only_newlines(source)
        if not self._simple:
            return None
        if self._starts is None:
            self._starts = [0, *(m.end() for m in _NEWLINE.finditer(source))]
        return _Lines(source, self._starts)

    def line_starts(self) -> list[int] | None:
        """Offsets where the current text's lines start (``LineIndex.starts``), when it breaks lines with
        ``\n`` only; never changed in place (an edit makes a new list), so a worker thread may keep it."""
        view = self._line_view()
        return view.starts if view is not None else None

    def line_at(self, line: int) -> str | None:
        """Editor line ``line`` (0-based) without its line break, or None past the end."""
        view = self._line_view()
        if view is None:
            lines = self.lines
            return lines[line].rstrip("\r\n") if 0 <= line < len(lines) else None
        if not 0 <= line < len(view):
            return None
        return view[line].rstrip("\n")

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        super()._apply_full_change(change)
        self._starts = self._simple = None

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        view = self._line_view()
        if view is None or not _only_newlines(change.text):
            super()._apply_incremental_change(change)
            self._starts = self._simple = None
            return
        source, text = view.source, change.text
        if len(view) == 0:  # pygls: an empty document takes the text as it is
            self._replace(source, len(source), len(source), text)
            return
        server_range = self._position_codec.range_from_client_units(view, change.range)
        start_line, end_line = server_range.start.line, server_range.end.line
        if end_line < start_line:  # pygls writes every line back and drops the text
            return
        start_first, start_end = view.span(start_line)
        end_first, end_end = view.span(end_line)
        # Clamped to the line: a position past the last line converts to the last line's length in client
        # units, which for a non-ASCII line is past its end (pygls slices, which clamps the same way).
        cut = start_first + min(server_range.start.character, start_end - start_first)
        resume = end_first + min(server_range.end.character, end_end - end_first)
        self._replace(source, cut, resume, text)

    def _replace(self, source: str, cut: int, resume: int, text: str) -> None:
        """The source becomes ``source[:cut] + text + source[resume:]``; line starts follow."""
        self._source = "".join((source[:cut], text, source[resume:]))  # one copy fewer than a + b + c
        starts = self._starts
        if starts is None or resume < cut:  # a backwards range repeats text: recount lazily
            self._starts = None
            return
        shift = len(text) - (resume - cut)
        keep = bisect_right(starts, cut)
        after = bisect_right(starts, resume)
        added = [cut + m.end() for m in _NEWLINE.finditer(text)]
        self._starts = starts[:keep] + added + [s + shift for s in starts[after:]]


def use_log_documents(workspace: Workspace) -> None:
    """Make ``workspace`` open :class:`LogTextDocument` s (pygls creates its documents in one factory method)."""
    workspace._create_text_document = partial(_create, workspace)  # type: ignore[method-assign]


def _create(workspace: Workspace, doc_uri: str, source: str | None = None, version: int | None = None,
            language_id: str | None = None) -> TextDocument:
    return LogTextDocument(doc_uri, source=source, version=version, language_id=language_id,
                           sync_kind=workspace._sync_kind, position_codec=workspace.position_codec)
