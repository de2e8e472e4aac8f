"""Load, validate and hold the signature library (one TOML file per signature).

Loading never stops at a bad file: each problem is recorded as ``file:line: field: message`` and that file
is skipped. User folders add to the built-ins or override them by id. Signature files are data: nothing
in them is executed or evaluated.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import regex

from .conditions import Condition, parse_condition
from .model import Role
from .pattern_pieces import expand as expand_pieces
from .toml_cache import ParsedTomlCache, toml_module

SCHEMA_VERSION = 1
BUILTIN_DIR = Path(__file__).resolve().parent / "signatures"
MAX_SIGNATURE_FILE_BYTES = 256 * 1024
_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")
_SEVERITIES = ("error", "warning", "info")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# What the cross-rank reasoning reads besides a signature's role and priority (signatures/README.md).
SUMMARY_PARTS = ("header", "field", "first-failure")  # summary: a line of torchrun's ChildFailedError failure summary
STORE_HOST_PARTS = ("frame", "error")  # store_host: a frame only the store host runs, or its rank-less error
RUN_BOUNDARIES = ("start", "restart")  # run_boundary: a launcher's start banner, or a restart of the workers
INFERENCES = ("straggler", "missing-cause")  # inference: the cross-rank inference that reports this derived signature


@dataclass(frozen=True)
class LoadProblem:
    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str
    note: str = ""
    when: Condition | None = None  # offered only when the failure's fields meet it (conditions.py)


@dataclass(frozen=True)
class Fix:
    summary: str
    steps: tuple[str, ...]
    env: tuple[EnvVar, ...] = ()
    step_when: tuple[Condition | None, ...] = ()  # per step (empty: none has a condition)

    def when_of(self, index: int) -> Condition | None:
        return self.step_when[index] if index < len(self.step_when) else None


@dataclass(frozen=True)
class Verification:
    command: str
    expect: str


@dataclass
class Signature:
    id: str
    title: str
    category: str
    severity: str
    role: Role
    priority: int
    keywords: tuple[str, ...]
    pattern_sources: tuple[str, ...]
    exclusion_sources: tuple[str, ...]
    message: str
    explanation: str
    fix: Fix
    verification: Verification
    related: tuple[str, ...]
    references: tuple[str, ...]
    examples_match: tuple[str, ...]
    examples_no_match: tuple[str, ...]
    path: Path
    derived: bool = False
    blames: bool = True  # a ``peer_rank`` it captures names the culprit (False: a victim, e.g. the first to time out)
    summary: str | None = None  # one of SUMMARY_PARTS
    store_host: str | None = None  # one of STORE_HOST_PARTS
    run_boundary: str | None = None  # one of RUN_BOUNDARIES: where a run or an attempt begins
    inference: str | None = None  # one of INFERENCES (derived signatures only)
    failure_evidence: bool = False  # the line proves a call failed, whatever its role or level
    levels: frozenset[str] = frozenset()  # the log levels (I, W, E, F, D) a line may match at; empty: any. A line
    # without a level may match too (a bare pasted message)
    external: bool = False  # the job was stopped from outside (a signal to the launcher): a root when nothing failed first
    introduces_output: bool = False  # heads the named rank's own output (its traceback), pasted below the line
    wraps_next_line: bool = False  # re-raises the exception that the next line states ("backend='inductor' raised:")
    excuses_next_exception: bool = False  # the interpreter ignored the exception printed after it ("Exception ignored in:")
    excuses_previous_failure: bool = False  # the program caught the failure printed just above it ("skipping batch")
    root_when: Condition | None = None  # a collateral signature whose line states the cause when this holds
    builtin: bool = True
    disabled_patterns: set[int] = field(default_factory=set)
    _compiled: tuple[tuple[Any, ...], tuple[Any, ...]] | None = field(default=None, repr=False)

    @property
    def patterns(self) -> tuple[Any, ...]:
        """Compiled `regex` patterns. Built-ins compile on first use: most signatures never see a line."""
        return self._compile()[0]

    @property
    def exclusions(self) -> tuple[Any, ...]:
        return self._compile()[1]

    def _compile(self) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        if self._compiled is None:
            self._compiled = (tuple(_compile_all(self.pattern_sources)), tuple(_compile_all(self.exclusion_sources)))
        return self._compiled

    @property
    def qualified_id(self) -> str:
        """``category/id``, the form fixtures and docs use."""
        return f"{self.category}/{self.id}"

    def line_of(self, key: str) -> int:
        return find_key_line(self.path, key)


def find_key_line(path: Path, key: str) -> int:
    """The 1-based line where ``key = ...`` (or ``[key]``) appears in a TOML file; 1 when unknown."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 1
    return _line_in_text(text, key)


