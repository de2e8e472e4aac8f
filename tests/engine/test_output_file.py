"""``--output`` never destroys what is read: a report is refused over an input (by name, through a symbolic or
a hard link) or inside an input folder, and is written atomically, so an interruption leaves the old file.

Through the real command line (``python -m faultline``), except where a failure has to be made to happen in
the middle of the write (in-process, with the write made to raise).
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

from faultline import cli, output_file

OOM = "[rank2]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n"
LOG = "step 1 loss 2.0\n" + OOM


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "faultline", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "run.log"
    path.write_text(LOG)
    return path


def assert_refused(result: subprocess.CompletedProcess[str], *phrases: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("faultline: error: --output "), result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""
    for phrase in phrases:
        assert phrase in lines[0], lines[0]


def test_the_output_cannot_be_the_input(log: Path) -> None:
    for spelling in (str(log), f"{log.parent}/./{log.name}", f"{log.parent}/../{log.parent.name}/{log.name}"):
        assert_refused(run("diagnose", str(log), "-o", spelling), "is the input", "refusing to overwrite it")
    assert_refused(run("diagnose", "run.log", "--output", "run.log", cwd=log.parent), "is the input run.log")
    assert log.read_text() == LOG


def test_the_output_cannot_be_a_link_to_the_input(log: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.log"
    link.symlink_to(log)
    assert_refused(run("diagnose", str(log), "-o", str(link)), "is the input")
    assert_refused(run("diagnose", str(link), "-o", str(log)), "is the input")  # the input is the link
    hard = tmp_path / "hard.log"
    os.link(log, hard)
    assert_refused(run("diagnose", str(log), "-o", str(hard)), "is the input")
    assert_refused(run("diagnose", str(hard), "-o", str(log)), "is the input")
    assert log.read_text() == LOG and link.is_symlink()


def test_one_input_among_several_is_protected(log: Path, tmp_path: Path) -> None:
    other = tmp_path / "rank1.log"
    other.write_text("step 1 loss 2.0\n")
    assert_refused(run("diagnose", str(other), str(log), "-o", str(log)), f"is the input {log}")
    assert log.read_text() == LOG


def test_the_output_cannot_be_inside_an_input_folder(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "attempt_0" / "3").mkdir(parents=True)
    (logs / "attempt_0" / "3" / "stderr.log").write_text(LOG)
    old_report = logs / "report.html"
    old_report.write_text("<p>an earlier report</p>")
    folder_link = tmp_path / "logs-link"
    folder_link.symlink_to(logs, target_is_directory=True)
    for output in (logs / "report.html",  # an existing report: it would be read as a log next time
                   logs / "new.json",
                   logs / "attempt_0" / "3" / "stderr.log",  # one of the folder's logs
                   logs / "attempt_0" / "no-such-folder" / "x.md",
                   folder_link / "report.html"):  # the same folder through a link
        assert_refused(run("diagnose", str(logs), "-o", str(output)), "is inside the input folder",
                       "write the report outside it")
    assert_refused(run("diagnose", str(folder_link), "-o", str(logs / "r.html")), "is inside the input folder")
    assert_refused(run("diagnose", ".", "-o", "report.html", cwd=logs), "is inside the input folder .")
    assert old_report.read_text() == "<p>an earlier report</p>"
    assert (logs / "attempt_0" / "3" / "stderr.log").read_text() == LOG
    assert sorted(p.name for p in logs.iterdir()) == ["attempt_0", "report.html"]


def test_the_output_cannot_overwrite_a_signature_folder(log: Path, tmp_path: Path) -> None:
    signatures = tmp_path / "sigs"
    signatures.mkdir()
    assert_refused(run("diagnose", str(log), "--signatures", str(signatures), "-o", str(signatures / "x.toml")),
                   "is inside the input folder")


def test_the_output_cannot_be_a_folder(log: Path, tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    assert_refused(run("diagnose", str(log), "-o", str(tmp_path / "out")), "is a folder")


def test_a_normal_output_is_the_report(log: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "reports"
    out_dir.mkdir()
    report = out_dir / "report.json"
    result = run("diagnose", str(log), "--format", "json", "-o", str(report))
    assert result.returncode == 1 and result.stdout == "", result.stderr
    assert report.read_text() == run("diagnose", str(log), "--format", "json").stdout
    assert sorted(p.name for p in out_dir.iterdir()) == ["report.json"]  # no temporary file left
    umask = os.umask(0o022)
    os.umask(umask)
    assert stat.S_IMODE(report.stat().st_mode) == 0o666 & ~umask  # a new file: the umask's bits, not 0600


def test_a_replaced_report_keeps_its_permissions(log: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.md"
    report.write_text("old")
    report.chmod(0o640)
    assert run("diagnose", str(log), "--format", "markdown", "-o", str(report)).returncode == 1
    assert report.read_text().startswith("# Faultline: Failure")
    assert stat.S_IMODE(report.stat().st_mode) == 0o640


def test_a_link_at_the_output_is_replaced_not_followed(log: Path, tmp_path: Path) -> None:
    """The report takes the link's place; the file the link pointed to is left alone."""
    elsewhere = tmp_path / "precious.txt"
    elsewhere.write_text("not a report")
    link = tmp_path / "report.txt"
    link.symlink_to(elsewhere)
    assert run("diagnose", str(log), "-o", str(link)).returncode == 1
    assert not link.is_symlink() and "CUDA out of memory" in link.read_text()
    assert elsewhere.read_text() == "not a report"


