"""Assembling the answer: the verdict, collateral linked to its cause, the confidence with its reasons, the
most suspicious lines for an unknown cause, the lines weighed for no failure, and each rank's state."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from ..diagnosis import Diagnosis
from ..library import Signature, SignatureLibrary
from ..model import Event, FileSummary, RankState, Reason, Role, Suspect, Verdict
from ..scan.scanner import PYTHON_WARNING
from .evidence import CLOCK_SKEW_S, ORIGIN_EXITS, VICTIM_EXITS, ranks_with_events, seconds
from .state import Promotion, Reasoning, SignatureKinds

_NORMALIZE_SUSPECT = re.compile(r"0x[0-9a-fA-F]+|\d+")


def decide(r: Reasoning) -> None:
    """A failure with its root cause, or, without one, unknown (failure evidence) or no failure."""
    if r.root is not None:
        _finish_failure(r, r.root)
    else:
        _finish_without_root(r.diagnosis, r.events, r.suspects, r.blames, r.exits, r.kinds)
    if r.promotion is not None:
        _finish_promoted(r.diagnosis, r.promotion)


def _finish_promoted(diagnosis: Diagnosis, promotion: Promotion) -> None:
    """A root named from the other ranks, the exit records or an outside stop: less certain than a line that
    states its cause. Without a named rank the verdict is unknown and the root is the first failure seen."""
    diagnosis.verdict = promotion.verdict
    diagnosis.initiating_rank = promotion.initiating_rank
    diagnosis.first_failure = promotion.first
    if diagnosis.root_cause is None and promotion.signature is not None:
        diagnosis.root_signature = diagnosis.signature_of(promotion.signature.id)
    diagnosis.reasons.insert(0, Reason("supports", promotion.reason))
    if promotion.verdict is Verdict.UNKNOWN:
        diagnosis.reasons.append(Reason("contradicts", "no signature describes the cause; the fix is that of the "
                                                       "first failure's family"))
        diagnosis.confidence = min(diagnosis.confidence, 0.25)
    elif diagnosis.root_cause is None:
        diagnosis.reasons.append(Reason("contradicts", f"rank {promotion.initiating_rank}'s own error is not in "
                                                       "these logs"))
        diagnosis.confidence = 0.35
    else:
        diagnosis.confidence = min(diagnosis.confidence, 0.45)


def states_of_ranks(r: Reasoning) -> None:
    """Each rank's state (root cause, straggler, collateral, failed, ok), first event and exit code."""
    r.diagnosis.ranks = _rank_states(r.diagnosis, r.ranks, r.events, r.exits, r.kinds)


def _finish_failure(r: Reasoning, root: Event) -> None:
    diagnosis, events, default_year = r.diagnosis, r.events, r.year
    diagnosis.verdict = Verdict.FAILURE
    diagnosis.root_cause = root
    root.role = Role.ROOT_CAUSE
    diagnosis.root_signature = diagnosis.signature_of(root)
    diagnosis.initiating_rank = root.rank
    same = {e.rank for e in diagnosis.competing if e.signature_id == root.signature_id}
    if root.rank is not None and len(same) >= 1 and len(same) + 1 >= max(2, len(ranks_with_events(events))):
        diagnosis.initiating_rank = None
        diagnosis.reasons.append(Reason("supports", f"every rank failed with '{root.title}' at the same point: "
                                                    "a global cause (code, configuration or environment), "
                                                    "not one rank"))
    competing = {id(e) for e in diagnosis.competing}
    root_time = seconds(root, default_year)
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
        t = seconds(e, default_year)
        if root_time is not None and t is not None and t < root_time - CLOCK_SKEW_S and e.rank != root.rank:
            before += 1
        diagnosis.collateral.append(e)
    _confidence(diagnosis, root, r.blames, r.exits, before, r.kinds)


def _confidence(diagnosis: Diagnosis, root: Event, blames: Counter[int], exits: dict[int, int],
                before: int, kinds: SignatureKinds) -> None:
    reasons = diagnosis.reasons
    score = 0.45
    if kinds.is_straggler(root):
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
        if code in ORIGIN_EXITS:
            score += 0.05
            reasons.append(Reason("supports", f"rank {root.rank} exited with {code}"))
        elif code in VICTIM_EXITS:
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
                         blames: Counter[int], exits: dict[int, int], kinds: SignatureKinds) -> None:
    failures = [e for e in events if e.role is not Role.CONTEXT or e.signature_id in kinds.failure_evidence]
    bad_exits = {r: c for r, c in exits.items() if c != 0}
    tracebacks = [s for s in suspects if "Traceback" in s.text]
    child_failed = any(e.signature_id in kinds.summary_headers for e in events)
    if not (failures or bad_exits or tracebacks or child_failed):
        _finish_without_failure(diagnosis, events, suspects, kinds)
        return
    diagnosis.verdict = Verdict.UNKNOWN
    if kinds.missing_cause is not None:  # the fix for a failure whose cause is not in these logs
        diagnosis.root_signature = diagnosis.signature_of(kinds.missing_cause.id)
    for e in failures:
        e.role = Role.COLLATERAL
        diagnosis.collateral.append(e)
    origins = sorted(r for r, c in exits.items() if c != 0 and c not in VICTIM_EXITS)
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
    listed = "; the most suspicious lines are listed instead" if diagnosis.suspicious else ""
    diagnosis.reasons.append(Reason("contradicts", f"no line in these logs states the cause of the failure{listed}"))
    diagnosis.confidence = 0.2


