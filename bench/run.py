"""Run every faultline benchmark and print its ratio against a reference measured in the same run.

    .venv/bin/python bench/run.py --quick    # 10 MiB and 100 MiB, 64 rank files: under a minute
    .venv/bin/python bench/run.py            # adds 1 GiB, 1,024 rank files and the 3 GiB failure-dense log
    .venv/bin/python bench/run.py --quick --dense 300M   # the failure-dense row on a smaller log

Inputs come from ``bench/generate.py`` (deterministic; cached in ``bench/data/``, regenerated when the
generator or its parameters change). Every input holds the same buried failure cascade, and every
faultline run is checked against it (verdict, initiating rank, root-cause file and line, signature):
a fast wrong answer is reported as WRONG, never as a met target.

Benchmarks and targets:
  throughput  ``faultline diagnose --format json`` vs ``rg -c -f patterns.txt`` (the library's own
              regexes, see rg_patterns.py) on the same file; target <= 1.5x. ``rg -F -f keywords.txt``
              (the literal prefilter alone) is shown too. For the smallest size, where the time goes
              (probe.py cli-phases: interpreter, imports, library, scan, reasoning, JSON) against what
              the target allows.
  memory      peak RSS of the faultline process per size; target <= 300 MiB at 1 GiB, flat in size
              (the largest exceeds the smallest by at most FLAT_MARGIN_MIB).
  dense       (full runs, or --dense SIZE) a 3 GiB log of a retry loop failing again and again
              (generate.py write_failure_dense: ~2 million matching lines): peak RSS (target <= 300 MiB),
              time vs ``rg -c -f patterns.txt`` on the same file (target <= 1.5x) and the JSON report's size;
              one round (each run takes minutes). Generated once, streamed to disk, cached in bench/data/.
  start-up    faultline on a ~10 KB log vs ``python -c "import json"`` + 150 ms; target <= 2x.
              Also: import time (``-X importtime``) and ``Engine.load()`` (read + compile the library).
  folder      1,024 (quick: 64) files x 1 MiB vs ``rg -c -f patterns.txt FOLDER`` (all cores); target
              <= 1.5x; ``rg -j1`` (one core) shown too. faultline uses every core (at most 4).
  editor      the language server (python -m faultline) driven over stdio by lsp_editor.py on a 200,000-line
              log: first diagnostics (from the didOpen message sent; the client's own JSON encoding of
              the text is shown apart) vs the CLI on the same text (target <= 1.5x), hover and code-action
              round trips during diagnoses (target p99 <= 20 ms), one-line edits re-published after the
              debounce (target <= 300 ms; the worst of 8 edits sent back to back; one sent after 2 s idle is
              shown apart); also ``Engine.diagnose_text`` in-process. Median of the runs
              (first diagnostics: best, like the CLI's).
  profile     (full runs, or --profile) cProfile of the largest combined log and of the folder, plus the
              scanner's raw phases (read, newline count, keyword scan).

Commands that are compared run in interleaved rounds (A B C, A B C, ...) with the input re-read into the
page cache before each round; the table shows the best of the rounds (other load on a shared machine only
ever adds time) and the ratios are taken between those; medians and every run are in the JSON.
Results: a Markdown table on stdout and JSON in ``bench/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import faultline  # noqa: E402
import generate  # noqa: E402
import measure  # noqa: E402
import rg_patterns  # noqa: E402

MIB = 1024 * 1024
RESULTS_DIR = BENCH_DIR / "results"
THROUGHPUT_TARGET = 1.5
FOLDER_TARGET = 1.5
STARTUP_TARGET = 2.0
STARTUP_ALLOWANCE_S = 0.150
MEMORY_TARGET_MIB = 300.0
FLAT_MARGIN_MIB = 64.0  # peak RSS may exceed the smallest input's by at most this much
EDITOR_LINES = 200_000
EDITOR_FIRST_TARGET = 1.5
EDITOR_REQUEST_P99_S = 0.020
EDITOR_EDIT_S = 0.300
DENSE_BYTES = 3 * 1024 * MIB  # the failure-dense log of full runs
DENSE_TARGET = 1.5
FAULTLINE_OK = (0, 1)  # 1 = a failure was diagnosed
RG_OK = (0, 1)  # 1 = no line matched


@dataclass
class Plan:
    mode: str
    sizes: list[int]
    folder_files: int
    repeats: int
    big_repeats: int
    profile: bool
    dense_bytes: int = 0  # the failure-dense log's size (0: no such row)


@dataclass
class Tools:
    faultline: str
    python: str
    rg: str | None


def _plan(args: argparse.Namespace) -> Plan:
    if args.quick:
        plan = Plan("quick", [10 * MIB, 100 * MIB], 64, 3, 3, bool(args.profile))
    else:
        plan = Plan("full", [10 * MIB, 100 * MIB, 1024 * MIB], 1024, 3, 3, True if args.profile is None else args.profile)
    if args.repeats:
        plan.repeats = plan.big_repeats = args.repeats
    plan.dense_bytes = generate.parse_size(args.dense) if args.dense else (0 if args.quick else DENSE_BYTES)
    return plan


def _tools() -> Tools:
    here = Path(sys.executable).parent
    faultline = here / "faultline"
    found = str(faultline) if faultline.exists() else shutil.which("faultline")
    if not found:
        sys.exit("bench: no 'faultline' next to this Python or on PATH; run with the project's .venv/bin/python")
    rg = shutil.which("rg")
    if rg is None:
        print("bench: ripgrep not found (apt-get install -y ripgrep); reference columns will be empty",
              file=sys.stderr)
    return Tools(found, sys.executable, rg)


# -- checks ---------------------------------------------------------------------------------------
def check(result: dict[str, Any], expected: generate.Expected, name: str | None = None) -> dict[str, Any]:
    """Does a diagnosis (the CLI's JSON or a probe's summary) name the generated cascade correctly?"""
    root = result.get("root_cause") or {}
    want_file = name or expected.root_cause_file
    problems = []
    if "error" in result:
        problems.append(f"faultline failed: {result['error']}")
    if result.get("verdict") != "failure":
        problems.append(f"verdict {result.get('verdict')!r}")
    if result.get("initiating_rank") != expected.initiating_rank:
        problems.append(f"initiating rank {result.get('initiating_rank')} (want {expected.initiating_rank})")
    if not root:
        problems.append("no root cause")
    else:
        if root.get("line") != expected.root_cause_line or Path(str(root.get("file"))) != Path(want_file):
            problems.append(f"root cause at {root.get('file')}:{root.get('line')} "
                            f"(want {want_file}:{expected.root_cause_line})")
        if not str(root.get("signature_id", "")).startswith(expected.signature_prefix):
            problems.append(f"signature {root.get('signature_id')} (want {expected.signature_prefix}*)")
    return {"ok": not problems, "problems": problems, "initiating_rank": result.get("initiating_rank"),
            "root_cause": {k: root.get(k) for k in ("signature_id", "file", "line")} if root else None}


def _faultline_cmd(tools: Tools, *paths: Path) -> list[str]:
    return [tools.faultline, "diagnose", *map(str, paths), "--format", "json", "-q"]


def _report(run: measure.Run) -> dict[str, Any]:
    """The CLI's JSON report, or ``{"error": ...}`` when it printed none (exit 1 also means a crash)."""
    try:
        report: dict[str, Any] = json.loads(run.stdout)
        return report
    except ValueError:
        lines = run.stderr.decode(errors="replace").strip().splitlines()
        return {"error": lines[-1] if lines else f"no JSON on stdout (exit {run.returncode})"}


