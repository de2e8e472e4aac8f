"""Roles decided per run, from what is around a line: a root-cause-looking line after its rank's own failure is
a consequence; a C++ terminate line takes the role of the exception its what() line names; an NCCL warning that
a failed call's result chain follows is its process's cause; a warning of a wait that the run got past (a
stalled collective, then more training steps) is no failure at all; warning-level matches are causes only when
the run did fail."""

from __future__ import annotations

import re

from ..lines.prefixes import parse_line
from ..model import Event, Reason, Role, Suspect
from .attribution import EXIT_BLOCK_FIELD
from .evidence import CLOCK_SKEW_S, exit_code, seconds
from .frames import REREAD_MAX_BYTES, TRACEBACK_HEADER, TRACEBACK_LINES, frames_above
from .root_cause import SPECIFIC_PRIORITY
from .state import Reasoning


def promote_stated_causes(r: Reasoning) -> None:
    """A line that is usually a symptom states the cause when its own fields say so (a signature's ``root_when``):
    a store barrier that more workers joined than the world holds was started twice, not waited on too long."""
    if not r.kinds.root_when:
        return
    for e in r.events:
        if e.signature_id in r.kinds.root_when and e.role_prior is Role.COLLATERAL:
            sig = r.library.get(e.signature_id)
            why = sig.root_when.why(e.fields) if sig is not None and sig.root_when is not None else None
            if why is not None:
                e.role = e.role_prior = Role.ROOT_CAUSE
                e.note = e.note or f"{why}: the line states the cause"


def demote_after_own_failure(r: Reasoning) -> None:
    """A root-cause-looking line printed after the same rank's own timeout/teardown is a consequence.

    A launcher's report about a process (``Killing subprocess 4242``) is not the rank's own line:
    the launcher prints it from its own process, often before the worker's buffered traceback reaches the same
    stream, so its place in the file says nothing about what the rank did first."""
    first_collateral: dict[tuple[str, int], Event] = {}
    for e in sorted(r.events, key=lambda ev: (ev.file, ev.line)):
        if e.rank is None or e.rank_from_field:
            continue
        key = (e.file, e.rank)
        if (e.role_prior is Role.COLLATERAL and key not in first_collateral and not _about_a_process(e)
                and not _introduces_traceback(e, r)):
            first_collateral[key] = e
        elif e.role_prior is Role.ROOT_CAUSE and key in first_collateral:
            earlier = first_collateral[key]
            e.role = Role.COLLATERAL
            e.note = (f"printed after this rank's own {earlier.title} (line {earlier.line}): "
                      "a consequence, not the cause")


def _introduces_traceback(event: Event, r: Reasoning) -> bool:
    """A line that announces the traceback printed under it (SGLang's ``Scheduler hit an exception: Traceback (most
    recent call last):``, spawn's ``-- Process 0 terminated with the following error:``): the exception at the end
    of that traceback is the failure it announces, not something that happened after it."""
    return event.text.rstrip().endswith(TRACEBACK_HEADER) or event.signature_id in r.kinds.output_headers




def _about_a_process(event: Event) -> bool:
    """A launcher's line about a process it started, by the process's id (``Killing subprocess 4242``, torchrun's
    ``Sending process 4242 closing signal SIGTERM``). An exit code alone is no sign: a rank's own traceback ends in
    one too (``CalledProcessError: ... returned non-zero exit status 1`` from a wrapper it ran)."""
    return "pid" in event.fields


_EXIT_BLOCK_LINES = 6  # the fields of one exit block (torchrun's: time, host, rank, exitcode, error_file, traceback)


