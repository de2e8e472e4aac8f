"""Self-contained HTML report (no script, no external resources) with a rank timeline picture.

Every piece of log text is HTML-escaped. Events carry ``class="fl-event"`` with ``data-file`` and
``data-line`` so the VS Code webview can make them clickable with its own nonce'd script.
"""

from __future__ import annotations

from html import escape

from ..diagnosis import Diagnosis
from ..lines.timestamps import default_year, effective_times
from ..model import Event, Role
from . import RenderOptions
from .common import (
    collateral_by_rank,
    collateral_ranks,
    own_later_lines,
    raised_text,
    shorten,
    summary_line,
    when_text,
    where,
)

_CSS = """
:root{color-scheme:light dark;--fg:#1f2328;--bg:#fff;--muted:#656d76;--rule:#d0d7de;--code-bg:#f6f8fa;
--red:#cf222e;--red-bg:#ffebe9;--yellow:#9a6700;--yellow-bg:#fff8c5;--green:#1a7f37;--grey-bg:#eaeef2;
--grey:#57606a;--dot:#8c959f;--amber:#bf8700}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--muted:#8d96a0;--rule:#30363d;
--code-bg:#161b22;--red:#ff7b72;--red-bg:#3c1618;--yellow:#d29922;--yellow-bg:#3a2d0a;--green:#3fb950;
--grey-bg:#21262d;--grey:#8d96a0;--dot:#6e7681;--amber:#d29922}}
body{font:14px/1.45 var(--vscode-font-family,system-ui,-apple-system,Segoe UI,sans-serif);margin:24px;
color:var(--vscode-editor-foreground,var(--fg));background:var(--vscode-editor-background,var(--bg))}
h1{font-size:20px;margin:0 0 4px} h2{font-size:16px;margin:24px 0 8px;
border-bottom:1px solid var(--vscode-panel-border,var(--rule))}
.summary{font-size:15px;margin:6px 0}
.verdict-failure{color:var(--vscode-errorForeground,var(--red))}
.verdict-unknown{color:var(--vscode-editorWarning-foreground,var(--yellow))}
.verdict-no_failure{color:var(--vscode-testing-iconPassed,var(--green))}
pre,code{font:12px/1.4 var(--vscode-editor-font-family,ui-monospace,SFMono-Regular,Menlo,monospace);
background:var(--vscode-textCodeBlock-background,var(--code-bg))}
pre{padding:8px;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;
border-bottom:1px solid var(--vscode-panel-border,var(--rule))}
.fl-event{cursor:pointer}.muted{color:var(--vscode-descriptionForeground,var(--muted))}
.pill{border-radius:8px;padding:0 6px;font-size:12px}
.root{background:var(--red-bg);color:var(--red)}.collateral{background:var(--yellow-bg);color:var(--yellow)}
.context{background:var(--grey-bg);color:var(--grey)}
svg text{font:11px ui-monospace,monospace;fill:var(--vscode-descriptionForeground,var(--grey))}
svg line{stroke:var(--vscode-panel-border,var(--rule))}
.dot-root{fill:var(--red)}.dot-collateral{fill:var(--amber)}.dot-context{fill:var(--dot)}
"""

_ROW = 22
_LEFT = 70
_WIDTH = 900


