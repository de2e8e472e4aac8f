"""Read a combined log from its end: the last line a given rank printed (a silent straggler's anchor)."""

from __future__ import annotations

from pathlib import Path

from ..lines.normalize import normalize_line
from ..lines.prefixes import parse_line
from ..masking import mask_secrets
from .chunks import CHUNK_BYTES


def last_line_of_rank(path: Path, rank: int, max_bytes: int = 64 * 1024 * 1024) -> tuple[int, str] | None:
    """Line number and text of the last line a given rank printed in a combined log (read from the end)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as stream:
            read_from = max(0, size - max_bytes)
            stream.seek(read_from)
            data = stream.read()
            prefix_lines = 0
            if read_from:
                stream.seek(0)
                remaining = read_from
                while remaining:
                    block = stream.read(min(CHUNK_BYTES, remaining))
                    prefix_lines += block.count(b"\n")
                    remaining -= len(block)
    except OSError:
        return None
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1 if end > 1 else 0
        raw = data[start:end].rstrip(b"\n")
        if raw.strip():
            context, _ = parse_line(normalize_line(raw, 2000))
            line_rank = context.best_rank
            if line_rank == rank:
                return (prefix_lines + data.count(b"\n", 0, start) + 1,
                        mask_secrets(normalize_line(raw, 2000), truncated=len(raw) > 2000))
        end = start
    return None


def default_last_line_lookup(path: str, rank: int) -> tuple[int, str] | None:
    p = Path(path)
    return last_line_of_rank(p, rank) if p.is_file() else None
