"""Choosing the root cause: one representative per rank, blame before clocks before specificity, and the
straggler that never reached the collective when no line states a cause."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace

from ..diagnosis import Diagnosis
from ..library import Signature
from ..lines.prefixes import is_error_record
from ..model import Event, FileSummary, Reason, Role, Suspect, Verdict
from .evidence import CLOCK_SKEW_S, ORIGIN_EXITS, VICTIM_EXITS, exit_code, origin_ranks, seconds
from .state import Candidate, LastLineLookup, Promotion, Reasoning

# Signatures below this priority are generic (an exception named only by its class): a later one of the same
# rank does not displace an earlier failure the way a specific signature nearby does.
SPECIFIC_PRIORITY = 20
_FIRST_FAILURE_LINES = 6  # torchrun's root-cause entry: "[0]:", time, host, rank, ...


def collect_candidates(r: Reasoning) -> None:
    """Events that may start the failure: a root-cause signature whose role this run has not changed."""
    r.candidates = [
        Candidate(e, seconds(e, r.year), e.rank_from_field or is_error_record(e.file), id(e) in r.chain_heads)
        for e in r.events if e.role_prior is Role.ROOT_CAUSE and e.role is Role.ROOT_CAUSE
    ]


def choose_root(r: Reasoning) -> None:
    """The candidate that failed first: the most blamed, then the earliest, then the most specific."""
    r.root = _choose_root(r.candidates, r.blames, r.exits, r.diagnosis)


def find_straggler(r: Reasoning) -> None:
    """No root-cause line: the rank that never reached the collective the others timed out in. Its last line
    is the root; when it printed nothing here, it is named without a line."""
    if r.root is not None or r.kinds.straggler is None:
        return
    found = _straggler(r.kinds.straggler, r.events, r.files, r.ranks, r.diagnosis, r.last_line_lookup)
    if isinstance(found, Event):
        r.root = found
    elif found is not None:
        r.promotion = Promotion(Verdict.FAILURE, found, f"rank {found} printed nothing of its own here: its error, if "
                                "it had one, is in its own output", r.kinds.straggler)


def _representatives(candidates: list[Candidate]) -> list[Candidate]:
    """One candidate per rank: its earliest own line, preferring a more specific signature nearby - unless that
    line is the NCCL warning its process's failed result chain starts from: the error the chain ends in (NCCL's
    'internal error', 'unhandled system error') is the failure that warning explains."""
    by_rank: dict[object, list[Candidate]] = defaultdict(list)
    for c in candidates:
        key: object = c.event.rank if c.event.rank is not None else ("file", c.event.file)
        by_rank[key].append(c)
    chosen: list[Candidate] = []
    for group in by_rank.values():
        own = [c for c in group if not c.agent_report]
        if own:
            own.sort(key=lambda c: c.event.order)
        else:
            # Only agent reports: torchrun's failure summary names the global rank, its "failed (exitcode)
            # local_rank:" log line only the local one.
            own = sorted(group, key=lambda c: ("local_rank" in c.event.fields, c.event.order))
        best = own[0]
        exact = [c for c in own if c.exact]
        if exact:
            # Line order is the truth within one file; across files (kern.log vs console) only exact times are.
            earliest = min(exact, key=lambda c: c.time if c.time is not None else float("inf"))
            if earliest is not best and earliest.event.file != best.event.file and (
                    not best.exact or (earliest.time or 0.0) < (best.time or 0.0) - CLOCK_SKEW_S):
                best = earliest
        for c in own[1:]:
            near = (c.event.file == best.event.file and 0 <= c.event.line - best.event.line <= 60
                    and (c.time is None or best.time is None or c.time - best.time <= CLOCK_SKEW_S))
            if near and c.event.priority > best.priority and c.event.priority >= SPECIFIC_PRIORITY:
                best = replace(best, explains=c.event.priority) if best.states_why else c
        chosen.append(best)
    return chosen


def promote_first_failure(r: Reasoning) -> None:
    """No line states a cause and no straggler was found, yet the run failed: name what the logs do show.

    A rank named by the others (blame) or the only rank that ended on its own (exit records, also when they are
    all the logs show: mpirun's "process rank 1 ... exited on signal 6") is the initiator: its first failure
    line is the root, or, when it printed none, the line that names it. A launcher stopped
    from outside (a signal sent to it) before anything failed is the root. Otherwise the first failure line is
    shown as the first thing that went wrong, and the verdict stays unknown.
    """
    if r.root is not None or r.promotion is not None:
        return
    failures = [e for e in r.events if e.role is not Role.CONTEXT]
    if not failures and not any(code != 0 for code in r.exits.values()):
        return
    named, why = _named_rank(r)
    if named is not None:
        own = [e for e in failures if e.rank == named
               and (not e.rank_from_field or e.signature_id in r.kinds.output_headers)]  # its own output's header
        about = [e for e in r.events if e.rank == named and e.rank_from_field and exit_code(e)]
        if own or about:
            r.root = _earliest(own or about, r.year)
            r.promotion = Promotion(Verdict.FAILURE, named, why)
        else:  # only the others' lines name it: its own error is not in these logs
            r.promotion = Promotion(Verdict.FAILURE, named, why, r.kinds.missing_cause)
        return
    if not failures:  # only exit records, and none names one rank
        return
    first = _earliest(failures, r.year)
    if first.signature_id in r.kinds.external:
        r.root = first
        r.promotion = Promotion(Verdict.FAILURE, first.rank if not first.rank_from_field else None,
                                "the job was stopped from outside before anything in it failed")
        return
    # The fix of the most specific symptom (a watchdog timeout tells more than the launcher's teardown after it).
    telling = max(enumerate(failures), key=lambda pair: (pair[1].priority, -pair[0]))[1]
    r.promotion = Promotion(Verdict.UNKNOWN, None, f"no line states the cause; the first failure the logs show is "
                            f"'{first.title}' ({first.file}:{first.line})", r.library.get(telling.signature_id),
                            first)


def _named_rank(r: Reasoning) -> tuple[int | None, str]:
    """The rank the other ranks blame, else the rank torchrun's summary names as the first observed failure,
    else the only rank that ended on its own; and why."""
    if r.blames:
        rank, count = r.blames.most_common(1)[0]
        return rank, f"{count} line(s) on other ranks name rank {rank} as the source of the error"
    torn_down = {e.rank for e in r.events  # exit records demoted as the teardown (roles.demote_kills_after_exits)
                 if e.role_prior is Role.ROOT_CAUSE and e.role is Role.COLLATERAL and e.rank_from_field and exit_code(e)}
    first = _launcher_first_failure(r)
    if first is not None and first not in torn_down and r.exits.get(first) not in VICTIM_EXITS:
        return first, f"torchrun's failure summary names rank {first} as the first observed failure"
    origins = origin_ranks({rank: code for rank, code in r.exits.items() if rank not in torn_down})
    if len(origins) == 1 and not _aborted_like_the_others(r, next(iter(origins))):
        rank = next(iter(origins))
        return rank, (f"rank {rank} is the only rank that ended on its own (exit code {r.exits[rank]}); the others "
                      "were stopped")
    raising = _ranks_with_bare_tracebacks(r)
    if len(raising) == 1:
        rank = raising.pop()
        return rank, (f"rank {rank} is the only rank with a traceback of its own (its exception line is not in "
                      "these logs); the other ranks show only what followed")
    return None, ""


def _aborted_like_the_others(r: Reasoning, rank: int) -> bool:
    """The only rank with an exit code ended the way a victim does (SIGABRT, SIGTERM) while other ranks show
    failures of their own (a watchdog timeout, a lost peer), or while its own lines are only a victim's: the abort
    is its own watchdog taking the process down, and it tells nothing about who failed first."""
    if r.exits.get(rank) not in VICTIM_EXITS:
        return False
    if any(e.role_prior is Role.COLLATERAL and e.rank is not None and e.rank != rank and not e.rank_from_field
           and exit_code(e) is None and e.category != "launch" for e in r.events):
        return True
    # Or its own lines show only what a victim prints (its watchdog's timeout, the abort of it): it was waiting in
    # the collective with the others, and its timer ran out first.
    own = [e for e in r.events if e.rank == rank and not e.rank_from_field and e.role is not Role.CONTEXT]
    return bool(own) and all(e.role is Role.COLLATERAL for e in own) and any(
        e.role_prior is Role.COLLATERAL and e.category != "launch" for e in own)


def _ranks_with_bare_tracebacks(r: Reasoning) -> set[int]:
    """Ranks that printed a traceback but no failure line of their own after it: an exception whose last line was
    cut from the paste (or went elsewhere). A header that introduces a rank's own output (``-- Process 0 terminated
    with the following error:``) counts as its traceback's first line."""
    headers: list[Event | Suspect] = [s for s in r.suspects
                                      if s.rank is not None and "Traceback (most recent call last)" in s.text]
    headers += [e for e in r.events if e.signature_id in r.kinds.output_headers and e.rank is not None]
    failing = [e for e in r.events if e.role is not Role.CONTEXT and e.rank is not None and not e.rank_from_field]
    return {s.rank for s in headers if s.rank is not None
            and not any(e.rank == s.rank and e.file == s.file and e.line > s.line for e in failing)}