def _diagnose(tools: Tools, path: Path, repeats: int) -> tuple[measure.Summary, dict[str, Any]]:
    summary, last = measure.run_repeated(_faultline_cmd(tools, path), repeats, ok_codes=FAULTLINE_OK)
    return summary, _report(last)


def _probe(tools: Tools, *args: str) -> dict[str, Any]:
    completed = subprocess.run([tools.python, str(BENCH_DIR / "probe.py"), *args], capture_output=True, text=True,
                               check=False)
    if completed.returncode != 0:
        lines = completed.stderr.strip().splitlines()
        return {"error": f"probe {args[0]} failed: {lines[-1] if lines else completed.returncode}"}
    result: dict[str, Any] = json.loads(completed.stdout)
    return result


def _ratio(ours: measure.Summary, reference: measure.Summary | None) -> float | None:
    return ours.best_s / reference.best_s if reference else None


def _round_ratios(ours: measure.Summary, reference: measure.Summary | None) -> list[float] | None:
    """The ratio in each interleaved round (the walls are in round order): how much the verdict can move."""
    if not reference:
        return None
    return [round(a / b, 3) for a, b in zip(ours.walls_s, reference.walls_s, strict=True)]


# -- benchmarks -----------------------------------------------------------------------------------
def _compare(tools: Tools, target: Path, repeats: int, rg_variants: dict[str, list[str]]
             ) -> tuple[measure.Summary, dict[str, Any], dict[str, measure.Summary]]:
    """faultline and the ripgrep variants on one input, in interleaved rounds; faultline's JSON parsed."""
    contenders = [measure.Contender("faultline", _faultline_cmd(tools, target), FAULTLINE_OK)]
    if tools.rg is not None:
        contenders += [measure.Contender(name, [tools.rg, "--no-config", *args, str(target)], RG_OK)
                       for name, args in rg_variants.items()]
    timed = measure.run_interleaved(contenders, repeats, warm=target)
    ours, last = timed.pop("faultline")
    return ours, _report(last), {name: summary for name, (summary, _run) in timed.items()}


