"""Extract gitleaks's own rule test cases into ``gitleaks_cases.json`` (an independent secret corpus).

gitleaks (https://github.com/gitleaks/gitleaks, MIT licence: ``LICENSE.gitleaks``) keeps, for each of its
rules, true positives (strings the rule must flag) and false positives (strings it must not) in the Go
source of the rule, ``cmd/generate/config/rules/*.go``; ``config/gitleaks.toml`` holds the regexes that
source generates. This script reads both from a gitleaks checkout and writes, per rule id:

- ``tps``: the secrets themselves, cut out of each true-positive string with the rule's own regex (its
  ``secretGroup``, else its first non-empty group, else the whole match, as gitleaks does) and kept only
  when their Shannon entropy reaches the rule's ``entropy`` (gitleaks's own threshold);
- ``fps``: the false-positive strings, verbatim;
- ``public_prefix``: the literal start of the rule's secret (``glpat-``, ``sntrys_eyJpYXQiO``): a vendor
  marker, not secret, so a test may let it stay readable;
- ``unique``: whether the rule finds its secret by shape alone (a vendor prefix) rather than by a nearby
  identifier (``sentry ... = <64 hex>``).

The Go test cases are evaluated by a small interpreter of the subset of Go they use (string literals,
``+``, ``[]string{...}``, ``append``, ``fmt.Sprintf``, base64, local variables). Where a case is built
from a regex at run time (``secrets.NewSecret(regex)``, ``utils.GenerateSampleSecret(s)``), a sample that
matches the regex is generated here from a seeded RNG (rule id and call number), so every run writes the
same file. Cases this interpreter cannot evaluate (loops, unknown helpers) are counted in ``skipped``.

Usage (the path may be a work tree or a bare clone)::

    git clone https://github.com/gitleaks/gitleaks /tmp/gitleaks
    python tests/secrets/extract_gitleaks.py /tmp/gitleaks

The committed ``gitleaks_cases.json`` was written from gitleaks ``v8.30.0-27-gb58d3f10`` (commit
``b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b``, 2026-07-22); the JSON names the version it was made from.
Only the standard library is needed.
"""

from __future__ import annotations

import argparse
import base64
import json
import math
import random
import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # Python 3.11+
    import re._constants as sre_constants  # type: ignore[import-not-found]
    import re._parser as sre_parse  # type: ignore[import-not-found]

    import tomllib
except ImportError:  # Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

    import tomli as tomllib  # type: ignore[no-redef]

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "gitleaks_cases.json"
RULES_DIR = "cmd/generate/config/rules"
CONFIG = "config/gitleaks.toml"


# --------------------------------------------------------------------------------------------------------
# Reading the checkout (a work tree or a bare repository)


class Checkout:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.bare = not (path / RULES_DIR).is_dir()

    def _git(self, *args: str) -> str:
        flag = ["--git-dir", str(self.path)] if self.bare else ["-C", str(self.path)]
        return subprocess.run(["git", *flag, *args], check=True, capture_output=True, text=True).stdout

    def read(self, name: str) -> str:
        if not self.bare:
            return (self.path / name).read_text(encoding="utf-8")
        return self._git("show", f"HEAD:{name}")

    def rule_files(self) -> list[str]:
        if not self.bare:
            return sorted(str(p.relative_to(self.path)) for p in (self.path / RULES_DIR).glob("*.go"))
        names = self._git("ls-tree", "--name-only", "HEAD", RULES_DIR + "/").split()
        return sorted(n for n in names if n.endswith(".go"))

    def version(self) -> dict[str, str]:
        try:
            return {"commit": self._git("rev-parse", "HEAD").strip(),
                    "describe": self._git("describe", "--tags", "--long").strip(),
                    "date": self._git("log", "-1", "--format=%cI").strip()}
        except (subprocess.CalledProcessError, FileNotFoundError):
            return {"commit": "unknown", "describe": "unknown", "date": "unknown"}


# --------------------------------------------------------------------------------------------------------
# Go regexes in Python


_POSIX_CLASSES = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "digit": "0-9", "lower": "a-z", "upper": "A-Z",
                  "xdigit": "0-9a-fA-F", "word": "\\w", "space": "\\s"}


def go_regex_to_python(pattern: str) -> str:
    """Go (RE2) syntax to Python's: ``\\z`` is ``\\Z``; a flag group ``(?i)`` after the start applies, as in
    Go, from there to the end of its enclosing group (Python only allows global flags at the very start)."""
    pattern = pattern.replace(r"\z", r"\Z")
    for name, chars in _POSIX_CLASSES.items():
        pattern = pattern.replace(f"[:{name}:]", chars)
    out: list[str] = []
    closers: list[int] = [0]  # per open group: how many ')' to add when it closes
    i, in_class = 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            in_class = True
            out.append(c)
            i += 1
            if i < len(pattern) and pattern[i] == "^":
                out.append("^")
                i += 1
            if i < len(pattern) and pattern[i] == "]":
                out.append("]")
                i += 1
            continue
        flag = re.match(r"\(\?([a-zA-Z-]+)\)", pattern[i:])
        if flag and (i > 0 or len(closers) > 1):
            out.append(f"(?{flag.group(1)}:")
            closers[-1] += 1
            i += flag.end()
            continue
        if c == "(":
            closers.append(0)
        elif c == ")":
            out.append(")" * closers.pop())
        out.append(c)
        i += 1
    out.append(")" * closers.pop())
    return "".join(out)


