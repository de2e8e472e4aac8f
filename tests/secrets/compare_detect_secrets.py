"""Measure detect-secrets (Yelp) on the same corpus as Faultline's masking, for the choice SECURITY.md states.

detect-secrets is not a dependency of Faultline; install it anywhere outside the project's environment and
put it on the path for this one run (it scans offline; its optional verification is not used)::

    python -m pip install --target /tmp/ds detect-secrets==1.5.0
    PYTHONPATH=/tmp/ds .venv/bin/python tests/secrets/compare_detect_secrets.py

Its plugins (the default set: keyword, high-entropy base64/hex strings, AWS, Azure, GitHub, GitLab, JWT,
private keys, Slack, Stripe, ...) are run on each line through ``detect_secrets.core.scan.scan_line``; every
secret value a plugin reports is replaced by ``****``. The same measures as ``gitleaks_corpus.py main``
follow: true positives in every context and alone, false positives of gitleaks, ordinary lines, time.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

from gitleaks_corpus import NORMAL_LINES, Share, all_bare, all_placed, cases, false_positives, load, measure

from faultline.masking import MASK, mask_secrets

_KEEP: list[Any] = []  # the settings contexts of detect-secrets stay entered until main() ends


def detect_secrets_masker(eager: bool) -> Callable[[str], str]:
    """A masker from detect-secrets's default plugins and filters. ``eager``: scan every word, as its ad-hoc
    string scan does (``scan_line``); else as it scans files (high-entropy strings only when quoted).
    A plugin reports the value of its regex's group (``ghp`` for a GitHub token): the whole match of that
    plugin's regex around it is masked, else the reported value."""
    from detect_secrets.core.scan import _is_filtered_out, _scan_line, get_plugins
    from detect_secrets.settings import default_settings, get_settings
    from detect_secrets.util.code_snippet import get_code_snippet

    settings = default_settings()
    settings.__enter__()
    _KEEP.append(settings)
    get_settings().disable_filters("detect_secrets.filters.common.is_invalid_file")

    def mask_line(line: str) -> str:
        context = get_code_snippet(lines=[line], line_number=1)
        values: set[str] = set()
        for plugin in get_plugins():
            for secret in _scan_line(plugin=plugin, filename="run.log", line=line, line_number=0,
                                     enable_eager_search=eager, context=context):
                if _is_filtered_out(required_filter_parameters=["context"], filename=secret.filename,
                                    secret=secret.secret_value, plugin=plugin, line=line, context=context):
                    continue
                value = secret.secret_value or ""
                for regex in getattr(plugin, "denylist", ()):
                    values.update(m.group(0) for m in regex.finditer(line) if value and value in m.group(0))
                values.add(value)
        for value in sorted(filter(None, values), key=len, reverse=True):
            line = line.replace(value, MASK)
        return line

    def mask(text: str) -> str:
        return "\n".join(mask_line(line) for line in text.split("\n"))

    return mask


def report(name: str, mask: Callable[[str], str]) -> None:
    data = load()
    corpus = cases(data)
    placed = all_placed(corpus)
    share = measure(mask, placed)
    bare = measure(mask, all_bare(corpus))
    fps = false_positives(data)
    fp_changed = sum(1 for _rule, fp in fps if mask(fp) != fp)
    normal_changed = [line for line in NORMAL_LINES if mask(line) != line]
    start = time.process_time()
    for line in NORMAL_LINES * 5:
        mask(line)
    per_line = (time.process_time() - start) / (len(NORMAL_LINES) * 5)
    print(f"{name}:")
    print(f"  true positives in {len({p.context for p in placed})} contexts: {share.masked}/{share.total} = "
          f"{share.share:.4f}")
    print(f"  vendor tokens alone: {bare.masked}/{bare.total} = {bare.share:.4f}")
    print(f"  gitleaks false-positive strings changed: {fp_changed}/{len(fps)}")
    print(f"  ordinary training lines changed: {len(normal_changed)}/{len(NORMAL_LINES)}")
    for line in normal_changed[:8]:
        print(f"    {line[:90]!r} -> {mask(line)[:90]!r}")
    print(f"  time per ordinary line: {per_line * 1e6:.0f} µs")
    by_context: dict[str, Share] = {}
    for p in placed:
        by_context.setdefault(p.context, Share()).add(p, p.leaks_in(mask(p.line)))
    print("  per context: " + ", ".join(f"{c} {s.share:.3f}" for c, s in by_context.items()))


def main() -> int:
    report("faultline.masking", mask_secrets)
    report("detect-secrets 1.5.0, default plugins, file scanning", detect_secrets_masker(eager=False))
    report("detect-secrets 1.5.0, default plugins, eager (ad-hoc string) scanning", detect_secrets_masker(eager=True))
    for settings in reversed(_KEEP):
        settings.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