def bench_throughput(tools: Tools, plan: Plan, rg_files: rg_patterns.PatternExport) -> list[dict[str, Any]]:
    rows = []
    for size in plan.sizes:
        path, expected = generate.combined_log(size, generate.Scenario(style="c10"))
        repeats = plan.big_repeats if size >= 1024 * MIB else plan.repeats
        ours, diagnosis, refs = _compare(tools, path, repeats, {
            "rg_patterns": ["-c", "-f", str(rg_files.patterns_file)],
            "rg_keywords": ["-c", "-F", "-f", str(rg_files.keywords_file)],
        })
        patterns, keywords = refs.get("rg_patterns"), refs.get("rg_keywords")
        rows.append({"input": path.name, "bytes": expected.bytes, "lines": expected.lines,
                     "faultline": ours.to_json(), "mib_per_s": expected.bytes / MIB / ours.best_s,
                     "rg_patterns": patterns.to_json() if patterns else None,
                     "rg_keywords": keywords.to_json() if keywords else None,
                     "ratio_vs_rg_patterns": _ratio(ours, patterns), "ratio_vs_rg_keywords": _ratio(ours, keywords),
                     "round_ratios_vs_rg_patterns": _round_ratios(ours, patterns),
                     "check": check(diagnosis, expected)})
        if size == min(plan.sizes):
            rows[-1]["phases"] = _cli_phases(tools, path)
        _progress(f"throughput {path.name}: {ours.best_s:.2f} s")
    return rows


PHASES = ("interpreter_s", "import_s", "library_s", "scan_s", "reasoning_s", "json_s")


def _cli_phases(tools: Tools, path: Path, runs: int = 3) -> dict[str, Any]:
    """Where the CLI's time goes on one input: each phase's median over fresh interpreters (probe.py
    cli-phases), and the interpreter's own start (``python -c pass``, best of 5)."""
    probes = [_probe(tools, "cli-phases", str(path)) for _ in range(runs)]
    failed = next((p for p in probes if "error" in p), None)
    if failed is not None:
        return failed
    bare, _ = measure.run_repeated([tools.python, "-c", "pass"], 5)
    phases: dict[str, Any] = {name: statistics.median(p[name] for p in probes) for name in PHASES[1:]}
    phases["interpreter_s"] = bare.best_s
    phases["outside_scan_s"] = sum(phases[name] for name in PHASES if name != "scan_s")
    phases["events"] = probes[-1]["events"]
    phases["report_bytes"] = probes[-1]["report_bytes"]
    return phases


def bench_styles(tools: Tools) -> list[dict[str, Any]]:
    """The same cascade under every launcher prefix style (10 MiB each), checked once."""
    rows = []
    for style in generate.STYLES:
        path, expected = generate.combined_log(10 * MIB, generate.Scenario(style=style))
        ours, diagnosis = _diagnose(tools, path, 1)
        rows.append({"style": style, "input": path.name, "wall_s": ours.best_s, "check": check(diagnosis, expected)})
    _progress("styles checked")
    return rows


def bench_startup(tools: Tools) -> dict[str, Any]:
    scenario = generate.Scenario(ranks=4, gpus_per_node=2, culprit_rank=1, position=0.3)
    path, expected = generate.combined_log(10 * 1024, scenario)
    timed = measure.run_interleaved([
        measure.Contender("faultline", _faultline_cmd(tools, path), FAULTLINE_OK),
        measure.Contender("python", [tools.python, "-c", "import json"]),
    ], 7, warm=path)
    ours, bare = timed["faultline"][0], timed["python"][0]
    diagnosis = _report(timed["faultline"][1])
    reference = bare.best_s + STARTUP_ALLOWANCE_S
    # With the parsed-signature cache off, every run parses every signature file (a first run's cost).
    cold, _ = measure.run_repeated(_faultline_cmd(tools, path), 5, ok_codes=FAULTLINE_OK,
                                   env={**os.environ, "FAULTLINE_CACHE_DIR": "off"})
    loads = [_probe(tools, "load") for _ in range(3)]
    load = dict(loads[-1])
    load["engine_load_s"] = sorted(x["engine_load_s"] for x in loads)[1]
    load["import_engine_s"] = sorted(x["import_engine_s"] for x in loads)[1]
    _progress("start-up measured")
    return {"input": path.name, "bytes": expected.bytes, "faultline": ours.to_json(), "cold_cache": cold.to_json(),
            "python_import_json": bare.to_json(),
            "reference_s": reference, "ratio": ours.best_s / reference, "check": check(diagnosis, expected),
            "library": load, "importtime": _importtime(tools)}


