"""Match one line against the signatures its keywords point to, under a time limit per pattern.

A line yields at most one event: the matching signature with the highest priority. A pattern that runs
past the time limit is reported (file and line of the signature) and disabled for the rest of the run,
so one catastrophic pattern cannot hang a diagnosis.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .library import Signature, SignatureLibrary
from .prefilter import KeywordIndex

DEFAULT_PATTERN_TIMEOUT_S = 0.25

# Generic words that make an unmatched line worth ranking as "suspicious" for an `unknown` verdict.
SUSPECT_KEYWORDS: tuple[bytes, ...] = (
    b"Traceback (most recent call last)", b"Error", b"ERROR", b"Exception", b"FATAL", b"Fatal",
    b"panic", b"Panic", b"PANIC", b"Segmentation fault", b"core dumped", b"Killed", b"FAILED",
    b"error:", b"Aborted", b"abort", b"fatal",
)


@dataclass(frozen=True)
class PatternTimeout:
    """A pattern that ran past the time limit and was disabled (picklable: workers report these)."""

    signature_id: str
    index: int
    reason: str

    def __str__(self) -> str:
        return f"{self.signature_id}[{self.index}]: {self.reason}"


@dataclass
class Match:
    signature: Signature
    fields: dict[str, str]
    index: int  # of the signature in LineMatcher.signatures


KEYWORD_HEAD_MIN = 20  # keywords at least this long are looked for by their head and their tail
KEYWORD_HEAD_BYTES = 14


class LineMatcher:
    """Keyword prefilter plus full patterns for a signature library."""

    def __init__(self, library: SignatureLibrary, timeout_s: float = DEFAULT_PATTERN_TIMEOUT_S,
                 use_hyperscan: bool = True) -> None:
        self.library = library
        self.timeout_s = timeout_s
        self.signatures: list[Signature] = library.matchable()
        keyword_to_sigs: dict[bytes, set[int]] = {}
        for index, sig in enumerate(self.signatures):
            for keyword in sig.keywords:
                encoded = keyword.encode("utf-8")
                # A wrapped line may cut a long keyword in two. The index holds its head and its tail instead of
                # it: either alone makes a piece a candidate, so that the pieces are joined (scan/continuation.py)
                # and read as one line; a whole keyword holds both (a line with one is read, as with any keyword,
                # and its patterns decide).
                pieces = ((encoded[:KEYWORD_HEAD_BYTES], encoded[-KEYWORD_HEAD_BYTES:])
                          if len(encoded) >= KEYWORD_HEAD_MIN else (encoded,))
                for piece in pieces:
                    keyword_to_sigs.setdefault(piece, set()).add(index)
        keywords = list(keyword_to_sigs)
        self.keyword_signatures: list[tuple[int, ...]] = [tuple(sorted(keyword_to_sigs[k])) for k in keywords]
        self.first_suspect_id = len(keywords)
        self.index = KeywordIndex(keywords + list(SUSPECT_KEYWORDS), use_hyperscan=use_hyperscan)
        self.timeouts: list[PatternTimeout] = []
        # Candidates are tried in this order (highest priority first, then library order), so the first match
        # is the answer and the lower-priority rest need not run.
        by_priority = sorted(range(len(self.signatures)), key=lambda i: (-self.signatures[i].priority, i))
        self._try_rank = [0] * len(self.signatures)
        for position, index in enumerate(by_priority):
            self._try_rank[index] = position

    @property
    def generation(self) -> int:
        """Changes whenever the library's answers may have (a pattern switched off)."""
        return self.library.generation

    def signatures_for(self, keyword_ids: Iterable[int]) -> set[int]:
        found: set[int] = set()
        limit = self.first_suspect_id
        for kw_id in keyword_ids:
            if kw_id < limit:
                found.update(self.keyword_signatures[kw_id])
        return found

    def adopt_timeouts(self, timeouts: Iterable[PatternTimeout]) -> bool:
        """Patterns another process (a parallel worker, a helper) switched off for running too long: switch
        them off here too and record them like local time-outs. True when any of them was still on here."""
        adopted = False
        for timeout in timeouts:
            sig = self.library.get(timeout.signature_id)
            if (sig is not None and timeout.index < len(sig.pattern_sources)
                    and timeout.index not in sig.disabled_patterns):
                self.library.disable_pattern(sig, timeout.index, timeout.reason)
                self.timeouts.append(timeout)
                adopted = True
        return adopted

    def compile_for(self, keyword_ids: Iterable[int]) -> None:
        """Compile now the (lazily compiled) patterns of the signatures these keywords select."""
        for index in self.signatures_for(keyword_ids):
            self.signatures[index].patterns  # noqa: B018 - the property compiles and keeps them

    def match(self, message: str, signature_indexes: Iterable[int], where: str = "") -> Match | None:
        """The best signature matching ``message`` among ``signature_indexes``: the highest priority, then the
        first in library order."""
        for index in sorted(signature_indexes, key=self._try_rank.__getitem__):
            sig = self.signatures[index]
            fields = self._search(sig, message, where)
            if fields is not None:
                return Match(sig, fields, index)
        return None

    def _search(self, sig: Signature, message: str, where: str) -> dict[str, str] | None:
        for i, pattern in enumerate(sig.patterns):
            if i in sig.disabled_patterns:
                continue
            try:
                m = pattern.search(message, timeout=self.timeout_s)
            except TimeoutError:
                reason = (f"ran past the {self.timeout_s * 1000:.0f} ms time limit on a line of "
                          f"{len(message)} characters{' (' + where + ')' if where else ''}")
                self.library.disable_pattern(sig, i, reason)
                self.timeouts.append(PatternTimeout(sig.id, i, reason))
                continue
            if m is None:
                continue
            if any(_excluded(ex, message, self.timeout_s) for ex in sig.exclusions):
                return None
            return {k: v for k, v in m.groupdict().items() if v is not None}
        return None


def _excluded(pattern: object, message: str, timeout_s: float) -> bool:
    try:
        return pattern.search(message, timeout=timeout_s) is not None  # type: ignore[attr-defined]
    except TimeoutError:
        return False


_PLACEHOLDER = re.compile(r"\{(\w{1,40})\}")


def fill_message(template: str, fields: dict[str, str]) -> str:
    """``{field}`` placeholders filled from a match; unknown ones render as ``?``. Never evaluates."""
    out: list[str] = []
    for literal, name in _template_parts(template):
        out.append(literal)
        if name is not None:
            text = fields.get(name, "?")
            out.append(text if len(text) <= 200 else text[:200] + "…")
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _template_parts(template: str) -> tuple[tuple[str, str | None], ...]:
    """A message template as (literal text, placeholder name) pairs, parsed once per template."""
    parts: list[tuple[str, str | None]] = []
    position = 0
    for m in _PLACEHOLDER.finditer(template):
        parts.append((template[position:m.start()], m.group(1)))
        position = m.end()
    parts.append((template[position:], None))
    return tuple(parts)
