"""The ``faultline`` command line: ``diagnose``, ``signatures list|show|check`` and ``serve``.

Exit codes: 0 no failure found, 1 a failure was diagnosed (including ``unknown``; for ``signatures check``:
problems found), 2 usage or input errors (one line on stderr, never a traceback), 130 interrupted. ``--help``
lists them (``EXIT_CODES``); the README's command-line section says the same.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from . import __version__
from .render import FORMATS

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
WORKSPACE_SIGNATURES = Path(".faultline") / "signatures"


EXIT_CODES = (
    (EXIT_OK, "no failure found"),
    (EXIT_FAILURE, "a failure was diagnosed (also when its cause is unknown); signatures check: problems found"),
    (EXIT_USAGE, "usage or input error, one line on stderr (a missing file, an empty log, an unsafe --output)"),
    (130, "interrupted (Ctrl-C); an --output file is left as it was"),
)

DESCRIPTION = """\
Diagnose failed (distributed) ML training runs, locally: which rank failed first, the root-cause line
with its file and line number, the ranks that failed as a consequence, the fix and a command that
verifies it. Reads log files, folders of per-rank logs and stdin; nothing leaves the machine, and secrets
in the logs are masked in every output."""

DIAGNOSE_DESCRIPTION = """\
Diagnose log files, folders of per-rank logs (walked recursively; hidden and binary files are skipped with
a note) or stdin (-), and print the report: the verdict, the initiating rank, the root-cause line, the
collateral by rank, the fix and how to verify it."""

OUTPUT_HELP = ("write the report to FILE instead of stdout (- for stdout); FILE is replaced atomically and "
               "must not be an input or lie inside an input folder")


def _exit_codes() -> str:
    return "exit codes:\n" + "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES)


def _formats() -> str:
    return "formats (--format):\n" + "\n".join(f"  {name:<9} {fmt.description}" for name, fmt in FORMATS.items())


MAIN_EXAMPLES = """\
examples:
  faultline diagnose train.log                   one log
  faultline diagnose logs/                       a folder of per-rank logs (torchrun --log-dir, Slurm, ...)
  kubectl logs job/train | faultline diagnose -  stdin
  faultline diagnose logs/ --format html -o report.html
  faultline signatures check .faultline/signatures
  faultline serve                                the language server on stdio (editors)"""

DIAGNOSE_EXAMPLES = """\
examples:
  faultline diagnose train.log
  faultline diagnose logs/ --format json -o diagnosis.json
  faultline diagnose rank0.log rank1.log --signatures my-signatures/
  srun ... 2>&1 | faultline diagnose - --format markdown"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"faultline: error: {message} (see 'faultline --help')\n")


def _build_parser() -> argparse.ArgumentParser:
    raw = argparse.RawDescriptionHelpFormatter
    parser = _Parser(prog="faultline", description=DESCRIPTION, formatter_class=raw,
                     epilog=f"{MAIN_EXAMPLES}\n\n{_formats()}\n\n{_exit_codes()}\n\n"
                            "'faultline COMMAND --help' describes each command.")
    parser.add_argument("-V", "--version", action="version", version=f"faultline {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND")

    diagnose = sub.add_parser("diagnose", help="diagnose log files, folders of per-rank logs, or stdin (-)",
                              description=DIAGNOSE_DESCRIPTION, formatter_class=raw,
                              epilog=f"{DIAGNOSE_EXAMPLES}\n\n{_formats()}\n\n{_exit_codes()}")
    diagnose.add_argument("paths", nargs="+", metavar="PATH", help="log file, folder, or - for stdin")
    diagnose.add_argument("--format", choices=tuple(FORMATS), default="text",
                          help="report format (default: text; see formats below)")
    diagnose.add_argument("--signatures", action="append", default=[], metavar="DIR",
                          help="extra signature folder (adds to or overrides built-ins by id); repeatable")
    diagnose.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                          help="colour the text report (default: auto, on a terminal unless NO_COLOR is set)")
    diagnose.add_argument("--output", "-o", metavar="FILE", help=OUTPUT_HELP)
    diagnose.add_argument("--max-line-bytes", type=int, default=1024 * 1024, metavar="N",
                          help="match at most the first N bytes of a line (default 1 MiB)")
    diagnose.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    diagnose.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                          help="worker processes for large inputs (default: the available cores, at most 4)")
    diagnose.add_argument("--no-workspace-signatures", action="store_true",
                          help=f"do not load {WORKSPACE_SIGNATURES}/ from the current folder")
    diagnose.add_argument("--all-events", action="store_true",
                          help="json: list every kept event and collateral line (default: the first 1,000 of each)")

    signatures = sub.add_parser("signatures", help="list, show or check failure signatures",
                                description="List, show or check failure signatures (TOML files: built-in, "
                                            "--signatures folders, .faultline/signatures/).",
                                epilog=_exit_codes(), formatter_class=raw)
    sig_sub = signatures.add_subparsers(dest="action", required=True, parser_class=_Parser)
    listing = sig_sub.add_parser("list", help="list the loaded signatures")
    listing.add_argument("--signatures", action="append", default=[], metavar="DIR")
    show = sig_sub.add_parser("show", help="show one signature")
    show.add_argument("id")
    show.add_argument("--signatures", action="append", default=[], metavar="DIR")
    check = sig_sub.add_parser("check", help="validate signature files and run their examples")
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the built-ins)")

    sub.add_parser("serve", help="run the language server on stdio",
                   description="Run the language server on stdio (what editors start; also python -m faultline).")
    return parser


