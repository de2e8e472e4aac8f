"""Loading signature files: bad files are reported with file, line and field, the rest keep working."""

from __future__ import annotations

from pathlib import Path

from faultline.library import SignatureLibrary, parse_signature

GOOD = (Path(__file__).resolve().parent.parent / "fixtures" / "signature_samples" / "my-panic.toml").read_text()


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_user_folder_adds_a_signature(tmp_path: Path) -> None:
    write(tmp_path, "my-panic.toml", GOOD)
    library = SignatureLibrary.load([tmp_path])
    assert library.get("my-panic") is not None
    assert library.get("cuda-oom") is not None  # built-ins still there
    assert not [p for p in library.problems if str(tmp_path) in p.file]


def test_user_folder_overrides_builtin_by_id(tmp_path: Path) -> None:
    write(tmp_path, "cuda-oom.toml", GOOD.replace('"my-panic"', '"cuda-oom"'))
    library = SignatureLibrary.load([tmp_path])
    sig = library.get("cuda-oom")
    assert sig is not None and sig.title == "Framework panic" and not sig.builtin


def test_bad_files_are_reported_and_skipped(tmp_path: Path) -> None:
    write(tmp_path, "broken.toml", "id = [unclosed\n")
    write(tmp_path, "bad-regex.toml", GOOD.replace('"my-panic"', '"bad-regex"').replace(
        "'MyFrameworkPanic: (?P<detail>.+)'", "'MyFrameworkPanic: (?P<detail>.+'"))
    write(tmp_path, "wrong-types.toml", GOOD.replace('"my-panic"', '"wrong-types"').replace("priority = 70",
                                                                                           'priority = "high"'))
    write(tmp_path, "unknown-field.toml", GOOD.replace('"my-panic"', '"unknown-field"') + "\nsurprise = 1\n")
    write(tmp_path, "binary.toml", "")
    (tmp_path / "binary.toml").write_bytes(b"\xff\xfe\x00junk")
    write(tmp_path, "my-panic.toml", GOOD)
    library = SignatureLibrary.load([tmp_path])
    messages = [str(p) for p in library.problems]
    assert any("broken.toml:1: toml: invalid TOML" in m for m in messages)
    assert any("bad-regex.toml:9: patterns:" in m and "does not compile" in m for m in messages)
    assert any("wrong-types.toml:7: priority: is str, expected an integer" in m for m in messages)
    assert any("unknown-field.toml" in m and "surprise: unknown field" in m for m in messages)
    assert any("binary.toml:1: file: is not UTF-8" in m for m in messages)
    assert library.get("my-panic") is not None
    assert library.get("bad-regex") is None


def test_deeply_nested_or_huge_files(tmp_path: Path) -> None:
    write(tmp_path, "nested.toml", "a = " + "[" * 5000 + "]" * 5000 + "\n")
    write(tmp_path, "huge.toml", "x = '" + "a" * 400_000 + "'\n")
    for name in ("nested.toml", "huge.toml"):
        sig, problems = parse_signature(tmp_path / name, builtin=False)
        assert sig is None and problems, name


def test_missing_folder_is_reported(tmp_path: Path) -> None:
    library = SignatureLibrary.load([tmp_path / "nope"])
    assert any("does not exist" in str(p) for p in library.problems)


def test_the_highest_priority_match_wins_then_library_order(tmp_path: Path) -> None:
    """Four signatures match one line: the matcher answers the highest priority, and among equals the first in
    library order (file order: a-..., b-...), whatever order it tries them in."""
    from faultline.matcher import LineMatcher

    for name, priority in (("a-low", 20), ("b-high", 80), ("c-high", 80), ("d-mid", 50)):
        write(tmp_path, f"{name}.toml", GOOD.replace('"my-panic"', f'"{name}"').replace("priority = 70",
                                                                                          f"priority = {priority}"))
    library = SignatureLibrary.load([tmp_path], include_builtin=False)
    matcher = LineMatcher(library)
    sample = library.get("a-low").examples_match[0]  # type: ignore[union-attr]
    indexes = range(len(matcher.signatures))
    match = matcher.match(sample, indexes)
    assert match is not None and match.signature.id == "b-high"
    assert matcher.match(sample, reversed(indexes)).signature.id == "b-high"  # type: ignore[union-attr]
    library.disable_pattern(library.get("b-high"), 0, "test")  # type: ignore[arg-type]
    assert matcher.match(sample, indexes).signature.id == "c-high"  # type: ignore[union-attr]