class Sampler:
    """A string that matches a regex, drawn from a seeded RNG (the exrex idea): walks Python's parse tree."""

    UNBOUNDED_EXTRA = 12  # ``x+``/``x{17,}``: the minimum plus up to this many more

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sample(self, pattern: str) -> str:
        tree = sre_parse.parse(go_regex_to_python(pattern))
        return self._seq(tree, tree.state.flags & re.IGNORECASE != 0)

    def _chars_of_in(self, items: list[tuple[Any, Any]]) -> list[str]:
        chars: set[str] = set()
        negate = False
        universe = [chr(c) for c in range(32, 127)]
        for op, arg in items:
            if op is sre_constants.NEGATE:
                negate = True
            elif op is sre_constants.LITERAL:
                chars.add(chr(arg))
            elif op is sre_constants.RANGE:
                chars.update(chr(c) for c in range(arg[0], arg[1] + 1))
            elif op is sre_constants.CATEGORY:
                chars.update(self._category(arg))
        if negate:
            return [c for c in universe if c not in chars and c not in "\n\r"]
        return sorted(chars)

    @staticmethod
    def _category(cat: Any) -> list[str]:
        name = str(cat)
        if "NOT" in name:
            return list("!#%&*,;<>?@^|~ ")  # (\D, \W, \S: punctuation matches each of them)
        if "DIGIT" in name:
            return list("0123456789")
        if "WORD" in name:
            return list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        if "SPACE" in name:
            return [" "]
        return ["x"]

    def _seq(self, items: Any, icase: bool) -> str:
        return "".join(self._one(op, arg, icase) for op, arg in items)

    def _one(self, op: Any, arg: Any, icase: bool) -> str:
        rng = self.rng
        if op is sre_constants.LITERAL:
            return chr(arg)
        if op is sre_constants.NOT_LITERAL:
            return rng.choice([c for c in "abcdefghijklmnopqrstuvwxyz0123456789" if c != chr(arg)])
        if op is sre_constants.ANY:
            return rng.choice("abcdefghijklmnopqrstuvwxyz0123456789")
        if op is sre_constants.IN:
            return rng.choice(self._chars_of_in(arg))
        if op is sre_constants.CATEGORY:
            return rng.choice(self._category(arg))
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None)):
            low, high, sub = arg
            if high is sre_constants.MAXREPEAT:
                high = low + self.UNBOUNDED_EXTRA
            return "".join(self._seq(sub, icase) for _ in range(rng.randint(low, high)))
        if op is sre_constants.SUBPATTERN:
            _group, add_flags, del_flags, sub = arg
            sub_icase = (icase or bool(add_flags & re.IGNORECASE)) and not del_flags & re.IGNORECASE
            return self._seq(sub, sub_icase)
        if op is sre_constants.BRANCH:
            return self._seq(rng.choice(arg[1]), icase)
        if op in (sre_constants.AT, sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            return ""
        if op is sre_constants.GROUPREF:
            return ""
        raise ValueError(f"cannot sample regex construct {op}")


def shannon_entropy(text: str) -> float:
    if not text:
        return 0.0
    counts = {c: text.count(c) for c in set(text)}
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def literal_prefix(pattern: str, group: int) -> str:
    """The literal characters the rule's secret (its ``group``; 0: the whole match) starts with."""
    try:
        tree = sre_parse.parse(go_regex_to_python(pattern))
    except re.error:
        return ""

    def find(items: Any) -> Any:
        for op, arg in items:
            if op is sre_constants.SUBPATTERN:
                if arg[0] == group:
                    return arg[3]
                found = find(arg[3])
                if found is not None:
                    return found
            elif op is sre_constants.BRANCH:
                for alt in arg[1]:
                    found = find(alt)
                    if found is not None:
                        return found
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
                found = find(arg[2])
                if found is not None:
                    return found
        return None

    items = tree if group == 0 else find(tree)
    if items is None:
        return ""
    prefix = []
    for op, arg in items:
        if op is sre_constants.AT:
            continue
        if op is sre_constants.LITERAL:
            prefix.append(chr(arg))
            continue
        if op is sre_constants.SUBPATTERN and all(o is sre_constants.LITERAL for o, _ in arg[3]):
            prefix.extend(chr(a) for _, a in arg[3])
            continue
        break
    return "".join(prefix)


# --------------------------------------------------------------------------------------------------------
# A tiny Go interpreter for the test-case expressions


@dataclass
class Tok:
    kind: str  # ident, string, number, op, semi
    text: str
    value: Any = None


_GO_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
               "'": "'", '"': '"'}


