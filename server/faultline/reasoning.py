"""Cross-rank reasoning: from signature matches to the initiating rank, root cause and collateral.

Causal signals come before clocks: a rank named by others ("remote error detected from rank: 5"),
watchdog counters (a rank whose ``last enqueued`` is below the timed-out ``SeqNum`` never issued the
collective), exit codes (-15/-6 are sent or self-inflicted teardown; 1/-9/-7/-11 are origins), the rank
missing from a set of timeout reports; then time stamps with a skew tolerance; then line order within
one rank. torchrun's "Root Cause (first observed failure)" is only one node's first exit, so it counts
as evidence, not as the answer.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from .diagnosis import Diagnosis
from .library import SignatureLibrary
from .model import Event, FileSummary, RankState, Reason, Role, Suspect, Verdict
from .prefixes import inline_rank_hint
from .scanner import ScanOutput
from .timestamps import absolute_seconds, default_year

CLOCK_SKEW_S = 2.0
STRAGGLER_SIGNATURE = "collective-straggler"
_ORIGIN_EXITS = {1, -9, -7, -11, 137, 139, 135}
_VICTIM_EXITS = {-15, -6, 143, 134}
# Signatures whose named rank is the first rank to time out (a victim), not a culprit.
_NOT_BLAME = ("nccl-dump-signal",)
_BLOCK_FIELD = re.compile(r"^\s+(?:exitcode|traceback|error_file|host|time)\s*:")
_NORMALIZE_SUSPECT = re.compile(r"0x[0-9a-fA-F]+|\d+")


@dataclass
class _Candidate:
    event: Event
    time: float | None  # exact time, or the lower bound of an inferred one
    agent_report: bool

    @property
    def exact(self) -> bool:
        return self.time is not None and self.event.time is not None and not self.event.time.inferred


def diagnose_scan(scan: ScanOutput, library: SignatureLibrary,
                  last_line_lookup: Callable[[str, int], tuple[int, str] | None] | None = None) -> Diagnosis:
    events = scan.events
    files = {f.path: f for f in scan.files}
    _attribute_ranks(events, files)
    year = default_year(e.time for e in events)
    all_ranks = _all_ranks(events, scan.files)
    diagnosis = Diagnosis(verdict=Verdict.NO_FAILURE, events=events, files=scan.files, library=library)
    blames = _blames(events)
    exits = _exit_codes(events)
    _demote_after_own_failure(events)

    candidates = [
        _Candidate(e, _seconds(e, year), e.rank_from_field or _is_error_file(e.file))
        for e in events if e.role_prior is Role.ROOT_CAUSE and e.role is Role.ROOT_CAUSE
    ]
    candidates = _drop_soft_warnings(candidates, events, exits, scan.suspects, diagnosis)
    root = _choose_root(candidates, blames, exits, diagnosis)
    if root is None:
        root = _straggler(events, files, all_ranks, library, diagnosis, last_line_lookup)
    if root is not None:
        _finish_failure(diagnosis, root, library, events, blames, exits, year)
    else:
        _finish_without_root(diagnosis, events, scan.suspects, blames, exits)
    diagnosis.ranks = _rank_states(diagnosis, all_ranks, events, exits)
    return diagnosis


# -- attribution ----------------------------------------------------------------------------------
def _attribute_ranks(events: list[Event], files: dict[str, FileSummary]) -> None:
    pid_to_rank: dict[int, int] = {}
    world_comm: dict[int, tuple[int, int]] = {}  # pid -> (nranks, rank) of its largest communicator
    for e in events:
        if "rank" in e.fields and e.fields["rank"].isdigit():
            e.rank = int(e.fields["rank"])
            e.rank_from_field = True
        elif "comm_rank" in e.fields and e.pid is not None and e.fields["comm_rank"].isdigit():
            size = int(e.fields.get("nranks", "0") or 0)
            if e.pid not in world_comm or size > world_comm[e.pid][0]:
                world_comm[e.pid] = (size, int(e.fields["comm_rank"]))
    pid_to_rank.update({pid: rank for pid, (_size, rank) in world_comm.items()})
    bus_to_rank = _bus_map(events, world_comm)
    # torchrun failure blocks: "exitcode : -9 (pid: N)" belongs to the "rank : R" line just above it.
    last_rank_field: dict[str, tuple[int, int]] = {}
    for e in sorted(events, key=lambda ev: (ev.file, ev.line)):
        if e.rank_from_field and "rank" in e.fields:
            last_rank_field[e.file] = (e.line, e.rank)  # type: ignore[assignment]
        elif _BLOCK_FIELD.match(e.text) and e.file in last_rank_field:
            line, rank = last_rank_field[e.file]
            if 0 < e.line - line <= 6:
                e.rank = rank
                e.rank_from_field = True
    _mark_summary_copies(events)
    _store_server_errors_to_rank0(events)
    for e in events:
        if "pid" in e.fields and e.rank is not None and e.fields["pid"].isdigit():
            pid_to_rank.setdefault(int(e.fields["pid"]), e.rank)
    for e in events:
        if e.rank is not None:
            continue
        if e.local_rank is not None:
            e.rank = e.local_rank
        elif "local_rank" in e.fields and e.fields["local_rank"].isdigit():
            e.rank = int(e.fields["local_rank"])
            e.rank_from_field = True
        elif e.pid is not None and e.pid in pid_to_rank:
            e.rank = pid_to_rank[e.pid]
        elif "pid" in e.fields and e.fields["pid"].isdigit() and int(e.fields["pid"]) in pid_to_rank:
            e.rank = pid_to_rank[int(e.fields["pid"])]
            e.rank_from_field = True  # a line about that process (e.g. the agent's SIGTERM), not from it
        elif "pci" in e.fields and _pci_key(e.host, e.fields["pci"]) in bus_to_rank:
            e.rank = bus_to_rank[_pci_key(e.host, e.fields["pci"])]
        elif "pci" in e.fields and _pci_key(None, e.fields["pci"]) in bus_to_rank:
            e.rank = bus_to_rank[_pci_key(None, e.fields["pci"])]
        elif files.get(e.file) is not None and files[e.file].rank_from_name is not None:
            e.rank = files[e.file].rank_from_name
        else:
            e.rank = inline_rank_hint(e.text)


_SUMMARY_FIELDS = ("torchrun-failure-rank", "torchrun-failure-exitcode", "torchrun-root-cause-header")


def _mark_summary_copies(events: list[Event]) -> None:
    """torchrun's ChildFailedError summary repeats each worker's traceback, indented: those lines are
    copies of the rank's own output (already seen, or evidence only), not new failures."""
    by_file: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        by_file[e.file].append(e)
    for file_events in by_file.values():
        file_events.sort(key=lambda ev: ev.line)
        start: int | None = None
        end = -1
        rank: int | None = None
        for e in file_events:
            if e.signature_id == "torchrun-child-failed":
                start, end, rank = e.line, e.line + 12, None
                continue
            if start is None:
                continue
            if e.signature_id in _SUMMARY_FIELDS or _BLOCK_FIELD.match(e.text):
                end = e.line + 200  # the copied traceback follows, indented, up to the next field
                if e.rank_from_field and e.rank is not None:
                    rank = e.rank
                continue
            if e.line <= end and e.text[:1].isspace():
                e.role = Role.CONTEXT
                e.rank = rank if rank is not None else e.rank
                e.rank_from_field = rank is not None
                e.note = "repeated in torchrun's failure summary"
            elif e.line > end:
                start = None