def test_fields_the_reasoning_reads_are_validated(tmp_path: Path) -> None:
    for name, extra in [("bad-summary", 'summary = "footer"'), ("bad-store", 'store_host = 3'),
                        ("bad-blames", 'blames = "no"'), ("not-derived", 'inference = "straggler"'),
                        ("bad-inference", 'derived = true\ninference = "psychic"')]:
        write(tmp_path, f"{name}.toml", GOOD.replace('"my-panic"', f'"{name}"').replace(
            "priority = 70", f"priority = 70\n{extra}"))
    write(tmp_path, "good-fields.toml", GOOD.replace('"my-panic"', '"good-fields"').replace(
        "priority = 70", 'priority = 70\nsummary = "field"\nblames = false\nstore_host = "frame"'))
    library = SignatureLibrary.load([tmp_path], include_builtin=False)
    messages = [str(p) for p in library.problems]
    assert any("bad-summary.toml:8: summary: 'footer', expected one of header, field" in m for m in messages)
    assert any("bad-store.toml:8: store_host: is int, expected a string" in m for m in messages)
    assert any("bad-blames.toml:8: blames: is str, expected true or false" in m for m in messages)
    assert any("not-derived.toml:8: inference: only a derived signature" in m for m in messages)
    assert any("bad-inference.toml" in m and "inference: 'psychic', expected one of straggler" in m for m in messages)
    good = library.get("good-fields")
    assert good is not None and (good.summary, good.blames, good.store_host) == ("field", False, "frame")
    assert library.ids_where(summary="field") == {"good-fields"}


def test_the_reasoning_names_no_signature_id() -> None:
    """What the reasoning treats specially comes from signature fields (signatures/README.md), not from ids."""
    reasoning = Path(__file__).resolve().parents[2] / "server" / "faultline" / "reasoning"
    ids = {sig.id for sig in SignatureLibrary.load()}
    for module in reasoning.glob("*.py"):
        text = module.read_text(encoding="utf-8")
        named = sorted(i for i in ids if f'"{i}"' in text or f"'{i}'" in text)
        assert named == [], f"{module.name} names {named}"


def test_no_builtin_keyword_repeats_a_character_inside_it() -> None:
    """A run of one character after a keyword's start ("0.000", trailing spaces) makes the hyperscan literal
    index compile take tens of milliseconds instead of a few: one such keyword added 30 ms to every run
    (bench/run.py, "where the time goes": library). A leading run ("*** SIGSEGV") costs nothing."""
    import re

    run = re.compile(r"(.)\1\1")
    slow = [(sig.id, kw) for sig in SignatureLibrary.load() for kw in sig.keywords if run.search(kw, 1)]
    assert slow == [], "keywords with a repeated run; shorten them: " + repr(slow)


def test_a_signature_with_levels_matches_only_lines_at_those_levels(tmp_path: Path) -> None:
    """``levels``: the log levels a line may match at; a line without a level may match too; a level that is not a
    log level is a problem with its file and line."""
    from faultline.lines.reading import read_line
    from faultline.matcher import LineMatcher

    write(tmp_path, "leveled.toml", GOOD.replace('"my-panic"', '"leveled"').replace(
        "priority = 70", 'priority = 70\nlevels = ["E", "F"]'))
    write(tmp_path, "bad-levels.toml", GOOD.replace('"my-panic"', '"bad-levels"').replace(
        "priority = 70", 'priority = 70\nlevels = ["E", "ERROR"]'))
    library = SignatureLibrary.load([tmp_path], include_builtin=False)
    assert any("bad-levels.toml" in str(p) and "levels: ['ERROR']: expected log levels" in str(p)
               for p in library.problems)
    matcher = LineMatcher(library, use_hyperscan=False)
    sample = library.get("leveled").examples_match[0]  # type: ignore[union-attr]

    def signature_of(line: str) -> str | None:
        raw = line.encode()
        keyword_ids = [kw for _end, kw in matcher.index.scan(raw + b"\n")]
        reading = read_line(raw, matcher, keyword_ids)
        return None if reading.signature_index is None else matcher.signatures[reading.signature_index].id

    assert signature_of(sample) == "leveled"  # no level of its own
    assert signature_of(f"E1206 10:00:00.123456 4242 train.cc:12] {sample}") == "leveled"
    assert signature_of(f"W1206 10:00:00.123456 4242 train.cc:12] {sample}") is None