def run() -> NoReturn:
    """The ``faultline`` command: :func:`main`, then exit without tearing the interpreter down.

    A diagnosis of a big failure holds ~10^5 objects; freeing them one by one at exit costs 30-40 ms of a
    terminal diagnosis for nothing. Every output is written, flushed and closed before this exits.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # an ASCII or cp1252 terminal gets '?' rather than a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "diagnose":
            return _diagnose(args)
        if args.command == "signatures":
            return _signatures(args)
        if args.command == "serve":
            from .lsp.server import serve

            serve()
            return EXIT_OK
    except KeyboardInterrupt:
        print("faultline: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return EXIT_USAGE


def _diagnose(args: argparse.Namespace) -> int:
    from .collector import cycle_collection_paused

    with cycle_collection_paused():  # the engine pauses it too; here, the imports and the report as well
        return _run_diagnosis(args)


def _run_diagnosis(args: argparse.Namespace) -> int:
    from .engine import Engine, InputError
    from .scan.parallel import default_jobs

    for folder in args.signatures:
        if not Path(folder).is_dir():
            print(f"faultline: error: --signatures {folder}: not a folder", file=sys.stderr)
            return EXIT_USAGE
    if args.max_line_bytes < 1024:
        print("faultline: error: --max-line-bytes must be at least 1024", file=sys.stderr)
        return EXIT_USAGE
    folders = list(args.signatures)
    if not args.no_workspace_signatures and WORKSPACE_SIGNATURES.is_dir():
        folders.insert(0, str(WORKSPACE_SIGNATURES))
    output = None if args.output in (None, "-") else args.output
    if output is not None:  # before any work: an output that would overwrite what is read is refused
        from .output_file import OutputError, check_output

        try:
            check_output(output, [*args.paths, *folders])
        except OutputError as exc:
            print(f"faultline: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    engine = Engine.load(folders, max_line_bytes=args.max_line_bytes, jobs=args.jobs or default_jobs())
    for problem in engine.library.problems:
        print(f"faultline: warning: {problem}", file=sys.stderr)
    from .terminal_progress import TerminalProgress

    progress = TerminalProgress(sys.stderr) if not args.quiet and sys.stderr.isatty() else None
    known_problems = len(engine.library.problems)
    try:
        diagnosis = engine.diagnose_paths(args.paths, progress=progress.report if progress else None)
    except InputError as exc:
        print(f"faultline: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        if progress is not None:
            progress.finish()  # the line is erased before anything else is written
    for problem in engine.library.problems[known_problems:]:  # patterns disabled during the run
        print(f"faultline: warning: {problem}", file=sys.stderr)
    from .render import RenderOptions, render

    to_terminal = output is None and sys.stdout.isatty()
    # Indented JSON for a person at a terminal; compact (C-accelerated, ~10x faster) for scripts and pipes.
    options = RenderOptions(color=args.color == "always" or (args.color == "auto" and to_terminal
                                                             and "NO_COLOR" not in os.environ),
                            pretty=to_terminal, all_events=args.all_events)
    report = render(args.format, diagnosis, options)
    if output is not None:
        from .output_file import write_report

        try:
            write_report(output, report)
        except OSError as exc:
            print(f"faultline: error: cannot write {output}: {exc.strerror or exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.write(report)
        sys.stdout.flush()
    return EXIT_OK if diagnosis.verdict.value == "no_failure" else EXIT_FAILURE


def _signatures(args: argparse.Namespace) -> int:
    from .library import SignatureLibrary
    from .signature_check import check_paths

    if args.action == "check":
        from .library import BUILTIN_DIR

        paths = [Path(p) for p in args.paths] or [BUILTIN_DIR]
        count, problems = check_paths(paths, builtin=not args.paths)
        for problem in problems:
            print(problem)
        print(f"{count} signature file(s) checked, {len(problems)} problem(s)")
        return EXIT_FAILURE if problems else EXIT_OK
    library = SignatureLibrary.load(args.signatures)
    for problem in library.problems:
        print(f"faultline: warning: {problem}", file=sys.stderr)
    if args.action == "list":
        for sig in library:
            print(f"{sig.category + '/' + sig.id:<48} {sig.role.value:<11} {sig.severity:<8} {sig.title}")
        print(f"{len(library)} signatures")
        return EXIT_OK
    sig = library.get(args.id)
    if sig is None:
        print(f"faultline: error: no signature '{args.id}' (see 'faultline signatures list')", file=sys.stderr)
        return EXIT_USAGE
    print(f"{sig.category}/{sig.id}: {sig.title}")
    print(f"role: {sig.role.value}  severity: {sig.severity}  priority: {sig.priority}  file: {sig.path}")
    print(f"\n{sig.explanation}\n\nFix: {sig.fix.summary}")
    for n, step in enumerate(sig.fix.steps, 1):
        print(f"  {n}. {step}")
    for env in sig.fix.env:
        print(f"  export {env.name}={env.value}" + (f"   # {env.note}" if env.note else ""))
    print(f"\nVerify: {sig.verification.command}\n  expect: {sig.verification.expect}")
    if sig.keywords:
        print("\nKeywords: " + ", ".join(sig.keywords))
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