def _store_server_errors_to_rank0(events: list[Event]) -> None:
    """A rank-less EADDRINUSE raised under a worker's env:// rendezvous comes from rank 0, the process
    that hosts the TCPStore server in that mode (torch/distributed/rendezvous.py)."""
    if not any(e.signature_id == "store-addr-in-use" and e.rank is None for e in events):
        return  # nearly always: no need to sort a cascade's thousands of events
    last_frame: dict[str, int] = {}
    for e in sorted(events, key=lambda ev: (ev.file, ev.line)):
        if e.signature_id == "store-server-in-rank0":
            last_frame[e.file] = e.line
        elif (e.signature_id == "store-addr-in-use" and e.rank is None and e.file in last_frame
              and 0 < e.line - last_frame[e.file] <= 15):
            e.rank = 0
            e.note = "raised while creating the env:// TCPStore server, which only rank 0 does"


def _pci_key(host: str | None, pci: str) -> tuple[str | None, int, int] | None:
    """(host, bus, device) of a PCI address ``0000:9a:00.0`` or of NCCL's packed ``busId`` ``9a000``."""
    m = re.fullmatch(r"(?:[0-9a-fA-F]{4,8}:)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-9a-fA-F])?", pci)
    if m:
        return host, int(m[1], 16), int(m[2], 16)
    if re.fullmatch(r"[0-9a-fA-F]{4,16}", pci):
        value = int(pci, 16)
        return host, (value >> 12) & 0xFF, (value >> 4) & 0xFF
    return None