def _launcher_first_failure(r: Reasoning) -> int | None:
    """The rank of the entry under torchrun's "Root Cause (first observed failure):" line, when the logs show one."""
    headers = r.kinds.summary_first_failure
    marks = [e for e in r.events if e.signature_id in headers]
    if not marks:
        return None
    for mark in marks:
        entry = [e for e in r.events if e.file == mark.file and 0 < e.line - mark.line <= _FIRST_FAILURE_LINES
                 and e.rank_from_field and e.rank is not None]
        if entry:
            return min(entry, key=lambda e: e.line).rank
    return None


def _earliest(events: list[Event], year: int) -> Event:
    """The first of these events: by exact time where they have one, then in the order they were read."""
    def key(e: Event) -> tuple[float, int]:
        t = seconds(e, year) if e.time is not None and not e.time.inferred else None
        return (t if t is not None else float("inf"), e.order)

    return min(events, key=key)


def _choose_root(candidates: list[Candidate], blames: Counter[int], exits: dict[int, int],
                 diagnosis: Diagnosis) -> Event | None:
    if not candidates:
        return None
    pool = _representatives(candidates)
    reasons = diagnosis.reasons
    blamed = [c for c in pool if c.event.rank is not None and blames.get(c.event.rank)]
    if blamed:
        top = max(blames[c.event.rank] for c in blamed)  # type: ignore[index]
        pool = [c for c in blamed if blames[c.event.rank] == top]  # type: ignore[index]
        reasons.append(Reason("supports", f"{top} line(s) on other ranks name rank {pool[0].event.rank} "
                                          "as the source of the error"))
    timed = [c.time for c in pool if c.exact and c.time is not None]
    if timed:
        # A candidate is later only when even the lower bound of its time is past the earliest exact one.
        t0 = min(timed)
        later = [c for c in pool if c.time is not None and c.time > t0 + CLOCK_SKEW_S]
        pool = [c for c in pool if c.time is None or c.time <= t0 + CLOCK_SKEW_S]
        if later:
            reasons.append(Reason("supports", f"it happened before the {len(later)} other root-cause-like "
                                              "failure(s) on other ranks (time stamps, 2 s skew allowed)"))

    def key(c: Candidate) -> tuple[int, int, int, int]:
        code = exits.get(c.event.rank) if c.event.rank is not None else None
        exit_rank = 0 if code in ORIGIN_EXITS or code is None else (2 if code in VICTIM_EXITS else 1)
        return (1 if c.agent_report else 0, -c.priority, exit_rank, c.event.order)

    pool.sort(key=key)
    root = pool[0]
    for other in pool[1:]:
        if other.event.rank != root.event.rank and other.priority >= root.priority - 20 and not other.agent_report:
            diagnosis.competing.append(other.event)
    return root.event