def _importtime(tools: Tools) -> dict[str, Any]:
    """``python -X importtime``: the total for the CLI's imports and the slowest modules (self time)."""
    completed = subprocess.run([tools.python, "-X", "importtime", "-c", "import faultline.cli, faultline.engine"],
                               capture_output=True, text=True, check=True)
    rows = []
    for line in completed.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if m:
            rows.append((int(m[1]), int(m[2]), len(m[3]) - 1, m[4]))
    total_us = sum(cumulative for _self, cumulative, depth, _name in rows if depth == 0)
    slowest = sorted(rows, key=lambda r: -r[0])[:8]
    return {"total_s": total_us / 1e6,
            "slowest_self": [{"module": name, "self_ms": self_us / 1000, "cumulative_ms": cum / 1000}
                             for self_us, cum, _depth, name in slowest]}


def bench_folder(tools: Tools, plan: Plan, rg_files: rg_patterns.PatternExport) -> dict[str, Any]:
    folder, expected = generate.rank_folder(MIB, generate.Scenario(ranks=plan.folder_files, style="plain"))
    repeats = plan.big_repeats if plan.folder_files >= 512 else plan.repeats
    base = ["--no-ignore", "-c", "-f", str(rg_files.patterns_file)]  # bench/data/ is gitignored
    ours, diagnosis, refs = _compare(tools, folder, repeats, {"rg_patterns": base, "rg_patterns_j1": ["-j1", *base]})
    all_cores, one_core = refs.get("rg_patterns"), refs.get("rg_patterns_j1")
    _progress(f"folder {folder.name}: {ours.best_s:.2f} s")
    return {"input": folder.name, "files": expected.files, "bytes": expected.bytes, "faultline": ours.to_json(),
            "rg_patterns": all_cores.to_json() if all_cores else None,
            "rg_patterns_j1": one_core.to_json() if one_core else None, "cpu_count": os.cpu_count(),
            "ratio_vs_rg": _ratio(ours, all_cores), "ratio_vs_rg_j1": _ratio(ours, one_core),
            "round_ratios_vs_rg": _round_ratios(ours, all_cores),
            "check": check(diagnosis, expected)}


def bench_failure_dense(tools: Tools, plan: Plan, rg_files: rg_patterns.PatternExport) -> dict[str, Any]:
    """The failure-dense log: memory and time flat in the number of failure lines (scan/aggregate.py)."""
    scenario = generate.Scenario(style="c10")
    free = shutil.disk_usage(generate.DATA_DIR.parent).free
    if not generate.failure_dense_path(plan.dense_bytes, scenario).exists() and free < plan.dense_bytes + 2 * 1024 * MIB:
        raise RuntimeError(f"not enough disk in {generate.DATA_DIR} for the {plan.dense_bytes // MIB} MiB failure-dense log")
    started = time.perf_counter()
    path, expected = generate.failure_dense_log(plan.dense_bytes, scenario)
    generated_s = time.perf_counter() - started
    _progress(f"dense {path.name}: ready ({generated_s:.0f} s)")
    ours, diagnosis, refs = _compare(tools, path, 1, {"rg_patterns": ["-c", "-f", str(rg_files.patterns_file)]})
    patterns = refs.get("rg_patterns")
    _progress(f"dense {path.name}: {ours.best_s:.1f} s")
    return {"input": path.name, "bytes": expected.bytes, "lines": expected.lines,
            "events_total": diagnosis.get("events_total"), "events_listed": len(diagnosis.get("events") or []),
            "report_bytes": len(json.dumps(diagnosis, ensure_ascii=False).encode()),
            "faultline": ours.to_json(), "rg_patterns": patterns.to_json() if patterns else None,
            "ratio_vs_rg_patterns": _ratio(ours, patterns), "check": check(diagnosis, expected)}