def _go_unquote(body: str) -> str:
    out, i = [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1]
        if nxt in _GO_ESCAPES:
            out.append(_GO_ESCAPES[nxt])
            i += 2
        elif nxt == "x":
            out.append(chr(int(body[i + 2:i + 4], 16)))
            i += 4
        elif nxt == "u":
            out.append(chr(int(body[i + 2:i + 6], 16)))
            i += 6
        elif nxt == "U":
            out.append(chr(int(body[i + 2:i + 10], 16)))
            i += 10
        elif nxt in "01234567":
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(nxt)
            i += 2
    return "".join(out)


_TOKEN = re.compile(r"""
    (?P<ws>[ \t\r]+) | (?P<nl>\n) | (?P<lc>//[^\n]*) | (?P<bc>/\*.*?\*/)
  | (?P<raw>`[^`]*`) | (?P<str>"(?:[^"\\\n]|\\.)*") | (?P<rune>'(?:[^'\\\n]|\\.)+')
  | (?P<num>\d[\w.]*) | (?P<ident>[A-Za-z_]\w*)
  | (?P<op>\.\.\.|:=|\+=|==|!=|<=|>=|&&|\|\||[-+*/%&|^<>=!:;,.(){}\[\]])
""", re.X | re.S)


def tokenize(source: str) -> list[Tok]:
    """Go tokens with automatic semicolons (after a line's last identifier, literal, ``)``, ``]``, ``}``)."""
    toks: list[Tok] = []

    def semi() -> None:
        last = toks[-1] if toks else None
        if last and (last.kind in ("ident", "string", "number") or last.text in (")", "]", "}")):
            toks.append(Tok("semi", ";"))

    pos = 0
    while pos < len(source):
        m = _TOKEN.match(source, pos)
        if not m:
            raise SyntaxError(f"cannot tokenize at {source[pos:pos + 30]!r}")
        pos = m.end()
        kind = m.lastgroup
        text = m.group()
        if kind in ("ws", "lc"):
            continue
        if kind == "nl" or (kind == "bc" and "\n" in text):
            semi()
            continue
        if kind == "bc":
            continue
        if kind == "raw":
            toks.append(Tok("string", text, text[1:-1].replace("\r", "")))
        elif kind == "str":
            toks.append(Tok("string", text, _go_unquote(text[1:-1])))
        elif kind == "rune":
            toks.append(Tok("number", text, ord(_go_unquote(text[1:-1]))))
        elif kind == "num":
            toks.append(Tok("number", text, int(text) if text.isdigit() else text))
        elif kind == "ident":
            toks.append(Tok("ident", text))
        else:
            toks.append(Tok("op", text) if text != ";" else Tok("semi", ";"))
    semi()
    return toks


class Unknown:
    """A value the interpreter cannot compute (a loop's result, an unknown helper)."""

    def __init__(self, why: str) -> None:
        self.why = why

    def __repr__(self) -> str:
        return f"Unknown({self.why})"


@dataclass
class Spread:
    value: Any


@dataclass
class Node:
    kind: str
    args: list[Any] = field(default_factory=list)


