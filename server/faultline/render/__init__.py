"""Views of a diagnosis: terminal text, Markdown, JSON and a self-contained HTML report.

``FORMATS`` is the one list of report formats (the CLI's ``--format`` reads it): each names the module whose
``render(diagnosis, options)`` writes the report. A new format is a module with that function and one entry
here. Views only render: the diagnosis they get is already masked (diagnosis.py).

Each view is imported on first use: the CLI renders one format per run, and the HTML view alone pulls in
``html.entities`` (a few milliseconds of every terminal diagnosis's start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis
    from .html import render_html
    from .json_out import render_json
    from .markdown import render_event_markdown, render_markdown
    from .text import render_text

__all__ = ["FORMATS", "Format", "RenderOptions", "render", "render_event_markdown", "render_html", "render_json",
           "render_markdown", "render_text"]


class RenderOptions:
    """How a person or a program will read the report. (Plain classes here: a dataclass costs a millisecond
    of every terminal diagnosis's start-up.)"""

    __slots__ = ("all_events", "color", "pretty")

    def __init__(self, *, color: bool = False, pretty: bool = True, all_events: bool = False) -> None:
        self.color = color  # text: ANSI colours (a terminal that wants them)
        self.pretty = pretty  # json: indented for a person; compact (one line) for scripts and pipes
        self.all_events = all_events  # json: every kept event and collateral line, not the first 1,000 of each


class Format:
    """A report format: the module whose ``render(diagnosis, options) -> str`` writes it (relative to this
    package), and what it is for."""

    __slots__ = ("description", "module")

    def __init__(self, module: str, description: str) -> None:
        self.module = module
        self.description = description


FORMATS: dict[str, Format] = {
    "text": Format(".text", "a short report for a terminal (the default)"),
    "markdown": Format(".markdown", "the report as Markdown (tickets, chats, pull requests)"),
    "json": Format(".json_out", "the stable machine-readable contract (schema_version 1)"),
    "html": Format(".html", "a self-contained HTML page with a rank timeline"),
}


def render(format_name: str, diagnosis: Diagnosis, options: RenderOptions | None = None) -> str:
    """The report of a diagnosis in one of ``FORMATS``."""
    options = options if options is not None else RenderOptions()
    module = importlib.import_module(FORMATS[format_name].module, __name__)
    report: str = module.render(diagnosis, options)
    return report


_MODULE_OF = {"render_event_markdown": ".markdown", "render_html": ".html", "render_json": ".json_out",
              "render_markdown": ".markdown", "render_text": ".text"}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