def _shape(s: Suspect) -> tuple[str, str]:
    """A suspect line's file and text, numbers aside: the same error printed again."""
    return s.file, _NORMALIZE_SUSPECT.sub("0", s.text)


def _survived(suspects: list[Suspect], progress: dict[str, int]) -> dict[tuple[str, str], int]:
    """The error lines the run went on after (above their file's progress line), by shape: the first of each."""
    survived: dict[tuple[str, str], int] = {}
    for s in suspects:
        if s.line < progress.get(s.file, 0):
            survived.setdefault(_shape(s), s.line)
    return survived


def _finish_without_failure(diagnosis: Diagnosis, events: list[Event], suspects: list[Suspect],
                            kinds: SignatureKinds) -> None:
    """No line shows a failure. Lines with error words that no signature explains need more for ``no_failure``:
    a line after them, near the end of their file, that shows the run going on or finishing. Without it the
    answer is unknown, with those lines listed; an input without any line is unknown too (nothing was read)."""
    files = diagnosis.files
    read = sum(f.lines for f in files if f.last_line)  # lines of files with any visible text
    unexplained: dict[str, int] = {}  # file -> its last error-word line that no signature explains
    for s in suspects:
        if s.level not in ("W", "I", "D"):  # what the program itself logs as a warning does not stop a run
            unexplained[s.file] = max(unexplained.get(s.file, 0), s.line)
    progress = {f.path: f.progress_line for f in files}
    # An error line the run went on after before (the same line, numbers aside, above the file's progress) is one
    # it survives: a paste that ends on it again is no sign the run stopped there.
    survived = _survived(suspects, progress)
    last_unsurvived: dict[str, int] = {}
    for s in suspects:
        if s.level not in ("W", "I", "D") and _shape(s) not in survived:
            last_unsurvived[s.file] = max(last_unsurvived.get(s.file, 0), s.line)
    stalled = sorted(path for path, line in last_unsurvived.items() if progress.get(path, 0) <= line)
    # A failure the program said it caught ("skipping batch") is harmless only if the run is seen going on after it,
    # or after an earlier catch of the same failure in that file: the program went on from that one.
    recoveries = [e for e in events if e.signature_id in kinds.recoveries]
    went_on_after = {(e.file, e.signature_id) for e in recoveries if e.line < progress.get(e.file, 0)}
    unproven = [e for e in recoveries
                if progress.get(e.file, 0) <= e.line and (e.file, e.signature_id) not in went_on_after]
    if read and unproven:
        diagnosis.verdict = Verdict.UNKNOWN
        diagnosis.confidence = 0.3
        first = unproven[0]
        diagnosis.reasons.append(Reason("contradicts", f"{first.file}:{first.line} says the program caught a failure "
                                                       "and went on, but no later line shows the run going on"))
        diagnosis.suspicious = rank_suspects([*suspects, *map(_as_suspect, unproven)])
        return
    if read and not stalled:
        diagnosis.verdict = Verdict.NO_FAILURE
        went_on = [f for f in files if f.progress_line]
        if unexplained:
            last = max(went_on, key=lambda f: f.progress_line)
            reason = (f"lines with error words were found, and the run went on after them: {last.path}:"
                      f"{last.progress_line} shows progress")
            diagnosis.confidence = 0.7
        elif went_on:
            last = max(went_on, key=lambda f: f.progress_line)
            reason = f"no failure was found, and {last.path}:{last.progress_line} shows the run going on"
            diagnosis.confidence = 0.8
        elif (stuck := next((f for f in files if f.last_line and _STILL_AT_ZERO.search(f.last_text)), None)):
            # Nothing failed, but the log ends on a progress bar that never moved: the run hangs at its start as
            # often as it is still starting (a collective that never completes prints nothing).
            diagnosis.verdict = Verdict.UNKNOWN
            diagnosis.confidence = 0.3
            if kinds.straggler is not None:  # the fix for a hang: find where the ranks are stuck
                diagnosis.root_signature = diagnosis.signature_of(kinds.straggler.id)
            diagnosis.reasons.append(Reason("contradicts", f"no line shows a failure, but {stuck.path}:"
                                                           f"{stuck.last_line} ends on a progress bar still at 0%: "
                                                           "the run may be stuck at its start"))
            return
        elif (warned := [*map(_as_suspect, _last_lines_warned(files, events, diagnosis.library)),
                         *_last_lines_warning(files, suspects)]):
            # Only warnings looked like trouble, and a paste ends on them: the run may as well have stopped or
            # hung there, so "no failure" would be a guess. (Output after them shows the process went on.)
            diagnosis.verdict = Verdict.UNKNOWN
            diagnosis.confidence = 0.3
            diagnosis.reasons.append(Reason("contradicts", f"{len(warned)} warning line(s) looked like trouble and no "
                                                           "later line shows the run going on after them"))
            diagnosis.suspicious = rank_suspects([*(s for s in suspects if s not in warned), *warned])
            return
        else:
            reason = "no failure signature, non-zero exit code, traceback or unexplained error line was found"
            diagnosis.confidence = 0.6 if events else 0.5
        diagnosis.reasons.append(Reason("supports", reason))
        return
    diagnosis.verdict = Verdict.UNKNOWN
    diagnosis.confidence = 0.3
    if not read:
        diagnosis.reasons.append(Reason("contradicts", "nothing was read: the input holds no lines"))
    else:
        diagnosis.reasons.append(Reason("contradicts", f"{len(stalled)} file(s) end with lines with error words that "
                                                       "no signature explains, and no later line shows the run "
                                                       "going on"))
    diagnosis.suspicious = rank_suspects(suspects)


