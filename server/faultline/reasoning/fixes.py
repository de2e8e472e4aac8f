"""Fixes that apply to this failure: a step or an environment variable with a condition (``when``) is offered
only when the root cause's own fields meet it, and says why it is offered.

"Apply fix" sets a fix's environment variables in the launch script, so an unconditional
``expandable_segments`` for every out-of-memory would change a user's job for a case the signature itself
calls conditional. Without a root line, the fix given is that of the symptoms' family (an unknown cause) or of a
cause inferred from the other ranks: the fields of the family's first line are checked, and without such a line
(an inferred cause) no field can be, and conditional items are left out.

A step whose condition is the signature's ``root_when`` (the line states its own cause: a group timeout of
seconds, a barrier joined by more workers than the world holds) is the fix for that cause: it becomes the summary.
"""

from __future__ import annotations

from dataclasses import replace

from ..library import EnvVar, Fix, Signature
from .state import Reasoning


def offer_what_applies(r: Reasoning) -> None:
    sig = r.diagnosis.root_signature
    if sig is None:
        return
    root = r.diagnosis.root_cause
    if root is None:  # the fix of the symptoms' family: the fields of the first line of that family
        root = min((e for e in r.events if e.signature_id == sig.id), key=lambda e: e.order, default=None)
    r.diagnosis.root_signature = applicable(sig, root.fields if root is not None else None)


def applicable(sig: Signature, fields: dict[str, str] | None) -> Signature:
    """The signature with its fix reduced to what applies for these fields (None: a diagnosis without a root
    line, or none at hand: every conditional item is left out)."""
    fix = sig.fix
    if not fix.step_when and all(env.when is None for env in fix.env):
        return sig  # nearly always
    steps: list[str] = []
    summary = fix.summary
    stated = replace(sig.root_when, source="") if sig.root_when is not None else None
    for index, step in enumerate(fix.steps):
        when = fix.when_of(index)
        why = when.why(fields) if when is not None and fields is not None else None
        if when is None:
            steps.append(step)
        elif why is not None:
            if replace(when, source="") == stated and summary == fix.summary:
                summary = step  # the cause the line states: its step is the fix
            steps.append(f"{step} (offered because {why})")
    env: list[EnvVar] = []
    for var in fix.env:
        why = var.when.why(fields) if var.when is not None and fields is not None else None
        if var.when is None:
            env.append(var)
        elif why is not None:
            env.append(EnvVar(var.name, var.value, f"{var.note} (offered because {why})".strip(), var.when))
    return replace(sig, fix=Fix(summary, tuple(steps), tuple(env)))
