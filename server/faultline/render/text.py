"""Terminal view: a short report a person reads in a few seconds (coloured when asked)."""

from __future__ import annotations

import textwrap

from ..diagnosis import Diagnosis
from ..model import Verdict
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

_COLORS = {"red": "31", "yellow": "33", "green": "32", "bold": "1", "dim": "2", "cyan": "36"}


def render_text(diagnosis: Diagnosis, color: bool = False, max_collateral_ranks: int = 12) -> str:
    """The answer first: verdict, the one-line summary, the initiating rank, the root-cause line, the fix in one
    line with its verification command; then the mechanism, the fix's steps, the collateral by rank, and the
    evidence."""
    def c(text: str, *styles: str) -> str:
        if not color:
            return text
        codes = ";".join(_COLORS[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    out: list[str] = []
    verdict = diagnosis.verdict
    head = {Verdict.FAILURE: c("FAILURE", "red", "bold"), Verdict.UNKNOWN: c("UNKNOWN", "yellow", "bold"),
            Verdict.NO_FAILURE: c("NO FAILURE", "green", "bold")}[verdict]
    out.append(f"Faultline: {head}  (confidence {diagnosis.confidence:.2f})")
    out.append(f"Summary: {summary_line(diagnosis)}")  # one line, to paste into a chat or a ticket
    if diagnosis.initiating_rank is not None:
        out.append(f"Initiating rank: {c(str(diagnosis.initiating_rank), 'bold')}")
    root = diagnosis.root_cause
    sig = diagnosis.root_signature
    if root is not None:
        when = when_text(diagnosis)
        out.append(f"Root cause: {c(root.message, 'bold')}  [{root.category}/{root.signature_id}]")
        out.append(f"  {root.file}:{root.line}  ({where(root)}{', ' + when if when else ''})")
        out.append("  " + c("> " + shorten(root.text, 300), "dim"))
        if diagnosis.frames is not None:
            out.append(f"  {raised_text(diagnosis.frames)}")
        if root.note:
            out.append(f"  ({root.note})")
    first = diagnosis.first_failure
    if root is None and first is not None:
        out.append(f"First failure seen: {c(first.message, 'bold')}  [{first.category}/{first.signature_id}]")
        out.append(f"  {first.file}:{first.line}  ({where(first)}; a symptom: no line here states its cause)")
        out.append("  " + c("> " + shorten(first.text, 300), "dim"))
    if sig is not None:
        out.append(f"Fix: {c(sig.fix.summary, 'bold')}")
        for env in sig.fix.env:
            note = f"   # {env.note}" if env.note else ""
            out.append(c(f"  export {env.name}={env.value}", "cyan") + note)
        out.append(f"Verify: {c(sig.verification.command, 'cyan')}")
        out.extend(textwrap.wrap(sig.verification.expect, 100, initial_indent="  expect: ",
                                 subsequent_indent="          "))
        if sig.explanation:
            out.append("")
            out.append("Why:")
            out.extend(textwrap.wrap(" ".join(sig.explanation.split()), 100, initial_indent="  ",
                                     subsequent_indent="  "))
        if sig.fix.steps:
            out.append("")
            out.append("Steps:")
            for n, step in enumerate(sig.fix.steps, 1):
                out.extend(textwrap.wrap(step, 100, initial_indent=f"  {n}. ", subsequent_indent="     "))
    if diagnosis.collateral:
        groups = collateral_by_rank(diagnosis.collateral, root)
        ranks, unattributed = collateral_ranks(diagnosis.collateral, root)
        own = own_later_lines(diagnosis.collateral, root)
        count = f"{len(diagnosis.collateral) - len(own)} line(s) on {ranks} other rank(s)" + (
            f" and {unattributed} unattributed" if unattributed else "")
        out.append("")
        out.append(f"Collateral: {count}" + (f", caused by rank {root.rank} ({root.file}:{root.line})"
                                              if root is not None and root.rank is not None else ""))
        for i, (rank, events) in enumerate(groups.items()):
            if i == max_collateral_ranks:
                out.append(f"  … and {len(groups) - i} more rank(s) (see --format json)")
                break
            first = events[0]
            more = f" (+{len(events) - 1} more)" if len(events) > 1 else ""
            label = f"rank {rank!s:>4}" if rank != "?" else "unattributed"
            out.append(f"  {label}  {first.file}:{first.line}  {shorten(first.message, 90)}{more}")
        if own and root is not None:
            out.append(f"  and {len(own)} later line(s) of rank {root.rank} itself, after its failure "
                       f"({own[0].file}:{own[0].line}: {shorten(own[0].message, 60)})")
    if diagnosis.competing:
        out.append("")
        out.append("Competing cause(s):")
        for e in diagnosis.competing:
            out.append(f"  rank {e.rank}  {e.file}:{e.line}  {e.message}")
    if diagnosis.suspicious:
        out.append("")
        out.append("No signature fits. Most suspicious lines:")
        for s in diagnosis.suspicious:
            rank = f"rank {s.rank}" if s.rank is not None else "rank ?"
            out.append(f"  {s.file}:{s.line}  ({rank})  {shorten(s.text, 160)}")
    if diagnosis.considered:
        out.append("")
        out.append("Lines that looked like trouble, and why they do not show a failure:")
        for s in diagnosis.considered:
            out.append(f"  {s.file}:{s.line}  {shorten(s.text, 160)}")
            out.extend(textwrap.wrap(s.reason, 100, initial_indent="      ", subsequent_indent="      "))
    if diagnosis.reasons:
        out.append("")
        out.append("Evidence:")
        for r in diagnosis.reasons:
            mark = c("+", "green") if r.kind == "supports" else c("-", "red")
            out.append(f"  {mark} {r.text}")
    if diagnosis.notes:
        out.append("")
        out.append("Notes:")
        out.extend(f"  {n}" for n in diagnosis.notes[:20])
    return "\n".join(out) + "\n"


def render(diagnosis: Diagnosis, options: RenderOptions) -> str:
    return render_text(diagnosis, color=options.color)
