"""Find the launch script a workspace uses and plan where a fix's environment variables go in it.

A launch script is a ``*.sh``/``*.slurm``/``*.sbatch`` file with a command line that starts torchrun,
deepspeed, srun, accelerate launch or ``python -m torch.distributed.run``; a ``.env`` file also qualifies.
``export`` lines go right before the launching command (before the first line of a command continued
with ``\\``), with its indentation; variables the file already sets are skipped. Pure functions of text
and paths: the caller turns an :class:`EnvEdit` into a WorkspaceEdit.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..library import EnvVar

SCRIPT_SUFFIXES = frozenset({".sh", ".slurm", ".sbatch"})
ENV_FILE_NAMES = frozenset({".env"})
MAX_SCRIPT_BYTES = 1024 * 1024
MAX_ENTRIES_VISITED = 20_000
MAX_DEPTH = 6
_SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "site-packages", "venv", "dist", "build", "wandb",
                           "outputs", "checkpoints"})
LAUNCHER = re.compile(
    r"(?:^|[\s;&|(`]|\$\()(?:\S*/)?(?:torchrun|deepspeed|srun|accelerate\s+launch"
    r"|python[\d.]*\s+(?:-\w+\s+)*-m\s+torch\.distributed\.(?:run|launch))(?=\s|$)"
)


_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them (``\n``, ``\r\n`` or ``\r``); no empty item after a final break."""
    lines = _BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@dataclass(frozen=True)
class EnvEdit:
    """Text to insert at ``line`` (0-based, column 0); ``line`` may equal the line count (append)."""

    line: int
    text: str
    added: tuple[str, ...]
    already_set: tuple[str, ...]
    needs_leading_newline: bool = False  # appending to a file whose last line has no line break


def is_env_file(path: Path) -> bool:
    return path.name in ENV_FILE_NAMES


def launcher_line(text: str) -> int | None:
    """The 0-based line where the first launching command starts (continuations followed back), or None."""
    lines = split_lines(text)
    for index, line in enumerate(lines):
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        if LAUNCHER.search(line.split(" #", 1)[0]):
            start = index
            while start > 0 and lines[start - 1].rstrip().endswith("\\"):
                start -= 1
            return start
    return None


def is_launch_script(path: Path, text: str) -> bool:
    return is_env_file(path) or (path.suffix.lower() in SCRIPT_SUFFIXES and launcher_line(text) is not None)


def sets_variable(text: str, name: str) -> bool:
    """True when a script or .env file already sets (or exports) ``name`` on a line that is not a comment."""
    assignment = re.compile(rf"(?<![\w$]){re.escape(name)}=|\bexport\s+(?:-\w+\s+)*{re.escape(name)}\b")
    return any(assignment.search(line) for line in split_lines(text) if not line.lstrip().startswith("#"))


def plan_env_edit(path: Path, text: str, env: Sequence[EnvVar], comment: str) -> EnvEdit | None:
    """Where and what to insert so the launch in ``text`` runs with ``env``; None when ``text`` has no launch.

    ``comment`` (one line, no '#') is written above the new lines so a reader knows where they came from.
    """
    newline = "\r\n" if "\r\n" in text else "\n"
    already = tuple(v.name for v in env if sets_variable(text, v.name))
    todo = [v for v in env if v.name not in already]
    lines = split_lines(text)
    if is_env_file(path):
        body = "".join(f"{v.name}={_dotenv_value(v.value)}{newline}" for v in todo)
        needs_newline = bool(text) and not text.endswith(("\n", "\r"))
        header = f"# {comment}{newline}" if todo else ""
        return EnvEdit(len(lines), header + body if todo else "", tuple(v.name for v in todo), already,
                       needs_newline and bool(todo))
    start = launcher_line(text)
    if start is None:
        return None
    indent = re.match(r"[ \t]*", lines[start])
    prefix = indent.group() if indent else ""
    body = "".join(f"{prefix}export {v.name}={shlex.quote(v.value)}{newline}" for v in todo)
    header = f"{prefix}# {comment}{newline}" if todo else ""
    return EnvEdit(start, header + body if todo else "", tuple(v.name for v in todo), already)


def _dotenv_value(value: str) -> str:
    if re.fullmatch(r"[\w.,:/@%+=-]*", value):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def find_launch_scripts(roots: Sequence[Path], near: Path | None = None) -> list[Path]:
    """Launch scripts under the workspace folders, best first.

    Best means: a real script before any ``.env`` file; then in the folder of ``near`` (the log) or the
    closest folder above it; then shallow. The walk is bounded (depth and entries) and skips
    hidden folders, virtual environments and build output.
    """
    found: dict[Path, None] = {}
    visited = 0
    search_roots = list(roots)
    if near is not None and not any(_is_within(near, r) for r in roots):
        search_roots.append(near.parent)
    for root in search_roots:
        for folder, dirs, files in os.walk(root):
            depth = len(Path(folder).relative_to(root).parts)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS
                             and depth < MAX_DEPTH and not (Path(folder) / d / "pyvenv.cfg").exists())
            for file in sorted(files):
                visited += 1
                path = Path(folder) / file
                if path.suffix.lower() in SCRIPT_SUFFIXES or is_env_file(path):
                    text = _read_small(path)
                    if text is not None and is_launch_script(path, text):
                        found[path] = None
            visited += len(dirs)
            if visited > MAX_ENTRIES_VISITED:
                break
    return sorted(found, key=lambda p: _rank(p, near, roots))


def _rank(path: Path, near: Path | None, roots: Sequence[Path]) -> tuple[int, int, int, str]:
    kind = 1 if is_env_file(path) else 0
    proximity = 1000
    if near is not None:
        for up, ancestor in enumerate([near.parent, *near.parent.parents]):
            if path.parent == ancestor:
                proximity = up
                break
    root = next((r for r in roots if _is_within(path, r)), path.parent)
    depth = len(path.relative_to(root).parts) if _is_within(path, root) else 99
    return kind, proximity, depth, str(path)


def _is_within(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def _read_small(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_SCRIPT_BYTES:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