def bench_editor(tools: Tools, plan: Plan) -> dict[str, Any]:
    source, expected = generate.combined_log(32 * MIB, generate.Scenario(style="c10"))
    if expected.root_cause_line > EDITOR_LINES:
        raise RuntimeError("the editor text would not contain the cascade")
    path = source.with_name(f"editor-{EDITOR_LINES // 1000}k-lines.log")
    with open(source, "rb") as stream, open(path, "wb") as out:
        for _ in range(EDITOR_LINES):
            out.write(stream.readline())
    measure.warm_page_cache(path)
    in_process = _probe(tools, "editor", str(path), "--repeats", str(plan.repeats))
    cli, diagnosis = _diagnose(tools, path, plan.repeats)
    server_runs = []
    for _ in range(max(1, plan.repeats)):
        completed = subprocess.run([tools.python, str(BENCH_DIR / "lsp_editor.py"), str(path)], capture_output=True,
                                   text=True, check=True, timeout=600)
        server_runs.append(json.loads(completed.stdout))
    first_s = min(run["first_diagnostics_s"] for run in server_runs)
    encode_s = min(run["client_encode_s"] for run in server_runs)
    p99_s = statistics.median(run["requests"]["p99_s"] for run in server_runs)
    edit_s = statistics.median(run["edit_after_debounce_max_s"] for run in server_runs)
    idle_edit_s = statistics.median(run["edit_after_idle_s"] for run in server_runs)
    _progress("editor measured")
    text_s = min(in_process["walls_s"]) if "walls_s" in in_process else None
    return {"input": path.name, "lines": EDITOR_LINES, "bytes": path.stat().st_size,
            "diagnose_text_s": text_s, "diagnose_text_walls_s": in_process.get("walls_s"),
            "cli": cli.to_json(), "ratio_text_vs_cli": text_s / cli.best_s if text_s else None,
            "server": server_runs, "first_diagnostics_s": first_s, "ratio_first_vs_cli": first_s / cli.best_s,
            "client_encode_s": encode_s, "ratio_encode_and_first_vs_cli": (encode_s + first_s) / cli.best_s,
            "requests_p99_s": p99_s, "edit_after_debounce_s": edit_s, "edit_after_idle_s": idle_edit_s,
            "idle_before_edit_s": server_runs[0]["idle_before_edit_s"],
            "server_root_line_ok": all(run["root_cause_line"] == expected.root_cause_line for run in server_runs),
            "check_diagnose_text": check(in_process, expected, name=str(path)),
            "check_cli": check(diagnosis, expected, name=str(path))}


def bench_profile(tools: Tools, plan: Plan, stamp: str) -> dict[str, Any]:
    largest, _ = generate.combined_log(plan.sizes[-1], generate.Scenario(style="c10"))
    folder, _ = generate.rank_folder(MIB, generate.Scenario(ranks=plan.folder_files, style="plain"))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    result = {
        "phases": _probe(tools, "phases", str(largest)),
        "combined": _probe(tools, "profile", str(RESULTS_DIR / f"profile-{stamp}-combined.txt"), str(largest)),
        "folder": _probe(tools, "profile", str(RESULTS_DIR / f"profile-{stamp}-folder.txt"), str(folder)),
    }
    _progress("profiles written")
    return result


# -- report ---------------------------------------------------------------------------------------
def _s(seconds: float | None) -> str:
    if seconds is None:
        return "n/a"
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _x(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}x"


def _spread(ratios: list[float] | None) -> str:
    """`` (rounds 1.29-1.41x)``: the per-round ratios' range, when there is more than one round."""
    if not ratios or len(ratios) < 2:
        return ""
    return f" (rounds {min(ratios):.2f}-{max(ratios):.2f}x)"


def _verdict(ratio: float | None, target: float, correct: bool = True) -> str:
    if not correct:
        return "**WRONG**"
    if ratio is None:
        return "n/a"
    return "met" if ratio <= target else "**missed**"


