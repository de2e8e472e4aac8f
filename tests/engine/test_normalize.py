"""Line normalisation keeps the readable text and never raises, whatever the bytes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from faultline.lines.normalize import last_visible_segment, looks_binary, normalize_line


def test_strips_ansi_colour_codes() -> None:
    assert normalize_line(b"\x1b[1;31mRuntimeError\x1b[0m: boom\n") == "RuntimeError: boom"


def test_strips_colour_codes_as_syslog_escapes_them() -> None:
    raw = b"#033[2m#033[33m(raylet)#033[0m node_manager.cc:3007: 2 Workers killed\n"
    assert normalize_line(raw) == "(raylet) node_manager.cc:3007: 2 Workers killed"
    assert normalize_line(b"issue #0334 and #033 alone stay") == "issue #0334 and #033 alone stay"


def test_carriage_return_progress_bar_keeps_what_a_terminal_shows() -> None:
    raw = b"  3%|#   | 3/100\r 50%|#####| 50/100\r100%|##########| 100/100\n"
    assert normalize_line(raw) == "100%|##########| 100/100"
    assert last_visible_segment("abc\r\r") == "abc"


def test_crlf_and_invalid_utf8() -> None:
    assert normalize_line(b"caf\xc3\xa9 \xff\xfe ok\r\n") == "café \ufffd\ufffd ok"


def test_long_lines_are_capped() -> None:
    assert len(normalize_line(b"x" * 1_000_000, max_chars=1000)) == 1000


def test_control_bytes_removed() -> None:
    assert normalize_line(b"a\x00b\x07c") == "abc"


def test_binary_detection() -> None:
    assert looks_binary(bytes(range(256)) * 10)
    assert not looks_binary(b"step 10 loss 2.31\n" * 100)
    assert not looks_binary(b"")


@given(st.binary(max_size=2000).map(lambda b: b.replace(b"\n", b"")))
def test_never_raises_on_arbitrary_bytes(raw: bytes) -> None:
    text = normalize_line(raw)
    assert "\n" not in text and "\x1b" not in text
