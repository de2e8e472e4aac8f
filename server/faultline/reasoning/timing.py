"""When the run failed: the training step it was at, and how long it had been going.

A person on call wants to know whether a run died at step 12 (a configuration or data problem that shows at
once) or at step 48,000 after nine hours (memory growth, a bad shard, a flaky node). The step is the last
step or iteration counter printed before the root line (by its rank, when lines carry ranks); the run time
is the root line's time minus the first time stamp of its file.
"""

from __future__ import annotations

import re

from ..lines.prefixes import parse_line
from ..lines.timestamps import comparable_seconds
from .state import Reasoning

STEP_LINES = 200  # how far above the root line the last step counter is looked for
STEP_MAX_BYTES = 8 * 1024 * 1024  # inputs read again for it (scan/window.py): a second read costs milliseconds
_STEP = re.compile(r"\b(?:global[_ ]step|step|iteration|iter)\b\s{0,2}[:=#]?\s{0,2}\[?\s{0,2}(?P<step>\d{1,12})"
                   r"(?:\s{0,2}/\s{0,2}(?P<total>\d{1,12}))?", re.IGNORECASE)


def when_it_failed(r: Reasoning) -> None:
    root = r.diagnosis.root_cause
    if root is None:
        return
    summary = r.files.get(root.file)
    lines: list[str] = []
    lookup = r.lines_before_lookup
    if lookup is not None and summary is not None and summary.bytes <= STEP_MAX_BYTES:
        lines = lookup(root.file, root.line, STEP_LINES) or []
    readings = [parse_line(text) for text in reversed([*lines, root.text])]  # the root line first, then upwards
    own = [message for context, message in readings if context.best_rank in (None, root.rank)]
    others = [message for context, message in readings if context.best_rank not in (None, root.rank)]
    for messages in (own, others):  # its own rank's counter, else the one rank 0 prints for every rank
        step = _last_step(messages)
        if step is not None:
            r.diagnosis.step = step
            break
    when = root.time if root.time is not None and not root.time.uptime else next(
        (context.time for context, _message in readings if context.time is not None and not context.time.uptime),
        None)
    if summary is not None and summary.first_time is not None and when is not None:
        start = comparable_seconds(summary.first_time, r.year)
        end = comparable_seconds(when, r.year)
        if start is not None and end is not None and end - start >= 1:  # (the log's first stamp: how long is unknown)
            r.diagnosis.run_time_s = end - start


def _last_step(messages: list[str]) -> str | None:
    """The step counter of the first of ``messages`` that has one (the last counter on that line: "epoch 3
    step 1200" is at step 1200)."""
    for message in messages:
        counters = list(_STEP.finditer(message))
        if counters:
            found = counters[-1]
            total = found.group("total")
            return found.group("step") + (f"/{total}" if total else "")
    return None
