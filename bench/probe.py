"""In-process measurements, each run by ``run.py`` in a fresh interpreter and printed as one JSON object.

``load``               import time of the engine and the time ``Engine.load()`` takes (read + compile the library)
``editor FILE``        ``Engine.diagnose_text`` on a file's text, as the language server calls it
``phases FILE``        the scanner's raw costs on one file: reading, counting newlines, the keyword prefilter
``cli-phases FILE``    where ``faultline diagnose --format json FILE``'s time goes: imports, library, scan, reasoning,
                       JSON (the CLI's own calls, timed one after another in a fresh interpreter)
``profile OUT PATH...`` cProfile of ``diagnose_paths`` + JSON rendering; the full listing goes to OUT
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import io
import json
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

CHUNK_BYTES = 8 * 1024 * 1024


def _load() -> dict[str, Any]:
    started = time.perf_counter()
    from faultline.engine import Engine

    imported = time.perf_counter()
    engine = Engine.load()
    loaded = time.perf_counter()
    matcher = engine.matcher
    return {"import_engine_s": imported - started, "engine_load_s": loaded - imported,
            "signatures": len(matcher.signatures),
            "patterns": sum(len(s.pattern_sources) for s in matcher.signatures),
            "keywords": len(matcher.index.keywords), "prefilter": matcher.index.engine,
            "load_problems": [str(p) for p in engine.library.problems]}


def _root(diagnosis: Any) -> dict[str, Any]:
    from faultline.render.json_out import diagnosis_json

    data = diagnosis_json(diagnosis)
    root = data["root_cause"] or {}
    return {"verdict": data["verdict"], "initiating_rank": data["initiating_rank"],
            "root_cause": {k: root.get(k) for k in ("signature_id", "rank", "file", "line")} if root else None}


def _editor(path: Path, repeats: int) -> dict[str, Any]:
    from faultline.engine import Engine

    engine = Engine.load()
    text = path.read_text(encoding="utf-8")
    walls = []
    diagnosis = None
    for _ in range(repeats):
        started = time.perf_counter()
        diagnosis = engine.diagnose_text(text, name=str(path))
        walls.append(time.perf_counter() - started)
    assert diagnosis is not None
    return {"lines": text.count("\n"), "chars": len(text), "walls_s": walls, "median_s": statistics.median(walls),
            **_root(diagnosis)}


def _phases(path: Path) -> dict[str, Any]:
    """What the scanner's chunk loop costs before any line is decoded (the floor for a big healthy file)."""
    from faultline.engine import Engine

    index = Engine.load().matcher.index
    read_s = count_s = scan_s = 0.0
    hits = lines = 0
    with open(path, "rb") as stream:
        while True:
            t0 = time.perf_counter()
            buf = stream.read(CHUNK_BYTES)
            t1 = time.perf_counter()
            read_s += t1 - t0
            if not buf:
                break
            lines += buf.count(b"\n")
            t2 = time.perf_counter()
            count_s += t2 - t1
            hits += len(index.scan(buf))
            scan_s += time.perf_counter() - t2
    return {"file": str(path), "read_s": read_s, "count_newlines_s": count_s, "keyword_scan_s": scan_s,
            "keyword_hits": hits, "lines": lines}


def _cli_phases(path: Path) -> dict[str, Any]:
    """The CLI's path (``cli._diagnose`` with ``--format json``), one phase at a time. The reasoning is timed by
    wrapping the engine's call to it, so the scan is exactly what the CLI runs (helpers, parallel segments)."""
    started = time.perf_counter()
    import faultline.cli  # noqa: F401 - the CLI's own imports (argparse) are part of its cost
    from faultline.collector import cycle_collection_paused

    with cycle_collection_paused():  # as the CLI runs a diagnosis
        import faultline.engine as engine_module
        from faultline.render.json_out import render_json
        from faultline.scan.parallel import default_jobs

        imported = time.perf_counter()
        engine = engine_module.Engine.load(jobs=default_jobs())
        loaded = time.perf_counter()
        reasoning_s = 0.0
        diagnose_scan = engine_module.diagnose_scan

        def timed_reasoning(*args: Any, **kwargs: Any) -> Any:
            nonlocal reasoning_s
            begun = time.perf_counter()
            try:
                return diagnose_scan(*args, **kwargs)
            finally:
                reasoning_s += time.perf_counter() - begun

        engine_module.diagnose_scan = timed_reasoning  # type: ignore[assignment]
        diagnosis = engine.diagnose_paths([path])
        diagnosed = time.perf_counter()
        report = render_json(diagnosis, indent=None)
        rendered = time.perf_counter()
    return {"file": str(path), "import_s": imported - started, "library_s": loaded - imported,
            "scan_s": diagnosed - loaded - reasoning_s, "reasoning_s": reasoning_s, "json_s": rendered - diagnosed,
            "report_bytes": len(report.encode("utf-8")), "events": len(diagnosis.events), **_root(diagnosis)}


def _profile(out: Path, paths: list[str], top: int) -> dict[str, Any]:
    from faultline.engine import Engine
    from faultline.render import render_json

    engine = Engine.load()
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    diagnosis = engine.diagnose_paths(paths)
    render_json(diagnosis, indent=None)  # as the CLI writes to a pipe: compact, C-accelerated
    profiler.disable()
    wall = time.perf_counter() - started
    listing = io.StringIO()
    stats = pstats.Stats(profiler, stream=listing)
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats(40)
    out.write_text(listing.getvalue(), encoding="utf-8")
    rows = []
    engine_rows = []
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    for (file, line, func), (_cc, calls, tottime, cumtime, _callers) in raw.items():
        row = {"function": f"{Path(file).name}:{line}({func})", "calls": calls,
               "tottime_s": round(tottime, 3), "cumtime_s": round(cumtime, 3)}
        rows.append(row)
        if _is_engine_file(file):
            engine_rows.append(row)
    by_total = sorted(rows, key=lambda r: -r["tottime_s"])[:top]
    faultline_cumulative = sorted(engine_rows, key=lambda r: -r["cumtime_s"])[:top]
    return {"profiled_wall_s": wall, "listing": str(out), "top_tottime": by_total,
            "top_engine_cumulative": faultline_cumulative, **_root(diagnosis)}


def _is_engine_file(file: str) -> bool:
    """A module of the engine: the faultline package, but not its language server."""
    spec = importlib.util.find_spec("faultline")  # found, not imported: the probes time imports
    package = Path(spec.origin).resolve().parent if spec is not None and spec.origin else None
    path = Path(file).resolve()
    return package is not None and path.is_relative_to(package) and not path.is_relative_to(package / "lsp")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="probe", required=True)
    sub.add_parser("load")
    editor = sub.add_parser("editor")
    editor.add_argument("file", type=Path)
    editor.add_argument("--repeats", type=int, default=3)
    phases = sub.add_parser("phases")
    phases.add_argument("file", type=Path)
    cli_phases = sub.add_parser("cli-phases")
    cli_phases.add_argument("file", type=Path)
    profile = sub.add_parser("profile")
    profile.add_argument("out", type=Path)
    profile.add_argument("paths", nargs="+")
    profile.add_argument("--top", type=int, default=12)
    args = parser.parse_args(argv)
    if args.probe == "load":
        result = _load()
    elif args.probe == "editor":
        result = _editor(args.file, args.repeats)
    elif args.probe == "phases":
        result = _phases(args.file)
    elif args.probe == "cli-phases":
        result = _cli_phases(args.file)
    else:
        result = _profile(args.out, args.paths, args.top)
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
