"""Shared helpers for the renderers: the one-line summary, grouping collateral lines, where and when an event
happened."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from ..model import Event, RaiseSite, Verdict

if TYPE_CHECKING:
    from ..diagnosis import Diagnosis


def where(event: Event) -> str:
    rank = f"rank {event.rank}" if event.rank is not None else "rank ?"
    host = f" on {event.host}" if event.host else ""
    time = f" at {event.time.text}" if event.time else ""
    return f"{rank}{host}{time}"


def collateral_by_rank(events: list[Event], root: Event | None = None) -> dict[object, list[Event]]:
    """Collateral lines grouped by rank, ranks in order and "?" (no rank) last; the root cause's own rank is left
    out (its later lines are listed apart: :func:`own_later_lines`)."""
    groups: dict[object, list[Event]] = defaultdict(list)
    for e in events:
        if root is not None and root.rank is not None and e.rank == root.rank:
            continue
        groups[e.rank if e.rank is not None else "?"].append(e)
    return dict(sorted(groups.items(), key=lambda kv: (isinstance(kv[0], str), kv[0])))


def own_later_lines(events: list[Event], root: Event | None) -> list[Event]:
    """The failing rank's own lines after its failure (consequences on that rank, not on others)."""
    if root is None or root.rank is None:
        return []
    return [e for e in events if e.rank == root.rank]


def shorten(text: str, limit: int = 240) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def raised_text(site: RaiseSite, sentence: bool = False) -> str:
    """Where the root cause's exception was raised, as every view shows it (``sentence``: capitalised)."""
    deepest, own = site.deepest, site.own
    if deepest.package is None:
        text = f"raised at {deepest} (your code)"
    else:
        called = f", called from your code at {own}" if own is not None else ""
        text = f"raised inside {deepest.package} at {deepest}{called}"
    return "R" + text[1:] if sentence else text


def duration_text(seconds: float) -> str:
    """``2 h 13 min``, ``4 min 10 s``, ``12 s``."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def collateral_ranks(events: list[Event], root: Event | None = None) -> tuple[int, int]:
    """How many other ranks than the root cause's the collateral lines are on, and how many lines name no rank
    (unattributed)."""
    own = root.rank if root is not None else None
    ranks = {e.rank for e in events if e.rank is not None and e.rank != own}
    return len(ranks), sum(1 for e in events if e.rank is None)


def when_text(diagnosis: Diagnosis) -> str:
    """``step 630/20000, after 21 min 30 s``: when the root cause happened, as far as the logs say."""
    parts = []
    if diagnosis.step is not None:
        parts.append(f"step {diagnosis.step}")
    if diagnosis.run_time_s is not None:
        parts.append(f"after {duration_text(diagnosis.run_time_s)}")
    return ", ".join(parts)


def summary_line(diagnosis: Diagnosis) -> str:
    """The answer in one line, to paste into a chat or a ticket."""
    root, sig = diagnosis.root_cause, diagnosis.root_signature
    fix = f" Fix: {sig.fix.summary}" if sig is not None and diagnosis.verdict is not Verdict.NO_FAILURE else ""
    ranks, _unattributed = collateral_ranks(diagnosis.collateral, root)
    others = f"; {ranks} other rank(s) failed as a consequence" if ranks else ""
    rank = diagnosis.initiating_rank
    if diagnosis.verdict is Verdict.FAILURE and root is not None:
        who = f"Rank {rank} failed first" if rank is not None else "Failure"
        when = when_text(diagnosis)
        where_at = f"{root.file}:{root.line}" + (f", {when}" if when else "")
        return f"{who}: {root.message} ({where_at}){others}.{fix}"
    if diagnosis.verdict is Verdict.FAILURE:
        who = f"Rank {rank} failed first" if rank is not None else "The run failed"
        return f"{who}; its own error is not in these logs{others}.{fix}"
    if diagnosis.verdict is Verdict.UNKNOWN and diagnosis.first_failure is not None and root is None:
        seen = diagnosis.first_failure
        return (f"Unknown cause: no line states it; the first failure seen is {seen.message} "
                f"({seen.file}:{seen.line}){others}.{fix}")
    if diagnosis.verdict is Verdict.UNKNOWN:
        first = diagnosis.suspicious[0] if diagnosis.suspicious else None
        lead = f"; most suspicious: {first.file}:{first.line} {shorten(first.text, 100)!r}" if first else ""
        return f"Unknown cause: no known failure signature explains it{lead}.{fix}"
    files = len(diagnosis.files)
    lines = sum(f.lines for f in diagnosis.files)
    weighed = (f"; {len(diagnosis.considered)} line(s) looked like trouble, none shows a failure"
               if diagnosis.considered else "")
    return f"No failure found in {lines} line(s) of {files} file(s){weighed}."
