"""Views of a diagnosis: terminal text, Markdown, JSON and a self-contained HTML report.

Each view is imported on first use: the CLI renders one format per run, and the HTML view alone pulls in
``html.entities`` (a few milliseconds of every terminal diagnosis's start-up).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .html import render_html
    from .json_out import render_json
    from .markdown import render_event_markdown, render_markdown
    from .text import render_text

__all__ = ["render_event_markdown", "render_html", "render_json", "render_markdown", "render_text"]

_MODULE_OF = {"render_event_markdown": ".markdown", "render_html": ".html", "render_json": ".json_out",
              "render_markdown": ".markdown", "render_text": ".text"}


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_MODULE_OF[name], __name__), name)
