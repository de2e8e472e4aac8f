"""Turn a diagnosis of one document into LSP diagnostics: root cause, collateral, suspicious lines.

The root cause is one diagnostic whose related information points at each collateral line (capped);
each collateral line points back at the cause. Ranges cover the line's text in the client's position
units (UTF-16 unless the client negotiated another encoding), so lines with non-ASCII text fit exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol.types import (
    CodeDescription,
    Diagnostic,
    DiagnosticRelatedInformation,
    DiagnosticSeverity,
    Location,
    Position,
    Range,
)
from pygls.workspace.position_codec import PositionCodec

from ..diagnosis import Diagnosis
from ..model import Event, Verdict
from ..render.common import collateral_ranks, own_later_lines, shorten
from .lines import LineIndex, client_units
from .settings import Severities

SOURCE = "faultline"
MAX_RELATED = 5  # the root cause's related lines: one per collateral rank, the first few (the rest are counted)
MAX_DIAGNOSTICS = 1000


@dataclass(frozen=True)
class DiagnosticOptions:
    severities: Severities
    code_description: bool = False  # the client renders `codeDescription.href` (a link to the signature file)


def line_range(lines: LineIndex, editor_line: int, codec: PositionCodec) -> Range:
    """The range of one editor line's text, in the client's position units."""
    text = lines.line_text(editor_line)
    return Range(Position(editor_line, 0), Position(editor_line, client_units(text, codec)))


def rank_label(rank: int | None) -> str:
    return f"rank {rank}" if rank is not None else "rank ?"


def root_message(event: Event) -> str:
    return f"Root cause · {rank_label(event.rank)} · {event.message}"


def first_failure_message(event: Event) -> str:
    return f"First failure seen · {rank_label(event.rank)} · {event.message} (a symptom: its cause is not in this log)"


def collateral_message(event: Event, cause_line: int | None) -> str:
    cause = event.caused_by
    if cause is None:
        return f"Collateral · {rank_label(event.rank)} · {event.message} (its cause is not in this log)"
    where = f" (line {cause_line})" if cause_line is not None else ""
    return f"Collateral · {rank_label(event.rank)} · {event.message}, caused by {rank_label(cause.rank)}{where}"


def build_diagnostics(diagnosis: Diagnosis, lines: LineIndex, uri: str, codec: PositionCodec,
                      options: DiagnosticOptions,
                      signature_file: Callable[[str], Path | None] = lambda _id: None) -> list[Diagnostic]:
    """Diagnostics for the document ``uri`` whose text ``lines`` was diagnosed (events of other files are skipped)."""
    name = diagnosis.files[0].path if diagnosis.files else None
    severities = options.severities
    out: list[Diagnostic] = []

    def ours(event: Event) -> bool:
        return name is None or event.file == name

    def location(event: Event) -> Location:
        return Location(uri, line_range(lines, lines.editor_line(event.line), codec))

    def code_description(signature_id: str) -> CodeDescription | None:
        if not options.code_description:
            return None
        path = signature_file(signature_id)
        return CodeDescription(href=path.as_uri()) if path is not None else None

    root = diagnosis.root_cause
    collateral = [e for e in diagnosis.collateral if ours(e) and e is not root]
    if root is not None and ours(root):
        # The first line of each other rank (then the unattributed), the root rank's own later lines last.
        first_per_rank: dict[object, Event] = {}
        for e in sorted(collateral, key=lambda e: e.rank is not None and e.rank == root.rank):
            key = "own" if e.rank is not None and e.rank == root.rank else e.rank if e.rank is not None else "?"
            first_per_rank.setdefault(key, e)
        shown = list(first_per_rank.values())[:MAX_RELATED]
        related = [DiagnosticRelatedInformation(location(e), collateral_message(e, None)) for e in shown]
        message = root_message(root)
        if len(collateral) > len(shown):
            ranks, unattributed = collateral_ranks(collateral, root)
            own = len(own_later_lines(collateral, root))
            message += (f" ({len(collateral) - own} collateral lines on {ranks} other rank(s)"
                        + (f" and {unattributed} unattributed" if unattributed else "")
                        + (f", {own} later on rank {root.rank} itself" if own else "")
                        + "; the first of each is linked, and every one links back here)")
        out.append(Diagnostic(
            range=location(root).range, message=message, severity=severities.root_cause,
            code=root.signature_id, code_description=code_description(root.signature_id), source=SOURCE,
            related_information=related or None,
        ))
    root_here = root is not None and ours(root)
    cause_line = lines.editor_line(root.line) + 1 if root is not None and root_here else None
    for event in collateral[: MAX_DIAGNOSTICS - len(out)]:
        back = None
        if event.caused_by is not None and ours(event.caused_by):
            cause = event.caused_by
            back = [DiagnosticRelatedInformation(location(cause), root_message(cause))]
        out.append(Diagnostic(
            range=location(event).range,
            message=(first_failure_message(event) if event is diagnosis.first_failure
                     else collateral_message(event, cause_line if event.caused_by is root else None)),
            severity=severities.collateral, code=event.signature_id,
            code_description=code_description(event.signature_id), source=SOURCE, related_information=back,
        ))
    if diagnosis.verdict is Verdict.UNKNOWN:
        for suspect in diagnosis.suspicious:
            if name is not None and suspect.file != name:
                continue
            editor_line = lines.editor_line(suspect.line)
            out.append(Diagnostic(
                range=line_range(lines, editor_line, codec),
                message=f"Suspicious · {rank_label(suspect.rank)} · {shorten(suspect.text, 200)} ({suspect.reason})",
                severity=severities.suspicious, source=SOURCE, code="suspicious",
            ))
    return out


def too_large_diagnostic(size: int, limit: int, name: str, lines: LineIndex, codec: PositionCodec) -> Diagnostic:
    """The one diagnostic of a document over ``maxDocumentBytes``: why nothing else is shown, and what to run."""
    return Diagnostic(
        range=line_range(lines, 0, codec),
        message=(f"Faultline: this log is {_megabytes(size)}, more than maxDocumentBytes ({_megabytes(limit)}), "
                 f"so it is not diagnosed automatically. Run the command faultline.diagnosePath with "
                 f"{{\"paths\": [\"{name}\"]}} (\"Faultline: Diagnose File\" in VS Code), or raise "
                 f"faultline.maxDocumentBytes."),
        severity=DiagnosticSeverity.Information, source=SOURCE, code="document-too-large",
    )


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"