def _last_lines_warned(files: list[FileSummary], events: list[Event],
                       library: SignatureLibrary | None) -> list[Event]:
    """The warning-level events (or error-looking ones) of files whose output ends with them: no line after them
    shows the process going on. A line that an informational signature describes is no such line whatever level
    it is logged at: the signature says why it is harmless (TensorFlow's grappler logs a skipped pass as an error)."""
    last = {f.path: f.last_line for f in files}
    scary = [e for e in events if _looks_like_trouble(e) and not _informational(e, library)]
    ends = {e.file for e in scary if e.line >= last.get(e.file, 0)}
    return [e for e in scary if e.file in ends]


def _last_lines_warning(files: list[FileSummary], suspects: list[Suspect]) -> list[Suspect]:
    """The unexplained warning a file's output ends with, when the program logged it again and again up to there
    (c10d's ``[W socket.cpp:601] ... cannot be retrieved`` in a loop that never got further): a wait that had
    not ended when the paste stops. One warning at the end is no such evidence: programs warn and go on."""
    last = {f.path: f for f in files}
    # Not the warnings module's lines: it prints a warning once per place and process, so copies are processes
    warnings = [s for s in suspects if s.level == "W" and PYTHON_WARNING.search(s.text) is None]
    looped: dict[int, Suspect] = {}  # by identity: every copy of a repeated last line ends the file as well
    for final in (s for s in warnings if s.file in last and _ends(last[s.file], s) and id(s) not in looped):
        same = [s for s in warnings if s.file == final.file and s.rank == final.rank
                and _same_words(s.text) == _same_words(final.text)]
        if len(same) >= WAIT_LOOP_REPEATS:
            looped.update((id(s), s) for s in same)
    return list(looped.values())


def _ends(file: FileSummary, s: Suspect) -> bool:
    """Whether the file's output ends with this line, or with the last piece of it that a terminal wrapped (the
    suspect's text is the joined line)."""
    tail = file.last_text.strip()
    return s.line >= file.last_line or (s.line < file.last_line and bool(tail) and s.text.rstrip().endswith(tail))


def _same_words(text: str) -> str:
    return _NORMALIZE_SUSPECT.sub("#", text)


def _looks_like_trouble(event: Event) -> bool:
    """A line a reader would take for trouble: a signature that can start or follow a failure, or a warning or
    error by its log level."""
    return event.role_prior is not Role.CONTEXT or event.level in ("W", "E", "F")


def _informational(event: Event, library: SignatureLibrary | None) -> bool:
    sig = library.get(event.signature_id) if library is not None else None
    return event.role_prior is Role.CONTEXT and sig is not None and sig.severity == "info"


def _as_suspect(event: Event) -> Suspect:
    """A warning-level event listed among the suspicious lines of an answer that cannot call it harmless."""
    return Suspect(event.file, event.line, event.text, 1.0, f"a warning ({event.title}) with nothing after it that "
                   "shows the run going on", event.rank, event.order, event.level)


