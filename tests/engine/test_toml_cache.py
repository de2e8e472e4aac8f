"""The parsed-signature cache: a hit gives exactly what parsing gives, and no cache state can break loading."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from faultline.library import BUILTIN_DIR, SignatureLibrary, parse_signature, signature_files
from faultline.toml_cache import CACHE_ENV, ParsedTomlCache, cache_dir

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "signature_samples"


def _signature_data(library: SignatureLibrary) -> list[tuple[object, ...]]:
    return [(s.id, s.title, s.category, s.role, s.priority, s.keywords, s.pattern_sources, s.exclusion_sources,
             s.message, s.explanation, s.fix, s.verification, s.related, s.examples_match, s.examples_no_match)
            for s in library]


@pytest.fixture
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    return folder


def test_a_warm_cache_loads_the_same_library_as_parsing(cache_folder: Path) -> None:
    cold = SignatureLibrary.load()
    files = list(cache_folder.glob("parsed-toml-*.json"))
    assert len(files) == 1
    assert files[0].stat().st_mode & 0o777 == 0o600  # private to the user, as SECURITY.md says
    entries = json.loads(files[0].read_text(encoding="utf-8"))
    assert len(entries) == len(signature_files(BUILTIN_DIR))
    warm = SignatureLibrary.load()
    assert _signature_data(warm) == _signature_data(cold)
    assert not cold.problems and not warm.problems


def test_every_cached_entry_equals_a_fresh_parse(cache_folder: Path) -> None:
    import tomllib

    cache = ParsedTomlCache(cache_folder)
    for path in signature_files(BUILTIN_DIR):
        raw = path.read_bytes()
        assert cache.loads(raw, raw.decode()) == tomllib.loads(raw.decode())
    cache.save()
    again = ParsedTomlCache(cache_folder)
    for path in signature_files(BUILTIN_DIR):
        raw = path.read_bytes()
        assert again.loads(raw, raw.decode()) == tomllib.loads(raw.decode()), path


def test_an_edited_file_misses_the_cache(cache_folder: Path, tmp_path: Path) -> None:
    folder = tmp_path / "user"
    folder.mkdir()
    source = next(SAMPLES.glob("*.toml"))
    target = folder / source.name
    target.write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    first = SignatureLibrary.load([folder], include_builtin=False)
    sig = next(iter(first))
    target.write_text(source.read_text(encoding="utf-8").replace(sig.title, "An edited title", 1), encoding="utf-8")
    second = SignatureLibrary.load([folder], include_builtin=False)
    assert next(iter(second)).title == "An edited title"


def test_a_broken_cache_file_is_ignored_and_replaced(cache_folder: Path) -> None:
    SignatureLibrary.load()
    (cached,) = cache_folder.glob("parsed-toml-*.json")
    expected = _signature_data(SignatureLibrary.load())
    for junk in (b"\xff\xfe not json", b"[1, 2, 3]", b'{"abc": 5}', b"{" * 100000, b""):
        cached.write_bytes(junk)
        assert _signature_data(SignatureLibrary.load()) == expected
    assert len(json.loads(cached.read_text(encoding="utf-8"))) == len(expected)


def test_entries_are_keyed_by_the_sha256_of_each_file(cache_folder: Path) -> None:
    """The built-in SHA-256 module the cache uses (hashlib loads OpenSSL) gives hashlib's digests."""
    SignatureLibrary.load()
    (cached,) = cache_folder.glob("parsed-toml-*.json")
    keys = set(json.loads(cached.read_text(encoding="utf-8")))
    assert keys == {hashlib.sha256(path.read_bytes()).hexdigest() for path in signature_files(BUILTIN_DIR)}


def test_a_cache_entry_that_lies_about_its_file_is_not_reachable(cache_folder: Path, tmp_path: Path) -> None:
    """Entries are keyed by the SHA-256 of the bytes: a different file can never be answered with them."""
    SignatureLibrary.load()
    (cached,) = cache_folder.glob("parsed-toml-*.json")
    entries = json.loads(cached.read_text(encoding="utf-8"))
    entries = {key: {"id": "planted"} for key in entries}
    cached.write_text(json.dumps(entries), encoding="utf-8")
    path = next(SAMPLES.glob("*.toml"))
    sig, problems = parse_signature(path, builtin=False, parsed=ParsedTomlCache(cache_folder))
    assert sig is not None and sig.id != "planted" and not problems


def test_an_unwritable_cache_folder_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(CACHE_ENV, str(blocker / "cache"))
    library = SignatureLibrary.load()
    assert len(library) == len(signature_files(BUILTIN_DIR)) and not library.problems


def test_the_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    assert cache_dir() is None
    monkeypatch.delenv(CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_dir() == tmp_path / "faultline"


def test_toml_dates_are_parsed_every_time_not_cached(cache_folder: Path) -> None:
    text = 'id = "x"\nwhen = 2024-03-12T02:29:19Z\n'
    cache = ParsedTomlCache(cache_folder)
    first = cache.loads(text.encode(), text)
    cache.save()
    assert not cache_folder.exists() or not any(cache_folder.iterdir())
    assert cache.loads(text.encode(), text) == first


def test_a_warm_start_does_not_parse_toml(cache_folder: Path) -> None:
    probe = ("import sys; from faultline.engine import Engine; Engine.load(); "
             "print('tomllib' in sys.modules)")
    env = {**os.environ, CACHE_ENV: str(cache_folder)}
    cold = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    warm = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert cold.stdout.strip() == "True"
    assert warm.stdout.strip() == "False"
