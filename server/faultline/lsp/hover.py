"""Hover on a matched line: what happened there, its role, the mechanism, the fix and how to verify it.

Answers from the document's last result, so a hover is immediate even while a newer version is being
diagnosed; when the document changed since, it answers only if the hovered line still has the text it
had. Markdown when the client renders it, plain text otherwise. Everything it shows comes masked from
the diagnosis.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol.types import Hover, HoverParams, MarkupContent, MarkupKind

from ..diagnosis import Diagnosis
from ..model import Event, Frame, Role, Suspect
from ..render.common import raised_text, shorten, when_text, where
from ..render.markdown import code_block, code_span, escape, event_panel, render_event_markdown
from .diagnostics import line_range
from .documents import uri_path

if TYPE_CHECKING:
    from .server import FaultlineServer

SEPARATOR_MARKDOWN = "\n\n---\n\n"
SEPARATOR_PLAIN = "\n\n"


def hover(server: FaultlineServer, params: HoverParams) -> Hover | None:
    uri = params.text_document.uri
    result = server.logs.result(uri)
    if result is None or result.diagnosis is None:
        return None
    line = params.position.line
    events = result.events_by_line.get(line, [])
    suspect = result.suspects_by_line.get(line)
    if not events and suspect is None:
        return None
    if not server.logs.line_unchanged(uri, result, line):
        return None
    diagnosis = result.diagnosis
    markdown = server.client.markdown_hover
    if markdown:
        def link(file: str, engine_line: int) -> tuple[str, str] | None:
            if file != result.name:
                return None
            editor_line = result.lines.editor_line(engine_line)
            return f"line {editor_line + 1}", f"{uri}#L{editor_line + 1}"

        def frame_link(frame: Frame) -> tuple[str, str] | None:
            log = uri_path(uri)
            source = _source_file(frame.path, Path(log) if log else None)
            return (str(frame), f"{source.as_uri()}#L{frame.line}") if source is not None else None

        parts = [render_event_markdown(e, diagnosis, link, frame_link) for e in events]
        if suspect is not None and not events:
            parts.append(_suspect_markdown(suspect, diagnosis))
        value = SEPARATOR_MARKDOWN.join(parts)
    else:
        parts = [render_event_plain(e, diagnosis) for e in events]
        if suspect is not None and not events:
            parts.append(_suspect_plain(suspect, diagnosis))
        value = SEPARATOR_PLAIN.join(parts)
    kind = MarkupKind.Markdown if markdown else MarkupKind.PlainText
    return Hover(contents=MarkupContent(kind=kind, value=value),
                 range=line_range(result.lines, line, server.workspace.position_codec))


def render_event_plain(event: Event, diagnosis: Diagnosis) -> str:
    """The hover panel as plain text, for clients that do not render Markdown."""
    panel = event_panel(event, diagnosis)
    sig = panel.signature
    out = [f"{event.title} — {where(event)}", event.message, ""]
    if panel.role is Role.ROOT_CAUSE:
        when = when_text(diagnosis)
        out.append(f"Root cause of this run: rank {panel.initiating_rank} failed first{', ' + when if when else ''} "
                   f"(confidence {panel.confidence:.2f}).")
        if diagnosis.frames is not None:
            out.append(raised_text(diagnosis.frames, sentence=True) + ".")
    elif panel.cause is not None:
        cause = panel.cause
        out.append(f"Collateral: caused by rank {cause.rank} — {cause.message} (line {cause.line}).")
    elif panel.role is Role.COLLATERAL:
        out.append("Collateral: a consequence of a failure whose cause is not in these logs.")
    else:
        out.append("Context: evidence used by the reasoning, not a failure by itself.")
    if event.note:
        out.append(f"Note: {event.note}")
    if sig is not None:
        out += ["", f"Fix: {sig.fix.summary}"]
        for env in sig.fix.env:
            out.append(f"  export {env.name}={env.value}" + (f"    # {env.note}" if env.note else ""))
        out += [f"Verify: {sig.verification.command}", f"  Expect: {sig.verification.expect}"]
        out += ["", f"Mechanism: {panel.explanation}"]
        if sig.fix.steps:
            out += ["", "Steps:", *(f"  {n}. {step}" for n, step in enumerate(sig.fix.steps, 1))]
        if sig.related:
            out.append("Related: " + ", ".join(sig.related))
        if sig.references:
            out.append("References: " + "; ".join(sig.references))
    if panel.role is not Role.CONTEXT and panel.reasons:
        out += ["", f"Confidence {panel.confidence:.2f}:"]
        out += [f"  {'+' if r.kind == 'supports' else '-'} {r.text}" for r in panel.reasons]
    return "\n".join(out)


def _suspect_markdown(suspect: Suspect, diagnosis: Diagnosis) -> str:
    rank = f"rank {suspect.rank}" if suspect.rank is not None else "rank ?"
    return "\n".join([
        f"### Suspicious line — {escape(rank)}", "",
        code_block(shorten(suspect.text, 1000)), "",
        f"No signature describes this failure. Why this line: {escape(suspect.reason)} (score {suspect.score:.1f}). "
        f"Verdict **{diagnosis.verdict.value}**, confidence {diagnosis.confidence:.2f}.", "",
        f"To teach Faultline this failure, add a signature file under {code_span('.faultline/signatures/')}.",
    ])


def _suspect_plain(suspect: Suspect, diagnosis: Diagnosis) -> str:
    rank = f"rank {suspect.rank}" if suspect.rank is not None else "rank ?"
    return (f"Suspicious line — {rank}\nNo signature describes this failure. Why this line: {suspect.reason} "
            f"(score {suspect.score:.1f}). Verdict {diagnosis.verdict.value}, confidence "
            f"{diagnosis.confidence:.2f}.\nTo teach Faultline this failure, add a signature file under "
            f".faultline/signatures/.")


def _source_file(path: str, log: Path | None) -> Path | None:
    """A traceback frame's file on this machine: absolute as printed, or relative to the log's folder or the
    current folder (a relative frame path is relative to where the run started); None when it is not here."""
    candidate = Path(path)
    tries = [candidate] if candidate.is_absolute() else [*(([log.parent / candidate]) if log else []), candidate]
    for attempt in tries:
        try:
            if attempt.is_file():
                return attempt.resolve()
        except OSError:
            continue
    return None