def _line_in_text(text: str, key: str) -> int:
    leaf = key.split(".")[-1]
    section = key.split(".")[0]
    pattern = re.compile(rf"^\s*(?:{re.escape(leaf)}\s*=|\[+\s*{re.escape(section)}\s*\]+)", re.MULTILINE)
    m = pattern.search(text)
    return text.count("\n", 0, m.start()) + 1 if m else 1


class _Validator:
    """Reads one parsed TOML document and records problems with their lines."""

    def __init__(self, path: Path, text: str, data: dict[str, Any]) -> None:
        self.path = path
        self.text = text
        self.data = data
        self.problems: list[LoadProblem] = []

    def problem(self, key: str, message: str) -> None:
        self.problems.append(LoadProblem(str(self.path), _line_in_text(self.text, key), key, message))

    def get(self, key: str, kind: type | tuple[type, ...], required: bool, default: Any = None) -> Any:
        node: Any = self.data
        for part in key.split("."):
            if not isinstance(node, dict) or part not in node:
                if required:
                    self.problem(key, f"missing, expected {_kind_name(kind)}")
                return default
            node = node[part]
        if not isinstance(node, kind) or (kind is int and isinstance(node, bool)):
            self.problem(key, f"is {type(node).__name__}, expected {_kind_name(kind)}")
            return default
        return node

    def strings(self, key: str, required: bool, min_items: int = 0) -> tuple[str, ...]:
        value = self.get(key, list, required, [])
        if not all(isinstance(v, str) for v in value):
            self.problem(key, "expected a list of strings")
            return ()
        if len(value) < min_items:
            self.problem(key, f"has {len(value)} items, expected at least {min_items}")
        return tuple(value)


def _condition(v: _Validator, key: str, text: object) -> Condition | None:
    if text is None:
        return None
    if not isinstance(text, str):
        v.problem(key, "'when' must be a string")
        return None
    try:
        return parse_condition(text)
    except ValueError as exc:
        v.problem(key, str(exc))
        return None