def _bus_map(events: list[Event], world_comm: dict[int, tuple[int, int]]) -> dict[object, int]:
    """GPU PCI address -> rank, from the largest communicator's ``Init COMPLETE`` lines (for Xid lines)."""
    mapping: dict[object, int] = {}
    unique_bus: dict[object, set[int]] = defaultdict(set)
    for e in events:
        bus = e.fields.get("bus_id")
        if not bus or e.pid is None or e.pid not in world_comm:
            continue
        rank = world_comm[e.pid][1]
        key = _pci_key(e.host, bus)
        if key is None:
            continue
        mapping[key] = rank
        unique_bus[(None, key[1], key[2])].add(rank)
    for bus_only, ranks in unique_bus.items():
        if len(ranks) == 1:
            mapping[bus_only] = next(iter(ranks))
    return mapping


def _all_ranks(events: list[Event], files: Iterable[FileSummary]) -> set[int]:
    ranks: set[int] = set()
    for f in files:
        ranks |= f.ranks_seen
        if f.rank_from_name is not None:
            ranks.add(f.rank_from_name)
    ranks |= {e.rank for e in events if e.rank is not None}
    return {r for r in ranks if r < 1_000_000}


def _seconds(event: Event, default_year: int) -> float | None:
    if event.time is None or event.time.uptime:
        return None
    return absolute_seconds(event.time, default_year)


def _blames(events: list[Event]) -> Counter[int]:
    blames: Counter[int] = Counter()
    for e in events:
        peer = e.fields.get("peer_rank")
        if (peer and peer.isdigit() and e.role_prior is not Role.CONTEXT and e.signature_id not in _NOT_BLAME
                and (e.rank is None or int(peer) != e.rank)):
            blames[int(peer)] += 1
    return blames


def _exit_codes(events: list[Event]) -> dict[int, int]:
    exits: dict[int, int] = {}
    for e in events:
        code = e.fields.get("exitcode")
        if e.rank is not None and code and re.fullmatch(r"-?\d+", code):
            exits.setdefault(e.rank, int(code))
    return exits


def _demote_after_own_failure(events: list[Event]) -> None:
    """A root-cause-looking line printed after the same rank's own timeout/teardown is a consequence."""
    first_collateral: dict[tuple[str, int], Event] = {}
    for e in sorted(events, key=lambda ev: (ev.file, ev.line)):
        if e.rank is None or e.rank_from_field:
            continue
        key = (e.file, e.rank)
        if e.role_prior is Role.COLLATERAL and key not in first_collateral:
            first_collateral[key] = e
        elif e.role_prior is Role.ROOT_CAUSE and key in first_collateral:
            earlier = first_collateral[key]
            e.role = Role.COLLATERAL
            e.note = (f"printed after this rank's own {earlier.title} (line {earlier.line}): "
                      "a consequence, not the cause")


# -- choosing the root cause ----------------------------------------------------------------------
def _representatives(candidates: list[_Candidate]) -> list[_Candidate]:
    """One candidate per rank: its earliest own line, preferring a more specific signature nearby."""
    by_rank: dict[object, list[_Candidate]] = defaultdict(list)
    for c in candidates:
        key: object = c.event.rank if c.event.rank is not None else ("file", c.event.file)
        by_rank[key].append(c)
    chosen: list[_Candidate] = []
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
            if near and c.event.priority > best.event.priority:
                best = c
        chosen.append(best)
    return chosen