def demote_kills_after_exits(r: Reasoning) -> None:
    """A rank killed by a signal after another rank had already exited with an error is part of the teardown.

    Launchers stop the remaining workers once one fails (torchrun sends SIGTERM, then SIGKILL to those that
    do not stop), so their exit records read "-9" or "Signal 9" with a later time than the worker that
    failed first: the kill is a consequence, not the origin.
    """
    exited: list[tuple[float, Event]] = []
    for e in r.events:
        code = exit_code(e) if e.rank_from_field else None
        t = _exit_time(e, r.year) if code is not None and code > 0 else None
        if t is not None:
            exited.append((t, e))
    if not exited:
        return  # nearly always
    for e in r.events:
        if e.role is not Role.ROOT_CAUSE or not e.rank_from_field:
            continue
        code = exit_code(e)
        t = _exit_time(e, r.year) if code is not None and code < 0 else None
        if t is None:
            continue
        before = [x for tx, x in exited if x.rank != e.rank and tx < t - CLOCK_SKEW_S]
        if before:
            first = min(before, key=lambda x: x.line)
            note = (f"killed after rank {first.rank} had already exited with code {exit_code(first)} "
                    f"({first.file}:{first.line}): the launcher's teardown, not the cause")
            for same in r.events:  # the record and the other fields of its exit block ("traceback : Signal 9")
                if (same.file == e.file and same.rank == e.rank and same.rank_from_field
                        and same.role is Role.ROOT_CAUSE and abs(same.line - e.line) <= _EXIT_BLOCK_LINES):
                    same.role = Role.COLLATERAL
                    same.note = note


def _exit_time(e: Event, year: int) -> float | None:
    """When an exit record happened: its own time stamp, or the ``time :`` field of its exit block."""
    if e.time is None or (e.time.inferred and not EXIT_BLOCK_FIELD.match(e.text)):
        return None
    return seconds(e, year)


_WHAT_LINES = 3  # "terminate called after throwing an instance of 'X'" and its "what():  ..." line
_WRAPPED_LINE_PIECES = 8  # the consequence printed just before a terminate line, wrapped over several lines


def defer_wrapper_to_wrapped(r: Reasoning) -> None:
    """A line that re-raises another exception and says it follows (``BackendCompilerFailed: backend='inductor'
    raised:``, then ``ModuleNotFoundError: No module named 'triton.common'``) is context when the next line is an
    event that can start a failure: that line is the failure, and the wrapper says only where it surfaced."""
    wrappers = [e for e in r.events if e.signature_id in r.kinds.wrappers and e.role_prior is Role.ROOT_CAUSE]
    if not wrappers:
        return
    starts = {(e.file, e.line): e for e in r.events if e.role_prior is Role.ROOT_CAUSE}
    for e in wrappers:
        wrapped = starts.get((e.file, e.line + 1))
        # a wrapper on the next line that states its exception ("LoweringException: ImportError: ...") is the
        # failure too; one that only says another line follows ("... raised:") is not
        if wrapped is not None and (wrapped.signature_id not in r.kinds.wrappers or not _says_more_follows(wrapped)):
            e.role = e.role_prior = Role.CONTEXT
            e.note = f"re-raises the exception on line {wrapped.line}: {wrapped.title}"


def _says_more_follows(e: Event) -> bool:
    return e.text.rstrip().endswith(":")


_IGNORED_TRACEBACK_LINES = 80  # how far below its header an ignored exception's line may be (a deep traceback)
_TRACEBACK_PART = re.compile(r"Traceback \(most recent call last\):|\s")  # a message's start: the header, a frame, source


def excuse_ignored_exceptions(r: Reasoning) -> None:
    """CPython prints ``Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ ...>``, then the
    traceback of an exception it caught and ignored (a finaliser's, an atexit callback's): the program went on, so
    the exception's line, the first line below the header on that rank that can start a failure, is context, and
    the traceback's lines between them are no suspects. A paste cut inside that traceback, before its exception's
    line, leaves the header open: the traceback's lines below it, to the end of its file, are no suspects either."""
    if not r.kinds.excusers or not any(e.signature_id in r.kinds.excusers for e in r.events):
        return  # nearly always
    open_headers: dict[tuple[str, int | None], Event] = {}
    excused: dict[str, list[tuple[int, int]]] = {}  # file -> the (header, exception) line spans ignored
    for e in sorted(r.events, key=lambda ev: (ev.file, ev.line)):
        key = (e.file, e.rank)
        if e.signature_id in r.kinds.excusers:
            open_headers[key] = e
            continue
        header = open_headers.get(key)
        if header is None or e.role_prior is not Role.ROOT_CAUSE:
            continue
        del open_headers[key]
        if e.line - header.line <= _IGNORED_TRACEBACK_LINES:
            e.role = e.role_prior = Role.CONTEXT
            e.note = (f"Python ignored this exception (line {header.line}: 'Exception ignored in ...'), and the "
                      "program went on")
            excused.setdefault(e.file, []).append((header.line, e.line))
    _drop_suspects(r, excused)  # the traceback lines of an ignored exception are no more suspicious than it
    if open_headers:  # cut before the exception's line: the traceback's own lines below its header are no suspects
        r.suspects = [s for s in r.suspects if not any(_in_cut_traceback(s, header) for header in open_headers.values())]


