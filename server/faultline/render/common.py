"""Shared helpers for the renderers: grouping collateral lines and describing where an event is."""

from __future__ import annotations

from collections import defaultdict

from ..model import Event, RaiseSite


def where(event: Event) -> str:
    rank = f"rank {event.rank}" if event.rank is not None else "rank ?"
    host = f" on {event.host}" if event.host else ""
    time = f" at {event.time.text}" if event.time else ""
    return f"{rank}{host}{time}"


def collateral_by_rank(events: list[Event]) -> dict[object, list[Event]]:
    groups: dict[object, list[Event]] = defaultdict(list)
    for e in events:
        groups[e.rank if e.rank is not None else "?"].append(e)
    return dict(sorted(groups.items(), key=lambda kv: (isinstance(kv[0], str), kv[0])))


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