def render_table(results: dict[str, Any]) -> str:
    lines = ["| benchmark | input | faultline | reference | ratio | target | status |",
             "|---|---|---|---|---|---|---|"]
    for row in results["throughput"]:
        ok = row["check"]["ok"]
        fl = row["faultline"]
        rg = row["rg_patterns"]
        kw = row["rg_keywords"]
        size = f"{row['bytes'] / MIB:.0f} MiB combined"
        lines.append(f"| CLI throughput | {size} | {_s(fl['best_s'])} ({row['mib_per_s']:.0f} MiB/s) | "
                     f"rg -f patterns {_s(rg and rg['best_s'])} | {_x(row['ratio_vs_rg_patterns'])}"
                     f"{_spread(row.get('round_ratios_vs_rg_patterns'))} | "
                     f"<= {THROUGHPUT_TARGET}x | {_verdict(row['ratio_vs_rg_patterns'], THROUGHPUT_TARGET, ok)} |")
        lines.append(f"| (literal prefilter) | {size} | | rg -F -f keywords {_s(kw and kw['best_s'])} | "
                     f"{_x(row['ratio_vs_rg_keywords'])} | - | info |")
        if "phases" in row:
            lines.append(_phases_row(row["phases"], size, rg and rg["best_s"]))
    throughput = results["throughput"]
    rss = [row["faultline"]["max_rss_mib"] for row in throughput]
    # Independent of size: what grows with the input stays under a fixed 64 MiB (chunk buffers, events).
    flat = max(rss) <= min(rss) + FLAT_MARGIN_MIB
    for row in throughput:
        lines.append(f"| peak RSS | {row['bytes'] / MIB:.0f} MiB combined | {row['faultline']['max_rss_mib']:.0f} MiB | "
                     f"- | - | <= {MEMORY_TARGET_MIB:.0f} MiB, flat | "
                     f"{'met' if row['faultline']['max_rss_mib'] <= MEMORY_TARGET_MIB and flat else '**missed**'} |")
    st = results["startup"]
    lines.append(f"| start-up | {st['bytes'] / 1024:.0f} KiB log | {_s(st['faultline']['best_s'])} | "
                 f"python -c 'import json' {_s(st['python_import_json']['best_s'])} + 150 ms | {_x(st['ratio'])} | "
                 f"<= {STARTUP_TARGET}x | {_verdict(st['ratio'], STARTUP_TARGET, st['check']['ok'])} |")
    lines.append(f"| (no library cache) | {st['bytes'] / 1024:.0f} KiB log | {_s(st['cold_cache']['best_s'])} | "
                 f"FAULTLINE_CACHE_DIR=off: every signature file parsed | - | - | info |")
    lib = st["library"]
    lines.append(f"| library load | {lib['signatures']} signatures, {lib['patterns']} patterns, {lib['keywords']} keywords | "
                 f"Engine.load() {_s(lib['engine_load_s'])}, import {_s(lib['import_engine_s'])} | "
                 f"-X importtime total {_s(st['importtime']['total_s'])} | - | - | info |")
    fo = results["folder"]
    files = f"{fo['files']} files x 1 MiB"
    rg_all = fo["rg_patterns"] and fo["rg_patterns"]["best_s"]
    rg_one = fo["rg_patterns_j1"] and fo["rg_patterns_j1"]["best_s"]
    folder_rss = fo["faultline"]["max_rss_mib"]
    lines.append(f"| per-rank folder | {files} | {_s(fo['faultline']['best_s'])} | "
                 f"rg -f patterns ({fo['cpu_count']} cores) {_s(rg_all)} | {_x(fo['ratio_vs_rg'])}"
                 f"{_spread(fo.get('round_ratios_vs_rg'))} | "
                 f"<= {FOLDER_TARGET}x | {_verdict(fo['ratio_vs_rg'], FOLDER_TARGET, fo['check']['ok'])} |")
    lines.append(f"| (one core) | {files} | | rg -j1 {_s(rg_one)} | {_x(fo['ratio_vs_rg_j1'])} | - | info |")
    lines.append(f"| per-rank folder RSS | {files} | {folder_rss:.0f} MiB | - | - | <= {MEMORY_TARGET_MIB:.0f} MiB | "
                 f"{'met' if folder_rss <= MEMORY_TARGET_MIB else '**missed**'} |")
    ed = results["editor"]
    ed_ok = ed["check_diagnose_text"]["ok"] and ed["check_cli"]["ok"]
    ed_ok = ed_ok and ed["server_root_line_ok"]
    text = f"{ed['lines']:,} lines ({ed['bytes'] / MIB:.0f} MiB)"
    lines.append(f"| editor: first diagnostics | {text} | server {_s(ed['first_diagnostics_s'])} | "
                 f"CLI {_s(ed['cli']['best_s'])} | {_x(ed['ratio_first_vs_cli'])} | <= {EDITOR_FIRST_TARGET}x | "
                 f"{_verdict(ed['ratio_first_vs_cli'], EDITOR_FIRST_TARGET, ed_ok)} |")
    lines.append(f"| (with the client's JSON of the text) | {text} | encode {_s(ed['client_encode_s'])} + "
                 f"{_s(ed['first_diagnostics_s'])} | CLI {_s(ed['cli']['best_s'])} | "
                 f"{_x(ed['ratio_encode_and_first_vs_cli'])} | - | info |")
    p99_ratio = ed["requests_p99_s"] / EDITOR_REQUEST_P99_S
    lines.append(f"| editor: hover/code action during a diagnosis | {text} | p99 {_s(ed['requests_p99_s'])} | - | - | "
                 f"<= {EDITOR_REQUEST_P99_S * 1000:.0f} ms | {_verdict(p99_ratio, 1.0)} |")
    edit_ratio = ed["edit_after_debounce_s"] / EDITOR_EDIT_S
    lines.append(f"| editor: one-line edit re-published | {text} | {_s(ed['edit_after_debounce_s'])} after the debounce | "
                 f"- | - | <= {EDITOR_EDIT_S * 1000:.0f} ms | {_verdict(edit_ratio, 1.0)} |")
    lines.append(f"| (edit after {ed['idle_before_edit_s']:.0f} s idle) | {text} | {_s(ed['edit_after_idle_s'])} after the "
                 f"debounce | - | - | - | info |")
    lines.append(f"| (in-process) | {text} | diagnose_text {_s(ed['diagnose_text_s'])} | "
                 f"CLI {_s(ed['cli']['best_s'])} | {_x(ed['ratio_text_vs_cli'])} | - | {'info' if ed_ok else '**WRONG**'} |")
    if "dense" in results:
        lines += _dense_rows(results["dense"])
    for row in results["styles"]:
        status = "correct" if row["check"]["ok"] else "**WRONG**: " + "; ".join(row["check"]["problems"])
        lines.append(f"| diagnosis ({row['style']} prefixes) | {row['input']} | {_s(row['wall_s'])} | - | - | "
                     f"rank {results['expected_rank']} + root line | {status} |")
    return "\n".join(lines)


