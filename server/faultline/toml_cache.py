"""Remember parsed signature files between runs, keyed by their bytes, so that start-up skips TOML parsing.

Parsing the ~100 built-in TOML files (and importing ``tomllib``) is about 40 ms of every diagnosis's
start-up, more than the rest of loading the library together; a terminal diagnosis pays it on every failed
command. The cache maps the SHA-256 of a file's bytes to what ``tomllib`` made of them, stored as JSON in
one file: the same bytes always parse the same way, so a hit is exact and an edited file simply misses.
Only parsed data is stored, never code; a file whose data JSON cannot carry unchanged (TOML dates and
times) is parsed every time.

Where: ``$FAULTLINE_CACHE_DIR``, else ``$XDG_CACHE_HOME/faultline``, else ``~/.cache/faultline``.
``FAULTLINE_CACHE_DIR=off`` turns the cache off. A cache that cannot be read or written is ignored: the
library then loads exactly as without one.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

# SHA-256 without hashlib, whose import loads OpenSSL (~10 ms of a ~120 ms start-up). The built-in module
# computes the same digest; hashlib's is the fallback where it is missing.
try:
    from _sha2 import sha256  # type: ignore[import-not-found]  # Python >= 3.12
except ImportError:
    try:
        from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import sha256

from . import __version__

CACHE_ENV = "FAULTLINE_CACHE_DIR"
MAX_ENTRIES = 2000  # a few hundred KiB: every file of twenty libraries of this size
_FORMAT = 1


def cache_dir() -> Path | None:
    configured = os.environ.get(CACHE_ENV)
    if configured is not None:
        return None if configured.strip().lower() in ("", "off", "0", "none") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "faultline"


def _json_exact(value: Any) -> bool:
    """Whether JSON gives this value back unchanged (TOML dates and times it would not)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_exact(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_exact(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


class ParsedTomlCache:
    """Parsed TOML by content hash: ``loads`` answers from the cache or parses; ``save`` writes new entries."""

    def __init__(self, folder: Path | None) -> None:
        self.path = None if folder is None else folder / f"parsed-toml-v{_FORMAT}-{__version__}.json"
        self._entries: dict[str, dict[str, Any]] = self._read()
        self._used: set[str] = set()
        self._dirty = False

    @classmethod
    def default(cls) -> ParsedTomlCache:
        return cls(cache_dir())

    def _read(self) -> dict[str, dict[str, Any]]:
        if self.path is None:
            return {}
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError, RecursionError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}

    def loads(self, raw: bytes, text: str) -> dict[str, Any]:
        """What ``tomllib.loads(text)`` returns (``text`` is ``raw`` decoded); raises its errors the same way."""
        key = sha256(raw).hexdigest()
        self._used.add(key)
        cached = self._entries.get(key)
        if cached is not None:
            return cached
        data = _parse_toml(text)
        if _json_exact(data):
            self._entries[key] = data
            self._dirty = True
        return data

    def save(self) -> None:
        """Write the cache if this load parsed anything new (atomically: concurrent runs never see half)."""
        if self.path is None or not self._dirty:
            return
        entries = self._entries
        if len(entries) > MAX_ENTRIES:  # keep what this load used, then the rest up to the limit
            keep = [k for k in entries if k in self._used] + [k for k in entries if k not in self._used]
            entries = {k: entries[k] for k in keep[:MAX_ENTRIES]}
        import tempfile  # only a load that parsed something new writes (~7 ms of import)

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, prefix=".parsed-toml-", suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    json.dump(entries, stream, ensure_ascii=False, separators=(",", ":"))
                os.replace(temporary, self.path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        except (OSError, ValueError):
            return
        self._dirty = False


def _parse_toml(text: str) -> dict[str, Any]:
    data: dict[str, Any] = toml_module().loads(text)
    return data


def toml_module() -> Any:
    """``tomllib`` (``tomli`` before Python 3.11), imported on first use: a warm cache never needs it."""
    if sys.version_info >= (3, 11):
        import tomllib

        return tomllib
    import tomli  # pragma: no cover - Python 3.10 only

    return tomli  # pragma: no cover
