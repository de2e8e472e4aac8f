"""Message templates: ``{field}`` placeholders filled from a match's captures, nothing else."""

from __future__ import annotations

import pytest

from faultline.matcher import fill_message


@pytest.mark.parametrize(("template", "fields", "expected"), [
    ("", {}, ""),
    ("no placeholders", {"a": "1"}, "no placeholders"),
    ("{a}", {"a": "1"}, "1"),
    ("x {a} y {b} z", {"a": "1", "b": "2"}, "x 1 y 2 z"),
    ("{a}{a}{nope}", {"a": "1"}, "11"),  # side by side: alternatives, the unfilled one renders as nothing
    ("GPU: {negative}{ordinal} (x {n})", {"ordinal": "invalid device ordinal"}, "GPU: invalid device ordinal"),
    # an aside that holds only what the match did not fill goes; one that says something else too stays
    ("killed by SIGBUS (pid {pid})", {}, "killed by SIGBUS"),
    ("ended (exit code {code}); shutting down", {}, "ended; shutting down"),
    ("ended (exit code {code}, signal {sig})", {"sig": "9"}, "ended (exit code ?, signal 9)"),
    ("ended (exit code {code}, signal {sig})", {}, "ended"),
    ("too large (size {size}, limit {limit}); stopped", {}, "too large; stopped"),
    ("too large (size {size} or more, limit {limit})", {}, "too large (size ? or more, limit ?)"),
    ("({a})", {}, "(?)"),  # not an aside to a text before it
    ("x ({a})", {"a": "\x00"}, "x ()"),
    ("GPU: {negative}{ordinal}", {}, "GPU: ?"),
    ("{a} {nope}", {"a": "1"}, "1 ?"),
    ("{ a } {{a}} {a", {"a": "1"}, "{ a } {1} {a"),
    ("é {a} ü", {"a": "ß"}, "é ß ü"),
    ("{a}", {"a": "{b}", "b": "no second pass"}, "{b}"),
    ("{a}", {"a": "x" * 201}, "x" * 200 + "…"),
    ("{" + "x" * 41 + "}", {"x" * 41: "too long a name"}, "{" + "x" * 41 + "}"),
])
def test_fill_message(template: str, fields: dict[str, str], expected: str) -> None:
    assert fill_message(template, fields) == expected
    assert fill_message(template, fields) == expected  # the parsed template is cached: same answer again