def _dense_rows(dense: dict[str, Any]) -> list[str]:
    """The failure-dense log: time against ripgrep, peak RSS, and what the report lists."""
    size = f"{dense['bytes'] / MIB:.0f} MiB failure-dense"
    fl, rg = dense["faultline"], dense["rg_patterns"]
    ok = dense["check"]["ok"]
    rss = fl["max_rss_mib"]
    return [
        f"| failure-dense throughput | {size} | {_s(fl['best_s'])} ({dense['bytes'] / MIB / fl['best_s']:.0f} MiB/s) | "
        f"rg -f patterns {_s(rg and rg['best_s'])} | {_x(dense['ratio_vs_rg_patterns'])} | <= {DENSE_TARGET}x | "
        f"{_verdict(dense['ratio_vs_rg_patterns'], DENSE_TARGET, ok)} |",
        f"| failure-dense peak RSS | {size} | {rss:.0f} MiB | - | - | <= {MEMORY_TARGET_MIB:.0f} MiB | "
        f"{'**WRONG**' if not ok else 'met' if rss <= MEMORY_TARGET_MIB else '**missed**'} |",
        f"| (the report) | {size} | {dense['events_total']:,} events, {dense['events_listed']:,} listed; "
        f"{dense['report_bytes'] / MIB:.1f} MiB of JSON | - | - | - | info |",
    ]


def _phases_row(phases: dict[str, Any], size: str, rg_s: float | None) -> str:
    """Where the time of the smallest input goes, against what the throughput target allows."""
    if "error" in phases:
        return f"| (where the time goes) | {size} | {phases['error']} | - | - | - | info |"
    spent = ", ".join(f"{label} {_s(phases[name])}" for label, name in (
        ("interpreter", "interpreter_s"), ("imports", "import_s"), ("library", "library_s"),
        ("scan", "scan_s"), ("reasoning", "reasoning_s"), ("JSON", "json_s")))
    if rg_s is None:
        return f"| (where the time goes) | {size} | {spent} | - | - | - | info |"
    budget = THROUGHPUT_TARGET * rg_s
    return (f"| (where the time goes) | {size} | {spent} (medians of 3 fresh runs; {phases['events']:,} events, "
            f"{phases['report_bytes'] / MIB:.1f} MiB of JSON) | {THROUGHPUT_TARGET} x rg = {_s(budget)} | "
            f"all but the scan: {_s(phases['outside_scan_s'])} = {phases['outside_scan_s'] / budget:.2f} of it | - | info |")


