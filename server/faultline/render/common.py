"""Shared helpers for the renderers: grouping collateral lines and describing where an event is."""

from __future__ import annotations

from collections import defaultdict

from ..model import Event


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
