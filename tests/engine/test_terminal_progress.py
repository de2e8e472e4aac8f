"""Progress on a terminal only for a diagnosis that takes a while, and erased before the report."""

from __future__ import annotations

import io

from faultline.terminal_progress import TerminalProgress, size_text


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def progress_at(clock: Clock) -> tuple[TerminalProgress, io.StringIO]:
    stream = io.StringIO()
    progress = TerminalProgress(stream)
    progress._now = clock  # type: ignore[method-assign]
    progress.started = 0.0
    return progress, stream


def test_a_quick_diagnosis_prints_nothing() -> None:
    clock = Clock()
    progress, stream = progress_at(clock)
    clock.now = 0.2
    progress.report(0.98, "scanned 74.0 KiB of 75.0 KiB")
    progress.report(1.0, "scanned 75.0 KiB of 75.0 KiB")
    progress.finish()
    assert stream.getvalue() == ""


def test_a_long_one_shows_its_share_and_erases_the_line() -> None:
    clock = Clock()
    progress, stream = progress_at(clock)
    clock.now = 1.0
    progress.report(0.4, "scanned 1.2 GiB of 3.0 GiB")
    progress.report(0.401, "scanned 1.2 GiB of 3.0 GiB")  # under a percent: not rewritten
    clock.now = 1.5
    progress.report(-1.0, "read 2.0 GiB of text (400.0 MiB compressed)")
    progress.finish()
    out = stream.getvalue()
    assert out.count("faultline:") == 2
    assert " 40% scanned 1.2 GiB of 3.0 GiB" in out and "faultline: read 2.0 GiB of text" in out
    assert out.endswith("\r\x1b[K")  # the last progress line is erased


def test_sizes_read_as_a_person_reads_them() -> None:
    assert [size_text(n) for n in (512, 75_000, 3 << 30)] == ["512 B", "73.2 KiB", "3.0 GiB"]
