"""No network: the CLI, run on real diagnoses under an audit hook, opens no socket at all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def test_cli_opens_no_socket(tmp_path: Path) -> None:
    report = tmp_path / "sockets.txt"
    report.write_text("")
    targets = [p for p in (ROOT / "examples", ROOT / "tests" / "fixtures") if p.exists()]
    for fmt in ("text", "json", "html", "markdown"):
        result = subprocess.run([sys.executable, str(HERE / "audit_no_network.py"), str(report), "--", "diagnose",
                                 "--format", fmt, *map(str, targets)], capture_output=True, text=True, timeout=300)
        assert result.returncode in (0, 1), result.stderr
    assert report.read_text() == ""


def test_the_audit_hook_does_record_sockets(tmp_path: Path) -> None:
    report = tmp_path / "sockets.txt"
    subprocess.run([sys.executable, str(HERE / "audit_no_network.py"), str(report), "--", "--self-test"],
                   check=True, timeout=60)
    assert "socket.__new__" in report.read_text()
