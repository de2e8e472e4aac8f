"""Export the signature library as ripgrep inputs: a patterns file (full regexes) and a keywords file.

The benchmark compares faultline with ``rg -f patterns.txt`` (the same regexes, one search) and with
``rg -F -f keywords.txt`` (the literal prefilter alone). The library's patterns are written for the
Python ``regex`` module; ripgrep's default engine (Rust ``regex``) has no look-around and rejects
escapes of ordinary characters, so each pattern is converted:

* ``\\'`` ``\\"`` ``\\ `` and other escapes of characters that are not regex syntax lose the backslash;
* a look-ahead/behind ``(?=X)`` ``(?<=X)`` becomes the plain group ``(?:X)`` (consumes what it only
  asserted: the same work, nearly the same lines); a negative one ``(?!X)`` ``(?<!X)`` is dropped;
* an atomic group ``(?>X)`` becomes ``(?:X)``; ``\\Z`` becomes ``$``;
* a named group ``(?P<name>X)`` becomes ``(?:X)``: ``-f`` joins all patterns with ``|`` and ripgrep
  rejects a name used twice; counting matching lines needs no captures.

Each pattern is then wrapped in ``(?-u:...)``: ASCII classes, as the logs are ASCII. Without it the
Unicode ``\\w``/``\\d`` classes under counted repetitions (``{0,4000}``) make ripgrep build a ~100 MB
program (it needs ``--regex-size-limit``, ~2 s to compile and ~1 GB of memory), which would flatter
faultline. Every converted pattern is checked with ``rg`` itself; one that still does not compile is left out and
counted. The counts go into the results so the comparison's fairness can be judged.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from faultline.pattern_pieces import expand as expand_pieces

# Characters ripgrep's regex accepts after a backslash (meta characters and escape letters/digits).
_RUST_ESCAPABLE = set("\\.+*?()|[]{}^$#&-~") | set("abfnrtvdDsSwWbBpPxuUzAQE0123456789")

_NAMED_GROUP = re.compile(r"\(\?P?<(?![=!])\w+>")


@dataclass
class PatternExport:
    patterns_file: Path
    keywords_file: Path
    patterns: int = 0
    converted: int = 0
    dropped: list[str] = field(default_factory=list)
    keywords: int = 0


def _closing_paren(text: str, open_at: int) -> int:
    """Index of the parenthesis closing the group opened at ``open_at`` (escapes and classes aware)."""
    depth = 0
    i = open_at
    in_class = False
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if text.startswith("[^]", i) or text.startswith("[]", i):
                i += 2 if text[i + 1] == "]" else 3
                continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def to_rust_regex(source: str) -> str:
    """Convert one Python ``regex`` pattern to ripgrep's default syntax (see the module docstring)."""
    out: list[str] = []
    i = 0
    in_class = False
    while i < len(source):
        ch = source[i]
        if ch == "\\" and i + 1 < len(source):
            nxt = source[i + 1]
            if nxt == "Z":
                out.append("$")
            elif nxt in _RUST_ESCAPABLE or nxt.isalnum():
                out.append(source[i:i + 2])
            else:
                out.append(nxt)
            i += 2
            continue
        if in_class:
            out.append(ch)
            if ch == "]":
                in_class = False
            i += 1
            continue
        if ch == "[":
            in_class = True
            out.append(ch)
            i += 1
            if source.startswith("^", i):
                out.append("^")
                i += 1
            if source.startswith("]", i):
                out.append("\\]")
                i += 1
            continue
        if ch == "(":
            named = _NAMED_GROUP.match(source, i)
            if named:
                out.append("(?:")
                i = named.end()
                continue
            for opener, keep in (("(?<=", True), ("(?<!", False), ("(?=", True), ("(?!", False), ("(?>", True)):
                if source.startswith(opener, i):
                    end = _closing_paren(source, i)
                    inner = to_rust_regex(source[i + len(opener):end])
                    if keep:
                        out.append(f"(?:{inner})")
                    i = end + 1
                    break
            else:
                out.append(ch)
                i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _rg_accepts(pattern: str, rg: str) -> bool:
    result = subprocess.run([rg, "--no-config", "-e", pattern, "--", "/dev/null"], capture_output=True, check=False)
    return result.returncode != 2


def export(engine: object, folder: Path, rg: str = "rg") -> PatternExport:
    """Write ``patterns.txt`` and ``keywords.txt`` for ``engine`` (a ``faultline.engine.Engine``) into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    matcher = engine.matcher  # type: ignore[attr-defined]
    result = PatternExport(folder / "patterns.txt", folder / "keywords.txt")
    converted: list[str] = []
    for signature in matcher.signatures:
        for written in signature.pattern_sources:
            source = expand_pieces(written)  # the pattern as faultline compiles it (shared pieces expanded)
            result.patterns += 1
            pattern = to_rust_regex(source)
            if pattern != source:
                result.converted += 1
            pattern = f"(?-u:{pattern})"
            if "\n" in pattern or not _rg_accepts(pattern, rg):
                result.dropped.append(f"{signature.id}: {source[:120]}")
                continue
            converted.append(pattern)
    result.patterns_file.write_text("\n".join(converted) + "\n", encoding="utf-8")
    # Every literal the prefilter scans for: signature keywords plus the generic "suspicious" words.
    keywords = [k.decode("utf-8") for k in matcher.index.keywords]
    result.keywords = len(keywords)
    result.keywords_file.write_text("\n".join(keywords) + "\n", encoding="utf-8")
    return result
