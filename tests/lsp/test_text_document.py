"""The log document's fast edits give exactly pygls's text, for any edit a client may send."""

from __future__ import annotations

import random

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument
from pygls.workspace.position_codec import PositionCodec

from faultline.lsp.text_document import LogTextDocument

PIECES = ["step 1 loss 2.0", "", "é", "🙂 emoji", "[rank3]: torch.OutOfMemoryError", "\n", "\n\n", "ab\ncd", "x" * 40,
          "混合"] * 6 + ["\r\n", "\r", "\x0c", "\x85", "\u2028"]  # now and then a break pygls splits on too


def _random_text(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["\n", "", " "]) for _ in range(parts))


def _random_change(rng: random.Random, text: str) -> types.TextDocumentContentChangePartial:
    lines = max(1, text.count("\n") + 1)

    def position() -> types.Position:
        line = rng.choice([rng.randrange(lines + 2), rng.randrange(lines), 0, lines, lines + 5])
        return types.Position(line, rng.choice([0, 1, 2, 3, 5, 15, 200]))

    start, end = position(), position()
    if rng.random() < 0.8 and (end.line, end.character) < (start.line, start.character):
        start, end = end, start  # mostly ordered ranges, sometimes backwards ones
    return types.TextDocumentContentChangePartial(range=types.Range(start, end), text=_random_text(rng, rng.randrange(3)))


@pytest.mark.parametrize("encoding", [types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8,
                                      types.PositionEncodingKind.Utf32])
def test_random_edits_give_pygls_text(encoding: str) -> None:
    rng = random.Random(7)
    for _ in range(150):
        text = _random_text(rng, rng.randrange(12))
        ours = LogTextDocument("file:///a.log", text, version=1, position_codec=PositionCodec(encoding))
        theirs = TextDocument("file:///a.log", text, version=1, position_codec=PositionCodec(encoding))
        for _ in range(12):
            change = _random_change(rng, theirs.source)
            copy = types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(change.range.start.line, change.range.start.character),
                                  types.Position(change.range.end.line, change.range.end.character)),
                text=change.text)  # pygls may clamp a position in place: each document gets its own
            theirs.apply_change(change)
            ours.apply_change(copy)
            assert ours.source == theirs.source, (text, change)
            for line in range(len(theirs.lines) + 1):
                expected = theirs.lines[line].rstrip("\r\n") if line < len(theirs.lines) else None
                assert ours.line_at(line) == expected


def test_other_line_breaks_take_pygls_path() -> None:
    text = "a\r\nb\rc\u2028d\n"
    ours = LogTextDocument("file:///a.log", text, version=1)
    theirs = TextDocument("file:///a.log", text, version=1)
    change = types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(1, 0), types.Position(2, 1)), text="X\r")
    ours.apply_change(change)
    theirs.apply_change(types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(1, 0), types.Position(2, 1)), text="X\r"))
    assert ours.source == theirs.source
    assert ours.line_at(0) == "a"


def test_a_full_change_replaces_the_text_and_its_line_offsets() -> None:
    ours = LogTextDocument("file:///a.log", "one\ntwo\n", version=1)
    assert ours.line_at(1) == "two"
    ours.apply_change(types.TextDocumentContentChangeWholeDocument(text="three\nfour\nfive"))
    assert ours.line_at(2) == "five" and ours.line_at(3) is None