def _is_error_file(path: str) -> bool:
    """torchrun's per-worker ``error.json`` repeats the worker's exception: evidence, not its own output."""
    return path.replace("\\", "/").rsplit("/", 1)[-1] == "error.json"


def _drop_soft_warnings(candidates: list[_Candidate], events: list[Event], exits: dict[int, int],
                        suspects: list[Suspect], diagnosis: Diagnosis) -> list[_Candidate]:
    """Warning-level lines (``NCCL WARN``, ``[W ...]``) are causes only when the run did fail.

    NCCL prints ``Cuda failure 'out of memory'`` warnings and carries on; when nothing else shows a
    failure, such lines are context, not a root cause.
    """
    soft = [c for c in candidates if c.event.level == "W"]
    if not soft:
        return candidates
    hard = [c for c in candidates if c.event.level != "W"]
    failed = (hard or any(e.role_prior is Role.COLLATERAL for e in events)
              or any(code != 0 for code in exits.values())
              or any(e.signature_id == "torchrun-child-failed" for e in events)
              or any("Traceback" in s.text for s in suspects))
    if failed:
        return candidates
    for c in soft:
        c.event.role = Role.CONTEXT
        c.event.note = "a warning while the run went on: nothing else in the logs shows a failure"
    diagnosis.reasons.append(Reason("supports", f"{len(soft)} warning line(s) matched failure signatures, but the "
                                                "run shows no failure, exit code or traceback after them"))
    return hard


