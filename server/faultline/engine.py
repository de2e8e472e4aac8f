"""The engine's front door: load a signature library once, diagnose text, files and folders."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from .collector import cycle_collection_paused
from .diagnosis import Diagnosis, mask_diagnosis, not_all_clear
from .inputs import InputError, Source, resolve_inputs
from .library import SignatureLibrary
from .lines.cache import DIAGNOSIS_CACHE_ENTRIES, LineCache
from .matcher import DEFAULT_PATTERN_TIMEOUT_S, LineMatcher
from .reasoning import diagnose_scan
from .scan.chunks import Cancelled
from .scan.parallel import scan_parallel, worth_parallel
from .scan.scanner import DEFAULT_MAX_LINE_BYTES, Scanner
from .scan.sink import ScanSink
from .scan.tail import last_line_lookup
from .scan.window import lines_before_lookup
from .terminal_progress import size_text

__all__ = ["Cancelled", "Engine", "InputError"]

ProgressCallback = Callable[[float, str], None]


class Engine:
    """A loaded signature library plus its compiled matcher; cheap to reuse across diagnoses."""

    def __init__(self, library: SignatureLibrary, *, pattern_timeout_s: float = DEFAULT_PATTERN_TIMEOUT_S,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, use_hyperscan: bool = True, jobs: int = 1,
                 helpers: int | None = None) -> None:
        """``jobs`` > 1 scans large files and folders in that many forked processes, and shares a dense failure
        cascade with ``helpers`` forked ones (default ``jobs - 1``). The CLI does; a threaded host such as the
        language server keeps the defaults (1 and 0): a process forked from threads may inherit held locks."""
        self.library = library
        self.max_line_bytes = max_line_bytes
        self.jobs = jobs
        self.helpers = jobs - 1 if helpers is None else helpers
        self.matcher = LineMatcher(library, timeout_s=pattern_timeout_s, use_hyperscan=use_hyperscan)

    @classmethod
    def load(cls, extra_folders: Sequence[str | Path] = (), **options: object) -> Engine:
        return cls(SignatureLibrary.load(extra_folders), **options)  # type: ignore[arg-type]

    def diagnose_sources(self, sources: Sequence[Source], *, cancel: Callable[[], bool] | None = None,
                         progress: ProgressCallback | None = None, line_cache: LineCache | None = None,
                         notes: Sequence[str] = (), unread: Sequence[str] = ()) -> Diagnosis:
        """``line_cache``: readings of lines from an earlier diagnosis of the same document (lines/cache.py);
        ``notes``: what the caller has to say about the inputs (skipped files); ``unread``: the inputs that
        could not be read (empty, unreadable): with any, the answer is never "no failure". The diagnosis is
        masked: every view may show all of it."""
        with cycle_collection_paused():  # collector.py: ~10^5 objects, no cycles
            diagnosis = self._diagnose_sources(sources, cancel, progress, line_cache)
            not_all_clear(diagnosis, unread)
            diagnosis.notes.extend(notes)
            mask_diagnosis(diagnosis)
            return diagnosis

    def _diagnose_sources(self, sources: Sequence[Source], cancel: Callable[[], bool] | None,
                          progress: ProgressCallback | None, line_cache: LineCache | None) -> Diagnosis:
        total = sum(s.size for s in sources) or 0
        done = 0

        # A compressed input's size is not its text's: its progress is the text read so far, without a share.
        compressed = any(s.compression for s in sources)

        def on_bytes(count: int) -> None:
            nonlocal done
            done += count
            if progress is None or not total:
                return
            if compressed:
                progress(-1.0, f"read {size_text(done)} of text ({size_text(total)} compressed)")
            else:
                progress(min(1.0, done / total), f"scanned {size_text(done)} of {size_text(total)}")

        known = len(self.matcher.timeouts)
        self.matcher.new_diagnosis()
        if cancel is None and worth_parallel(sources, self.jobs):
            out, timeouts = scan_parallel(self.matcher, sources, self.jobs, self.max_line_bytes, on_bytes, self.helpers)
            self.matcher.adopt_timeouts(timeouts)
        else:
            # Without a document's cache, one for this diagnosis: a cascade repeats many lines byte for byte.
            sink = ScanSink()
            scanner = Scanner(self.matcher, sink, max_line_bytes=self.max_line_bytes, cancel=cancel,
                              progress=on_bytes, helpers=self.helpers,
                              line_cache=line_cache if line_cache is not None else LineCache(DIAGNOSIS_CACHE_ENTRIES))
            for source in sources:
                scanner.scan(source)
            out = sink.output
            timeouts = self.matcher.timeouts[known:]  # only this diagnosis's: the engine is reused
        diagnosis = diagnose_scan(out, self.library, last_line_lookup(sources), lines_before_lookup(sources))
        for summary in out.files:
            if summary.truncated_lines:
                diagnosis.notes.append(f"{summary.path}: {summary.truncated_lines} line(s) longer than "
                                       f"{self.max_line_bytes} bytes were matched on their first "
                                       f"{self.max_line_bytes} bytes only")
            if summary.error:
                diagnosis.notes.append(summary.error)
        diagnosis.notes.extend(f"signature pattern disabled: {t}" for t in timeouts)
        return diagnosis

    def diagnose_text(self, text: str | bytes, name: str = "<text>", *,
                      cancel: Callable[[], bool] | None = None,
                      progress: ProgressCallback | None = None, line_cache: LineCache | None = None) -> Diagnosis:
        return self.diagnose_sources([Source.from_text(text, name)], cancel=cancel, progress=progress,
                                     line_cache=line_cache)

    def diagnose_paths(self, paths: Sequence[str | Path], *, cancel: Callable[[], bool] | None = None,
                       progress: ProgressCallback | None = None) -> Diagnosis:
        resolved = resolve_inputs(paths)
        if not resolved.sources:
            raise InputError("no readable log files in " + ", ".join(str(p) for p in paths))
        diagnosis = self.diagnose_sources(resolved.sources, cancel=cancel, progress=progress,
                                          notes=resolved.skipped, unread=resolved.unread)
        if all(f.bytes == 0 and not f.error for f in diagnosis.files):
            raise InputError("nothing to diagnose: " + ", ".join(f"{f.path} is empty" for f in diagnosis.files))
        return diagnosis
