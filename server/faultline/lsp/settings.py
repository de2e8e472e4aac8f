"""Typed server settings, read from ``initializationOptions`` and ``workspace/didChangeConfiguration``.

The client sends the settings object of the contract (``signatureFolders``, ``severity``, ``debounceMs``,
``maxDocumentBytes``, ``enabled``; optionally ``logLevel``), either bare or under the key ``faultline``.
A bad value never stops the server: it keeps the previous value and the problem is reported.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from lsprotocol.types import DiagnosticSeverity

SECTION = "faultline"
SEVERITY_NAMES: dict[str, DiagnosticSeverity] = {
    "error": DiagnosticSeverity.Error,
    "warning": DiagnosticSeverity.Warning,
    "information": DiagnosticSeverity.Information,
    "info": DiagnosticSeverity.Information,
    "hint": DiagnosticSeverity.Hint,
}
LOG_LEVELS = ("error", "warning", "info", "debug")


@dataclass(frozen=True)
class Severities:
    root_cause: DiagnosticSeverity = DiagnosticSeverity.Error
    collateral: DiagnosticSeverity = DiagnosticSeverity.Warning
    suspicious: DiagnosticSeverity = DiagnosticSeverity.Information


@dataclass(frozen=True)
class Settings:
    signature_folders: tuple[str, ...] = ()
    severity: Severities = field(default_factory=Severities)
    debounce_ms: int = 300
    max_document_bytes: int = 20_000_000
    enabled: bool = True
    log_level: str = "info"
    # False in an untrusted (restricted) editor window: only the built-in signatures are loaded.
    workspace_trusted: bool = True

    def describe(self) -> str:
        severity = self.severity
        return (f"enabled={self.enabled} signatureFolders={list(self.signature_folders)} "
                f"severity=({severity.root_cause.name.lower()}, {severity.collateral.name.lower()}, "
                f"{severity.suspicious.name.lower()}) debounceMs={self.debounce_ms} "
                f"maxDocumentBytes={self.max_document_bytes} logLevel={self.log_level} "
                f"workspaceTrusted={self.workspace_trusted}")

    def updated(self, raw: object, base_folder: Path | None = None) -> tuple[Settings, list[str]]:
        """These settings with the values of ``raw`` applied; returns the new settings and the problems found.

        ``raw`` may be the settings object itself or ``{"faultline": {...}}``. Keys that are absent keep
        their current value. Relative signature folders resolve against ``base_folder``.
        """
        problems: list[str] = []
        if isinstance(raw, Mapping) and isinstance(raw.get(SECTION), Mapping):
            raw = raw[SECTION]
        if raw is None:
            return self, problems
        if not isinstance(raw, Mapping):
            return self, [f"settings: expected an object, got {type(raw).__name__}"]
        result = self
        if "signatureFolders" in raw:
            folders = raw["signatureFolders"]
            if isinstance(folders, list) and all(isinstance(f, str) for f in folders):
                resolved = tuple(_resolve_folder(f, base_folder) for f in folders if f.strip())
                result = replace(result, signature_folders=resolved)
            else:
                problems.append("signatureFolders: expected a list of folder paths")
        if "severity" in raw:
            result, found = _with_severities(result, raw["severity"])
            problems += found
        if "debounceMs" in raw:
            value = raw["debounceMs"]
            if _is_number(value) and 0 <= value <= 60_000:
                result = replace(result, debounce_ms=int(value))
            else:
                problems.append(f"debounceMs: {value!r}, expected a number of milliseconds from 0 to 60000")
        if "maxDocumentBytes" in raw:
            value = raw["maxDocumentBytes"]
            if _is_number(value) and value >= 0:
                result = replace(result, max_document_bytes=int(value))
            else:
                problems.append(f"maxDocumentBytes: {value!r}, expected a number of bytes (0 or more)")
        if "enabled" in raw:
            value = raw["enabled"]
            if isinstance(value, bool):
                result = replace(result, enabled=value)
            else:
                problems.append(f"enabled: {value!r}, expected true or false")
        if "workspaceTrusted" in raw:
            value = raw["workspaceTrusted"]
            if isinstance(value, bool):
                result = replace(result, workspace_trusted=value)
            else:
                problems.append(f"workspaceTrusted: {value!r}, expected true or false")
        if "logLevel" in raw:
            value = raw["logLevel"]
            level = "debug" if value == "trace" else value
            if level in LOG_LEVELS:
                result = replace(result, log_level=str(level))
            else:
                problems.append(f"logLevel: {value!r}, expected one of {', '.join(LOG_LEVELS)}")
        return result, problems


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _resolve_folder(folder: str, base_folder: Path | None) -> str:
    path = Path(os.path.expanduser(folder.strip()))
    if not path.is_absolute() and base_folder is not None:
        path = base_folder / path
    return str(path)


def _with_severities(settings: Settings, raw: object) -> tuple[Settings, list[str]]:
    if not isinstance(raw, Mapping):
        return settings, ["severity: expected an object with rootCause, collateral and suspicious"]
    problems: list[str] = []
    chosen: dict[str, DiagnosticSeverity] = {}
    for key, attribute in (("rootCause", "root_cause"), ("collateral", "collateral"), ("suspicious", "suspicious")):
        if key not in raw:
            continue
        value = raw[key]
        if isinstance(value, str) and value.lower() in SEVERITY_NAMES:
            chosen[attribute] = SEVERITY_NAMES[value.lower()]
        else:
            problems.append(f"severity.{key}: {value!r}, expected error, warning, information or hint")
    return replace(settings, severity=replace(settings.severity, **chosen)), problems