def test_dash_and_devices_are_written_to(log: Path) -> None:
    result = run("diagnose", str(log), "-o", "-")
    assert result.returncode == 1 and "CUDA out of memory" in result.stdout
    assert not (log.parent / "-").exists()
    result = run("diagnose", str(log), "-o", os.devnull)
    assert result.returncode == 1 and result.stdout == "" and result.stderr == ""
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)  # still the device, not a file renamed over it


def test_an_interrupted_write_leaves_the_old_report(log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """^C (or any failure) between writing and renaming: the old report is intact and no partial file stays."""
    report = tmp_path / "out" / "report.html"
    report.parent.mkdir()
    report.write_text("the old report")
    written: list[int] = []

    def interrupted(stream: IO[bytes]) -> None:
        stream.flush()
        written.append(os.fstat(stream.fileno()).st_size)  # the new report is in the temporary file by now
        raise KeyboardInterrupt

    monkeypatch.setattr(output_file, "_to_disk", interrupted)
    assert cli.main(["diagnose", str(log), "--format", "html", "-o", str(report), "--no-workspace-signatures"]) == 130
    assert written and written[0] > 1000
    assert "faultline: interrupted" in capsys.readouterr().err
    assert report.read_text() == "the old report"
    assert sorted(p.name for p in report.parent.iterdir()) == ["report.html"]


def test_a_failed_write_is_one_line_and_leaves_the_old_report(log: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "report.txt"
    report.write_text("the old report")

    def full(stream: IO[bytes]) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output_file, "_to_disk", full)
    assert cli.main(["diagnose", str(log), "-o", str(report), "--no-workspace-signatures"]) == 2
    assert capsys.readouterr().err == f"faultline: error: cannot write {report}: No space left on device\n"
    assert report.read_text() == "the old report"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.txt", "run.log"]


def test_a_process_killed_before_the_rename_leaves_the_old_report(log: Path, tmp_path: Path) -> None:
    """A crash (SIGKILL) after the report is written but before it replaces the old one."""
    report = tmp_path / "report.json"
    report.write_text('{"old": true}')
    code = ("import os, signal, sys\n"
            "os.replace = lambda *a: os.kill(os.getpid(), signal.SIGKILL)\n"
            "from faultline.cli import main\n"
            "sys.exit(main(sys.argv[1:]))\n")
    result = subprocess.run([sys.executable, "-c", code, "diagnose", str(log), "--format", "json", "-o", str(report)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == -signal.SIGKILL
    assert report.read_text() == '{"old": true}'
