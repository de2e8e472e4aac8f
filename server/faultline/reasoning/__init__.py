"""Cross-rank reasoning: from signature matches to the initiating rank, root cause and collateral.

Causal signals come before clocks: a rank named by others ("remote error detected from rank: 5"),
watchdog counters (a rank whose ``last enqueued`` is below the timed-out ``SeqNum`` never issued the
collective), exit codes (-15/-6 are sent or self-inflicted teardown; 1/-9/-7/-11 are origins), the rank
missing from a set of timeout reports; then time stamps with a skew tolerance; then line order within
one rank. torchrun's "Root Cause (first observed failure)" is only one node's first exit, so it counts
as evidence, not as the answer.
"""

from __future__ import annotations

from collections.abc import Callable

from ..diagnosis import Diagnosis
from ..library import SignatureLibrary
from ..lines.timestamps import default_year
from ..model import Role, ScanOutput, Verdict
from .attribution import attribute_ranks
from .evidence import Candidate, all_ranks, blames_of, exit_codes, is_error_file, seconds
from .roles import demote_after_own_failure, drop_soft_warnings
from .root_cause import choose_root, straggler
from .verdict import finish_failure, finish_without_root, rank_states, rank_suspects

__all__ = ["diagnose_scan", "rank_suspects"]


def diagnose_scan(scan: ScanOutput, library: SignatureLibrary,
                  last_line_lookup: Callable[[str, int], tuple[int, str] | None] | None = None) -> Diagnosis:
    events = scan.events
    files = {f.path: f for f in scan.files}
    attribute_ranks(events, files)
    year = default_year(e.time for e in events)
    ranks = all_ranks(events, scan.files)
    diagnosis = Diagnosis(verdict=Verdict.NO_FAILURE, events=events, files=scan.files, library=library)
    blames = blames_of(events)
    exits = exit_codes(events)
    demote_after_own_failure(events)

    candidates = [
        Candidate(e, seconds(e, year), e.rank_from_field or is_error_file(e.file))
        for e in events if e.role_prior is Role.ROOT_CAUSE and e.role is Role.ROOT_CAUSE
    ]
    candidates = drop_soft_warnings(candidates, events, exits, scan.suspects, diagnosis)
    root = choose_root(candidates, blames, exits, diagnosis)
    if root is None:
        root = straggler(events, files, ranks, library, diagnosis, last_line_lookup)
    if root is not None:
        finish_failure(diagnosis, root, library, events, blames, exits, year)
    else:
        finish_without_root(diagnosis, events, scan.suspects, blames, exits)
    diagnosis.ranks = rank_states(diagnosis, ranks, events, exits)
    return diagnosis
