"""Which open documents Faultline diagnoses, what it calls them, and the result it keeps for each.

A document is a log when its language id is ``log``, or when it is a ``*.log``/``*.out``/``*.err``/``*.txt``
file whose head or tail looks like training output (rank prefixes, torch/NCCL/CUDA words, launcher names).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePath
from urllib.parse import unquote, urlparse

from lsprotocol.types import Diagnostic

from ..diagnosis import Diagnosis
from ..lines.prefixes import RANK_MARKERS
from ..model import Event, Suspect
from .lines import LineIndex

LOG_LANGUAGE_IDS = frozenset({"log"})
CANDIDATE_SUFFIXES = frozenset({".log", ".out", ".err", ".txt"})
SAMPLE_CHARS = 64 * 1024
# Words and prefixes that training output carries; two different ones make a plain text file a log.
_TRAINING_MARKERS = re.compile(
    RANK_MARKERS + r"|\btorch\b|\btorchrun\b|\bNCCL\b|\bCUDA\b|Traceback \(most recent call last\)"
    r"|\bdeepspeed\b|\bsrun\b|\bslurm(?:stepd)?\b|\bepoch\b|\bloss\b|ProcessGroup|\baccelerate\b|\bMegatron\b"
    r"|\bvLLM\b|\biteration\b|\bglobal_step\b|\blearning rate\b|\blr\b",
    re.IGNORECASE,
)


def uri_path(uri: str) -> str | None:
    """The local file path of a ``file:`` URI, None for other schemes (``untitled:``, ``git:`` ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if re.match(r"^/[A-Za-z]:/", path):  # file:///C:/... on Windows
        path = path[1:]
    return path


def document_name(uri: str) -> str:
    """The name the engine reports a document under: its path when it has one, else its URI."""
    return uri_path(uri) or uri


def has_candidate_suffix(uri: str) -> bool:
    path = uri_path(uri) or urlparse(uri).path
    suffixes = {s.lower() for s in PurePath(path).suffixes[-2:]}
    return bool(suffixes & CANDIDATE_SUFFIXES)


def looks_like_training_output(text: str) -> bool:
    sample = text[:SAMPLE_CHARS] + "\n" + text[-SAMPLE_CHARS:] if len(text) > 2 * SAMPLE_CHARS else text
    seen: set[str] = set()
    for match in _TRAINING_MARKERS.finditer(sample):
        seen.add(re.sub(r"\d+", "#", match.group().lower()))
        if len(seen) >= 2:
            return True
    return False


def is_log_document(uri: str, language_id: str | None, text: str) -> bool:
    if language_id in LOG_LANGUAGE_IDS:
        return True
    return has_candidate_suffix(uri) and looks_like_training_output(text)


@dataclass
class DocumentResult:
    """The last diagnosis of one document version, with what hovers and code actions need to answer fast."""

    uri: str
    version: int | None
    name: str
    lines: LineIndex
    diagnosis: Diagnosis | None
    diagnostics: list[Diagnostic]
    too_large: bool = False
    # The publishDiagnostics notification, serialized by the worker thread (see log_documents.publish_body).
    publish_body: str | None = None
    events_by_line: dict[int, list[Event]] = field(default_factory=dict)  # editor line -> events
    suspects_by_line: dict[int, Suspect] = field(default_factory=dict)
    diagnostics_by_line: dict[int, list[Diagnostic]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.diagnosis is not None and not self.events_by_line:
            by_line: dict[int, list[Event]] = defaultdict(list)
            for event in self.diagnosis.events:
                by_line[self.lines.editor_line(event.line)].append(event)
            root = self.diagnosis.root_cause
            if root is not None and not any(event is root for event in self.diagnosis.events):
                # an inferred root cause (e.g. a straggler) points at a line no signature matched
                by_line[self.lines.editor_line(root.line)].insert(0, root)
            self.events_by_line = dict(by_line)
            self.suspects_by_line = {self.lines.editor_line(s.line): s for s in self.diagnosis.suspicious}
        if not self.diagnostics_by_line:
            grouped: dict[int, list[Diagnostic]] = defaultdict(list)
            for diagnostic in self.diagnostics:
                grouped[diagnostic.range.start.line].append(diagnostic)
            self.diagnostics_by_line = dict(grouped)
