"""Records that flow through the engine: log lines, signature matches (events), scan output and the parts
of a diagnosis."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any, TypeVar

_Record = TypeVar("_Record", bound=type)


def _pickled_by_fields(cls: _Record) -> _Record:
    """Pickle instances as ``cls(*field values)``.

    Events and their stamps cross process boundaries by the thousand in parallel scans (a 512-rank cascade);
    the default pickle of a dataclass (a state dict set on a bare instance) loads at half this speed.
    """
    getter: Callable[[Any], tuple[Any, ...]] = operator.attrgetter(*(f.name for f in fields(cls)))

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return cls, getter(self)

    cls.__reduce__ = __reduce__  # type: ignore[assignment]
    return cls


class Role(str, Enum):
    """What part a failure plays in a run; signatures carry a prior, the reasoning decides per run."""

    ROOT_CAUSE = "root_cause"
    COLLATERAL = "collateral"
    CONTEXT = "context"


class Verdict(str, Enum):
    FAILURE = "failure"
    UNKNOWN = "unknown"
    NO_FAILURE = "no_failure"


@_pickled_by_fields
@dataclass(frozen=True)
class Timestamp:
    """A point in time as a log line states it.

    Many formats carry no year (c10's ``[E1129 ...]``), so the year is kept apart and filled in by the
    reasoning from the other lines of the run. ``seconds`` counts from the start of that year.
    ``uptime`` marks kernel ``[ 8559.603724]`` stamps, which only order lines of one host.
    """

    year: int | None
    seconds: float
    text: str
    uptime: bool = False
    inferred: bool = False  # taken from an earlier line of the same rank: a lower bound, not the time


@dataclass(frozen=True)
class LineContext:
    """Where a line came from: the rank, host and time its prefixes state."""

    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: Timestamp | None = None
    level: str | None = None

    @property
    def best_rank(self) -> int | None:
        """The global rank when the line names one, else the local rank of a torchrun ``--tee`` prefix."""
        return self.rank if self.rank is not None else self.local_rank


@_pickled_by_fields
@dataclass
class Event:
    """One signature match on one line."""

    signature_id: str
    title: str
    category: str
    role_prior: Role
    priority: int
    file: str
    line: int
    text: str
    message: str
    fields: dict[str, str]
    rank: int | None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    time: Timestamp | None = None
    level: str | None = None
    order: int = 0
    rank_from_field: bool = False
    role: Role = Role.CONTEXT
    caused_by: Event | None = None
    note: str = ""
    # Near-identical occurrences of this event (same writer, signature and fields the reasoning reads) that the
    # scan counted but did not keep (scan/aggregate.py); set on the first kept one of them. 0: none.
    repeats: int = 0

    @property
    def time_text(self) -> str:
        return self.time.text if self.time else ""

    def location(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Frame:
    """One frame of a Python traceback."""

    path: str
    line: int
    function: str
    package: str | None  # the installed package it belongs to, "python" for the standard library, None: user code

    @property
    def short_path(self) -> str:
        """The path from the package (``torch/nn/functional.py``), or the user's path as written."""
        if self.package not in (None, "python"):
            marker = self.path.replace("\\", "/").rfind("-packages/")
            return self.path[marker + len("-packages/"):] if marker != -1 else self.path
        return self.path

    def __str__(self) -> str:
        return f"{self.short_path}:{self.line} in {self.function}"


@dataclass(frozen=True)
class RaiseSite:
    """The traceback above a root-cause line: its deepest frame (where it was raised), the deepest frame of the
    user's own code, and the deepest frame of library code."""

    deepest: Frame
    own: Frame | None
    library: Frame | None = None


@dataclass
class Suspect:
    """A line that looks like an error although no signature describes it."""

    file: str
    line: int
    text: str
    score: float
    reason: str
    rank: int | None = None
    order: int = 0
    level: str | None = None  # the log level its prefix states (W: the program itself calls it a warning)


@dataclass
class Reason:
    """One piece of evidence for or against the verdict."""

    kind: str  # "supports" | "contradicts"
    text: str


@dataclass
class RankState:
    rank: int
    state: str  # "root_cause" | "collateral" | "failed" | "ok" | "silent" | "straggler"
    hosts: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    exitcode: int | None = None
    first_event: Event | None = None
    events: int = 0


@dataclass
class FileSummary:
    """What the scanner learnt about one input file, beyond its events."""

    path: str
    lines: int = 0
    bytes: int = 0
    rank_from_name: int | None = None
    ranks_seen: set[int] = field(default_factory=set)
    last_line: int = 0
    last_text: str = ""
    truncated_lines: int = 0
    progress_line: int = 0  # the last line near the end that shows the run going on or finishing (0: none)
    first_time: Timestamp | None = None  # the time stamp of its first stamped line, near its start (None: none)
    binary: bool = False
    error: str | None = None


@dataclass
class ScanOutput:
    """What a scan found in its sources: events, unexplained error lines (suspects) and one summary a file."""

    events: list[Event] = field(default_factory=list)
    suspects: list[Suspect] = field(default_factory=list)
    files: list[FileSummary] = field(default_factory=list)