class Parser:
    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.i = 0

    def peek(self, offset: int = 0) -> Tok:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else Tok("eof", "")

    def next(self) -> Tok:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, text: str) -> Tok:
        tok = self.next()
        if tok.text != text:
            raise SyntaxError(f"expected {text!r}, got {tok.text!r}")
        return tok

    def skip_block(self) -> None:
        """From a ``{``: past its matching ``}``."""
        depth = 0
        while True:
            tok = self.next()
            if tok.kind == "eof":
                return
            if tok.text == "{":
                depth += 1
            elif tok.text == "}":
                depth -= 1
                if depth == 0:
                    return

    def skip_statement(self) -> None:
        depth = 0
        while True:
            tok = self.peek()
            if tok.kind == "eof" or (depth == 0 and tok.kind == "semi") or (depth == 0 and tok.text == "}"):
                if tok.kind == "semi":
                    self.next()
                return
            if tok.text in "([{":
                depth += 1
            elif tok.text in ")]}":
                depth -= 1
            self.next()

    # Types: []string, []*config.Rule, map[string]string, *x.Y, x.Y
    def parse_type(self) -> str:
        parts = []
        while True:
            tok = self.peek()
            if tok.text in ("[", "]", "*") or tok.text == "map":
                parts.append(self.next().text)
            elif tok.kind == "ident":
                parts.append(self.next().text)
                while self.peek().text == "." and self.peek(1).kind == "ident":
                    self.next()
                    parts.append("." + self.next().text)
                if self.peek().text != "]":
                    break
            else:
                break
        return "".join(parts)

    def parse_expr(self) -> Any:
        left = self.parse_unary()
        while self.peek().text in ("+", "==", "!=", "&&", "||", "-"):
            op = self.next().text
            right = self.parse_unary()
            left = Node("binop", [op, left, right])
        return left

    def parse_unary(self) -> Any:
        if self.peek().text in ("&", "*", "!", "-"):
            op = self.next().text
            return Node("unary", [op, self.parse_unary()])
        return self.parse_primary()

    def parse_composite_body(self) -> Node:
        self.expect("{")
        elems: list[Any] = []
        while self.peek().text != "}":
            if self.peek().kind == "semi":
                self.next()
                continue
            if self.peek().text == "{":
                value: Any = self.parse_composite_body()
            else:
                value = self.parse_expr()
            if self.peek().text == ":":
                self.next()
                val = self.parse_composite_body() if self.peek().text == "{" else self.parse_expr()
                elems.append(("kv", value, val))
            else:
                elems.append(("v", value))
            if self.peek().text == ",":
                self.next()
            while self.peek().kind == "semi":
                self.next()
        self.expect("}")
        return Node("composite", elems)

    def parse_primary(self) -> Any:
        tok = self.peek()
        if tok.kind == "string":
            self.next()
            node: Any = Node("lit", [tok.value])
        elif tok.kind == "number":
            self.next()
            node = Node("lit", [tok.value])
        elif tok.text == "(":
            self.next()
            node = self.parse_expr()
            self.expect(")")
        elif tok.text in ("[", "map"):
            type_name = self.parse_type()
            if self.peek().text == "(":  # conversion: []byte(x)
                self.next()
                inner = self.parse_expr()
                self.expect(")")
                node = Node("convert", [type_name, inner])
            else:
                body = self.parse_composite_body()
                node = Node("typed", [type_name, body])
        elif tok.text == "func":
            self.next()
            while self.peek().text != "{":
                self.next()
            self.skip_block()
            node = Node("lit", [Unknown("func literal")])
        elif tok.kind == "ident":
            self.next()
            node = Node("name", [tok.text])
        else:
            raise SyntaxError(f"unexpected {tok.text!r}")
        while True:
            tok = self.peek()
            if tok.text == "." and self.peek(1).kind == "ident":
                self.next()
                node = Node("sel", [node, self.next().text])
            elif tok.text == "(":
                self.next()
                args: list[Any] = []
                while self.peek().text != ")":
                    while self.peek().kind == "semi":
                        self.next()
                    if self.peek().text == ")":
                        break
                    arg = self.parse_expr()
                    if self.peek().text == "...":
                        self.next()
                        arg = Node("spread", [arg])
                    args.append(arg)
                    if self.peek().text == ",":
                        self.next()
                    while self.peek().kind == "semi":
                        self.next()
                self.expect(")")
                node = Node("call", [node, args])
            elif tok.text == "{" and node.kind in ("name", "sel") and _looks_like_type(node):
                node = Node("typed", [_dotted(node), self.parse_composite_body()])
            elif tok.text == "[":
                self.next()
                index = self.parse_expr()
                self.expect("]")
                node = Node("index", [node, index])
            else:
                return node


def _dotted(node: Node) -> str:
    if node.kind == "name":
        return str(node.args[0])
    return _dotted(node.args[0]) + "." + node.args[1]


def _looks_like_type(node: Node) -> bool:
    name = _dotted(node)
    return name.split(".")[-1][:1].isupper() or name in ("config.Rule", "config.Allowlist")


# Statements of a function body: assignments, returns; anything else (for, if) is skipped.
@dataclass
class Function:
    name: str
    returns_rule: bool
    body: list[Tok]


def top_level_vars(toks: list[Tok]) -> list[Tok]:
    """The package's ``var`` declarations (``var x = ...`` and ``var ( ... )``), outside any function."""
    parser = Parser(toks)
    out: list[Tok] = []
    while parser.peek().kind != "eof":
        tok = parser.next()
        if tok.text == "func":
            while parser.peek().text != "{":
                parser.next()
            parser.skip_block()
        elif tok.text == "var":
            start = parser.i - 1
            if parser.peek().text == "(":
                depth = 0
                while True:
                    t = parser.next()
                    depth += t.text in "([{"
                    depth -= t.text in ")]}"
                    if depth == 0 or t.kind == "eof":
                        break
            else:
                parser.skip_statement()
            out += [*toks[start:parser.i], Tok("semi", ";")]
    return out