MAX_CONSIDERED = 10
WAIT_LOOP_REPEATS = 3  # the same unexplained warning this often, last in its file: a wait that had not ended
_ERROR_WORDS = re.compile(r"(?i:error|exception|fatal|fail|traceback)")
# A tqdm bar that has not moved: "  0%|          | 0/16 [00:00<?" (not "0%| | 13/63645": 0% of a long run)
_STILL_AT_ZERO = re.compile(r"(?<![\d.])0%\|(?![^\n|]{0,60}\| *[1-9])")


def explain_no_failure(r: Reasoning) -> None:
    """``no_failure`` never stands alone: the lines that looked like trouble, each with why it is harmless.

    A user who selected text to diagnose expects a failure in it; "no failure" must show what was weighed.
    """
    diagnosis = r.diagnosis
    if diagnosis.verdict is not Verdict.NO_FAILURE:
        return
    progress = {f.path: f.progress_line for f in diagnosis.files}
    considered: list[Suspect] = []
    for e in r.events:
        sig = r.library.get(e.signature_id)
        scary = (_looks_like_trouble(e) or (sig is not None and sig.severity != "info")
                 or _ERROR_WORDS.search(e.text) is not None)  # "fatal: not a git repository": harmless, but it reads so
        if scary and len(considered) < MAX_CONSIDERED:
            considered.append(Suspect(e.file, e.line, e.text, 0.0, _why_harmless(e, sig, progress), e.rank,
                                      e.order, e.level))
    survived = _survived(r.suspects, progress)
    for s in r.suspects:
        if len(considered) >= MAX_CONSIDERED:
            break
        went_on = progress.get(s.file, 0)
        before = survived.get(_shape(s), s.line)
        why = ("the program itself logs it as a warning" if s.level in ("W", "I", "D")
               else f"error words, but {s.file}:{went_on} shows the run going on after it" if went_on > s.line
               else f"the same error as line {before}, which the run went on after" if before < s.line
               else "error words on a line no signature describes, with nothing after it that failed")
        considered.append(Suspect(s.file, s.line, s.text, 0.0, why, s.rank, s.order, s.level))
    considered.sort(key=lambda s: (s.file, s.line))
    diagnosis.considered = considered
    if considered:
        diagnosis.reasons.append(Reason("supports", f"{len(considered)} line(s) looked like trouble; each is listed "
                                                    "with why it does not show a failure"))


def _why_harmless(e: Event, sig: Signature | None, progress: dict[str, int]) -> str:
    went_on = progress.get(e.file, 0)
    after = f"; {e.file}:{went_on} shows the run going on after it" if went_on > e.line else ""
    if e.note:
        return e.note + after
    if sig is not None and sig.severity == "info":
        return f"'{e.title}' is informational: it does not stop a run{after}"
    if e.level == "W" or (sig is not None and sig.severity == "warning"):
        return f"'{e.title}' is a warning, and nothing in the logs shows a failure after it{after}"
    return f"'{e.title}' did not stop the run: no exit code, traceback or failure follows it{after}"


def rank_suspects(suspects: list[Suspect], limit: int = 10) -> list[Suspect]:
    """Order unexplained error lines: those seen on exactly one rank first, then the earliest; what the program
    itself logs as a warning or below after those it does not."""
    ranks_of: dict[str, set[object]] = defaultdict(set)
    for s in suspects:
        ranks_of[_NORMALIZE_SUSPECT.sub("#", s.text.split("]:")[-1])].add(s.rank if s.rank is not None else s.file)
    total = max(1, len(suspects))
    scored: list[Suspect] = []
    for index, s in enumerate(sorted(suspects, key=lambda s: s.order)):
        score = s.score + 1.5 * (1 - index / total) - (3.0 if s.level in ("W", "I", "D") else 0.0)
        reason = s.reason
        if len(ranks_of[_NORMALIZE_SUSPECT.sub("#", s.text.split("]:")[-1])]) == 1:
            score += 2.0
            reason = "appears on one rank only; " + reason
        scored.append(Suspect(s.file, s.line, s.text, score, reason, s.rank, s.order, s.level))
    scored.sort(key=lambda s: (-s.score, s.order))
    return scored[:limit]


def _rank_states(diagnosis: Diagnosis, all_ranks: set[int], events: list[Event],
                 exits: dict[int, int], kinds: SignatureKinds) -> dict[int, RankState]:
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
        states[root.rank].state = "straggler" if kinds.is_straggler(root) else "root_cause"
        states[root.rank].first_event = root
    for state in states.values():
        if state.state == "ok" and state.exitcode not in (None, 0):
            state.state = "failed"
    return states
