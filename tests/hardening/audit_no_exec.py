"""Run the faultline CLI under a Python audit hook that records every way of executing code or a program.

Usage: python audit_no_exec.py REPORT_FILE -- ARGS...   (ARGS as for ``faultline``)
The engine is imported first (class creation runs ``exec`` inside the standard library at import time);
from then on every ``exec``/``compile`` (eval, exec, compile, pickle), process start (subprocess, os.system,
os.exec*, os.spawn*, os.posix_spawn, os.fork), ``ctypes`` call and socket is appended to REPORT_FILE.
Signature files are data: diagnosing with, or checking, a malicious signature folder must record nothing.
"""

from __future__ import annotations

import sys

_WATCHED = ("exec", "compile", "subprocess.Popen", "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
            "os.startfile", "ctypes.", "socket.", "pickle.find_class", "marshal.load", "code.__new__")


def main() -> int:
    report_path = sys.argv[1]
    args = sys.argv[3:]
    import faultline.cli
    import faultline.engine
    import faultline.render.html
    import faultline.render.json_out
    import faultline.render.markdown
    import faultline.render.text
    import faultline.signature_check  # imported before the hook, see the docstring
    import faultline.toml_cache

    faultline.toml_cache.toml_module()  # imported on first use (a warm cache never needs it)
    import tempfile  # noqa: F401 - imported by the cache only when it writes

    report = open(report_path, "a", buffering=1)  # noqa: SIM115 - lives as long as the process

    def hook(event: str, event_args: tuple[object, ...]) -> None:
        if event.startswith(_WATCHED) and event != "socket.gethostname":
            report.write(f"{event} {str(event_args)[:200]}\n")

    sys.addaudithook(hook)
    if args == ["--self-test"]:  # proves the hook records what it watches, so the real test can fail
        eval("1 + 1")
        return 0
    return faultline.cli.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
