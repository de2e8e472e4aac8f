"""Run a faultline entry point under a Python audit hook that records every socket the process opens.

Usage: python audit_no_network.py REPORT_FILE -- ARGS...   (ARGS as for ``python -m faultline``)
Every ``socket.*`` audit event is appended to REPORT_FILE; the test then fails on any entry. AF_UNIX
socketpairs used internally by asyncio are recorded too and reported by family so the test can tell them
apart from network sockets.
"""

from __future__ import annotations

import sys


def main() -> int:
    report_path = sys.argv[1]
    args = sys.argv[3:]
    report = open(report_path, "a", buffering=1)  # noqa: SIM115 - lives as long as the process

    def hook(event: str, event_args: tuple[object, ...]) -> None:
        if event.startswith("socket.") and event not in ("socket.gethostname",):
            report.write(f"{event} {event_args!r}\n")

    sys.addaudithook(hook)
    if args == ["--self-test"]:  # proves the hook records sockets, so the real test can fail
        import socket

        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        return 0
    sys.argv = ["faultline", *args]
    from faultline.__main__ import run

    return run()


if __name__ == "__main__":
    raise SystemExit(main())
