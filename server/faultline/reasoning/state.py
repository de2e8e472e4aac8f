"""What the reasoning passes share: the scan's output, the diagnosis they build, and what earlier passes found.

Each pass (reasoning/__init__.py lists them in order) reads and writes one :class:`Reasoning`. Behaviour that
depends on a particular signature is read from that signature's fields (:class:`SignatureKinds`), never from
its id.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..diagnosis import Diagnosis
from ..library import Signature, SignatureLibrary
from ..model import Event, FileSummary, ScanOutput, Suspect, Verdict

LastLineLookup = Callable[[str, int], "tuple[int, str] | None"]  # (file name, rank) -> (line, text)
LinesBefore = Callable[[str, int, int], "list[str] | None"]  # (file name, line, count) -> the lines before it


class SignatureKinds:
    """The signatures the reasoning treats specially, by the fields that say so (signatures/README.md).

    Plain classes in this module but for the small candidate record: a dataclass costs about a millisecond
    of every diagnosis's start-up.
    """

    __slots__ = ("excusers", "external", "failure_evidence", "missing_cause", "not_blaming", "output_headers", "recoveries",
                 "root_when", "run_restarts", "run_starts", "store_errors", "store_frames", "straggler", "summary_fields",
                 "summary_first_failure", "summary_headers", "wrappers")

    def __init__(self, library: SignatureLibrary) -> None:
        self.summary_headers = library.ids_where(summary="header")  # the start of torchrun's failure summary
        # its "Root Cause (first observed failure)" line, before the entry it names
        self.summary_first_failure = library.ids_where(summary="first-failure")
        self.summary_fields = library.ids_where(summary="field") | self.summary_first_failure  # an entry's field
        self.not_blaming = library.ids_where(blames=False)  # a captured peer_rank is a victim
        self.store_frames = library.ids_where(store_host="frame")
        self.store_errors = library.ids_where(store_host="error")
        self.failure_evidence = library.ids_where(failure_evidence=True)  # the line proves a call failed
        self.external = library.ids_where(external=True)  # the job was stopped from outside
        self.output_headers = library.ids_where(introduces_output=True)  # a rank's own output is pasted below
        self.wrappers = library.ids_where(wraps_next_line=True)  # the exception it re-raises is on the next line
        self.excusers = library.ids_where(excuses_next_exception=True)  # the exception after it was ignored
        self.recoveries = library.ids_where(excuses_previous_failure=True)  # the failure above it was caught
        # a collateral line that states the cause when its fields meet a condition
        self.root_when = library.ids_having("root_when")
        self.run_starts = library.ids_where(run_boundary="start")  # a launcher's start banner
        self.run_restarts = library.ids_where(run_boundary="restart")  # the workers restarted after a failure
        self.straggler = _inferred(library, "straggler")
        self.missing_cause = _inferred(library, "missing-cause")  # whose fix to give when no line says why

    def is_straggler(self, event: Event) -> bool:
        return self.straggler is not None and event.signature_id == self.straggler.id


def _inferred(library: SignatureLibrary, inference: str) -> Signature | None:
    """The derived signature an inference reports (the first by id, when a user folder adds another)."""
    ids = library.ids_where(inference=inference)
    return library.get(min(ids)) if ids else None


@dataclass(frozen=True)
class Promotion:
    """A root cause named without a line that states the cause (root_cause.promote_first_failure)."""

    verdict: Verdict  # FAILURE when a rank or an outside stop is named; UNKNOWN when only symptoms are seen
    initiating_rank: int | None
    reason: str
    signature: Signature | None = None  # without a root line: whose fix to give (the symptoms' family)
    first: Event | None = None  # UNKNOWN: the first failure the logs show (a symptom; no line states its cause)


@dataclass(frozen=True)
class Candidate:
    """An event that may be the root cause, with its comparable time."""

    event: Event
    time: float | None  # exact time, or the lower bound of an inferred one
    agent_report: bool
    states_why: bool = False  # the WARN that heads its process's failed result chain: it says why the call failed
    explains: int = 0  # the priority of the more specific failure nearby that this WARN explains (0: none)

    @property
    def priority(self) -> int:
        """How specific a cause it is: its signature's, or that of the failure it explains."""
        return max(self.event.priority, self.explains)

    @property
    def exact(self) -> bool:
        return self.time is not None and self.event.time is not None and not self.event.time.inferred


class Reasoning:
    """One diagnosis in the making: the scan's output, the diagnosis the passes build, and what they found."""

    def __init__(self, scan: ScanOutput, library: SignatureLibrary,
                 last_line_lookup: LastLineLookup | None = None,
                 lines_before_lookup: LinesBefore | None = None) -> None:
        self.library = library
        self.kinds = SignatureKinds(library)
        self.events: list[Event] = scan.events
        self.suspects: list[Suspect] = scan.suspects
        self.file_list: list[FileSummary] = scan.files
        self.files: dict[str, FileSummary] = {f.path: f for f in scan.files}
        self.diagnosis = Diagnosis(verdict=Verdict.NO_FAILURE, events=scan.events, files=scan.files, library=library)
        self.last_line_lookup = last_line_lookup
        self.lines_before_lookup = lines_before_lookup
        # Found by the passes, in order:
        self.world_comm: dict[int, tuple[int, int]] = {}  # pid -> (nranks, rank) of its largest communicator
        self.year = 2000  # for stamps without one
        self.ranks: set[int] = set()  # every rank the logs show
        self.blames: Counter[int] = Counter()  # rank -> lines on other ranks that name it
        self.exits: dict[int, int] = {}  # rank -> its first exit code
        self.candidates: list[Candidate] = []
        self.chain_heads: set[int] = set()  # id() of the NCCL WARN events that head a failed result chain
        self.root: Event | None = None
        self.promotion: Promotion | None = None  # set when the root was named without a line stating the cause


Pass = Callable[[Reasoning], None]