def _choose_root(candidates: list[_Candidate], blames: Counter[int], exits: dict[int, int],
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

    def key(c: _Candidate) -> tuple[int, int, int, int]:
        code = exits.get(c.event.rank) if c.event.rank is not None else None
        exit_rank = 0 if code in _ORIGIN_EXITS or code is None else (2 if code in _VICTIM_EXITS else 1)
        return (1 if c.agent_report else 0, -c.event.priority, exit_rank, c.event.order)

    pool.sort(key=key)
    root = pool[0]
    for other in pool[1:]:
        if other.event.rank != root.event.rank and other.event.priority >= root.event.priority - 20 \
                and not other.agent_report:
            diagnosis.competing.append(other.event)
    return root.event


def _straggler(events: list[Event], files: dict[str, FileSummary], all_ranks: set[int],
               library: SignatureLibrary, diagnosis: Diagnosis,
               last_line_lookup: Callable[[str, int], tuple[int, str] | None] | None) -> Event | None:
    """No root-cause line: look for the rank that never reached the collective the others timed out in."""
    sig = library.get(STRAGGLER_SIGNATURE)
    if sig is None:
        return None
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
    if stragglers:
        evidence = (f"rank(s) {', '.join(map(str, stragglers))} last enqueued a collective below the timed-out "
                    f"SeqNum={timed_out_seq}: they never issued it")
    else:
        reporters = {e.rank for e in events if e.rank is not None and e.role_prior is Role.COLLATERAL
                     and not e.rank_from_field}
        silent = sorted(all_ranks - reporters)
        if len(reporters) >= 2 and 1 <= len(silent) <= max(1, len(all_ranks) // 4):
            stragglers = silent
            evidence = (f"rank(s) {', '.join(map(str, silent))} reported no failure while "
                        f"{len(reporters)} other ranks timed out or lost their peers waiting for them")
    if not stragglers:
        return None
    rank = stragglers[0]
    reasons.append(Reason("supports", evidence))
    if len(stragglers) > 1:
        reasons.append(Reason("contradicts", f"{len(stragglers)} ranks are behind; rank {rank} is the first "
                                             "of them, the others may be stuck for the same reason"))
    anchor = behind.get(rank)
    if anchor is not None:
        file, line, text = anchor.file, anchor.line, anchor.text
    else:
        located = _last_line(rank, files, last_line_lookup)
        if located is None:
            return None
        file, line, text = located
    return Event(
        signature_id=sig.id, title=sig.title, category=sig.category, role_prior=Role.ROOT_CAUSE,
        priority=sig.priority, file=file, line=line, text=text,
        message=f"rank {rank} never reached the collective the other ranks timed out in",
        fields={"rank": str(rank)}, rank=rank, time=anchor.time if anchor else None, role=Role.ROOT_CAUSE,
        order=anchor.order if anchor else 0, note="inferred by the cross-rank reasoning",
    )


def _last_line(rank: int, files: dict[str, FileSummary],
               lookup: Callable[[str, int], tuple[int, str] | None] | None) -> tuple[str, int, str] | None:
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


# -- assembling the answer ------------------------------------------------------------------------
def _finish_failure(diagnosis: Diagnosis, root: Event, library: SignatureLibrary, events: list[Event],
                    blames: Counter[int], exits: dict[int, int], default_year: int) -> None:
    diagnosis.verdict = Verdict.FAILURE
    diagnosis.root_cause = root
    root.role = Role.ROOT_CAUSE
    diagnosis.root_signature = library.get(root.signature_id)
    diagnosis.initiating_rank = root.rank
    same = {e.rank for e in diagnosis.competing if e.signature_id == root.signature_id}
    if root.rank is not None and len(same) >= 1 and len(same) + 1 >= max(2, len(_ranks_with_events(events))):
        diagnosis.initiating_rank = None
        diagnosis.reasons.append(Reason("supports", f"every rank failed with '{root.title}' at the same point: "
                                                    "a global cause (code, configuration or environment), "
                                                    "not one rank"))
    competing = {id(e) for e in diagnosis.competing}
    root_time = _seconds(root, default_year)
    before = 0
    for e in events:
        if e is root or e.role is Role.CONTEXT:
            continue
        e.role = Role.COLLATERAL
        e.caused_by = root
        if id(e) in competing:
            e.note = e.note or "a competing cause: it cannot be ordered against the root cause"
        elif e.role_prior is Role.ROOT_CAUSE and not e.note:
            e.note = "a failure of its own, after the root cause"
        t = _seconds(e, default_year)
        if root_time is not None and t is not None and t < root_time - CLOCK_SKEW_S and e.rank != root.rank:
            before += 1
        diagnosis.collateral.append(e)
    _confidence(diagnosis, root, blames, exits, before)


def _ranks_with_events(events: list[Event]) -> set[int]:
    return {e.rank for e in events if e.rank is not None and not e.rank_from_field}


def _confidence(diagnosis: Diagnosis, root: Event, blames: Counter[int], exits: dict[int, int],
                before: int) -> None:
    reasons = diagnosis.reasons
    score = 0.45
    if root.signature_id == STRAGGLER_SIGNATURE:
        score = 0.55
    elif root.priority >= 50:
        score += 0.25
        reasons.append(Reason("supports", f"'{root.title}' is a specific root-cause signature"))
    else:
        score += 0.1
        reasons.append(Reason("contradicts", f"'{root.title}' is a generic signature: the real cause may "
                                             "be elsewhere"))
    if root.rank is not None and blames.get(root.rank):
        score += 0.1
    collateral_ranks = {e.rank for e in diagnosis.collateral if e.rank is not None and e.rank != root.rank}
    if collateral_ranks:
        score += 0.1
        reasons.append(Reason("supports", f"{len(collateral_ranks)} other rank(s) show failures that follow "
                                          "from it"))
    code = exits.get(root.rank) if root.rank is not None else None
    if code is not None:
        if code in _ORIGIN_EXITS:
            score += 0.05
            reasons.append(Reason("supports", f"rank {root.rank} exited with {code}"))
        elif code in _VICTIM_EXITS:
            score -= 0.1
            reasons.append(Reason("contradicts", f"rank {root.rank} exited with {code}, which is how "
                                                 "collateral ranks usually end"))
    if diagnosis.competing:
        score -= 0.2
        ranks = ", ".join(str(e.rank) for e in diagnosis.competing)
        reasons.append(Reason("contradicts", f"competing cause(s) on rank(s) {ranks} cannot be ordered "
                                             "against it"))
    if before:
        score -= 0.1
        reasons.append(Reason("contradicts", f"{before} failure line(s) on other ranks carry earlier time "
                                             "stamps (clock skew, or an earlier cause outside these logs)"))
    if root.rank is None:
        score -= 0.1
        reasons.append(Reason("contradicts", "the root-cause line names no rank"))
    diagnosis.confidence = max(0.05, min(0.97, score))


def _finish_without_root(diagnosis: Diagnosis, events: list[Event], suspects: list[Suspect],
                         blames: Counter[int], exits: dict[int, int]) -> None:
    failures = [e for e in events if e.role is not Role.CONTEXT]
    bad_exits = {r: c for r, c in exits.items() if c != 0}
    tracebacks = [s for s in suspects if "Traceback" in s.text]
    child_failed = any(e.signature_id == "torchrun-child-failed" for e in events)
    if not (failures or bad_exits or tracebacks or child_failed):
        diagnosis.verdict = Verdict.NO_FAILURE
        diagnosis.confidence = 0.6 if events or suspects else 0.8
        diagnosis.reasons.append(Reason("supports", "no failure signature, non-zero exit code or traceback "
                                                    "was found"))
        return
    diagnosis.verdict = Verdict.UNKNOWN
    for e in failures:
        e.role = Role.COLLATERAL
        diagnosis.collateral.append(e)
    origins = sorted(r for r, c in exits.items() if c != 0 and c not in _VICTIM_EXITS)
    if blames:
        rank, count = blames.most_common(1)[0]
        diagnosis.initiating_rank = rank
        diagnosis.reasons.append(Reason("supports", f"{count} line(s) on other ranks name rank {rank} as the "
                                                    "source of the error, but its own logs show no known cause"))
    elif len(origins) == 1:
        rank = origins[0]
        diagnosis.initiating_rank = rank
        diagnosis.reasons.append(Reason("supports", f"rank {rank} is the only rank that exited on its own "
                                                    f"(exit code {exits[rank]}); the others were stopped"))
    diagnosis.suspicious = rank_suspects(suspects)
    diagnosis.reasons.append(Reason("contradicts", "no signature describes the first failure; the most "
                                                   "suspicious lines are listed instead"))
    diagnosis.confidence = 0.2


def rank_suspects(suspects: list[Suspect], limit: int = 10) -> list[Suspect]:
    """Order unexplained error lines: those seen on exactly one rank first, then the earliest."""
    ranks_of: dict[str, set[object]] = defaultdict(set)
    for s in suspects:
        ranks_of[_NORMALIZE_SUSPECT.sub("#", s.text.split("]:")[-1])].add(s.rank if s.rank is not None else s.file)
    total = max(1, len(suspects))
    scored: list[Suspect] = []
    for index, s in enumerate(sorted(suspects, key=lambda s: s.order)):
        score = s.score + 1.5 * (1 - index / total)
        reason = s.reason
        if len(ranks_of[_NORMALIZE_SUSPECT.sub("#", s.text.split("]:")[-1])]) == 1:
            score += 2.0
            reason = "appears on one rank only; " + reason
        scored.append(Suspect(s.file, s.line, s.text, score, reason, s.rank, s.order))
    scored.sort(key=lambda s: (-s.score, s.order))
    return scored[:limit]


def _rank_states(diagnosis: Diagnosis, all_ranks: set[int], events: list[Event],
                 exits: dict[int, int]) -> dict[int, RankState]:
    states: dict[int, RankState] = {}
    for rank in sorted(all_ranks):
        states[rank] = RankState(rank=rank, state="ok", exitcode=exits.get(rank))
    for e in sorted(events, key=lambda ev: ev.order):
        if e.rank is None or e.rank not in states:
            continue
        state = states[e.rank]
        state.events += 1
        if e.host:
            state.hosts.add(e.host)
        state.files.add(e.file)
        if e.role is not Role.CONTEXT and state.first_event is None:
            state.first_event = e
        if e.role is Role.COLLATERAL and state.state == "ok":
            state.state = "collateral"
    root = diagnosis.root_cause
    if root is not None and root.rank in states:
        states[root.rank].state = "straggler" if root.signature_id == STRAGGLER_SIGNATURE else "root_cause"
        states[root.rank].first_event = root
    for state in states.values():
        if state.state == "ok" and state.exitcode not in (None, 0):
            state.state = "failed"
    return states


def default_last_line_lookup(path: str, rank: int) -> tuple[int, str] | None:
    from .scanner import last_line_of_rank

    p = Path(path)
    return last_line_of_rank(p, rank) if p.is_file() else None