def functions(toks: list[Tok]) -> Iterator[Function]:
    parser = Parser(toks)
    while parser.peek().kind != "eof":
        tok = parser.next()
        if tok.text != "func":
            continue
        name = parser.next().text
        signature: list[str] = []
        while parser.peek().text != "{":
            signature.append(parser.next().text)
        start = parser.i
        parser.skip_block()
        yield Function(name, "config.Rule" in "".join(signature) and "*" in signature, toks[start + 1:parser.i - 1])


_SAMPLE_TEMPLATES = {  # utils.GenerateSampleSecrets (generate.go), in key order
    "C#": 'string {i}Token = "{s}";',
    "go - backticks": "{i}Token := `{s}`",
    "go - normal": 'var {i}Token string = "{s}"',
    "go - short": '{i}Token := "{s}"',
    "ini - quoted1": '{i}Token="{s}"',
    "ini - quoted2": '{i}Token = "{s}"',
    "ini - unquoted1": "{i}Token={s}",
    "ini - unquoted2": "{i}Token = {s}",
    "java": 'String {i}Token = "{s}";',
    "json - escaped newline in string": '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
    "json - string": '{\n    "{i}_token": "{s}"\n}',
    "kotlin - notype": 'var {i}Token = "{s}"',
    "logstash": '  "{i}Token" => "{s}"',
    "make - conditional assignment": '{i}_TOKEN ?= "{s}"',
    "make - evaluated shell assignment": '{i}_TOKEN :::= "{s}"',
    "make - recursive assignment": '{i}_TOKEN = "{s}"',
    "make - shell assignment": '{i}_TOKEN ::= "{s}"',
    "make - simple assignment": '{i}_TOKEN := "{s}"',
    "misc - comma operator": 'System.setProperty("{I}_TOKEN", "{s}")',
    "php - string concat": '${i}Token .= "{s}"',
    "python - double quote": '{i}Token = "{s}"',
    "python - single quote": "{i}Token = '{s}'",
    "xml - element multiline": "<{i}Token>\n    {s}\n</{i}Token>",
    "yaml - singleline - double quote": '{i}_token: "{s}"',
    "yaml - singleline - single quote": "{i}_token: '{s}'",
    "yaml - singleline - unquoted": "{i}_token: {s}",
}


def _go_sprintf(fmt: str, args: list[Any]) -> Any:
    if any(isinstance(a, Unknown) for a in args):
        return Unknown("sprintf of unknown")
    values = iter(args)

    def repl(m: re.Match[str]) -> str:
        if m.group() == "%%":
            return "%"
        return str(next(values))

    return re.sub(r"%%|%[-+# 0-9.]*[svdqx]", repl, fmt)