def _timeline(diagnosis: Diagnosis) -> str:
    events = [e for e in diagnosis.events if e.rank is not None]
    if not events:
        return "<p class='muted'>No event is attributed to a rank.</p>"
    ranks = sorted({e.rank for e in events if e.rank is not None})[:128]
    year = default_year(e.time for e in diagnosis.events)  # the year the reasoning used
    times = effective_times(events, year)
    ordered = sorted(events, key=lambda e: (times.get(id(e), float("inf")), e.order))
    position = {id(e): i for i, e in enumerate(ordered)}
    span = max(1, len(ordered) - 1)
    height = _ROW * len(ranks) + 30
    parts = [f"<svg role='img' aria-label='rank timeline' width='{_WIDTH + _LEFT + 20}' height='{height}' "
             f"viewBox='0 0 {_WIDTH + _LEFT + 20} {height}' xmlns='http://www.w3.org/2000/svg'>"]
    row_of = {rank: i for i, rank in enumerate(ranks)}
    for rank, i in row_of.items():
        y = 20 + i * _ROW
        parts.append(f"<text x='4' y='{y + 4}'>rank {rank}</text>"
                     f"<line x1='{_LEFT}' y1='{y}' x2='{_LEFT + _WIDTH}' y2='{y}'/>")
    for e in ordered:
        if e.rank not in row_of:
            continue
        x = _LEFT + 10 + (_WIDTH - 20) * position[id(e)] / span
        y = 20 + row_of[e.rank] * _ROW
        if e is diagnosis.root_cause:
            kind, radius = "root", 8
        elif e.role is Role.COLLATERAL:
            kind, radius = "collateral", 5
        else:
            kind, radius = "context", 3
        label = escape(f"{e.title} — {e.file}:{e.line} ({where(e)})")
        parts.append(f"<g class='fl-event' data-file='{escape(e.file)}' data-line='{e.line}'>"
                     f"<title>{label}</title><circle class='dot-{kind}' cx='{x:.1f}' cy='{y}' r='{radius}'/></g>")
    parts.append(f"<text x='{_LEFT}' y='{height - 4}'>earlier → later (time stamps, then line order) · "
                 f"</text><circle class='dot-root' cx='{_LEFT + 390}' cy='{height - 8}' r='5'/>"
                 f"<text x='{_LEFT + 400}' y='{height - 4}'>root cause</text>"
                 f"<circle class='dot-collateral' cx='{_LEFT + 490}' cy='{height - 8}' r='4'/>"
                 f"<text x='{_LEFT + 500}' y='{height - 4}'>collateral</text>"
                 f"<circle class='dot-context' cx='{_LEFT + 590}' cy='{height - 8}' r='3'/>"
                 f"<text x='{_LEFT + 600}' y='{height - 4}'>context</text>")
    parts.append("</svg>")
    return "".join(parts)


def _event_row(e: Event) -> str:
    role = "root" if e.role is Role.ROOT_CAUSE else e.role.value
    return (f"<tr class='fl-event' data-file='{escape(e.file)}' data-line='{e.line}'>"
            f"<td><span class='pill {role}'>{escape(e.role.value)}</span></td>"
            f"<td>{e.rank if e.rank is not None else '?'}</td><td><code>{escape(e.file)}:{e.line}</code></td>"
            f"<td>{escape(e.message)}</td></tr>")