_EXIT_CLEANUP_CHECKS = 20  # generic exceptions whose traceback is read for it (a paste holds a few)


def excuse_exit_cleanup(r: Reasoning) -> None:
    """The interpreter's own clean-up at exit raised: a traceback whose outermost frame is ``weakref.py`` in
    ``_exitfunc`` (weakref.finalize runs its callbacks there at exit, as tempfile's TemporaryDirectory clean-up)
    and all of whose frames are the standard library's. Python prints such a traceback and exits with the status
    it had (0 after a finished run), so the exception's line is context. A finaliser of the user's or a library's
    code that fails at exit (a distributed shutdown) is still a failure."""
    if r.lines_before_lookup is None:
        return
    checked = 0
    excused: dict[str, list[tuple[int, int]]] = {}  # file -> the (traceback header, exception) line spans
    for e in r.events:
        if e.role_prior is not Role.ROOT_CAUSE or e.priority >= SPECIFIC_PRIORITY or "exc" not in e.fields:
            continue
        summary = r.files.get(e.file)
        if summary is None or summary.bytes > REREAD_MAX_BYTES or checked >= _EXIT_CLEANUP_CHECKS:
            continue
        checked += 1
        lines = r.lines_before_lookup(e.file, e.line, TRACEBACK_LINES) or []
        frames = frames_above(lines, e.rank)
        if (frames and frames[0].function == "_exitfunc" and frames[0].path.endswith("weakref.py")
                and all(f.package == "python" for f in frames)):
            e.role = e.role_prior = Role.CONTEXT
            e.note = ("raised by the interpreter's clean-up at exit (weakref finalizers in the standard library): "
                      "Python printed it and kept the exit status the run had")
            header = next((i for i in range(len(lines) - 1, -1, -1) if TRACEBACK_HEADER in lines[i]), len(lines))
            excused.setdefault(e.file, []).append((e.line - len(lines) + header - 1, e.line))
    _drop_suspects(r, excused)  # nor are the lines of its traceback


_RECOVERY_LINES = 8  # a caught failure's line and the program's word that it went on (its traceback between them)


def pass_over_recovered_failures(r: Reasoning) -> None:
    """A line in which the program says it caught the failure printed just above it and went on (fairseq's and
    ParlAI's ``| WARNING: ran out of memory, skipping batch``): that failure, on the same rank of the same file, is
    context. Whether the run then went on is the verdict's question: the line is a warning, and a paste that ends on
    it is no all-clear."""
    recoveries = [e for e in r.events if e.signature_id in r.kinds.recoveries] if r.kinds.recoveries else []
    for recovery in recoveries:
        for e in r.events:
            if (e.file == recovery.file and e.rank == recovery.rank and e.role_prior is not Role.CONTEXT
                    and 0 <= recovery.line - e.line <= _RECOVERY_LINES and e is not recovery):
                e.role = e.role_prior = Role.CONTEXT
                e.note = f"the program caught it and went on (line {recovery.line}: {recovery.title})"


def _in_cut_traceback(s: Suspect, header: Event) -> bool:
    """A traceback's header, frame or source line below an ``Exception ignored in:`` header in its file."""
    return (s.file == header.file and 0 < s.line - header.line <= _IGNORED_TRACEBACK_LINES
            and _TRACEBACK_PART.match(parse_line(s.text)[1]) is not None)


def _drop_suspects(r: Reasoning, spans: dict[str, list[tuple[int, int]]]) -> None:
    """Suspect lines inside these (start, end] line spans of their files are not suspects."""
    if spans:
        r.suspects = [s for s in r.suspects if not any(start < s.line <= end for start, end in spans.get(s.file, ()))]