class Interpreter:
    def __init__(self, rule_seed: str) -> None:
        self.rng = random.Random(f"faultline-gitleaks/{rule_seed}")
        self.sampler = Sampler(self.rng)
        self.env: dict[str, Any] = {}
        self.unknown = 0

    def new_secret(self, pattern: Any) -> Any:
        if isinstance(pattern, Unknown):
            return pattern
        return self.sampler.sample(str(pattern))

    def plausible_secret(self, pattern: Any) -> Any:
        """generic.go's newPlausibleSecret: a sample with a digit 1-9 (its stop-word check is not repeated)."""
        for _ in range(100):
            value = self.new_secret(pattern)
            if isinstance(value, Unknown) or re.search("[1-9]", value):
                return value
        return Unknown("no plausible secret")

    def call(self, name: str, args: list[Any]) -> Any:
        utils_regex = {"utils.Numeric": "[0-9]{%s}", "utils.Hex": "[a-f0-9]{%s}", "utils.AlphaNumeric": "[a-z0-9]{%s}",
                       "utils.AlphaNumericExtendedShort": "[a-z0-9_-]{%s}",
                       "utils.AlphaNumericExtended": "[a-z0-9=_\\-]{%s}",
                       "utils.AlphaNumericExtendedLong": "[a-z0-9\\/=_\\+\\-]{%s}"}
        if name in utils_regex:
            return utils_regex[name] % args[0]
        if name == "utils.Hex8_4_4_4_12":
            return "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
        if name == "append":  # an element that cannot be computed is left out (and counted)
            out = list(args[0]) if isinstance(args[0], list) else []
            for arg in args[1:]:
                items = arg.value if isinstance(arg, Spread) else [arg]
                items = items if isinstance(items, list) else [items]
                self.unknown += sum(1 for item in items if not isinstance(item, str))
                out.extend(item for item in items if isinstance(item, str))
            return out
        if any(isinstance(a, Unknown) for a in args):
            return Unknown(f"{name} of unknown")
        if name == "secrets.NewSecret":
            return self.new_secret(args[0])
        if name == "newPlausibleSecret":
            return self.plausible_secret(args[0])
        if name == "utils.GenerateSampleSecret":
            return f'{args[0]}_api_token = "{args[1]}"'
        if name == "utils.GenerateSampleSecrets":
            ident, secret = args
            return [t.replace("{i}", ident).replace("{I}", ident.upper()).replace("{s}", secret)
                    for t in _SAMPLE_TEMPLATES.values()]
        if name == "fmt.Sprintf":
            return _go_sprintf(args[0], args[1:])
        if name.endswith("EncodeToString"):
            raw = args[0].encode("utf-8") if isinstance(args[0], str) else bytes(args[0])
            encoding = name.split(".")[-2]
            text = (base64.urlsafe_b64encode(raw) if "URL" in encoding else base64.b64encode(raw)).decode()
            return text.rstrip("=") if encoding.startswith("Raw") else text
        if name == "strings.Repeat":
            return args[0] * int(args[1])
        if name == "strings.ToUpper":
            return args[0].upper()
        if name == "strings.ToLower":
            return args[0].lower()
        if name in ("regexp.MustCompile", "utils.GenerateUniqueTokenRegex", "utils.GenerateSemiGenericRegex"):
            return Unknown("regex")  # the rule's regex comes from gitleaks.toml
        return Unknown(f"call {name}")

    def eval(self, node: Any) -> Any:
        if not isinstance(node, Node):
            return node
        kind, args = node.kind, node.args
        if kind == "lit":
            return args[0]
        if kind == "name":
            if args[0] == "nil":
                return None
            return self.env.get(args[0], Unknown(f"name {args[0]}"))
        if kind == "sel":
            base = args[0]
            if base.kind == "name" and base.args[0] in self.env and isinstance(self.env[base.args[0]], dict):
                return self.env[base.args[0]].get(args[1], Unknown("field"))
            return Unknown(f"selector {_dotted(node)}")
        if kind == "binop":
            op, left, right = args[0], self.eval(args[1]), self.eval(args[2])
            if isinstance(left, Unknown) or isinstance(right, Unknown):
                return Unknown("binop of unknown")
            if op == "+":
                return left + right
            return Unknown(f"binop {op}")
        if kind == "unary":
            return self.eval(args[1]) if args[0] in ("&", "*") else Unknown("unary")
        if kind == "convert":
            return self.eval(args[1])
        if kind == "spread":
            return Spread(self.eval(args[0]))
        if kind == "index":
            return Unknown("index")
        if kind == "call":
            func = args[0]
            name = _dotted(func) if func.kind in ("name", "sel") else "?"
            values = [self.eval(a) for a in args[1]]
            values = [Spread(v.value) if isinstance(v, Spread) else v for v in values]
            return self.call(name, values)
        if kind == "typed":
            type_name, body = args
            return self.composite(type_name, body)
        if kind == "composite":
            return self.composite("", node)
        raise ValueError(kind)

    def composite(self, type_name: str, body: Node) -> Any:
        elems = body.args
        if type_name.startswith("map"):
            return {self.eval(e[1]): self.eval(e[2]) for e in elems if e[0] == "kv"}
        if type_name.startswith("[]"):
            values = []
            for elem in elems:
                value = self.eval(elem[1])
                if isinstance(value, Unknown):
                    self.unknown += 1
                    continue
                values.append(value)
            return values
        # A struct: only string fields are of interest (RuleID).
        fields = {}
        for elem in elems:
            if elem[0] == "kv" and isinstance(elem[1], Node) and elem[1].kind == "name":
                value = elem[2]
                fields[elem[1].args[0]] = self.eval(value) if value.kind == "lit" else Unknown("field")
        return fields

    def run(self, body: list[Tok]) -> tuple[Any, Any, Any]:
        """Execute a rule function's body; return (the rule's fields, true positives, false positives)."""
        parser = Parser([*body, Tok("eof", "")])
        result: tuple[Any, Any, Any] = (None, None, None)
        while parser.peek().kind != "eof":
            tok = parser.peek()
            if tok.kind == "semi":
                parser.next()
                continue
            if tok.text in ("for", "if", "switch", "go", "defer"):
                while parser.peek().text != "{":
                    parser.next()
                parser.skip_block()
                continue
            start = parser.i
            try:
                if tok.text == "var":
                    parser.next()
                    grouped = parser.peek().text == "("
                    if grouped:
                        parser.next()
                    while True:
                        while parser.peek().kind == "semi":
                            parser.next()
                        if parser.peek().text == ")" or parser.peek().kind == "eof":
                            parser.next()
                            break
                        name = parser.next().text
                        if parser.peek().text != "=":
                            parser.parse_type()
                        if parser.peek().text == "=":
                            parser.next()
                            self.env[name] = self.eval(parser.parse_expr())
                        else:
                            self.env[name] = None
                        if not grouped:
                            break
                elif tok.text == "return":
                    parser.next()
                    expr = parser.parse_expr()
                    if isinstance(expr, Node) and expr.kind == "call" and _dotted(expr.args[0]).startswith(
                            "utils.Validate"):
                        rule, tps, fps = (self.eval(a) for a in expr.args[1])
                        if isinstance(tps, dict):
                            tps = list(tps.values())
                        if isinstance(fps, dict):
                            fps = list(fps.values())
                        result = (rule, tps, fps)
                elif tok.kind == "ident" and parser.peek(1).text in (":=", "=", "+="):
                    name = parser.next().text
                    op = parser.next().text
                    value = self.eval(parser.parse_expr())
                    self.env[name] = self.env.get(name, "") + value if op == "+=" else value
                elif tok.kind == "ident" and parser.peek(1).text == "." and parser.peek(3).text == "=":
                    obj, _, attr, _ = (parser.next().text for _ in range(4))
                    value = self.eval(parser.parse_expr())
                    if isinstance(self.env.get(obj), dict):
                        self.env[obj][attr] = value
                else:
                    parser.skip_statement()
                    if parser.i == start:  # a stray '}' ends no statement: step over it
                        parser.next()
            except (SyntaxError, ValueError, TypeError, KeyError, StopIteration, re.error) as exc:
                parser.i = start
                parser.skip_statement()
                if parser.i == start:
                    parser.next()
                self.unknown += 1
                print(f"  skipped a statement: {exc}", file=sys.stderr)
        return result


