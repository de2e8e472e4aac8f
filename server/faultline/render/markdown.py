"""Markdown view: the whole report (CLI ``--format markdown``) and the per-line hover panel.

Log text never becomes Markdown: it goes into code spans/fences long enough that no backtick run in the
text can close them, so a log line cannot inject links, images or HTML into an editor's hover.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..diagnosis import Diagnosis
from ..library import Signature
from ..model import Event, Frame, RaiseSite, Reason, Role, Verdict
from . import RenderOptions
from .common import collateral_by_rank, collateral_ranks, own_later_lines, shorten, summary_line, when_text, where

# Only what would change the rendering is escaped, so that the Markdown reads well raw (Neovim and Emacs show
# hovers mostly unrendered): emphasis, code, links, raw HTML, tables and strikethrough anywhere; entities; block
# markers (headings, quotes, lists, rules) at a line's start; and what GFM's linkify would turn into a link:
# "://", a protocol-relative "//host" after anything but ":" or "/", "www." and a dot before a top-level domain
# ("train.py" is a fuzzy link to Paraguay).
_INLINE = re.compile(r"([\\`*_\[\]<>|~])|&(?=#?\w+;)")
_LINE_START = re.compile(r"^([ \t]*)([#>+=-]|\d+(?=[.)]))", re.MULTILINE)  # "1." keeps its digits: "1\\."
# (Any character before the dot: linkify takes non-ASCII letters, and U+FFFD, as a domain's, "user@ev\ufffd.com".)
_LINKIFY = re.compile(r"(?<=[A-Za-z0-9]):(?=//)|(?<![:/])/(?=/)|(?i:(?<=www))\.|(?<=\S)\.(?=(?:[A-Za-z]{2}|com|net|org|edu|gov"
                      r"|info|biz|pro|xxx|aero|asia|coop|museum|name|shop|web)(?![A-Za-z0-9-]))")


def escape(text: str) -> str:
    """Plain text that renders literally in Markdown, with as few backslashes as that takes."""
    text = _INLINE.sub(lambda m: "\\" + (m.group(1) or "&"), text)
    text = _LINKIFY.sub(lambda m: "\\" + m.group(0), text)
    return _LINE_START.sub(_block_marker, text)


def _block_marker(m: re.Match[str]) -> str:
    marker = m.group(2)
    if marker[0].isdigit():  # an ordered list's "1." or "1)": the "." or ")" after the digits is escaped
        return m.group(1) + marker + "\\"
    return m.group(1) + "\\" + marker


def code_span(text: str) -> str:
    text = text.replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def _fix_first(sig: Signature) -> list[str]:
    """The fix in one line, its variables, and the command that verifies it: what a reader acts on first."""
    out = [f"**Fix:** {escape(sig.fix.summary)}", ""]
    if sig.fix.env:
        out.append(code_block("\n".join(f"export {e.name}={e.value}" for e in sig.fix.env), "sh"))
        out.extend(f"- {code_span(e.name)}: {escape(e.note)}" for e in sig.fix.env if e.note)
        out.append("")
    out += ["**Verify:**", "", code_block(sig.verification.command, "sh"), f"Expect: {escape(sig.verification.expect)}"]
    return out


def _fix_steps(sig: Signature) -> list[str]:
    if not sig.fix.steps:
        return []
    return ["", "**Steps:**", "", *(f"{n}. {escape(step)}" for n, step in enumerate(sig.fix.steps, 1))]


def _links(sig: Signature) -> list[str]:
    out: list[str] = []
    if sig.related:
        out.append("**Related:** " + ", ".join(code_span(r) for r in sig.related))
    if sig.references:
        out.append("**References:** " + "; ".join(code_span(r) for r in sig.references))
    return out


def render_markdown(diagnosis: Diagnosis) -> str:
    out: list[str] = []
    verdict = {Verdict.FAILURE: "Failure", Verdict.UNKNOWN: "Unknown cause",
               Verdict.NO_FAILURE: "No failure found"}[diagnosis.verdict]
    out.append(f"# Faultline: {verdict}")
    out.append("")
    out.append(f"**{escape(summary_line(diagnosis))}**")
    out.append("")
    out.append(f"Confidence **{diagnosis.confidence:.2f}**"
               + (f" · initiating rank **{diagnosis.initiating_rank}**"
                  if diagnosis.initiating_rank is not None else ""))
    root, sig = diagnosis.root_cause, diagnosis.root_signature
    if root is not None:
        when = when_text(diagnosis)
        out += ["", "## Root cause", "",
                f"**{escape(root.message)}** ({code_span(root.category + '/' + root.signature_id)}) — "
                f"{escape(where(root))}{escape(', ' + when) if when else ''}, {code_span(f'{root.file}:{root.line}')}",
                "", code_block(shorten(root.text, 1000))]
        if diagnosis.frames is not None:
            out += ["", frames_markdown(diagnosis.frames)]
    seen = diagnosis.first_failure
    if root is None and seen is not None:
        out += ["", "## First failure seen", "",
                f"**{escape(seen.message)}** ({code_span(seen.category + '/' + seen.signature_id)}) — "
                f"{escape(where(seen))}, {code_span(f'{seen.file}:{seen.line}')}; a symptom: no line here states "
                "its cause", "", code_block(shorten(seen.text, 1000))]
    if sig is not None:
        out += ["", *_fix_first(sig)]
        out += ["", f"**Why:** {escape(' '.join(sig.explanation.split()))}"]
        out += _fix_steps(sig)
    if diagnosis.collateral:
        ranks, unattributed = collateral_ranks(diagnosis.collateral, root)
        own = own_later_lines(diagnosis.collateral, root)
        out += ["", f"## Collateral ({len(diagnosis.collateral)} lines)", "",
                f"On {ranks} other rank(s)" + (f", and {unattributed} line(s) that name no rank" if unattributed else "")
                + (f"; {len(own)} later line(s) of the failing rank itself" if own else "") + ".", ""]
        for rank, events in collateral_by_rank(diagnosis.collateral, root).items():
            first = events[0]
            more = f" (+{len(events) - 1} more)" if len(events) > 1 else ""
            label = f"rank {rank}" if rank != "?" else "unattributed"
            out.append(f"- {label}: {escape(first.message)} at {code_span(f'{first.file}:{first.line}')}{more}")
    if diagnosis.suspicious:
        out += ["", "## Most suspicious lines", ""]
        out += [f"- {code_span(f'{s.file}:{s.line}')} {code_span(shorten(s.text, 200))}" for s in diagnosis.suspicious]
    if diagnosis.considered:
        out += ["", "## Lines that looked like trouble, and why they do not show a failure", ""]
        out += [f"- {code_span(f'{s.file}:{s.line}')} {code_span(shorten(s.text, 200))}: {escape(s.reason)}"
                for s in diagnosis.considered]
    if diagnosis.reasons:
        out += ["", "## Evidence", ""]
        out += [f"- {'✔' if r.kind == 'supports' else '✘'} {escape(r.text)}" for r in diagnosis.reasons]
    if sig is not None:
        links = _links(sig)
        if links:
            out += ["", *links]
    return "\n".join(out) + "\n"


@dataclass
class EventPanel:
    """What a hover says about one matched line, before it is formatted as Markdown or plain text."""

    event: Event
    role: Role  # as decided in this run; ROOT_CAUSE only for the diagnosis' root cause
    cause: Event | None
    signature: Signature | None
    initiating_rank: int | None
    confidence: float
    reasons: list[Reason]
    verdict: Verdict

    @property
    def explanation(self) -> str:
        return " ".join(self.signature.explanation.split()) if self.signature else ""


def event_panel(event: Event, diagnosis: Diagnosis) -> EventPanel:
    root = diagnosis.root_cause
    is_root = event is root or (root is not None and event.file == root.file and event.line == root.line
                                and event.signature_id == root.signature_id)
    role = Role.ROOT_CAUSE if is_root else (Role.COLLATERAL if event.role is Role.COLLATERAL else Role.CONTEXT)
    return EventPanel(event=event, role=role, cause=event.caused_by if role is Role.COLLATERAL else None,
                      signature=diagnosis.root_signature if is_root else diagnosis.signature_of(event),
                      initiating_rank=diagnosis.initiating_rank,
                      confidence=diagnosis.confidence, reasons=list(diagnosis.reasons), verdict=diagnosis.verdict)


LinkFor = Callable[[str, int], "tuple[str, str] | None"]


def _markdown_link(label: str, url: str) -> str:
    target = f"<{url}>" if any(c in url for c in " ()<>") else url
    return f"[{escape(label)}]({target})"


FrameLinkFor = Callable[[Frame], "tuple[str, str] | None"]


def frames_markdown(site: RaiseSite, frame_link: FrameLinkFor | None = None) -> str:
    """Where the root cause was raised, as a sentence whose frames are links when ``frame_link`` gives them."""
    def show(frame: Frame) -> str:
        target = frame_link(frame) if frame_link is not None else None
        return _markdown_link(*target) if target is not None else code_span(str(frame))

    deepest, own = site.deepest, site.own
    if deepest.package is None:
        return f"Raised at {show(deepest)} (your code)."
    called = f", called from your code at {show(own)}" if own is not None else ""
    return f"Raised inside {escape(deepest.package)} at {show(deepest)}{called}."


def render_event_markdown(event: Event, diagnosis: Diagnosis, link: LinkFor | None = None,
                          frame_link: FrameLinkFor | None = None) -> str:
    """The hover panel for one matched line: what happened on this rank, its role (with a link to the cause),
    the mechanism, the fix, the verification and what it should show, related failures, references,
    and the confidence with its reasons.

    ``link(file, line)`` may return ``(label, url)`` for a location, ``frame_link(frame)`` for a traceback frame
    (a source file); without them locations are code spans.
    """
    panel = event_panel(event, diagnosis)
    sig = panel.signature

    def location(file: str, line: int) -> str:
        target = link(file, line) if link is not None else None
        return _markdown_link(*target) if target is not None else code_span(f"{file}:{line}")

    out = [f"### {escape(event.title)} — {escape(where(event))}", "", escape(event.message), ""]
    if panel.role is Role.ROOT_CAUSE:
        when = when_text(diagnosis)
        who = (f"rank {panel.initiating_rank} failed first" if panel.initiating_rank is not None
               else "the failure started here")
        out.append(f"**Root cause** of this run: {who}{escape(', ' + when) if when else ''} "
                   f"(confidence {panel.confidence:.2f}).")
        if diagnosis.frames is not None:
            out += ["", frames_markdown(diagnosis.frames, frame_link)]
    elif panel.cause is not None:
        cause = panel.cause
        out.append(f"**Collateral**: caused by rank {cause.rank} — {escape(cause.message)} at "
                   f"{location(cause.file, cause.line)}.")
    elif panel.role is Role.COLLATERAL and event is diagnosis.first_failure:
        out.append("**First failure seen** in these logs: a symptom of a failure whose cause is not in them; start "
                   "from here.")
    elif panel.role is Role.COLLATERAL:
        out.append("**Collateral**: a consequence of a failure whose cause is not in these logs.")
    else:
        out.append("**Context**: evidence used by the reasoning, not a failure by itself.")
    if event.note:
        out += ["", f"_{escape(event.note)}_"]
    if sig is not None:
        out += ["", *_fix_first(sig)]
        out += ["", f"**Mechanism:** {escape(panel.explanation)}"]
        out += _fix_steps(sig)
        links = _links(sig)
        if links:
            out += ["", *links]
    if panel.role is not Role.CONTEXT and panel.reasons:
        out += ["", f"**Confidence {panel.confidence:.2f}**" + (" (of the diagnosis this line belongs to)"
                                                              if panel.role is Role.COLLATERAL else "") + ":"]
        out += [f"- {'✔' if r.kind == 'supports' else '✘'} {escape(r.text)}" for r in panel.reasons]
    return "\n".join(out)


def render(diagnosis: Diagnosis, options: RenderOptions) -> str:
    return render_markdown(diagnosis)
