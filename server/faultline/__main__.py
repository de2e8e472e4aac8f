"""``python -m faultline``: the language server on stdio; with arguments, the command line."""

from __future__ import annotations

import sys


def run() -> int:
    if len(sys.argv) > 1:
        from .cli import run as run_cli

        run_cli()
    from .lsp.server import serve

    serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(run())