# --------------------------------------------------------------------------------------------------------
# Secrets out of true-positive strings


def secrets_in(text: str, regex: re.Pattern[str], secret_group: int) -> list[str]:
    found = []
    for m in regex.finditer(text):
        if secret_group < 0:
            value = m.group(0)
        elif secret_group:
            value = m.group(secret_group) or ""
        elif m.re.groups:
            value = next((g for g in m.groups() if g), m.group(0))
        else:
            value = m.group(0)
        if value:
            found.append(value)
    return found


# The short-lived Amazon Bedrock key: gitleaks's regex (and its test case) is only the fixed head of the key,
# "bedrock-api-key-" + base64("bedrock.amazonaws.com"); the key goes on with the base64 of a presigned URL
# (aws-bedrock-token-generator). Its test case is extended with such a tail, else it would hold no secret.
def _bedrock_short_lived_tail(rng: random.Random) -> str:
    alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    query = ("/?Action=CallWithBearerToken&X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIA"
             + "".join(rng.choice(alnum) for _ in range(16)) + "%2F20250101%2Fus-east-1%2Fbedrock%2Faws4_request"
             "&X-Amz-Date=20250101T000000Z&X-Amz-Expires=43200&X-Amz-Security-Token="
             + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") for _ in range(60))
             + "&X-Amz-Signature=" + "".join(rng.choice("0123456789abcdef") for _ in range(64)) + "&Version=1")
    return base64.b64encode(b"bedrock.amazonaws.com" + query.encode()).decode()[len("YmVkcm9jay5hbWF6b25hd3MuY29t"):]


EXTENSIONS = {"aws-amazon-bedrock-api-key-short-lived": _bedrock_short_lived_tail}


def _curl_password(value: str) -> str:
    """``curl -u user:password``: the rule's match is the pair; the secret is the password (the user when
    the password is empty: ``-u "token:"``), without the shell's quotes."""
    parts = [part.strip("'\"") for part in value.strip("'\"").split(":", 1)]
    return parts[1] if len(parts) == 2 and parts[1] else parts[0]


def _yaml_value(value: str) -> str:
    """``password: <base64>`` (a Kubernetes Secret's data entry): the secret is the value."""
    return value.split(":", 1)[1].strip().lstrip("|>+-").strip().strip("'\"")




# What the rule's match holds besides its secret, cut off (the JSON's "notes" say so). The name of a
# function whose group is None uses the whole match instead of gitleaks's first non-empty group.
POSTPROCESS: dict[str, tuple[Callable[[str], str], str]] = {
    "curl-auth-user": (_curl_password, "the secret is the password of the user:password pair"),
    "kubernetes-secret-yaml": (_yaml_value, "the secret is the value of the data entry, not its key"),
}
# Rules that find their secret by the text around it (a curl command, a Kubernetes Secret, a NuGet
# config, a PHP array), though their regex starts with no identifier: not "unique" (found by shape alone).
CONTEXT_RULES = {"curl-auth-header", "curl-auth-user", "kubernetes-secret-yaml", "nuget-config-password",
                 "sidekiq-sensitive-url", "freemius-secret-key"}
WHOLE_MATCH = {"microsoft-teams-webhook"}  # gitleaks's first group is a repeated fragment of the URL
# A webhook URL's host and fixed path are public: only what follows is the secret ("public_regex").
PUBLIC_REGEX = {
    "microsoft-teams-webhook": r"https://[a-z0-9]+\.webhook\.office\.com/webhookb2/",
    "slack-webhook-url": r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/",
}