def _straggler(sig: Signature, events: list[Event], files: dict[str, FileSummary], all_ranks: set[int],
               diagnosis: Diagnosis, last_line_lookup: LastLineLookup | None) -> Event | int | None:
    """The rank behind the others (watchdog counters), missing from a collective's own list of the ranks that
    reached it, or silent while the others time out: as an event on its last line, or only its number when
    it printed nothing here."""
    reasons = diagnosis.reasons
    seqs = [int(e.fields["seq"]) for e in events if e.fields.get("seq", "").isdigit()]
    timed_out_seq = max(seqs) if seqs else None
    behind: dict[int, Event] = {}
    if timed_out_seq is not None:
        for e in events:
            enq = e.fields.get("last_enqueued", "")
            if (e.rank is not None and re.fullmatch(r"-?\d+", enq) and int(enq) < timed_out_seq
                    and (e.rank not in behind or int(enq) < int(behind[e.rank].fields["last_enqueued"]))):
                behind[e.rank] = e
    stragglers: list[int] = sorted(behind)
    evidence = ""
    missing = _listed_ranks(events, "missing_ranks")
    ready = _listed_ranks(events, "ready_ranks")
    world = _world(events, all_ranks | ready)  # a list of the ranks that arrived shows the job has its gaps too
    if stragglers:
        evidence = (f"rank(s) {', '.join(map(str, stragglers))} last enqueued a collective below the timed-out "
                    f"SeqNum={timed_out_seq}: they never issued it")
    elif missing:
        if len(missing) > 1 and world <= missing:
            return None  # every rank misses a collective another submitted: they differ, none is behind
        stragglers = sorted(missing)
        evidence = f"the stalled collective lists rank(s) {', '.join(map(str, stragglers))} as missing"
    elif ready and world - ready:
        stragglers = sorted(world - ready)
        evidence = (f"rank(s) {', '.join(map(str, stragglers))} are missing from the ranks that reached the stalled "
                    f"collective ({len(ready)} of {len(world)})")
    elif not _on_a_subgroup(events):  # a subgroup's members are not known: a rank not seen in it may not be in it
        reporters = {e.rank for e in events if e.rank is not None and e.role_prior is Role.COLLATERAL
                     and not e.rank_from_field}
        silent = sorted(world - reporters)
        if reporters and 1 <= len(silent) <= max(1, len(world) // 4):
            stragglers = silent
            evidence = (f"rank(s) {', '.join(map(str, silent))} reported no failure while "
                        f"{len(reporters)} other rank(s) timed out or lost their peers waiting for them")
    if not stragglers:
        return None
    rank = stragglers[0]
    reasons.append(Reason("supports", evidence))
    if len(stragglers) > 1:
        reasons.append(Reason("contradicts", f"{len(stragglers)} ranks are behind; rank {rank} is the first "
                                             "of them, the others may be stuck for the same reason"))
    anchor = behind.get(rank)
    located = (anchor.file, anchor.line, anchor.text) if anchor is not None else _last_line(rank, files,
                                                                                            last_line_lookup)
    if located is None:
        return rank  # it printed nothing of its own here
    file, line, text = located
    return Event(
        signature_id=sig.id, title=sig.title, category=sig.category, role_prior=Role.ROOT_CAUSE,
        priority=sig.priority, file=file, line=line, text=text,
        message=f"rank {rank} never reached the collective the other ranks timed out in",
        fields={"rank": str(rank)}, rank=rank, time=anchor.time if anchor else None, role=Role.ROOT_CAUSE,
        order=anchor.order if anchor else 0, note="inferred by the cross-rank reasoning",
    )


def _on_a_subgroup(events: list[Event]) -> bool:
    """Whether the watchdog reports its collective on a process group other than the default one (ProcessGroupNCCL's
    ``[PG ID 5 PG GUID 15 Rank 1]``, ``[PG 5 Rank 1]``): the group holds only some of the ranks."""
    return any(e.fields.get("pg", "0") != "0" for e in events if "seq" in e.fields)


def _world(events: list[Event], ranks: set[int]) -> set[int]:
    """The ranks of the job as far as the logs show: every rank seen, every rank below the highest one seen, and
    every rank below a communicator's or world's size."""
    sizes = [int(e.fields[key]) for e in events for key in ("nranks", "world_size")
             if e.fields.get(key, "").isdigit() and 0 < int(e.fields[key]) <= 100_000]
    world = set(ranks)
    if ranks:
        world |= set(range(max(ranks) + 1))
    if sizes:
        world |= set(range(max(sizes)))
    return world


def _listed_ranks(events: list[Event], field: str) -> set[int]:
    """The ranks a stalled collective lists as having reached it (Horovod's ``ready_ranks``) or as missing from
    it (``missing_ranks``), in the reports of stalls the run did not go on after."""
    listed: set[int] = set()
    for e in events:
        value = e.fields.get(field)
        if value and e.role is not Role.CONTEXT:  # a stall the run went on after names no rank behind
            listed |= {int(part) for part in re.findall(r"\d{1,7}", value)}
    return listed


def _last_line(rank: int, files: dict[str, FileSummary], lookup: LastLineLookup | None) -> tuple[str, int, str] | None:
    own = [f for f in files.values() if f.rank_from_name == rank and f.last_line]
    if own:
        f = max(own, key=lambda f: f.lines)
        return f.path, f.last_line, f.last_text
    if lookup is None:
        return None
    for f in files.values():
        if rank in f.ranks_seen:
            found = lookup(f.path, rank)
            if found:
                return f.path, found[0], found[1]
    return None
