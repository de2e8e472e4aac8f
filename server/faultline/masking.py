"""Mask secrets (tokens, keys, passwords) in any text before it leaves the engine.

Masking keeps the rest of the line readable and its length roughly the same; it never removes a
line. It deliberately leaves commit hashes, tensor shapes and hex addresses alone: the key patterns
below need a vendor prefix, a ``key=`` context, or mixed-case base64.
"""

from __future__ import annotations

import re

MASK = "****"

# (name, pattern, group to mask or 0 for the whole match). Order matters: specific before generic.
_RULES: list[tuple[str, re.Pattern[str], int]] = [
    ("private-key-block", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"), 0),
    ("url-password", re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://[^\s:/@]{1,256}:([^\s@/]{1,256})@"), 1),
    ("huggingface", re.compile(r"(hf_[A-Za-z0-9]{30,})"), 1),
    ("github", re.compile(r"((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})"), 1),
    ("gitlab", re.compile(r"(glpat-[A-Za-z0-9_-]{20,})"), 1),
    ("anthropic", re.compile(r"(sk-ant-[A-Za-z0-9_-]{20,})"), 1),
    ("openai", re.compile(r"\b(sk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,})"), 1),
    ("slack", re.compile(r"\b(xox[abposr]-[A-Za-z0-9-]{10,})"), 1),
    ("aws-access-key", re.compile(r"\b((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[0-9A-Z]{16})\b"), 1),
    ("google-api-key", re.compile(r"\b(AIza[0-9A-Za-z_-]{35})"), 1),
    ("jwt", re.compile(r"\b(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})"), 1),
    ("bearer", re.compile(r"(?i)\b(?:bearer|token)\s+([A-Za-z0-9._~+/=-]{16,})"), 1),
    ("basic-auth-header", re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/=]{8,})"), 1),
    ("azure-connection", re.compile(r"(?i)(?:AccountKey|SharedAccessKey|sig)=([A-Za-z0-9+/%=]{16,})"), 1),
    ("gcp-private-key-id", re.compile(r"\"private_key_id\"\s*:\s*\"([0-9a-f]{20,})\""), 1),
    ("netrc", re.compile(r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)"), 1),
    (
        "key-value",
        re.compile(
            r"(?i)(?:^|[\s\"'{,;(-])(?:--)?[a-z0-9_.-]{0,40}"
            r"(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|auth[_-]?token|access[_-]?token"
            r"|token|private[_-]?key|client[_-]?secret|credentials?)"
            r"[\"']?\s*[:=]\s*[\"']?([^\s\"',;}{)]{6,})"
        ),
        1,
    ),
    (
        "pem-body",
        re.compile(r"^\s*((?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{60,76}={0,2})\s*$"),
        1,
    ),
]

_QUICK = re.compile(
    r"hf_|gh[pousr]_|github_pat_|glpat-|sk-|xox|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|AIza|eyJ|://|PRIVATE KEY"
    r"|(?i:bearer|token|authorization|password|passwd|secret|key|credential|machine|sig=)"
    r"|^\s*[A-Za-z0-9+/]{60,76}={0,2}\s*$"
)


def _mask_group(match: re.Match[str], group: int) -> str:
    whole = match.group(0)
    if group == 0:
        return MASK
    start, end = match.span(group)
    offset = match.start(0)
    return whole[: start - offset] + MASK + whole[end - offset:]


def mask_secrets(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``****``."""
    if not text or not _QUICK.search(text):
        return text
    for _name, pattern, group in _RULES:
        if pattern.search(text):
            text = pattern.sub(lambda m, g=group: _mask_group(m, g), text)  # type: ignore[misc]
    return text


def secret_kinds() -> list[str]:
    """Names of the secret kinds masked (documented in the README and SECURITY.md)."""
    return [name for name, _pattern, _group in _RULES]
