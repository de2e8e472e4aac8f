"""The catalogue of messages upstream projects print (upstream_messages.json), and which of the fatal ones no
signature matches.

Every fatal entry without a written ``decision`` must be matched by a signature that is not a generic fallback
(one from ``signatures/generic/``: ``python-exception``, ``exc-*``, ...): a fallback names the exception, not the
condition, and gives no fix of its own. The failure message lists every entry that is not, one per line.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from faultline.engine import Engine

CATALOGUE = Path(__file__).resolve().with_name("upstream_messages.json")
REQUIRED: dict[str, type] = {"project": str, "source": str, "versions": str, "template": str, "example": str,
                             "fatal": bool}
OPTIONAL: dict[str, type] = {"decision": str}
PLACEHOLDER = re.compile(r"\{[a-z][a-z0-9_]*\}")
GENERIC_CATEGORY = "generic"


def load() -> list[dict[str, Any]]:
    entries = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    assert isinstance(entries, list) and entries, f"{CATALOGUE.name}: expected a non-empty JSON list"
    return entries


def fixed_parts(template: str) -> list[str]:
    """The template's literal text between its ``{name}`` placeholders."""
    return [part for part in PLACEHOLDER.split(template) if part]


def where(index: int, entry: dict[str, Any]) -> str:
    return f"[{index}] {entry.get('project')} | {entry.get('source')} | {entry.get('template')}"


def entry_problems(entry: Any) -> list[str]:
    if not isinstance(entry, dict):
        return ["is not an object"]
    problems = [f"missing key {key!r}" for key in REQUIRED if key not in entry]
    problems += [f"unknown key {key!r}" for key in entry if key not in REQUIRED and key not in OPTIONAL]
    for key, kind in {**REQUIRED, **OPTIONAL}.items():
        if key in entry and not isinstance(entry[key], kind):
            problems.append(f"{key} is {type(entry[key]).__name__}, expected {kind.__name__}")
    if problems:
        return problems
    for key in ("project", "source", "versions", "template", "example", "decision"):
        if key in entry and not entry[key].strip():
            problems.append(f"{key} is empty")
    if "\n" in entry["template"] or "\n" in entry["example"]:
        problems.append("template and example are one line each")
    if "{" in PLACEHOLDER.sub("", entry["template"]) or "}" in PLACEHOLDER.sub("", entry["template"]):
        problems.append("a brace in the template that is not a {name} placeholder")
    if "decision" in entry and not entry["fatal"]:
        problems.append("a decision on a non-fatal entry (only fatal entries need one)")
    position = 0
    for part in fixed_parts(entry["template"]):
        found = entry["example"].find(part, position)
        if found < 0:
            problems.append(f"the example lacks the template's fixed text {part!r} (in order)")
            break
        position = found + len(part)
    return problems


def test_the_catalogue_is_well_formed() -> None:
    entries = load()
    problems = [f"{where(i, e)}: {p}" for i, e in enumerate(entries) for p in entry_problems(e)]
    keys = [(str(e.get("project", "")).lower(), str(e.get("source", ""))) for e in entries if isinstance(e, dict)]
    problems += [f"not sorted by project then source: {a} before {b}" for a, b in itertools.pairwise(keys) if a > b]
    seen: set[tuple[str, str]] = set()
    for i, e in enumerate(entries):
        if isinstance(e, dict):
            key = (str(e.get("template")), str(e.get("example")))
            if key in seen:
                problems.append(f"{where(i, e)}: duplicate template and example")
            seen.add(key)
    assert not problems, "\n".join(problems)


def specific_matches(engine: Engine, example: str) -> list[str]:
    """The signatures, other than the generic fallbacks, that the example's diagnosis names."""
    diagnosis = engine.diagnose_text(example + "\n", "run.log")
    ids = {event.signature_id for event in diagnosis.events}
    if diagnosis.root_cause is not None:
        ids.add(diagnosis.root_cause.signature_id)
    specific = []
    for sig_id in sorted(ids):
        sig = engine.library.get(sig_id)
        if sig is not None and sig.category != GENERIC_CATEGORY:
            specific.append(sig_id)
    return specific


def test_every_fatal_upstream_message_is_matched_or_decided(engine: Engine) -> None:
    entries = load()
    uncovered = [e for e in entries if e["fatal"] and "decision" not in e and not specific_matches(engine, e["example"])]
    listing = "\n".join(f"  {e['project']} | {e['source']} | {e['template']}" for e in uncovered)
    if uncovered:
        pytest.fail(f"{len(uncovered)} fatal upstream message(s) that no specific signature matches; add or extend a "
                    f"signature, or write a 'decision' (tests/coverage/README.md):\n{listing}", pytrace=False)


def test_decisions_say_why() -> None:
    """A decision is the written reason no signature needs to match: a sentence, not a tag."""
    short = [e for e in load() if "decision" in e and len(str(e["decision"]).split()) < 8]
    assert not short, "\n".join(f"{e['project']} | {e['template']}: {e['decision']!r}" for e in short)