def _unquote(value: str) -> str:
    """A secret as gitleaks's group holds it may keep the quotes or the delimiter around it."""
    value = value.strip()
    while len(value) > 2 and value[0] == value[-1] and value[0] in "'\"`":
        value = value[1:-1]
    return value.rstrip(";,<>&\\\"'`").lstrip("\"'`")


def extract(checkout: Checkout) -> dict[str, Any]:
    config = tomllib.loads(checkout.read(CONFIG))
    toml_rules = {r["id"]: r for r in config["rules"]}
    rules: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for name in checkout.rule_files():
        toks = tokenize(checkout.read(name))
        package = Interpreter(f"{Path(name).stem}/package")
        package.run(top_level_vars(toks))
        for func in functions(toks):
            if not func.returns_rule:
                continue
            interp = Interpreter(f"{Path(name).stem}/{func.name}")
            interp.env.update(package.env)
            fields, tps, fps = interp.run(func.body)
            rule_id = fields.get("RuleID") if isinstance(fields, dict) else None
            if not isinstance(rule_id, str):
                skipped[f"{name}:{func.name}"] = "no rule id"
                continue
            toml_rule = toml_rules.get(rule_id)
            if toml_rule is None or "regex" not in toml_rule:
                skipped[rule_id] = "no regex in gitleaks.toml (a path-only rule)"
                continue
            try:
                regex = re.compile(go_regex_to_python(toml_rule["regex"]))
            except re.error as exc:
                skipped[rule_id] = f"regex does not compile in Python: {exc}"
                continue
            group = int(toml_rule.get("secretGroup", 0))
            entropy = float(toml_rule.get("entropy", 0.0))
            secrets: list[str] = []
            dropped = 0
            for tp in tps if isinstance(tps, list) else []:
                if not isinstance(tp, str):
                    dropped += 1
                    continue
                found = [_unquote(v) for v in secrets_in(tp, regex, -1 if rule_id in WHOLE_MATCH else group)]
                if not found:
                    dropped += 1
                if rule_id in POSTPROCESS:
                    found = [POSTPROCESS[rule_id][0](secret) for secret in found]
                for secret in found:
                    if shannon_entropy(secret) < entropy:
                        dropped += 1
                    elif secret not in secrets:
                        secrets.append(secret)
            prefix = literal_prefix(toml_rule["regex"], group or (1 if regex.groups else 0))
            notes = [POSTPROCESS[rule_id][1]] if rule_id in POSTPROCESS else []
            if rule_id in POSTPROCESS:
                prefix = ""
            if not tps:
                notes.append("its true positives are built by a loop this script does not run")
            if rule_id in EXTENSIONS:
                secrets = [s + EXTENSIONS[rule_id](interp.rng) if s == prefix else s for s in secrets]
                notes.append("the test case is only the key's fixed head; a generated presigned-URL tail is added")
            fp_list = [fp for fp in (fps if isinstance(fps, list) else []) if isinstance(fp, str)]
            identifier_rule = toml_rule["regex"].startswith(("[\\w.-]{0,50}?(?i:", "(?i)[\\w.-]{0,50}?(?:"))
            rules[rule_id] = {
                "description": toml_rule.get("description", ""),
                "regex": toml_rule["regex"],
                "secret_group": group,
                "entropy": entropy,
                "keywords": toml_rule.get("keywords", []),
                "unique": not identifier_rule and rule_id not in CONTEXT_RULES,
                "public_prefix": prefix,
                **({"public_regex": PUBLIC_REGEX[rule_id]} if rule_id in PUBLIC_REGEX else {}),
                "tps": secrets,
                "fps": fp_list,
                "tp_strings_without_secret": dropped,
                "unevaluated": interp.unknown,
                **({"notes": notes} if notes else {}),
            }
    version = checkout.version()
    return {
        "source": "gitleaks (https://github.com/gitleaks/gitleaks), MIT licence, see LICENSE.gitleaks",
        "gitleaks_version": version["describe"],
        "gitleaks_commit": version["commit"],
        "gitleaks_commit_date": version["date"],
        "generated_by": "tests/secrets/extract_gitleaks.py",
        "summary": {
            "rules": len(rules),
            "rules_with_tps": sum(1 for r in rules.values() if r["tps"]),
            "tps": sum(len(r["tps"]) for r in rules.values()),
            "fps": sum(len(r["fps"]) for r in rules.values()),
        },
        "skipped": skipped,
        "rules": dict(sorted(rules.items())),
    }


def main(argv: list[str] | None = None) -> int:
    warnings.filterwarnings("ignore", category=FutureWarning)  # "possible nested set" in a gitleaks regex
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gitleaks", type=Path, help="a gitleaks checkout (work tree or bare clone)")
    parser.add_argument("-o", "--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    data = extract(Checkout(args.gitleaks))
    args.output.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{args.output}: {data['summary']}; skipped {len(data['skipped'])}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