def render_html(diagnosis: Diagnosis, title: str = "Faultline report") -> str:
    """The answer first: verdict and summary, the root-cause line, the fix and its verification; then the
    mechanism and the steps, the collateral by rank, the timeline, the whole causal chain and the evidence."""
    verdict = diagnosis.verdict.value
    root, sig = diagnosis.root_cause, diagnosis.root_signature
    body: list[str] = [f"<h1>Faultline: <span class='verdict-{verdict}'>{escape(verdict.replace('_', ' '))}</span></h1>",
                       f"<p class='summary'><b>{escape(summary_line(diagnosis))}</b></p>",
                       f"<p class='muted'>confidence {diagnosis.confidence:.2f}"
                       + (f" · initiating rank <b>{diagnosis.initiating_rank}</b>"
                          if diagnosis.initiating_rank is not None else "") + "</p>"]
    if root is not None:
        when = when_text(diagnosis)
        body += ["<h2>Root cause</h2>",
                 f"<p class='fl-event' data-file='{escape(root.file)}' data-line='{root.line}'><b>"
                 f"{escape(root.message)}</b> <code>{escape(root.category)}/{escape(root.signature_id)}</code> — "
                 f"{escape(where(root))}{escape(', ' + when) if when else ''}, "
                 f"<code>{escape(root.file)}:{root.line}</code></p>",
                 f"<pre>{escape(shorten(root.text, 2000))}</pre>"]
        if diagnosis.frames is not None:
            body.append(f"<p>{escape(raised_text(diagnosis.frames, sentence=True))}.</p>")
    seen = diagnosis.first_failure
    if root is None and seen is not None:
        body += ["<h2>First failure seen</h2>",
                 f"<p class='fl-event' data-file='{escape(seen.file)}' data-line='{seen.line}'><b>"
                 f"{escape(seen.message)}</b> <code>{escape(seen.category)}/{escape(seen.signature_id)}</code> — "
                 f"{escape(where(seen))}, <code>{escape(seen.file)}:{seen.line}</code>; a symptom: no line here "
                 "states its cause</p>",
                 f"<pre>{escape(shorten(seen.text, 2000))}</pre>"]
    if sig is not None:
        env = "\n".join(f"export {e.name}={e.value}" + (f"   # {e.note}" if e.note else "") for e in sig.fix.env)
        body += ["<h2>Fix</h2>", f"<p><b>{escape(sig.fix.summary)}</b></p>"]
        if env:
            body.append(f"<pre>{escape(env)}</pre>")
        body += [f"<p>Verify: <code>{escape(sig.verification.command)}</code></p>",
                 f"<p class='muted'>{escape(sig.verification.expect)}</p>",
                 "<h2>Why</h2>", f"<p>{escape(' '.join(sig.explanation.split()))}</p>"]
        if sig.fix.steps:
            body += ["<h2>Steps</h2>", "<ol>" + "".join(f"<li>{escape(s)}</li>" for s in sig.fix.steps) + "</ol>"]
    if diagnosis.collateral:
        ranks, unattributed = collateral_ranks(diagnosis.collateral, root)
        own = own_later_lines(diagnosis.collateral, root)
        body += [f"<h2>Collateral: {len(diagnosis.collateral) - len(own)} lines on {ranks} other rank(s)"
                 + (f" and {unattributed} unattributed" if unattributed else "") + "</h2>",
                 "<table><tr><th>rank</th><th>first line</th><th>what</th><th>lines</th></tr>"]
        for rank, events in collateral_by_rank(diagnosis.collateral, root).items():
            first = events[0]
            label = str(rank) if rank != "?" else "unattributed"
            body.append(f"<tr class='fl-event' data-file='{escape(first.file)}' data-line='{first.line}'>"
                        f"<td>{escape(label)}</td><td><code>{escape(first.file)}:{first.line}</code></td>"
                        f"<td>{escape(first.message)}</td><td>{len(events)}</td></tr>")
        body.append("</table>")
        if own and root is not None:
            body.append(f"<p class='muted'>and {len(own)} later line(s) of rank {root.rank} itself, after its "
                        "failure</p>")
    body += ["<h2>Rank timeline</h2>", _timeline(diagnosis)]
    if diagnosis.collateral and root is not None:
        chain = [root, *diagnosis.collateral[:500]]
        body += ["<h2>Causal chain</h2>", "<table><tr><th>role</th><th>rank</th><th>where</th><th>what</th></tr>"]
        body += [_event_row(e) for e in chain]
        body.append("</table>")
        if len(diagnosis.collateral) > 500:
            body.append(f"<p class='muted'>… and {len(diagnosis.collateral) - 500} more collateral lines.</p>")
    if diagnosis.suspicious:
        body += ["<h2>Most suspicious lines</h2><table>"]
        body += [f"<tr class='fl-event' data-file='{escape(s.file)}' data-line='{s.line}'><td><code>"
                 f"{escape(s.file)}:{s.line}</code></td><td><code>{escape(shorten(s.text, 300))}</code></td></tr>"
                 for s in diagnosis.suspicious]
        body.append("</table>")
    if diagnosis.considered:
        body += ["<h2>Lines that looked like trouble, and why they do not show a failure</h2><table>"]
        body += [f"<tr class='fl-event' data-file='{escape(s.file)}' data-line='{s.line}'><td><code>"
                 f"{escape(s.file)}:{s.line}</code></td><td><code>{escape(shorten(s.text, 300))}</code></td>"
                 f"<td>{escape(s.reason)}</td></tr>" for s in diagnosis.considered]
        body.append("</table>")
    if diagnosis.reasons:
        body += ["<h2>Evidence</h2><ul>"]
        body += [f"<li>{'✔' if r.kind == 'supports' else '✘'} {escape(r.text)}</li>" for r in diagnosis.reasons]
        body.append("</ul>")
    if sig is not None and (sig.related or sig.references):
        body.append("<h2>Related</h2><ul>" + "".join(f"<li><code>{escape(r)}</code></li>" for r in sig.related)
                    + "".join(f"<li>{escape(r)}</li>" for r in sig.references) + "</ul>")
    document = ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
                + "\n".join(body) + "</body></html>\n")
    return document


def render(diagnosis: Diagnosis, options: RenderOptions) -> str:
    return render_html(diagnosis)
