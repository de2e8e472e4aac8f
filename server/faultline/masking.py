"""Mask secrets (tokens, keys, passwords) in any text before it leaves the engine.

Masking replaces only the secret itself with ``****``: the rest of the line stays readable, and a masked
span that crosses line breaks keeps them, so line numbers never move. It deliberately leaves alone what a
diagnosis needs (commit hashes, tensor shapes, hex addresses, NCCL ``commId``/``busId``, pids, ports, file
paths): every rule needs a vendor prefix, a ``key=``/``--flag`` context, a URL's user-info, or a line that
is nothing but a base64 key body.

Speed matters because the scanner masks every line it matches: each rule names a few lowercase literals
(its *triggers*) and runs only when one of them occurs in the text, so a line without any costs one
``str.lower`` and a handful of substring tests. Every pattern is linear (no nested unbounded repeats);
``tests/hardening/test_runaway_patterns.py`` checks that on adversarial lines.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

MASK = "****"


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int  # the group to mask; 0 masks the whole match
    triggers: tuple[str, ...]  # lowercase literals; () = always run (the pattern is anchored and cheap)
    accept: Callable[[re.Match[str]], bool] | None = None  # rejects look-alikes (paths, placeholders, ids)
    context: re.Pattern[str] | None = None  # a cheaper test on the lowercased text that must also hold


def _not_a_reference(match: re.Match[str]) -> bool:
    """A value that names a path, a placeholder or a special token (``<|endoftext|>``) is not a secret."""
    value = match.group(1)
    # A value that starts with the mask was a secret a more specific rule already masked; what follows is text.
    if value.startswith((MASK, "/", "~", "./", "../", "<", "$", "%(", "{{", "[")):
        return False
    return not re.match(r"[A-Za-z]:\\", value)


def _not_a_token_id(match: re.Match[str]) -> bool:
    """``token=128009`` is a token id, not an API token; a numeric *password* is still a secret."""
    if not _not_a_reference(match):
        return False
    return not (match.group(1).isdigit() and "token" in match.group(0).lower())


_B64 = "A-Za-z0-9+/"
_URL_SCHEME = r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://"
_KV_WORDS = (r"(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key|secret[_-]?key|auth[_-]?token"
             r"|access[_-]?token|refresh[_-]?token|session[_-]?token|token|private[_-]?key|client[_-]?secret"
             r"|credentials?|connection[_-]?string)")
_FLAG_WORDS = r"(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|auth[_-]?token)"

# Order matters: block and URL rules first (their spans contain what later rules would match), vendor
# prefixes next, generic ``key=value`` contexts last.
_RULES: tuple[_Rule, ...] = (
    _Rule("private-key-block", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        # A key body holds no '-': up to the END marker (across lines), else the rest of the line.
        r"([^-]*(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)|[^\n]*)"), 1, ("private key",)),
    # A line that is nothing but a base64 run with upper case, lower case and digits: a PEM/OpenSSH body line.
    _Rule("key-body-line", re.compile(
        rf"(?m)^[^\S\n]*((?=[{_B64}]*[a-z])(?=[{_B64}]*[A-Z])(?=[{_B64}]*\d)"
        rf"(?:[{_B64}]{{40,76}}={{0,2}}|[{_B64}]{{12,75}}={{1,2}}))[^\S\n]*$"), 1, (),
        lambda m: not m.group(1).startswith("/")),  # an absolute path alone on a line is not a key
    _Rule("url-password", re.compile(_URL_SCHEME + r"[^\s:/@]{1,256}:([^\s@/]{1,256})@"), 1, ("://",)),
    _Rule("url-token-user", re.compile(r"://([A-Za-z0-9_~.%-]{20,256})@"), 1, ("://",)),
    _Rule("url-query-secret", re.compile(
        r"(?i)[?&;][\w.-]{0,40}(?:token|key|secret|password|passwd|sig|signature|credential)=([^&;\s#\"'<>]{6,})"),
        1, ("token=", "key=", "secret=", "password=", "passwd=", "sig=", "signature=", "credential="),
        _not_a_reference),
    _Rule("huggingface", re.compile(r"(hf_[A-Za-z0-9]{30,})"), 1, ("hf_",)),
    _Rule("github", re.compile(r"((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{30,})"), 1,
          ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _Rule("github-fine-grained", re.compile(r"(github_pat_[A-Za-z0-9_]{40,})"), 1, ("github_pat_",)),
    _Rule("gitlab", re.compile(r"(gl(?:pat|dt|rt|ptt|ft|soat|cbt)-[A-Za-z0-9_-]{20,})"), 1,
          ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-")),
    _Rule("anthropic", re.compile(r"(sk-ant-[A-Za-z0-9_-]{20,})"), 1, ("sk-ant-",)),
    _Rule("openai", re.compile(r"\b(sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})"), 1, ("sk-",)),
    _Rule("slack", re.compile(r"\b(xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{10,})"), 1, ("xox", "xapp-")),
    _Rule("webhook-url", re.compile(
        r"(?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks)/([A-Za-z0-9/_-]{20,})"),
        1, ("hooks.slack.com", "/api/webhooks")),
    _Rule("aws-access-key-id", re.compile(r"\b((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16})\b"),
          1, ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca")),
    _Rule("google-api-key", re.compile(r"(AIza[0-9A-Za-z_-]{35})"), 1, ("aiza",)),
    _Rule("google-oauth-token", re.compile(r"\b(ya29\.[0-9A-Za-z_-]{20,})"), 1, ("ya29.",)),
    _Rule("gcp-private-key-id", re.compile(r"\"private_key_id\"\s*:\s*\"([0-9a-f]{16,})\""), 1, ("private_key_id",)),
    _Rule("databricks", re.compile(r"\b(dapi[0-9a-f]{32}(?:-\d+)?)\b"), 1, ("dapi",)),
    _Rule("pypi", re.compile(r"(pypi-AgE[A-Za-z0-9_-]{50,})"), 1, ("pypi-age",)),
    _Rule("npm", re.compile(r"\b(npm_[A-Za-z0-9]{36})\b"), 1, ("npm_",)),
    # Starts only where a run of token characters starts: "eyJ" inside a long run would rescan it (quadratic).
    _Rule("jwt", re.compile(r"(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)"), 1,
          ("eyj",)),
    _Rule("bearer", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{12,})"), 1, ("bearer",)),
    _Rule("token-header", re.compile(
        r"(?i)\btoken\s+(?![./~])(?=[A-Za-z0-9._~+/=-]*\d)([A-Za-z0-9._~+/=-]{20,})"), 1, ("token",)),
    _Rule("basic-auth-header", re.compile(r"(?i)\bauthorization:\s*basic\s+([A-Za-z0-9+/=]{8,})"), 1, ("basic",)),
    _Rule("azure-key", re.compile(
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|PrimaryKey|SecondaryKey|sig)=([A-Za-z0-9+/%=]{16,})"),
        1, ("accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "primarykey=", "secondarykey=", "sig=")),
    # The key is the command's argument, after at most a few options (--relogin, --host URL): not any hash later.
    _Rule("wandb-login", re.compile(r"\bwandb\s+login(?:\s+(?:--?[\w-]{1,30}(?:=\S*)?|https?://\S+)){0,4}\s+"
                                    r"((?:[a-z0-9]{1,20}-)?[0-9a-f]{40})\b"), 1, ("wandb",)),
    _Rule("login-key-argument", re.compile(r"(?i)\blogin\((?:[^()\n]{0,200}?[\s,])?key\s*=\s*[\"']([^\"'\n]{6,1000})[\"']"),
          1, ("login(",)),
    _Rule("kaggle-key", re.compile(r"\"key\"\s*:\s*\"([0-9a-f]{32})\""), 1, ("\"key\"",)),
    _Rule("netrc", re.compile(r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)"), 1, ("password",)),
    _Rule("netrc-password-line", re.compile(r"(?im)^[^\S\n]*password[^\S\n]+(\S+)[^\S\n]*$"), 1, ("password",)),
    _Rule("secret-flag", re.compile(
        rf"(?i)(?<![\w-])--?(?:[a-z0-9]+[_-])*{_FLAG_WORDS}[^\S\n]+(?!-)([^\s\"']{{4,}})"),
        1, ("password", "passwd", "secret", "token", "key"), _not_a_token_id),
    _Rule("key-value", re.compile(
        rf"(?i)(?<![a-z0-9_.-])(?:--)?[a-z0-9_.-]{{0,40}}{_KV_WORDS}[\"']?\s*[:=]\s*[\"']?([^\s\"',;}}{{)&]{{6,}})"),
        1, ("password", "passwd", "pwd", "secret", "key", "token", "credential", "connection"), _not_a_token_id,
        # "tokens/s" or "KeyError" on a training line must not cost the full rule: a name ending in one of the
        # words right before ':' or '=' is needed.
        re.compile(r"(?:password|passwd|pwd|secret|key|token|credentials?|string)[\"']?\s*[:=]")),
)

_TRIGGERS: tuple[str, ...] = tuple(sorted({t for rule in _RULES for t in rule.triggers}))


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: tuple[str, ...]) -> str:
    """One regex for "any of these literals", nested by shared prefixes: ``re`` tries each alternative at
    every position of a flat alternation, but only one branch per character of a trie."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: _Trie) -> str:
        branches = [re.escape(char) + build(child) for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


# Whether any trigger occurs at all: most lines hold none, and then no triggered rule runs.
_ANY_TRIGGER = re.compile(_trie_pattern(_TRIGGERS))
_UNTRIGGERED_RULES = tuple(rule for rule in _RULES if not rule.triggers)


def _masked_span(span: str) -> str:
    # A span across lines (a PEM block) keeps its line breaks so that line numbers stay put.
    return MASK if "\n" not in span else re.sub(r"[^\n]+", MASK, span)


def _apply(rule: _Rule, text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        start, end = match.span(rule.group)
        if start == end or (rule.accept is not None and not rule.accept(match)):
            return whole
        offset = match.start(0)
        return whole[: start - offset] + _masked_span(whole[start - offset:end - offset]) + whole[end - offset:]

    return rule.pattern.sub(replace, text)


# The characters secrets are made of (base64, base64url, hex, URL-encoding).
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=_.~%-"


def mask_secrets(text: str, *, truncated: bool = False) -> str:
    """Return ``text`` with every recognised secret replaced by ``****`` (line breaks kept).

    ``truncated``: the text is the head of a longer line (cut at a length limit). Its last word may be the
    first part of a secret, too short for the secret's rule to recognise, so a trailing run of 8 or more
    token characters is masked as well.
    """
    if truncated:
        text = mask_secrets(text)
        start = len(text.rstrip(_TOKEN_CHARS))  # str.rstrip, not a regex: linear however long the run
        armour = text.rfind("-----", start)  # a PEM marker ("PRIVATE KEY-----") is no secret: keep it whole
        if armour != -1:
            start = armour + 5
        return text[:start] + MASK if len(text) - start >= 8 else text
    if not text:
        return text
    lowered = text.lower()
    if _ANY_TRIGGER.search(lowered):
        present = {t for t in _TRIGGERS if t in lowered}
        rules = _RULES
    else:  # most lines: only the rules without triggers can apply
        present = set()
        rules = _UNTRIGGERED_RULES
    for rule in rules:
        if rule.triggers:
            if present.isdisjoint(rule.triggers) or (rule.context is not None and not rule.context.search(lowered)):
                continue
        elif len(text) < 14 or not _could_be_key_body(text):
            continue
        text = _apply(rule, text)
    return text


def _could_be_key_body(text: str) -> bool:
    """Cheap pre-check for the key-body rule: a single line must be short; a document must have a long run."""
    if "\n" not in text:
        return len(text.strip()) <= 80
    return _LONG_B64_RUN.search(text) is not None


_LONG_B64_RUN = re.compile(rf"[{_B64}]{{12}}")


def secret_kinds() -> list[str]:
    """Names of the secret kinds masked (documented in SECURITY.md)."""
    return [rule.kind for rule in _RULES]
