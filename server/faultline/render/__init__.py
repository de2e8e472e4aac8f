"""Views of a diagnosis: terminal text, Markdown, JSON and a self-contained HTML report."""

from __future__ import annotations

from .html import render_html
from .json_out import render_json
from .markdown import render_event_markdown, render_markdown
from .text import render_text

__all__ = ["render_event_markdown", "render_html", "render_json", "render_markdown", "render_text"]