def pass_over_logged_exceptions(r: Reasoning) -> None:
    """An exception that no specific signature describes, in one process's output (no line of its file names a
    rank), followed in its file by lines that show the run going on and by nothing else that can start or follow
    a failure: the program caught it and printed it (a retrying client, ``logging.exception``), since an uncaught
    exception ends the process that raised it. It is context, and its traceback's lines are no suspects."""
    generic = [e for e in r.events if e.role_prior is Role.ROOT_CAUSE and _names_only_a_class(r, e)]
    if not generic or any(code != 0 for code in r.exits.values()) or any(
            e.signature_id in r.kinds.summary_headers for e in r.events):
        return
    last_trouble: dict[str, int] = {}  # file -> the last line that can start or follow a failure
    for o in r.events:
        if o.role_prior is not Role.CONTEXT and o.line > last_trouble.get(o.file, 0):
            last_trouble[o.file] = o.line
    logged: dict[str, list[tuple[int, int]]] = {}
    for e in generic:
        summary = r.files.get(e.file)
        if summary is None or summary.ranks_seen or summary.progress_line <= e.line:
            continue
        if last_trouble[e.file] > e.line:
            continue  # something after it failed too: the exception may be where that began
        e.role = e.role_prior = Role.CONTEXT
        e.note = (f"the program went on after this exception ({e.file}:{summary.progress_line} shows progress): "
                  "it was caught and printed, not raised out of the program")
        logged.setdefault(e.file, []).append((max(0, e.line - _IGNORED_TRACEBACK_LINES), e.line))
    _drop_suspects(r, logged)


def _names_only_a_class(r: Reasoning, e: Event) -> bool:
    """A generic exception signature (python-exception, exc-*): it names the exception's class, not a cause."""
    sig = r.library.get(e.signature_id)
    return sig is not None and sig.category == "generic" and sig.priority < SPECIFIC_PRIORITY


def defer_terminate_to_what(r: Reasoning) -> None:
    """``terminate called after throwing an instance of 'X'`` only says that a C++ exception was not caught; the
    ``what():`` line under it says which. When that line is an event of its own, the terminate line follows its
    role: a consequence when the exception is one (a watchdog timeout), context when it states the cause (the
    ``what():`` line is then the root)."""
    by_file: dict[str, list[Event]] = {}
    for e in r.events:
        by_file.setdefault(e.file, []).append(e)
    for events in by_file.values():
        events.sort(key=lambda ev: ev.line)
        for i, here in enumerate(events):
            if "terminate called" not in here.text or here.role is not Role.ROOT_CAUSE:
                continue
            after = events[i + 1] if i + 1 < len(events) else None
            before = events[i - 1] if i else None
            if after is not None and "what():" in after.text and 0 < after.line - here.line <= _WHAT_LINES:
                if Role.COLLATERAL in (after.role, after.role_prior):
                    here.role = Role.COLLATERAL
                    here.note = f"the abort of the exception on line {after.line}: {after.title}"
                else:
                    here.role = Role.CONTEXT
                    here.note = f"the exception it aborts on is stated on line {after.line}"
            elif (before is not None and before.role_prior is Role.COLLATERAL
                  and 0 < here.line - before.line <= _WRAPPED_LINE_PIECES and here.rank in (None, before.rank)):
                # its what() line was cut: the consequence printed just before it is what it aborts on
                here.role = Role.COLLATERAL
                here.note = f"the abort that follows line {before.line}: {before.title}"


_CHAIN_LOOKBACK_LINES = 12  # a WARN and the first line of the result chain it starts: a few INFO lines apart


def promote_chain_heads(r: Reasoning) -> None:
    """An ``NCCL WARN`` line that is only context on its own is its process's stated cause when a non-zero
    result chain (``file.cc:LINE -> N``, failure evidence) of the same process follows it: NCCL is passing
    that call's failure up. The nearest such WARN before the chain's first line becomes a root-cause
    candidate. Either way, the WARN heading the chain is marked as stating why the call failed (``chain_heads``):
    a more specific line its process prints a little later explains no more than it does (root_cause.py). Lines
    pasted without NCCL's ``host:pid:tid`` prefix (no pid on either) are taken for one process."""
    chains = [e for e in r.events if e.signature_id in r.kinds.failure_evidence and "NCCL INFO" in e.text]
    if not chains:
        return
    # Every NCCL WARN, whatever describes it: the chain starts from the nearest one, and when a specific signature
    # already describes that one there is nothing to promote, only to mark (an earlier, harmless WARN is not the head).
    warns = [e for e in r.events if "NCCL WARN" in e.text and e.signature_id not in r.kinds.failure_evidence]
    for chain in chains:
        before = [w for w in warns if w.file == chain.file and w.pid == chain.pid and w.host == chain.host
                  and 0 < chain.line - w.line <= _CHAIN_LOOKBACK_LINES]
        if before:
            head = max(before, key=lambda w: w.line)
            if head.role is Role.CONTEXT and head.level == "W":
                head.role = head.role_prior = Role.ROOT_CAUSE
                head.note = f"the NCCL warning that its process's result chain (line {chain.line}) starts from"
                r.chain_heads.add(id(head))
            elif head.role_prior is Role.ROOT_CAUSE:
                r.chain_heads.add(id(head))


