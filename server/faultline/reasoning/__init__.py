"""Cross-rank reasoning: from signature matches to the initiating rank, root cause and collateral.

Causal signals come before clocks: a rank named by others ("remote error detected from rank: 5"),
watchdog counters (a rank whose ``last enqueued`` is below the timed-out ``SeqNum`` never issued the
collective), exit codes (-15/-6 are sent or self-inflicted teardown; 1/-9/-7/-11 are origins), the rank
missing from a set of timeout reports; then time stamps with a skew tolerance; then line order within
one rank. torchrun's "Root Cause (first observed failure)" is only one node's first exit, so it counts
as evidence, not as the answer.

The reasoning is the ordered list of passes below, each a function of one shared :class:`Reasoning`
(state.py). A new pass is a function in the module of its kind, and one line in ``PASSES``.
"""

from __future__ import annotations

from ..diagnosis import Diagnosis
from ..library import SignatureLibrary
from ..model import ScanOutput
from . import (
    attribution,
    earlier_statement,
    evidence,
    fixes,
    frames,
    guidance,
    message_remedy,
    propagation,
    roles,
    root_cause,
    runs,
    timing,
    verdict,
)
from .state import LastLineLookup, LinesBefore, Pass, Reasoning
from .verdict import rank_suspects

__all__ = ["PASSES", "diagnose_scan", "rank_suspects"]

PASSES: tuple[Pass, ...] = (
    runs.keep_last_run,  # an input with several runs or attempts: the most recent one
    attribution.ranks_from_fields,  # the rank a line is about, from its own fields
    attribution.ranks_from_srun_tasks,  # srun's report of a task: its rank, when srun starts every rank itself
    attribution.mark_summary_copies,  # torchrun's summary repeats tracebacks: evidence, not failures
    attribution.store_errors_to_host,  # a rank-less store error under the store host's frame: rank 0
    attribution.ranks_from_processes,  # from the process or the GPU
    propagation.propagate_ranks,  # the rest: a hint in the text, the file's one rank, the single origin, the name
    evidence.gather,  # the year, every rank, who blames whom, exit codes
    propagation.take_the_blamed_rank,  # a rank-less line that can start a failure: the one rank the others blame
    roles.promote_stated_causes,  # a usual symptom whose fields state the cause (root_when)
    roles.defer_wrapper_to_wrapped,  # "backend='inductor' raised:": the exception on the next line is the failure
    roles.excuse_ignored_exceptions,  # "Exception ignored in:": the exception under it did not stop the program
    roles.excuse_exit_cleanup,  # the standard library's clean-up at exit raised: the exit status is unchanged
    roles.pass_over_recovered_failures,  # "ran out of memory, skipping batch": the failure above it was caught
    roles.demote_after_own_failure,  # a root-cause line after its rank's own timeout is a consequence
    roles.demote_kills_after_exits,  # a rank killed after another had exited with an error: the teardown
    roles.defer_terminate_to_what,  # an uncaught C++ exception: its what() line says which, and takes its role
    roles.promote_chain_heads,  # an NCCL warning that a failed call's result chain follows: its process's cause
    roles.pass_over_waits,  # a warning that ranks were waiting, then more progress: the wait ended
    roles.pass_over_logged_exceptions,  # one process's exception, then more progress: it was caught and printed
    root_cause.collect_candidates,  # the events that may start the failure
    roles.drop_soft_warnings,  # warnings are causes only when the run did fail
    root_cause.choose_root,  # blame before clocks before specificity
    root_cause.find_straggler,  # no root-cause line: the rank behind or silent
    root_cause.promote_first_failure,  # still none: the rank others name, an outside stop, or the first failure
    verdict.decide,  # failure, unknown or no failure; collateral, confidence, suspicious lines
    fixes.offer_what_applies,  # a conditional fix step or variable only when this failure's fields meet it
    guidance.where_the_cause_is,  # the culprit's own error is elsewhere: where, and how to fail fast next time
    verdict.explain_no_failure,  # no failure: the lines that looked like trouble, and why each is harmless
    timing.when_it_failed,  # the step it was at, how long the run had been going
    frames.locate_raise,  # the traceback above the root line: where it was raised, and a fix that starts there
    frames.advise_at_source,  # a native failure naming its source file in a known component: its checklist
    message_remedy.remedy_from_message,  # a generic exception whose message says what to do: that comes first
    earlier_statement.move_to_earlier_statement,  # an exception repeating a message logged just before: that line
    earlier_statement.move_generic_abort_to_its_reason,  # an abort with a generic message: the reason printed above
    verdict.states_of_ranks,  # each rank's state
)


def diagnose_scan(scan: ScanOutput, library: SignatureLibrary,
                  last_line_lookup: LastLineLookup | None = None,
                  lines_before_lookup: LinesBefore | None = None) -> Diagnosis:
    """Run every pass over what a scan found."""
    reasoning = Reasoning(scan, library, last_line_lookup, lines_before_lookup)
    for reasoning_pass in PASSES:
        reasoning_pass(reasoning)
    return reasoning.diagnosis
