"""Turn what the user named (files, folders of per-rank logs, ``-`` for stdin) into log sources.

Folders are walked recursively in natural order (``rank2`` before ``rank10``); hidden entries and files
that look binary are skipped and reported, never silently dropped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .normalize import looks_binary
from .scanner import Source, displayable_name

_SKIP_SUFFIXES = {".pt", ".pth", ".bin", ".safetensors", ".ckpt", ".npy", ".npz", ".pkl", ".pickle",
                  ".gz", ".zip", ".tar", ".png", ".jpg", ".jpeg", ".so", ".whl", ".pyc"}


class InputError(Exception):
    """A path the user named cannot be used; the message says which and why."""


@dataclass
class ResolvedInputs:
    sources: list[Source] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(s.size for s in self.sources)


def natural_key(path: str) -> list[object]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", path)]


def _is_binary_file(path: Path) -> bool:
    try:
        with open(path, "rb") as stream:
            return looks_binary(stream.read(8192))
    except OSError:
        return False


def resolve_inputs(paths: Sequence[str | Path], allow_stdin: bool = True) -> ResolvedInputs:
    """Sources for the given paths. Raises :class:`InputError` for a path that does not exist."""
    resolved = ResolvedInputs()
    for raw in paths:
        text = str(raw)
        if text == "-" and allow_stdin:
            resolved.sources.append(Source.from_stdin())
            continue
        path = Path(text)
        if not path.exists():
            raise InputError(f"{text}: no such file or folder")
        if path.is_dir():
            _add_folder(path, resolved)
        elif path.is_file() or path.is_fifo():
            try:
                resolved.sources.append(Source.from_path(path, text))
            except OSError as exc:
                raise InputError(f"{text}: cannot be read ({exc.strerror})") from exc
        else:
            raise InputError(f"{text}: not a regular file or folder")
    return resolved


def _add_folder(folder: Path, resolved: ResolvedInputs) -> None:
    found: list[Path] = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules")]
        for name in files:
            if name.startswith("."):
                continue
            found.append(Path(root) / name)
    for path in sorted(found, key=lambda p: natural_key(str(p))):
        if path.suffix.lower() in _SKIP_SUFFIXES or _is_binary_file(path):
            resolved.skipped.append(f"{displayable_name(str(path))}: skipped (binary)")
            continue
        try:
            resolved.sources.append(Source.from_path(path))
        except OSError as exc:
            resolved.skipped.append(f"{displayable_name(str(path))}: skipped ({exc.strerror})")