def pass_over_waits(r: Reasoning) -> None:
    """Warning-level consequences (Horovod's "tensors ... are waiting for remainder of ranks", a stall or slow
    collective reported as a warning) followed, in their file, by lines that show the run going on: the wait
    ended, so they are context, not the failure of a rank. Only when nothing else shows a failure: no error-level
    consequence, no non-zero exit, no failure summary, no traceback."""
    waits = [e for e in r.events if e.role_prior is Role.COLLATERAL and _is_warning(r, e)]
    if not waits or _failed_without(r, waits):
        return
    for e in waits:
        summary = r.files.get(e.file)
        went_on = summary.progress_line if summary is not None else 0
        if went_on <= e.line:
            return  # one wait with nothing after it: the run may have hung there
    for e in waits:
        e.role = e.role_prior = Role.CONTEXT
        went_on = r.files[e.file].progress_line
        e.note = f"a warning that ranks were waiting, and {e.file}:{went_on} shows the run going on after it"


def _is_warning(r: Reasoning, e: Event) -> bool:
    """Logged as a warning (``W`` level), or of a signature that only ever warns."""
    if e.level == "W":
        return True
    sig = r.library.get(e.signature_id)
    return sig is not None and sig.severity == "warning"


def _failed_without(r: Reasoning, waits: list[Event]) -> bool:
    """Whether anything but these warnings shows that the run failed."""
    skipped = {id(e) for e in waits}
    return (any(id(e) not in skipped and not _is_warning(r, e)
                and (e.role_prior is not Role.CONTEXT or e.signature_id in r.kinds.failure_evidence)
                for e in r.events)
            or _ended_in_failure(r))


def _fatal_and_last(r: Reasoning, e: Event) -> bool:
    """A warning-level line of an error-severity signature with no progress after it in its file."""
    sig = r.library.get(e.signature_id)
    summary = r.files.get(e.file)
    return (sig is not None and sig.severity == "error"
            and (summary is None or summary.progress_line <= e.line))


def _ended_in_failure(r: Reasoning) -> bool:
    """A non-zero exit, a launcher's failure summary or a traceback: the run failed, whatever its lines matched."""
    return (any(code != 0 for code in r.exits.values())
            or any(e.signature_id in r.kinds.summary_headers for e in r.events)
            or any("Traceback" in s.text for s in r.suspects))


def drop_soft_warnings(r: Reasoning) -> None:
    """Warning-level candidates (``NCCL WARN``, ``[W ...]``) are causes only when the run did fail.

    NCCL prints ``Cuda failure 'out of memory'`` warnings and carries on; when nothing else shows a
    failure, such lines are context, not a root cause. A warning of a fatal error (an error-severity
    signature: ``NCCL WARN Duplicate GPU detected``) stays a cause unless a later line of its file shows
    the run going on: a log that ends on it is no all-clear.
    """
    soft = [c for c in r.candidates if c.event.level == "W" and not _fatal_and_last(r, c.event)]
    if not soft:
        return
    soft_ids = {id(c) for c in soft}
    hard = [c for c in r.candidates if id(c) not in soft_ids]
    failed = (hard or any(e.role_prior is Role.COLLATERAL or e.signature_id in r.kinds.failure_evidence
                          for e in r.events)
              or _ended_in_failure(r))
    if failed:
        return
    for c in soft:
        c.event.role = Role.CONTEXT
        c.event.note = "a warning while the run went on: nothing else in the logs shows a failure"
    r.diagnosis.reasons.append(Reason("supports", f"{len(soft)} warning line(s) matched failure signatures, but "
                                                  "the run shows no failure, exit code or traceback after them"))
    r.candidates = hard
