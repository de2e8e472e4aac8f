"""What every rendering of every diagnosis must satisfy, whatever the log said (used by the fuzzers and the
property tests).

- JSON: parses, is strict UTF-8, has the schema's top-level keys.
- HTML report: only the tags and attributes the template writes; no script, no event handler, no link or
  resource attribute, no style but the template's; every ``data-line`` is a number and every ``data-file``
  names an input of the diagnosis.
- Markdown (report and hovers): parsed the way an editor does (markdown-it, GFM-like: tables, strikethrough,
  autolinks), it holds no raw HTML, no image, no link and no table, and its headings are the template's.
- Text (without colour): no control character but newline and tab (a log line cannot drive the terminal).
"""

from __future__ import annotations

import json
import re
from html import unescape
from html.parser import HTMLParser
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token

from faultline.diagnosis import Diagnosis

JSON_KEYS = {
    "schema_version", "verdict", "initiating_rank", "root_cause", "collateral", "competing_causes", "fix",
    "summary", "verification", "explanation", "confidence", "reasons", "ranks", "related", "references",
    "suspicious_lines",
    "considered_lines",
    "first_failure",  # an unknown cause's first symptom (render/json_out.py)
    "events", "inputs", "notes",
    "collateral_total", "events_total", "truncated",  # the caps on collateral and events (render/json_out.py)
}


def check_json(text: str) -> dict[str, Any]:
    text.encode("utf-8")  # a lone surrogate (an undecodable file name) would make the output invalid UTF-8
    data = json.loads(text)
    assert isinstance(data, dict) and data["schema_version"] == 1, "not a schema 1 document"
    assert set(data) == JSON_KEYS, f"top-level keys differ: {sorted(set(data) ^ JSON_KEYS)}"
    assert data["verdict"] in ("failure", "unknown", "no_failure")
    return data


_HTML_TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "span", "b", "code", "pre", "svg",
              "text", "line", "g", "circle", "table", "tr", "th", "td", "ol", "ul", "li"}
_HTML_ATTRS = {"lang", "charset", "class", "data-file", "data-line", "role", "aria-label", "width", "height",
               "viewbox", "xmlns", "x", "y", "x1", "y1", "x2", "y2", "stroke", "cx", "cy", "r", "fill"}


class _ReportParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.files: set[str] = set()
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HTML_TAGS:
            self.problems.append(f"tag <{tag}>")
        if tag == "style":
            self._in_style = True
        for name, value in attrs:
            if name not in _HTML_ATTRS:
                self.problems.append(f"attribute {name}= on <{tag}>")
            if name == "data-line" and not (value or "").isdigit():
                self.problems.append(f"data-line={value!r}")
            if name == "data-file":
                self.files.add(value or "")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag: str) -> None:
        if tag == "style":
            self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)

    def handle_comment(self, data: str) -> None:
        self.problems.append("comment")

    def handle_pi(self, data: str) -> None:
        self.problems.append("processing instruction")

    def unknown_decl(self, data: str) -> None:
        self.problems.append(f"declaration {data[:40]!r}")


def check_html(document: str, diagnosis: Diagnosis) -> None:
    from faultline.masking import mask_secrets
    from faultline.render.html import _CSS

    parser = _ReportParser()
    parser.feed(document)
    parser.close()
    assert parser.problems == [], parser.problems[:5]
    assert parser.styles == [_CSS], "a style other than the template's"
    names = {f.path for f in diagnosis.files} | {mask_secrets(f.path) for f in diagnosis.files}
    assert {unescape(f) for f in parser.files} <= names, "data-file names no input"
    assert "<script" not in document


# As editors render Markdown: GFM tables, strikethrough and autolinks (bare URLs become links); and the same
# without autolinks (see CHECK_AUTOLINKS).
_MD = MarkdownIt("gfm-like")
_MD_WITHOUT_AUTOLINKS = MarkdownIt("gfm-like").disable("linkify")
_FORBIDDEN_TOKENS = {"html_block", "html_inline", "image", "link_open", "table_open", "s_open"}
_REPORT_HEADINGS = re.compile(r"Faultline: (?:Failure|Unknown cause|No failure found)|Root cause|First failure seen"
                              r"|Collateral \(\d+ lines\)"
                              r"|Most suspicious lines|Lines that looked like trouble, and why they do not show a failure"
                              r"|Evidence")


def _tokens(tokens: list[Token]) -> list[Token]:
    out: list[Token] = []
    for token in tokens:
        out.append(token)
        if token.children:
            out.extend(_tokens(token.children))
    return out


def _plain(inline: Token) -> str:
    return "".join(child.content for child in inline.children or [] if child.type in ("text", "code_inline"))


# VS Code renders hovers with GFM, which turns a bare ``https://host`` in text into a link. render/markdown.py's
# escape() does not escape ':' yet, so a URL in a log line becomes a clickable link (test_markdown_autolinks
# in test_fuzz.py is an expected failure until it does). Flip this to True with that fix.
CHECK_AUTOLINKS = True


def check_markdown(markdown: str, *, hover_title: str | None = None, autolinks: bool | None = None) -> None:
    """``hover_title``: the signature title a hover's only heading starts with (None: a whole report).
    ``autolinks``: parse with GFM autolinks or without them (default ``CHECK_AUTOLINKS``)."""
    if autolinks is None:
        autolinks = CHECK_AUTOLINKS
    parser = _MD if autolinks else _MD_WITHOUT_AUTOLINKS
    tokens = parser.parse(markdown)
    bad = [f"{t.type} {t.content or t.attrs}" for t in _tokens(tokens) if t.type in _FORBIDDEN_TOKENS]
    assert bad == [], f"log text became Markdown markup: {bad[:3]}"
    headings = [_plain(tokens[i + 1]) for i, t in enumerate(tokens) if t.type == "heading_open"]
    if hover_title is None:
        unexpected = [h for h in headings if not _REPORT_HEADINGS.fullmatch(h)]
    else:
        unexpected = [h for h in headings if not h.startswith(hover_title)] + headings[1:]
    assert unexpected == [], f"unexpected headings: {unexpected[:3]}"


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def check_text(report: str) -> None:
    found = _CONTROL.search(report)
    assert found is None, f"control character {found.group(0)!r} in the text report"