_GROUP_NAME = re.compile(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>")


def _expanded(source: str) -> str:
    """A pattern with its shared pieces expanded (their named groups count as captured); as written when a piece is
    unknown (that problem is reported where the pattern is compiled)."""
    try:
        return expand_pieces(source)
    except ValueError:
        return source


def _check_condition_fields(v: _Validator, key: str, pattern_sources: tuple[str, ...],
                            conditions: tuple[Condition | None, ...]) -> None:
    """A condition reads fields the signature's patterns capture: any other name is a typo that would never hold."""
    captured = {name for source in pattern_sources for name in _GROUP_NAME.findall(_expanded(source))}
    for condition in (c for c in conditions if c is not None):
        for name in (condition.field, condition.other):
            if name is not None and name not in captured:
                v.problem(key, f"condition '{condition.source}' reads '{name}', which no pattern captures "
                                 f"(captured: {', '.join(sorted(captured)) or 'nothing'})")


def _steps(v: _Validator) -> tuple[tuple[str, ...], tuple[Condition | None, ...]]:
    """``fix.steps``: strings, or ``{text = "...", when = "..."}`` tables for a step offered only when it applies."""
    raw = v.get("fix.steps", list, True, [])
    steps: list[str] = []
    conditions: list[Condition | None] = []
    for item in raw:
        if isinstance(item, str):
            steps.append(item)
            conditions.append(None)
        elif isinstance(item, dict) and isinstance(item.get("text"), str) and set(item) <= {"text", "when"}:
            steps.append(item["text"])
            conditions.append(_condition(v, "fix.steps", item.get("when")))
        else:
            v.problem("fix.steps", "expected strings, or tables with a string 'text' and an optional 'when'")
    return tuple(steps), (tuple(conditions) if any(c is not None for c in conditions) else ())


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", list: "a list", dict: "a table", bool: "true or false"}
    if isinstance(kind, tuple):
        return " or ".join(names.get(k, k.__name__) for k in kind)
    return names.get(kind, kind.__name__)


LOG_LEVELS = frozenset({"D", "I", "W", "E", "F"})  # as lines/prefixes.py reads a line's level
_KNOWN_KEYS = {
    "schema_version", "id", "title", "category", "severity", "role", "priority", "keywords", "patterns",
    "exclusions", "message", "explanation", "fix", "verification", "related", "references", "examples",
    "derived", "blames", "summary", "store_host", "inference", "failure_evidence", "external", "run_boundary",
    "introduces_output", "wraps_next_line", "excuses_next_exception", "excuses_previous_failure", "root_when",
    "levels",
}

_KNOWN_SUBKEYS = {
    "fix": {"summary", "steps", "env"},
    "verification": {"command", "expect"},
    "examples": {"match", "no_match"},
}


_COUNTED = re.compile(r"\{(\d+)(?:,(\d*))?\}")
MAX_REPEAT_PRODUCT = 100_000


def _repeat_product(source: str) -> int:
    """An upper bound of how far nested counted repeats (``(?:x{1000}){1000}``) multiply a pattern."""
    depth_factors: list[int] = [1]
    product = 1
    i = 0
    while i < len(source):
        ch = source[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth_factors.append(1)
        elif ch == ")" and len(depth_factors) > 1:
            inner = depth_factors.pop()
            m = _COUNTED.match(source, i + 1)
            count = int(m[2] or m[1]) if m and (m[2] or m[1]) else 1
            depth_factors[-1] = max(depth_factors[-1], inner * count)
        elif ch == "{":
            m = _COUNTED.match(source, i)
            if m:
                depth_factors[-1] = max(depth_factors[-1], int(m[2] or m[1]) if (m[2] or m[1]) else 1)
        product = max(product, *depth_factors)
        i += 1
    return max(product, *depth_factors)


def compile_pattern(source: str) -> Any:
    """A signature pattern compiled, with its shared pieces (``{{cuda_error}}``, pattern_pieces.py) expanded."""
    source = expand_pieces(source)
    if _repeat_product(source) > MAX_REPEAT_PRODUCT:
        raise ValueError(f"nested counted repeats expand past {MAX_REPEAT_PRODUCT:,} items; use + or * instead")
    return regex.compile(source, regex.VERSION0)


def _compile_all(sources: Sequence[str]) -> list[Any]:
    compiled = []
    for source in sources:
        try:
            compiled.append(compile_pattern(source))
        except (regex.error, OverflowError, RecursionError, ValueError):  # validated at load
            continue
    return compiled


def parse_signature(path: Path, builtin: bool = True, compile_now: bool = True,
                    parsed: ParsedTomlCache | None = None) -> tuple[Signature | None, list[LoadProblem]]:
    """Validate one signature file. Returns the signature (or None) and the problems found.

    ``parsed``: a cache of earlier TOML parses (by the file's bytes) to take the parse from.
    """
    try:
        size = path.stat().st_size
        if size > MAX_SIGNATURE_FILE_BYTES:
            return None, [LoadProblem(str(path), 1, "file", f"is {size} bytes, expected at most "
                                      f"{MAX_SIGNATURE_FILE_BYTES}")]
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, [LoadProblem(str(path), 1, "file", f"is not UTF-8 ({exc.reason})")]
    except OSError as exc:
        return None, [LoadProblem(str(path), 1, "file", f"cannot be read ({exc.strerror})")]
    try:
        data = parsed.loads(raw, text) if parsed is not None else toml_module().loads(text)
    except toml_module().TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        return None, [LoadProblem(str(path), int(m[1]) if m else 1, "toml", f"invalid TOML: {exc}")]
    except RecursionError:
        return None, [LoadProblem(str(path), 1, "toml", "nested too deeply")]
    v = _Validator(path, text, data)
    for key in data:
        if key not in _KNOWN_KEYS:
            v.problem(key, f"unknown field, expected one of: {', '.join(sorted(_KNOWN_KEYS))}")
    for table, allowed in _KNOWN_SUBKEYS.items():
        node = data.get(table)
        if isinstance(node, dict):
            for key in node:
                if key not in allowed:
                    v.problem(f"{table}.{key}", f"unknown field, expected one of: {', '.join(sorted(allowed))}")
    version = v.get("schema_version", int, True)
    if version is not None and version != SCHEMA_VERSION:
        v.problem("schema_version", f"is {version}, expected {SCHEMA_VERSION}")
    sig_id = v.get("id", str, True, "")
    if sig_id and not _ID.fullmatch(sig_id):
        v.problem("id", f"'{sig_id}' is not of the form [a-z0-9][a-z0-9-]*")
    if sig_id and sig_id != path.stem:
        v.problem("id", f"'{sig_id}' differs from the file name, expected '{path.stem}'")
    title = v.get("title", str, True, "")
    category = v.get("category", str, True, "")
    if category and builtin and category != path.parent.name:
        v.problem("category", f"'{category}' differs from the folder, expected '{path.parent.name}'")
    severity = v.get("severity", str, True, "error")
    if severity not in _SEVERITIES:
        v.problem("severity", f"'{severity}', expected one of {', '.join(_SEVERITIES)}")
    role_text = v.get("role", str, True, "context")
    try:
        role = Role(role_text)
    except ValueError:
        v.problem("role", f"'{role_text}', expected root_cause, collateral or context")
        role = Role.CONTEXT
    priority = v.get("priority", int, False, 50)
    if not 0 <= priority <= 100:
        v.problem("priority", f"is {priority}, expected 0 to 100")
    derived = v.get("derived", bool, False, False)
    blames = v.get("blames", bool, False, True)
    failure_evidence = v.get("failure_evidence", bool, False, False)
    external = v.get("external", bool, False, False)
    introduces_output = v.get("introduces_output", bool, False, False)
    wraps_next_line = v.get("wraps_next_line", bool, False, False)
    excuses_next_exception = v.get("excuses_next_exception", bool, False, False)
    excuses_previous_failure = v.get("excuses_previous_failure", bool, False, False)
    root_when = _condition(v, "root_when", v.get("root_when", str, False, None))
    levels = frozenset(v.strings("levels", False, 0))
    if not levels <= LOG_LEVELS:
        v.problem("levels", f"{sorted(levels - LOG_LEVELS)}: expected log levels among {', '.join(sorted(LOG_LEVELS))}")
    summary = _one_of(v, "summary", SUMMARY_PARTS)
    store_host = _one_of(v, "store_host", STORE_HOST_PARTS)
    run_boundary = _one_of(v, "run_boundary", RUN_BOUNDARIES)
    inference = _one_of(v, "inference", INFERENCES)
    if inference is not None and not derived:
        v.problem("inference", "only a derived signature (derived = true) is reported by an inference")
    keywords = v.strings("keywords", not derived, 0 if derived else 1)
    for kw in keywords:
        if len(kw.strip()) < 3:
            v.problem("keywords", f"'{kw}' is too short to prefilter, expected at least 3 characters")
    pattern_sources = v.strings("patterns", not derived, 0 if derived else 1)
    exclusion_sources = v.strings("exclusions", False)
    compiled: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None
    if compile_now:
        patterns: list[Any] = []
        exclusions: list[Any] = []
        for key, sources, out in (("patterns", pattern_sources, patterns),
                                  ("exclusions", exclusion_sources, exclusions)):
            for source in sources:
                try:
                    out.append(compile_pattern(source))
                except (regex.error, OverflowError, RecursionError, ValueError) as exc:
                    v.problem(key, f"'{source[:80]}' does not compile: {exc}")
        compiled = (tuple(patterns), tuple(exclusions))
    message = v.get("message", str, True, "")
    explanation = v.get("explanation", str, True, "")
    fix_summary = v.get("fix.summary", str, True, "")
    fix_steps, step_when = _steps(v)
    env_vars = []
    for item in v.get("fix.env", list, False, []):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            v.problem("fix.env", "expected tables with a string 'name', 'value' and optional 'note' and 'when'")
            continue
        if not _ENV_NAME.fullmatch(item["name"]):
            v.problem("fix.env", f"name '{item['name'][:60]}' is not an environment variable name, "
                                 "expected [A-Za-z_][A-Za-z0-9_]*")
            continue
        env_vars.append(EnvVar(item["name"], str(item.get("value", "")), str(item.get("note", "")),
                               _condition(v, "fix.env", item.get("when"))))
    _check_condition_fields(v, "fix.steps", pattern_sources, step_when)
    _check_condition_fields(v, "fix.env", pattern_sources, tuple(e.when for e in env_vars))
    _check_condition_fields(v, "root_when", pattern_sources, (root_when,))
    command = v.get("verification.command", str, True, "")
    expect = v.get("verification.expect", str, True, "")
    related = v.strings("related", False)
    references = v.strings("references", False)
    examples_match = v.strings("examples.match", not derived, 0 if derived else 1)
    examples_no_match = v.strings("examples.no_match", not derived, 0 if derived else 1)
    if v.problems:
        return None, v.problems
    signature = Signature(
        id=sig_id, title=title, category=category, severity=severity, role=role, priority=priority,
        keywords=keywords, pattern_sources=pattern_sources, exclusion_sources=exclusion_sources,
        _compiled=compiled, message=message, explanation=explanation.strip(),
        fix=Fix(fix_summary, fix_steps, tuple(env_vars), step_when), verification=Verification(command, expect),
        related=related, references=references, examples_match=examples_match,
        examples_no_match=examples_no_match, path=path, derived=derived, blames=blames, summary=summary,
        store_host=store_host, run_boundary=run_boundary, inference=inference, failure_evidence=failure_evidence,
        external=external, introduces_output=introduces_output, wraps_next_line=wraps_next_line,
        excuses_next_exception=excuses_next_exception, excuses_previous_failure=excuses_previous_failure,
        root_when=root_when, builtin=builtin, levels=levels,
    )
    return signature, []


def _one_of(v: _Validator, key: str, allowed: tuple[str, ...]) -> str | None:
    value: str | None = v.get(key, str, False, None)
    if value is not None and value not in allowed:
        v.problem(key, f"'{value[:60]}', expected one of {', '.join(allowed)}")
        return None
    return value


def signature_files(folder: Path) -> list[Path]:
    """Every ``*.toml`` below a folder, in a stable order."""
    if folder.is_file():
        return [folder]
    return sorted(p for p in folder.rglob("*.toml") if p.is_file())


class SignatureLibrary:
    """The loaded signatures, by id, with the problems met while loading."""

    def __init__(self, signatures: Iterable[Signature], problems: Sequence[LoadProblem] = ()) -> None:
        self._by_id: dict[str, Signature] = {}
        for sig in signatures:
            self._by_id[sig.id] = sig
        self.problems: list[LoadProblem] = list(problems)
        self.generation = 0  # counts changes after loading (patterns switched off), for caches of results
        self._where: dict[tuple[tuple[str, object], ...], frozenset[str]] = {}  # ids_where's answers

    @classmethod
    def load(cls, extra_folders: Sequence[str | Path] = (), include_builtin: bool = True,
             compile_builtin: bool = False) -> SignatureLibrary:
        """Built-ins (checked by the test suite) compile lazily; user folders are compiled and checked now."""
        signatures: dict[str, Signature] = {}
        problems: list[LoadProblem] = []
        folders: list[tuple[Path, bool]] = [(BUILTIN_DIR, True)] if include_builtin else []
        folders += [(Path(f), False) for f in extra_folders]
        parsed = ParsedTomlCache.default()
        for folder, builtin in folders:
            if not folder.exists():
                problems.append(LoadProblem(str(folder), 1, "folder", "does not exist"))
                continue
            for path in signature_files(folder):
                sig, found = parse_signature(path, builtin=builtin, compile_now=compile_builtin or not builtin,
                                             parsed=parsed)
                problems.extend(found)
                if sig is not None:
                    signatures[sig.id] = sig
        parsed.save()
        return cls(signatures.values(), problems)

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(sorted(self._by_id.values(), key=lambda s: (s.category, s.id)))

    def get(self, signature_id: str) -> Signature | None:
        """By ``id`` or ``category/id``."""
        return self._by_id.get(signature_id.rsplit("/", 1)[-1])

    def matchable(self) -> list[Signature]:
        return [s for s in self if not s.derived and s.pattern_sources]

    def ids_where(self, **fields: object) -> frozenset[str]:
        """The ids of the signatures whose fields have these values, e.g. ``ids_where(summary="header")``.
        Remembered: a signature's fields do not change once loaded, and every scan asks (a folder of a thousand
        files read apart asks some 15,000 times)."""
        key = tuple(sorted(fields.items()))
        found = self._where.get(key)
        if found is None:
            found = self._where[key] = frozenset(
                s.id for s in self._by_id.values() if all(getattr(s, name) == value for name, value in fields.items()))
        return found

    def ids_having(self, name: str) -> frozenset[str]:
        """The ids of the signatures that set the field ``name`` at all (``root_when``), remembered as above."""
        key = (("", name),)
        found = self._where.get(key)
        if found is None:
            found = self._where[key] = frozenset(s.id for s in self._by_id.values() if getattr(s, name) is not None)
        return found

    def disable_pattern(self, signature: Signature, index: int, reason: str) -> None:
        """Switch off a pattern that ran past its time limit, and record why."""
        if index in signature.disabled_patterns:
            return
        signature.disabled_patterns.add(index)
        self.generation += 1
        self.problems.append(LoadProblem(str(signature.path), signature.line_of("patterns"), "patterns",
                                         f"'{signature.pattern_sources[index][:80]}' {reason}; disabled"))
