"""Run a command as a child process and measure its wall time and peak resident memory.

``os.wait4`` returns the resource usage of exactly that child (``ru_maxrss``, KiB on Linux), so each
measurement is the peak of one process, not the running maximum ``RUSAGE_CHILDREN`` keeps over all
children. Output goes to temporary files, not pipes, so a large report cannot block the child.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

READ_BLOCK = 16 * 1024 * 1024


@dataclass
class Run:
    wall_s: float
    max_rss_mib: float
    returncode: int
    stdout: bytes
    stderr: bytes


@dataclass
class Summary:
    """Repeated runs of one command: best and median wall time, and the largest peak RSS."""

    command: list[str]
    walls_s: list[float]
    max_rss_mib: float
    returncode: int

    @property
    def median_s(self) -> float:
        return statistics.median(self.walls_s)

    @property
    def best_s(self) -> float:
        """The fastest run: on a shared machine other load only ever adds time, so this is the most stable."""
        return min(self.walls_s)

    def to_json(self) -> dict[str, object]:
        return {"command": self.command, "median_s": round(self.median_s, 4), "best_s": round(self.best_s, 4),
                "walls_s": [round(w, 4) for w in self.walls_s], "max_rss_mib": round(self.max_rss_mib, 1),
                "returncode": self.returncode}


def run_once(command: Sequence[str], *, env: dict[str, str] | None = None) -> Run:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        process = subprocess.Popen(list(command), stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        scale = 1024 if sys.platform != "darwin" else 1  # ru_maxrss: KiB on Linux, bytes on macOS
        return Run(wall, usage.ru_maxrss * scale / 2**20, process.returncode, out.read(), err.read())


def run_repeated(command: Sequence[str], repeats: int, *, ok_codes: Sequence[int] = (0,),
                 env: dict[str, str] | None = None) -> tuple[Summary, Run]:
    """Run ``repeats`` times; return the summary and the last run (for its output). Raises on a bad exit."""
    walls: list[float] = []
    peak = 0.0
    last: Run | None = None
    for _ in range(max(1, repeats)):
        last = run_once(command, env=env)
        if last.returncode not in ok_codes:
            raise RuntimeError(f"{' '.join(command)} exited with {last.returncode}: "
                               f"{last.stderr.decode(errors='replace')[-2000:]}")
        walls.append(last.wall_s)
        peak = max(peak, last.max_rss_mib)
    assert last is not None
    return Summary(list(command), walls, peak, last.returncode), last


@dataclass
class Contender:
    """One command in a comparison; ``ok_codes`` are the exit codes that mean it worked."""

    name: str
    command: list[str]
    ok_codes: tuple[int, ...] = (0,)


def run_interleaved(contenders: Sequence[Contender], repeats: int,
                    warm: Path | None = None) -> dict[str, tuple[Summary, Run]]:
    """Time competing commands in rounds (A B C, A B C, ...), re-warming the input before each round.

    On a shared machine load comes and goes and the page cache gets trimmed; interleaving exposes every
    command to the same conditions, so their ratio stays meaningful even when absolute times drift.
    """
    walls: dict[str, list[float]] = {c.name: [] for c in contenders}
    peaks: dict[str, float] = {c.name: 0.0 for c in contenders}
    last: dict[str, Run] = {}
    for _ in range(max(1, repeats)):
        if warm is not None:
            warm_page_cache(warm)
        for contender in contenders:
            run = run_once(contender.command)
            if run.returncode not in contender.ok_codes:
                raise RuntimeError(f"{' '.join(contender.command)} exited with {run.returncode}: "
                                   f"{run.stderr.decode(errors='replace')[-2000:]}")
            walls[contender.name].append(run.wall_s)
            peaks[contender.name] = max(peaks[contender.name], run.max_rss_mib)
            last[contender.name] = run
    return {c.name: (Summary(c.command, walls[c.name], peaks[c.name], last[c.name].returncode), last[c.name])
            for c in contenders}


def load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def warm_page_cache(path: Path) -> int:
    """Read a file (or every file under a folder) once so that every tool measured sees it cached."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    total = 0
    for file in files:
        with open(file, "rb", buffering=0) as stream:
            while chunk := stream.read(READ_BLOCK):
                total += len(chunk)
    return total