def render_profile(profile: dict[str, Any]) -> str:
    phases = profile["phases"]
    if "error" in phases:
        return f"\nScanner floor: {phases['error']}"
    out = [f"\nScanner floor on {Path(phases['file']).name}: read {_s(phases['read_s'])}, "
           f"newline count {_s(phases['count_newlines_s'])}, keyword scan {_s(phases['keyword_scan_s'])} "
           f"({phases['keyword_hits']} keyword hits in {phases['lines']:,} lines)"]
    for name in ("combined", "folder"):
        prof = profile[name]
        if "error" in prof:
            out.append(f"\nProfile ({name}): {prof['error']}")
            continue
        out.append(f"\nProfile ({name}, {prof['profiled_wall_s']:.2f} s under cProfile; {prof['listing']}), "
                   "top self time:")
        for row in prof["top_tottime"][:8]:
            out.append(f"  {row['tottime_s']:7.3f} s self {row['cumtime_s']:7.3f} s cum {row['calls']:>9} calls  "
                       f"{row['function']}")
    return "\n".join(out)


def _progress(message: str) -> None:
    print(f"bench: {message}", file=sys.stderr, flush=True)


def _environment(tools: Tools) -> dict[str, Any]:
    def version(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.splitlines()[0]
        except (OSError, IndexError):
            return "unknown"

    return {"python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "faultline": version([tools.faultline, "--version"]),
            "rg": version([tools.rg, "--version"]) if tools.rg else None,
            "commit": version(["git", "-C", str(BENCH_DIR.parent), "rev-parse", "--short", "HEAD"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10 MiB and 100 MiB, 64 rank files (under a minute)")
    parser.add_argument("--repeats", type=int, default=0, help="timed rounds per measurement (default 3)")
    parser.add_argument("--dense", metavar="SIZE", default=None,
                        help="size of the failure-dense log (e.g. 300M; default: 3G in full runs, none with --quick)")
    parser.add_argument("--profile", action=argparse.BooleanOptionalAction, default=None,
                        help="cProfile the largest inputs (default: on for full runs, off for --quick)")
    args = parser.parse_args(argv)
    plan = _plan(args)
    tools = _tools()
    # An installed package has its bytecode compiled; an editable one where PYTHONDONTWRITEBYTECODE is set
    # (as on some CI machines) would compile every module on every run. Time what users run.
    subprocess.run([tools.python, "-m", "compileall", "-q", str(Path(faultline.__file__).parent)], check=True,
                   stdout=subprocess.DEVNULL)
    started = time.perf_counter()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    load_start = measure.load_average()

    from faultline.engine import Engine

    rg_files = rg_patterns.export(Engine.load(), RESULTS_DIR / "rg", tools.rg or "rg") if tools.rg else \
        rg_patterns.PatternExport(RESULTS_DIR / "rg" / "patterns.txt", RESULTS_DIR / "rg" / "keywords.txt")
    results: dict[str, Any] = {
        "mode": plan.mode, "plan": asdict(plan), "environment": _environment(tools),
        "expected_rank": generate.Scenario().culprit_rank,
        "rg_patterns": {"patterns": rg_files.patterns, "converted": rg_files.converted, "dropped": rg_files.dropped,
                        "keywords": rg_files.keywords, "patterns_file": str(rg_files.patterns_file)},
    }
    results["throughput"] = bench_throughput(tools, plan, rg_files)
    results["styles"] = bench_styles(tools)
    results["startup"] = bench_startup(tools)
    results["folder"] = bench_folder(tools, plan, rg_files)
    results["editor"] = bench_editor(tools, plan)
    if plan.dense_bytes:
        results["dense"] = bench_failure_dense(tools, plan, rg_files)
    if plan.profile:
        results["profile"] = bench_profile(tools, plan, stamp)
    results["elapsed_s"] = time.perf_counter() - started
    results["load_average"] = {"start": load_start, "end": measure.load_average()}

    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out = RESULTS_DIR / f"bench-{plan.mode}-{stamp}.json"
    out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(render_table(results))
    if "profile" in results:
        print(render_profile(results["profile"]))
    busy = max(x for x in results["load_average"].values() if x is not None) if load_start is not None else None
    if busy is not None and busy > 0.75 * (os.cpu_count() or 1):
        print(f"\nnote: load average reached {busy:.1f} on {os.cpu_count()} cores during the run: absolute times are "
              "inflated; the ratios (best of interleaved rounds) less so.")
    dropped = len(rg_files.dropped)
    print(f"\nrg patterns: {rg_files.patterns} library patterns, {rg_files.converted} converted to ripgrep syntax, "
          f"{dropped} left out; {rg_files.keywords} keywords. Results: {out} ({results['elapsed_s']:.0f} s)")
    wrong = [r for r in results["throughput"] + results["styles"] + ([results["dense"]] if "dense" in results else [])
             if not r["check"]["ok"]]
    return 1 if wrong or not results["folder"]["check"]["ok"] or not results["startup"]["check"]["ok"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
