"""Mask secrets (tokens, keys, passwords) in any text before it leaves the engine.

Masking replaces only the secret itself with ``****``: the rest of the line stays readable, and a masked
span that crosses line breaks keeps them, so line numbers never move. It deliberately leaves alone what a
diagnosis needs (commit hashes, UUIDs, tensor shapes, hex addresses, NCCL ``commId``/``busId``, GPU UUIDs,
pids, ports, file paths, checkpoint names): every rule needs a vendor prefix, a secret-bearing name
(``key=``, ``--flag``, a header), a URL's user-info, or a line that is nothing but a base64 key body.

The rules work by class, not by listed strings:

- a *vendor token* is one of the prefixes of ``_VENDOR_TOKENS`` (``hf_``, ``glpat-``, ``sntrys_``,
  ``ABSK``...) followed by the body that vendor documents; one regex finds every prefix at once;
- a *named value* is ``name=value``, ``name: value``, ``"name": "value"`` or ``--name value`` whose name holds
  a secret word as one of its parts, anywhere in it (``AWS_BEARER_TOKEN_BEDROCK``, ``AZURE_STORAGE_KEY``,
  ``clientSecret``, ``creds``), unless a later part says the value is not the secret itself (``_ID``,
  ``_FILE``, ``_PATH``, ``_NAME``, ``_URL``...). Weak words (``key``, ``auth``, ``creds``, ``pass``) need a
  value that looks random (mixed letters and digits, high entropy); values that are references (paths,
  ``$VAR``, ``<placeholder>``, ``tokenizer.eos_token``), placeholders (``xxxxxxxx``) or token ids are kept;
- credentials of a command or request: ``curl -u user:password``, ``Authorization: Bearer|Basic|token``,
  a URL's ``user:password@``.

Speed matters because masking runs on every shown line: each rule names a few lowercase literals (its
*triggers*) and runs only when one of them occurs in the text, so a line without any costs one
``str.lower`` and one search for all triggers at once (hyperscan's literal matcher where it is installed, a
regex of their trie otherwise). Every pattern is linear (no nested unbounded
repeats); ``tests/hardening/test_runaway_patterns.py`` checks that on adversarial lines. The corpus test
``tests/secrets/test_secret_corpus.py`` measures the rules against gitleaks's own test cases.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from faultline.prefilter import KeywordIndex

MASK = "****"


@dataclass(frozen=True)
class _Rule:
    kind: str
    pattern: re.Pattern[str]
    group: int  # the group to mask; 0 masks the whole match
    triggers: tuple[str, ...]  # lowercase literals; () = always run (the pattern is anchored and cheap)
    accept: Callable[[re.Match[str]], bool] | None = None  # rejects look-alikes (paths, placeholders, ids)
    context: re.Pattern[str] | None = None  # a cheaper test on the lowercased text that must also hold
    # Overrides ``group``/``accept``: (start, end) of the text to mask (absolute positions; start == end: keep
    # it) and how far the text was read (later matches that start before are skipped), or None.
    span: Callable[[re.Match[str]], tuple[int, int, int] | None] | None = None
    # The pattern starts with one of the triggers: it is tried only where they occur (no scan of the text).
    anchored: bool = False
    trigger_set: frozenset[str] = field(init=False, compare=False)
    finder: re.Pattern[str] | None = field(init=False, compare=False)  # an anchored rule's triggers, in one regex

    def __post_init__(self) -> None:
        object.__setattr__(self, "trigger_set", frozenset(self.triggers))
        object.__setattr__(self, "finder", re.compile(_trie_pattern(self.triggers)) if self.anchored else None)


_Trie = dict[str, "_Trie"]


def _trie_pattern(words: Iterable[str]) -> str:
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


# --------------------------------------------------------------------------------------------------------
# What is not a secret: references, placeholders, ids.

_REFERENCE_START = ("/", "~/", "./", "../", "<", "$", "%(", "{{", "[", "`", MASK)
_WINDOWS_PATH = re.compile(r"[A-Za-z]:\\")
_HOME_PATH = re.compile(r"~[A-Za-z0-9_.-]*(?:/|$)")  # ~, ~/x, ~user/x; not an Azure secret such as "~Gg8Q~..."
# tokenizer.eos_token, var.db_password, os.environ, self.api_key, os.getenv(...): code, not a value.
_CODE_REFERENCE = re.compile(r"[A-Za-z_]+(?:\.[A-Za-z_]+)+|[A-Za-z_][\w.]*[(\[].*")
_SCHEME_WORDS = frozenset({"bearer", "basic", "token", "digest", "negotiate", "none", "null", "true", "false"})
# ACCESS_TOKEN, YOUR_API_KEY (a variable's name); {SumoAccessKey}, {api_key} (a template's field);
# api-key, hf-token (the name of a stored secret: `secretKey: api-key`).
_NAME_REFERENCE = re.compile(
    r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|\{(?:[a-z]*(?:[A-Z][a-z]{2,})+|[a-z_]+|[A-Z_]+)\}?"
    r"|[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*[-_](?:key|token|secret|password|pwd|creds?|auth)(?:[-_][a-z0-9]+)*")


def _is_reference(value: str) -> bool:
    """A value that names a path, a variable, a placeholder, code or a special token (``<|endoftext|>``)."""
    if value.startswith(_REFERENCE_START):
        return True
    if (value[:1] == "~" and _HOME_PATH.match(value)) or (value[1:2] == ":" and _WINDOWS_PATH.match(value)):
        return True
    return (_CODE_REFERENCE.fullmatch(value) is not None or _NAME_REFERENCE.fullmatch(value) is not None
            or value.lower() in _SCHEME_WORDS)


_PLACEHOLDER_WORDS = frozenset({"test", "pass", "password", "passwd", "pwd", "token", "secret", "changeme",
                                "changeit", "xxx", "yyy", "username", "user", "example", "redacted"})


def _is_placeholder(value: str) -> bool:
    """``xxxxxxxx``, ``XXXX-XXXX``, ``********``, ``sha256~XXXX_PUT_YOUR_TOKEN_HERE_XXXX`` (mostly x or *),
    and the stand-in words of examples (``-u user:password``, ``changeme``)."""
    if value.lower() in _PLACEHOLDER_WORDS:
        return True
    marks = value.count("x") + value.count("X") + value.count("*") + value.count("#")
    if marks < 3:
        return False  # (most values: no need to count their letters)
    chars = sum(1 for c in value if c.isalnum() or c in "*#")
    return chars >= 6 and marks * 2 > chars


def _entropy(value: str) -> float:
    counts = [value.count(c) for c in set(value)]
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts)


_NOT_RANDOM = re.compile(
    r"v?\d+(?:[._-]\d+)+.*"  # a version: 1.2.3, 2.5.1+cu124, 0.11.2-rc1
    r"|(?:[a-z_][a-z0-9_]{0,23}|\d{1,6})(?:\.(?:[a-z_][a-z0-9_]{0,23}|\d{1,6}))+"  # model.layers.0.weight
    r"|(?:[a-z]+|\d{1,6})(?:[_.:/-](?:[a-z]+|\d{1,6}))+"  # words and small numbers: store_based_barrier_key:1
    r"|[\w.-]{0,60}[a-z]{3}[\w.-]{0,60}(?:/[\w.-]{1,60}){1,8}"  # a name or path: meta-llama/Llama-3.1-8B
    r"|[a-z]*(?:[A-Z][a-z]{2,})+")  # a camelCase identifier: TestSourcePassword


def _looks_random(value: str) -> bool:
    """What a weak name (``key``, ``auth``) needs: a value that is not a word, a name, a number or a version:
    letters and digits mixed, or letters of both cases at random, or a long run of digits. A sentence's full
    stop after the value is not part of it (``Missing key: layers.0.attention.wq.weight.``)."""
    value = value[:-1] if value.endswith(".") else value
    if len(value) < 8 or _NOT_RANDOM.fullmatch(value):
        return False
    digits, letters = any(c.isdigit() for c in value), any(c.isalpha() for c in value)
    if digits and letters:
        return _entropy(value) >= 2.7
    if letters:  # letters only: both cases scattered (yqDVtkqPECriaLRi), long enough not to be a word
        return len(value) >= 12 and not value.islower() and not value.isupper() and _entropy(value) >= 3.3
    return len(value) >= 16 and _entropy(value) >= 2.9  # digits only: a long random number, not an id


# --------------------------------------------------------------------------------------------------------
# Vendor tokens: prefix -> body. The prefixes are found by one trie regex; the body is checked per vendor.


@dataclass(frozen=True)
class _Vendor:
    source: str  # the body's regex, matched right after the prefix; the token must end where it ends
    flags: int = 0
    mixed: bool = False  # the body holds upper and lower case (hf_ tokens; words in identifiers do not)
    keep_prefix: bool = False  # the prefix is a name (``_gitlab_session=``): mask the body only

    @property
    def body(self) -> re.Pattern[str]:
        """Compiled when a prefix is first seen: most runs meet none of the 64 vendors."""
        return re.compile(self.source, self.flags)  # (``re`` keeps compiled patterns in its own cache)


def _v(body: str, *, mixed: bool = False, keep_prefix: bool = False, icase: bool = False) -> _Vendor:
    return _Vendor(body, re.IGNORECASE if icase else 0, mixed, keep_prefix)


_HEX32, _B64 = "[0-9a-fA-F]{32}", "A-Za-z0-9+/"
_VENDOR_TOKENS: dict[tuple[str, ...], _Vendor] = {
    ("hf_", "api_org_"): _v(r"[A-Za-z0-9]{30,40}", mixed=True),  # Hugging Face user / organisation
    ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"): _v(r"[A-Za-z0-9]{30,}"),  # GitHub
    ("github_pat_",): _v(r"\w{40,}"),
    ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glsoat-", "glcbt-", "glffct-", "glimt-", "glagent-",
     "gloas-"): _v(r"[\w.-]{20,}"),  # GitLab (personal, deploy, runner, trigger, feed, SCIM, job, ...)
    ("GR1348941",): _v(r"[\w-]{20,}"),  # GitLab runner registration
    ("_gitlab_session=",): _v(r"[0-9a-z]{32,}", keep_prefix=True),
    ("sk-",): _v(r"[\w-]{20,}"),  # OpenAI (sk-, sk-proj-, sk-svcacct-, sk-admin-), Anthropic (sk-ant-)
    ("pplx-",): _v(r"[A-Za-z0-9]{40,}"),  # Perplexity
    ("xoxb-",): _v(r"\d{6,}-[A-Za-z0-9-]{8,}"),  # Slack
    ("xoxp-", "xoxe-", "xoxe.xoxp-", "xoxe.xoxb-"): _v(r"\d[A-Za-z0-9-]{8,}"),
    ("xoxa-", "xoxr-"): _v(r"(?:\d-)?[A-Za-z0-9]{8,}"),
    ("xoxo-", "xoxs-"): _v(r"\d+-\d+-\d+-[A-Za-z0-9]+"),
    ("xapp-",): _v(r"\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+"),
    ("AIza",): _v(r"[\w-]{35}"),  # Google API key
    ("ya29.",): _v(r"[\w-]{20,}"),  # Google OAuth access token
    ("dapi",): _v(r"[0-9a-f]{32}(?:-\d+)?"),  # Databricks
    ("pypi-AgE",): _v(r"[\w-]{50,}"),
    ("npm_",): _v(r"[A-Za-z0-9]{36}"),
    ("ABSK",): _v(rf"[{_B64}]{{100,}}={{0,2}}"),  # Amazon Bedrock, long-lived
    ("bedrock-api-key-",): _v(rf"[{_B64}]{{20,}}={{0,2}}"),  # Amazon Bedrock, short-lived
    ("sntrys_",): _v(rf"[{_B64}=_]{{50,}}"),  # Sentry organisation token
    ("sntryu_",): _v(r"[0-9a-f]{64}"),  # Sentry user token
    ("A3-",): _v(r"[A-Z0-9]{6}-[A-Z0-9-]{20,}"),  # 1Password secret key
    ("ops_eyJ",): _v(rf"[{_B64}]{{100,}}={{0,3}}"),  # 1Password service account
    ("p8e-",): _v(r"[A-Za-z0-9]{32}"),  # Adobe
    ("AGE-SECRET-KEY-1",): _v(r"[A-Z0-9]{58}"),
    ("pat",): _v(r"[A-Za-z0-9]{14}\.[0-9a-f]{64}"),  # Airtable
    ("LTAI",): _v(r"[A-Za-z0-9]{20}"),  # Alibaba
    ("AKCp",): _v(r"[A-Za-z0-9]{69}"),  # Artifactory
    ("cmVmd",): _v(r"[A-Za-z0-9]{59}"),
    ("sc_", "ext_", "scauth_", "authress_"): _v(r"[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\."
                                                r"[a-z0-9+/_=-]{30,120}", icase=True),
    ("4b1d",): _v(r"[A-Za-z0-9]{38}"),  # ClickHouse
    ("CLOJARS_",): _v(r"[A-Za-z0-9]{60}"),
    ("v1.0-",): _v(r"[0-9a-f]{24}-[0-9a-f]{146}"),  # Cloudflare origin CA
    ("doo_v1_", "dop_v1_", "dor_v1_"): _v(r"[0-9a-f]{64}"),  # DigitalOcean
    ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."): _v(r"[A-Za-z0-9]{40,}"),  # Doppler
    ("duffel_test_", "duffel_live_"): _v(r"[\w=-]{43}"),
    ("dt0c01.",): _v(r"[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),  # Dynatrace
    ("EZAK", "EZTK"): _v(r"[A-Za-z0-9]{54}"),  # EasyPost
    ("EAAM", "EAAC"): _v(r"[A-Za-z0-9]{100,}"),  # Facebook
    ("EAAA",): _v(r"[\w-]{22,60}"),  # Square
    ("sq0atp-", "sq0csp-"): _v(r"[\w-]{22,}"),
    ("FLWSECK_TEST-", "FLWPUBK_TEST-", "FLWSECK-", "FLWPUBK-"): _v(r"[0-9a-hA-H]{12,32}(?:-X)?"),
    ("fo1_",): _v(r"[\w-]{43}"),  # Fly.io
    ("fm1a_", "fm1r_", "fm2_"): _v(rf"[{_B64}]{{100,}}={{0,3}}"),
    ("fio-u-",): _v(r"[\w=-]{64}"),  # Frame.io
    ("glc_",): _v(rf"[{_B64}]{{32,}}={{0,3}}"),  # Grafana
    ("glsa_",): _v(r"[A-Za-z0-9]{32}_[0-9a-fA-F]{8}"),
    ("eyJrIjoi",): _v(r"[A-Za-z0-9]{70,}={0,3}"),
    ("pat.", "sat."): _v(r"[\w-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"),  # Harness
    ("HRKU-AA",): _v(r"[\w-]{58}"),  # Heroku
    ("ico-",): _v(r"[A-Za-z0-9]{32}"),  # Infracost
    ("s-s4t2ud-", "s-s4t2af-"): _v(r"[0-9a-f]{64}"),  # 42
    ("lin_api_",): _v(r"[A-Za-z0-9]{40}"),  # Linear
    ("ntn_",): _v(r"\d{11}[A-Za-z0-9]{35}"),  # Notion
    ("API-",): _v(r"[A-Z0-9]{26}"),  # Octopus Deploy
    ("sha256~",): _v(r"[\w-]{43}"),  # OpenShift
    ("pscale_tkn_", "pscale_oauth_", "pscale_pw_"): _v(r"[\w=.-]{32,64}"),  # PlanetScale
    ("PMAK-",): _v(r"[0-9a-f]{24}-[0-9a-f]{34}"),  # Postman
    ("pnu_",): _v(r"[A-Za-z0-9]{36}"),  # Prefect
    ("pul-",): _v(r"[0-9a-f]{40}"),  # Pulumi
    ("rdme_",): _v(r"[a-z0-9]{70}"),  # ReadMe
    ("rubygems_",): _v(r"[0-9a-f]{48}"),
    ("tk-us-",): _v(r"[\w-]{48}"),  # Scalingo
    ("SG.",): _v(r"[\w=.-]{60,}"),  # SendGrid
    ("xkeysib-",): _v(r"[0-9a-f]{64}-[A-Za-z0-9]{16}"),  # Brevo (Sendinblue)
    ("sm_aat_", "sm_pat_", "sm_sat_"): _v(r"[A-Za-z0-9]{16}"),  # SettleMint
    ("shippo_live_", "shippo_test_"): _v(r"[0-9a-fA-F]{40}"),
    ("shpat_", "shpca_", "shppa_", "shpss_"): _v(_HEX32),  # Shopify
    ("sgp_",): _v(r"(?:[0-9a-fA-F]{16}_|local_)?[0-9a-fA-F]{40}"),  # Sourcegraph
    ("sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_"): _v(r"[A-Za-z0-9]{10,}"),  # Stripe
    ("hvb.",): _v(r"[\w-]{100,}"),  # HashiCorp Vault batch / service tokens
    ("hvs.",): _v(r"[\w-]{90,}"),
}
_VENDOR_OF: dict[str, _Vendor] = {prefix: spec for prefixes, spec in _VENDOR_TOKENS.items() for prefix in prefixes}
_WORD_RUN = re.compile(r"[A-Za-z0-9_]*")
_WORD_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def _vendor_span(match: re.Match[str]) -> tuple[int, int, int] | None:
    start, end = match.span()
    text = match.string
    spec = _VENDOR_OF[match.group()]
    glued = start > 0 and (text[start - 1] in _WORD_CHARS or text[start - 1] in "-.")
    if glued and not spec.mixed:
        # The prefix is the tail of a longer word or name: "disk-...", "misc_", "box.ico-". A body that must mix
        # cases (hf_) is specific enough to be masked glued to words ("GiBhf_...exitcode" in a cut paste): an
        # identifier that holds one ("desktop-rhf_SponsoredProducts...") is masked too, the safer mistake.
        return None
    body = spec.body.match(text, end, end + 4000)
    if body is None:
        return None
    stop = body.end()
    if stop < len(text) and text[stop] in _WORD_CHARS:
        if not spec.mixed:
            return end, end, stop  # the body is longer than the vendor's (an identifier, a word)
        # A body that must mix cases is a token even with a word glued to it (a cut paste): mask through it.
        stop = _WORD_RUN.match(text, stop, stop + 4000).end()  # type: ignore[union-attr]
    value = text[end:stop]
    if _is_placeholder(value) or (spec.mixed and (value.islower() or value.isupper())):
        return end, end, stop
    return (body.start() if spec.keep_prefix else start), stop, stop


# --------------------------------------------------------------------------------------------------------
# Named values: a name with a secret word among its parts.

# Parts of a name: snake/kebab/dot-separated words, camelCase words, digit runs.
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STRONG = frozenset({"token", "secret", "password", "passwd", "pwd", "credential", "credentials", "apikey",
                     "passphrase", "authorization", "privatekey", "secretkey", "accesskey", "apisecret",
                     "authtoken", "accesstoken", "apitoken", "refreshtoken", "sessiontoken", "bearertoken",
                     "clientsecret", "sastoken"})
_WEAK = frozenset({"key", "auth", "creds", "cred", "pass", "pw", "sig", "signature"})
# "api key", "access key", "private key", "connection string": two parts that make a strong word.
_STRONG_PAIRS = frozenset({("api", "key"), ("access", "key"), ("private", "key"), ("auth", "key"),
                           ("account", "key"), ("master", "key"), ("signing", "key"), ("encryption", "key"),
                           ("license", "key"), ("app", "key"), ("client", "key"), ("storage", "key"),
                           ("connection", "string"), ("basic", "auth"), ("service", "key"), ("ingest", "key")})
# A part after the secret word that makes the name describe the secret rather than hold it.
_DESCRIPTORS = frozenset({"name", "names", "id", "ids", "ref", "refs", "file", "files", "path", "paths", "dir",
                          "length", "len", "size", "type", "types", "url", "uri", "endpoint", "endpoints", "env",
                          "var", "count", "num", "error", "errors", "exception", "version", "format", "field",
                          "fields", "host", "port", "mode", "method", "scheme", "provider", "backend", "enabled",
                          "required", "timeout", "expiry", "expires", "ttl", "limit", "budget", "heads", "dim",
                          "index", "idx", "usage", "location", "source", "template", "map", "list", "policy",
                          "rotation", "strategy", "store", "manager", "helper", "class", "mapping", "prefix",
                          "suffix", "regex", "pattern", "kind", "variable", "hash", "chars", "charset",
                          "alphabet", "signatures"})
# More parts that follow "key" in names of keyboard keys, key pairs and key metadata.
_KEY_DESCRIPTORS = frozenset({"down", "up", "left", "right", "press", "pressed", "code", "board", "frame", "word",
                              "stone", "ring", "pair", "alias", "mesh", "meshing", "selector", "storetype",
                              "signature", "chain", "event", "binding", "stroke"})
# A part before "key" that makes it an ordinary key (of a dict, a cache, a table), not a credential.
_KEY_KINDS = frozenset({"cache", "sort", "primary", "foreign", "partition", "group", "dict", "metric", "hash",
                        "lookup", "index", "idx", "shard", "bucket", "schema", "sequence", "natural", "hot", "map",
                        "row", "column", "join", "num", "max", "min", "total", "routing", "state", "batch",
                        "input", "output", "label", "text", "image", "audio", "prompt", "data", "dataset",
                        "feature", "target", "query", "value", "attention", "kv", "rope", "public",
                        "model", "ckpt", "checkpoint", "config", "monitor", "log", "layer", "param", "weight",
                        "module", "field", "step", "run", "event", "task", "job", "node", "world", "rank"})
# Tokenizer special tokens: `pad_token: <pad>`, `stop_token: "###"` are not credentials.
_SPECIAL_TOKENS = frozenset({"pad", "eos", "bos", "unk", "sep", "cls", "mask", "special", "image", "audio",
                             "video", "start", "end", "stop", "think", "tool", "begin", "eot", "eom", "fim",
                             "additional", "decoder", "chat", "system", "assistant", "new", "next", "page",
                             "continuation", "csrf", "xsrf", "public", "max", "num", "total"})
_TOKEN_WORDS = frozenset({"token", "authtoken", "accesstoken", "apitoken"})


@lru_cache(maxsize=4096)  # names repeat (every "token =" of a line, every line of an env dump)
def _name_strength(name: str) -> tuple[int, bool]:
    """(0: not a secret name, 1: a weak one, 2: a strong one; whether it is a token name, which takes no
    numeric value: ``token=128009`` is a token id)."""
    parts = [p.lower() for p in _PARTS.findall(name)]
    strength, at, tokenish = 0, -1, False
    for i, part in enumerate(parts):
        word = 0
        if part in _STRONG or (i and (parts[i - 1], part) in _STRONG_PAIRS):
            word = 2
        elif part in _WEAK:
            word = 1
        elif len(part) > 5 and part.endswith(("token", "secret", "password", "passwd")):
            word = 2  # run-together names: hftoken, wandbapisecret, dbpassword
        if not word:
            continue
        before = parts[i - 1] if i else ""
        if (part == "key" and before in _KEY_KINDS) or (part == "token" and before in _SPECIAL_TOKENS):
            continue
        if word >= strength:
            strength, at, tokenish = word, i, part in _TOKEN_WORDS or part.endswith("token")
    if strength and any(p in _DESCRIPTORS or (parts[at] == "key" and p in _KEY_DESCRIPTORS) for p in parts[at + 1:]):
        return 0, False
    return strength, tokenish


@lru_cache(maxsize=2048)  # a value repeated on a line (or line after line) is judged once
def _secret_value(value: str, strength: int, tokenish: bool) -> bool:
    if len(value) < (6 if strength >= 2 else 8):
        return False
    if value.startswith(MASK):  # a more specific rule masked the head of this value: the rest is the same secret
        return len(value) > len(MASK) and not _is_placeholder(value[len(MASK):])
    if tokenish and value.isdigit() and len(value) <= 7:
        return False  # a token id (vocabularies stay under ten million entries)
    if _is_reference(value) or _is_placeholder(value):
        return False
    return strength >= 2 or _looks_random(value)


_QUOTED = r"\"(?:[^\"\\\n]|\\.){1,4000}\"|'(?:[^'\\\n]|\\.){1,4000}'|`[^`\n]{1,4000}`"
# Unquoted: up to white space, a quote, or what ends a value in a list, call or URL query (``, ; ) } ]``,
# ``&name=``, or ``&****``: a query parameter masked already, so that masking what was masked changes nothing); a
# literal ``\r\n`` (an HTTP request printed as bytes) ends it too.
_UNQUOTED_UNIT = r"[^\s\"'`,;)}\]<>\\&]|\\(?![rnt\"'\\])|&(?![\w.-]{1,40}=|\*\*\*\*)"
_UNQUOTED = rf"(?:{_UNQUOTED_UNIT}){{1,4000}}"


_VALUE = re.compile(_QUOTED + "|" + _UNQUOTED)
# What a value can start with (its first unit: a quote, or _UNQUOTED's first character): one step, where
# matching _VALUE itself would read up to 4,000 characters of what follows.
_VALUE_START = re.compile(r"[\"'`]|" + _UNQUOTED_UNIT)
_FLAG_VALUE = re.compile(_QUOTED + r"|[^\s\"'`]{4,4000}")


def _value_span(match: re.Match[str], value_re: re.Pattern[str], strength: int, tokenish: bool,
                ) -> tuple[int, int, int] | None:
    """The value after a secret name and its separator, without its quotes: masked if it is a secret, and
    read either way (it is matched here, not by the rule's pattern, so that only a secret name's value is
    ever taken for a value: ``KeyError: token=...`` still finds ``token=``)."""
    found = value_re.match(match.string, match.end())
    if found is None:
        return None
    start, end = read = found.span()
    value = found.group()
    if value[:1] in "\"'`":
        if value[0] == "`":
            return end, end, end  # `command substitution`
        start, end, value = start + 1, end - 1, value[1:-1]
    return (start, end, read[1]) if _secret_value(value, strength, tokenish) else (end, end, read[1])


# Both rules below are found at a secret word (a literal, so that ``re`` skips ahead to candidates) and read
# the rest of the name backwards from there: the word may sit anywhere in the name.
_SECRET_WORD = r"(?:token|secret|passw|pwd|credential|creds|key|auth|pass|pw|sig|connection)"
_NAME_TAIL = re.compile(r"[\w.\-]*")
_SEPARATOR = re.compile(r"(?P<q>[\"']?)[^\S\n]*(?P<sep>=>|:=|\?=|=|:)[^\S\n]*")


def _name_head(text: str, start: int) -> int | None:
    """Where the name whose part starts at ``start`` begins (``AWS_`` before ``BEARER_TOKEN_BEDROCK``); None
    for a shell variable being read (``$HF_TOKEN``) or a run longer than a name."""
    begin, low = start, max(0, start - 80)
    while begin > low and (text[begin - 1].isalnum() or text[begin - 1] in "_.-"):
        begin -= 1
    if begin and text[begin - 1] == "\\" and text[begin] in "nrt":
        return begin + 1  # "\r\nX-Api-Key:" (a request printed as bytes): the name starts after the escape
    if begin == start - 80 and begin and (text[begin - 1].isalnum() or text[begin - 1] in "_.-"):
        return None
    return None if begin and text[begin - 1] == "$" else begin


def _named_value_span(match: re.Match[str]) -> tuple[int, int, int] | None:
    """At a secret word: the rest of the name (read once: a later match inside it is skipped), the separator,
    then the value."""
    text = match.string
    tail = _NAME_TAIL.match(text, match.end())
    name_end = tail.end() if tail is not None else match.end()
    sep = _SEPARATOR.match(text, name_end)
    if sep is None or name_end - match.start() > 80:
        return name_end, name_end, name_end
    if sep.group("sep") == ":" and not sep.group("q") and sep.end("sep") == sep.end():
        return None  # "io.jsonwebtoken:jjwt" or "host:port": a colon needs a quoted name or a space after it
    if _VALUE_START.match(text, sep.end()) is None:
        return None  # no value follows the separator: the name need not be read
    begin = _name_head(text, match.start())
    if begin is None:
        return None
    strength, tokenish = _name_strength(text[begin:name_end])
    return _value_span(sep, _VALUE, strength, tokenish) if strength else None


def _flag_span(match: re.Match[str]) -> tuple[int, int, int] | None:
    strength, tokenish = _name_strength(match.group("name"))
    return _value_span(match, _FLAG_VALUE, strength, tokenish) if strength else None


def _unquoted_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span inside one pair of quotes around ``text[start:end]``, if it has them."""
    if end - start >= 2 and text[start] == text[end - 1] and text[start] in "\"'":
        return start + 1, end - 1
    return start, end


def _curl_user_span(match: re.Match[str]) -> tuple[int, int, int] | None:
    """``curl -u user:password``: the password (the user when the password is empty: ``-u "$KEY:"``)."""
    text, read = match.string, match.end()
    start, end = _unquoted_span(text, *match.span("value"))
    colon = text.find(":", start, end)
    if colon == -1 or text[start] in "<$[{":
        return None  # no password, or a placeholder: <user:password>, $USER:$PASS, [user:pass]
    if colon + 1 < end:
        start, end = _unquoted_span(text, colon + 1, end)
    else:
        start, end = _unquoted_span(text, start, colon)
    secret = text[start:end].strip("'\"")
    if len(secret) < 3 or _is_reference(secret) or _is_placeholder(secret):
        return None
    return start, end, read


def _not_a_reference(match: re.Match[str]) -> bool:
    value = match.group(1)
    return not _is_reference(value) and not _is_placeholder(value)


def _is_key_body(match: re.Match[str]) -> bool:
    """A line that is only a base64 run is a key body, unless it is an absolute path or all hex (a digest)."""
    body = match.group(1)
    return not body.startswith("/") and re.search(r"[g-zG-Z+/]", body) is not None


_URL_SCHEME = r"\b[a-zA-Z][a-zA-Z0-9+.-]{0,20}://"
_BEARER_VALUE = r"((?:[^\s\"'`<>\\,;)\]}]|\\(?![rnt])){8,4000})"

# Order matters: block and URL rules first (their spans contain what later rules would match), vendor
# tokens next, headers and command credentials, generic named values last.
_RULES: tuple[_Rule, ...] = (
    _Rule("private-key-block", re.compile(
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
        # A key body holds no '-': up to the END marker (across lines), else the rest of the line.
        r"([^-]*(?=-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)|[^\n]*)"), 1, ("private key",)),
    # A line that is nothing but a base64 run with upper case, lower case and digits: a PEM/OpenSSH body line.
    _Rule("key-body-line", re.compile(
        r"(?m)^[^\S\n]*((?=[A-Za-z0-9+/]*[a-z])(?=[A-Za-z0-9+/]*[A-Z])(?=[A-Za-z0-9+/]*\d)"
        r"(?:[A-Za-z0-9+/]{40,76}={0,2}|[A-Za-z0-9+/]{12,75}={1,2}))[^\S\n]*$"), 1, (), _is_key_body),
    _Rule("url-password", re.compile(_URL_SCHEME + r"[^\s:/@]{1,256}:([^\s@/]{1,4000})@"), 1, ("://",),
          lambda m: not _is_placeholder(m.group(1)) and not m.group(1).startswith(("$", "{{", MASK))),
    _Rule("url-token-user", re.compile(r"://([A-Za-z0-9_~.%-]{20,256})@"), 1, ("://",)),
    _Rule("url-query-secret", re.compile(
        r"(?i)[?&;][\w.-]{0,40}(?:token|key|secret|password|passwd|sig|signature|credential)=([^&;\s#\"'<>]{6,})"),
        1, ("token=", "key=", "secret=", "password=", "passwd=", "sig=", "signature=", "credential="),
        _not_a_reference),
    _Rule("webhook-url", re.compile(
        r"(?:hooks\.slack\.com/(?:services|workflows|triggers)|discord(?:app)?\.com/api/webhooks"
        r"|\.webhook\.office\.com/webhookb2)/([A-Za-z0-9/@_-]{20,})"),
        1, ("hooks.slack.com", "/api/webhooks", "webhookb2")),
    # The look-ahead admits every character a vendor body can start with: a prefix followed by anything else
    # ("sk-|sk-|...") is passed over in C, not in _vendor_span.
    _Rule("vendor-token", re.compile(
        "(?:" + _trie_pattern(_VENDOR_OF) + r")(?=[\w=.+/~-])"), 0,
        tuple(sorted({p.lower() for p in _VENDOR_OF})), span=_vendor_span, anchored=True),
    _Rule("aws-access-key-id", re.compile(
        r"\b((?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16})\b"), 1,
        ("akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "abia", "acca", "a3t"), _not_a_reference),
    # Azure AD client secrets: three characters, a digit, "Q~", then 31-34 more (they may start with "~").
    _Rule("azure-ad-client-secret", re.compile(
        r"(?<![\w~.-])([\w~.]{3}\dQ~[\w~.-]{31,34})(?![\w~.-])", re.ASCII), 1, ("q~",), _not_a_reference),
    # Tokens marked inside rather than in front: Terraform Cloud (".atlasv1."), MaxMind ("_mmk").
    _Rule("marked-token", re.compile(
        r"(?<![\w.-])([A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk)(?![\w-])", re.ASCII),
        1, ("atlasv1", "_mmk")),
    _Rule("gcp-private-key-id", re.compile(r"\"private_key_id\"\s*:\s*\"([0-9a-f]{16,})\""), 1, ("private_key_id",)),
    # Starts only where a run of token characters starts: "ey" inside a long run would rescan it (quadratic).
    _Rule("jwt", re.compile(
        r"(?<![A-Za-z0-9_-])(ey[A-Za-z0-9_-]{8,}\.ey[A-Za-z0-9_/\\-]{8,}\.[A-Za-z0-9_/\\-]*={0,2})"), 1, (".ey",)),
    _Rule("bearer", re.compile(r"(?i)\bbearer[^\S\n]+" + _BEARER_VALUE), 1, ("bearer",), _not_a_reference),
    _Rule("token-header", re.compile(
        r"(?i)(?<![\w-])token\s+(?![./~])(?=[A-Za-z0-9._~+/=-]*\d)([A-Za-z0-9._~+/=-]{20,})"), 1, ("token",)),
    _Rule("basic-auth-header", re.compile(
        r"(?i)\bauthorization[\"']?[^\S\n]*[:=][^\S\n]*[\"']?basic[^\S\n]+([A-Za-z0-9+/=]{8,})"), 1, ("basic",)),
    _Rule("azure-key", re.compile(
        r"(?i)\b(?:AccountKey|SharedAccessKey|SharedAccessSignature|PrimaryKey|SecondaryKey|sig)=([A-Za-z0-9+/%=]{16,})"),
        1, ("accountkey=", "sharedaccesskey=", "sharedaccesssignature=", "primarykey=", "secondarykey=", "sig=")),
    # The key is the command's argument, after at most a few options (--relogin, --host URL): not any hash later.
    _Rule("wandb-login", re.compile(r"\bwandb\s+login(?:\s+(?:--?[\w-]{1,30}(?:=\S*)?|https?://\S+)){0,4}\s+"
                                    r"((?:[a-z0-9]{1,20}-)?[0-9a-f]{40})\b"), 1, ("wandb",)),
    _Rule("login-key-argument", re.compile(r"(?i)\blogin\((?:[^()\n]{0,200}?[\s,])?key\s*=\s*[\"']([^\"'\n]{6,1000})[\"']"),
          1, ("login(",)),
    _Rule("kaggle-key", re.compile(r"\"key\"\s*:\s*\"([0-9a-f]{32})\""), 1, ("\"key\"",)),
    _Rule("curl-user", re.compile(
        r"(?<![\w-])(?:-u|--user)(?:=|[^\S\n]{1,5})(?P<value>(?:'[^'\n]{0,2000}'|\"[^\"\n]{0,2000}\"|[^\s'\"]){1,2000})"),
        0, ("curl",), span=_curl_user_span, context=re.compile(r"\bcurl\b")),
    _Rule("netrc", re.compile(r"(?i)\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)"), 1, ("password",)),
    _Rule("netrc-password-line", re.compile(r"(?im)^[^\S\n]*password[^\S\n]+(\S+)[^\S\n]*$"), 1, ("password",),
          # "password combination." is prose: a lone lower-case word is not taken for a password.
          lambda m: not re.fullmatch(r"[a-z]+[.,:;!?]?", m.group(1)) and _not_a_reference(m)),
    _Rule("secret-flag", re.compile(
        r"-(?<![\w-]-)-?(?P<name>[A-Za-z][\w.-]{0,80}?" + _SECRET_WORD + r"[\w.-]{0,80})[^\S\n]+(?!-)", re.IGNORECASE),
        0, ("password", "passwd", "secret", "token", "key", "auth", "cred", "pass", "pwd", "pw", "sig",
            "connection"), span=_flag_span),
    _Rule("key-value", re.compile("(?i)" + _SECRET_WORD),
        0, ("password", "passwd", "pwd", "secret", "key", "token", "credential", "creds", "auth", "pass", "pw",
            "sig", "connection"), span=_named_value_span, anchored=True),
)


_TRIGGERS: tuple[str, ...] = tuple(sorted({t for rule in _RULES for t in rule.triggers}))

# Whether any trigger occurs at all: most lines hold none, and then no triggered rule runs.
_ANY_TRIGGER = re.compile(_trie_pattern(_TRIGGERS))
_TRIGGER_SET = frozenset(_TRIGGERS)
_WITH_PREFIXES = {t: frozenset(t[:end] for end in range(1, len(t) + 1) if t[:end] in _TRIGGER_SET) for t in _TRIGGERS}
_UNTRIGGERED_RULES = tuple(rule for rule in _RULES if not rule.triggers)


@lru_cache(maxsize=1)
def _trigger_gate() -> KeywordIndex | None:
    """Hyperscan's literal matcher over the triggers, where it is installed: it tells a line without any
    trigger (most lines) in under a microsecond, where the trie regex takes about 12 us for a 200-character
    line. Without hyperscan the regex is the faster test. (The triggers are ASCII, so they occur in the UTF-8
    bytes of the lowered text exactly where they occur in the text.)"""
    index = KeywordIndex([trigger.encode("ascii") for trigger in _TRIGGERS])
    return index if index.engine == "hyperscan" else None


_MAX_STARTS = 64  # more trigger occurrences than this (a pathological line): no positions, rules search
_MANY_TRIGGERS: dict[str, list[int]] = {t: [] for rule in _RULES if len(rule.triggers) > 16 for t in rule.triggers}
_GATE_TRIGGERS = tuple(t for t in _TRIGGERS if t not in _MANY_TRIGGERS)


def _triggers_in(lowered: str, match: re.Match[str] | None) -> tuple[dict[str, list[int]], bool]:
    """Where each trigger occurs: the longest one starting at each position where one starts (so overlapping
    ones too), with the triggers that are its prefixes ("token" for "token="); and whether those positions
    are all of them (on a line with very many, only which triggers occur is worked out)."""
    found: dict[str, list[int]] = {}
    for _ in range(_MAX_STARTS):
        if match is None:
            return found, True
        start = match.start()
        for trigger in _WITH_PREFIXES[match.group()]:
            found.setdefault(trigger, []).append(start)
        match = _ANY_TRIGGER.search(lowered, start + 1)
    # (The rules with very many triggers, the vendor prefixes, are taken to be triggered: their own search
    # costs less than a substring test per trigger over a long line.)
    return {t: [] for t in _GATE_TRIGGERS if t in lowered} | _MANY_TRIGGERS, False


def _masked_span(span: str) -> str:
    # A span across lines (a PEM block) keeps its line breaks so that line numbers stay put.
    return MASK if "\n" not in span else re.sub(r"[^\n]+", MASK, span)


def _apply(rule: _Rule, text: str, starts: list[int] | None = None) -> str:
    """``rule`` applied to ``text``; ``starts``: where an anchored rule's triggers occur (None: search)."""
    if rule.span is not None:
        return _apply_spans(rule, text, starts)

    def replace(match: re.Match[str]) -> str:
        whole = match.group(0)
        start, end = match.span(rule.group)
        if start == end or (rule.accept is not None and not rule.accept(match)):
            return whole
        offset = match.start(0)
        return whole[: start - offset] + _masked_span(whole[start - offset:end - offset]) + whole[end - offset:]

    return rule.pattern.sub(replace, text)


def _apply_spans(rule: _Rule, text: str, starts: list[int] | None) -> str:
    """A rule whose span function says what to mask, possibly past its match (a value found after a name):
    the spans of all matches, overlapping ones merged, are masked at once."""
    assert rule.span is not None
    spans: list[tuple[int, int]] = []
    if starts is None:
        matches: Iterable[re.Match[str] | None] = rule.pattern.finditer(text)
    else:
        matches = (rule.pattern.match(text, start) for start in starts)
    read = 0  # how far matches have read the text: a match that starts before is inside what was read
    for match in matches:
        if match is None or match.start() < read:
            continue
        where = rule.span(match)
        if where is None:
            continue
        start, end, read = where
        if start >= end:
            continue
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    if not spans:
        return text
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], _masked_span(text[start:end])]
        last = end
    out.append(text[last:])
    return "".join(out)


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
    # One pass can leave a secret that a second finds: a name's value read past what an earlier match covered, or a
    # match shifted by what another rule masked. Masking is repeated until nothing changes, so that masked text is
    # masked (a view, a cache and a re-read line all see the same); a line without secrets takes one pass.
    masked = _mask_once(text)
    for _ in range(_MAX_PASSES - 1):
        if masked == text:
            break
        text, masked = masked, _mask_once(masked)
    return masked


_MAX_PASSES = 4  # each pass only replaces spans by the mask: two or three reach the fixed point


def _mask_once(text: str) -> str:
    """One pass of every rule over ``text``."""
    lowered = text.lower()
    gate = _trigger_gate()
    if gate is not None and not gate.contains_any(lowered.encode("utf-8", "surrogatepass")):
        first = None
    else:
        first = _ANY_TRIGGER.search(lowered)
    if first is None:  # most lines: no trigger at all, only the rules without triggers can apply
        present: dict[str, list[int]] = {}
        rules, located = _UNTRIGGERED_RULES, False
    else:
        (present, located), rules = _triggers_in(lowered, first), _RULES
    stale = False  # a rule changed the text's length: the triggers' positions moved (their set can only shrink)
    for rule in rules:
        starts = None
        if rule.triggers:
            if rule.trigger_set.isdisjoint(present) or (rule.context is not None and not rule.context.search(lowered)):
                continue
            if rule.anchored and len(lowered) == len(text):  # (lower() may change the length of non-ASCII text)
                if stale and located:
                    (present, located), stale = _triggers_in(lowered, _ANY_TRIGGER.search(lowered)), False
                if located:
                    starts = sorted({start for t in rule.trigger_set.intersection(present) for start in present[t]})
                elif rule.finder is not None:  # a line with very many triggers: this rule's own, in one search
                    starts = [found.start() for found in rule.finder.finditer(lowered)]
        elif len(text) < 14 or not _could_be_key_body(text):
            continue
        changed = _apply(rule, text, starts)
        if changed != text:
            stale = stale or len(changed) != len(text)
            text, lowered = changed, changed.lower()
    return text


def _could_be_key_body(text: str) -> bool:
    """Cheap pre-check for the key-body rule: a single line must be short; a document must have a long run."""
    if "\n" not in text:
        return len(text.strip()) <= 80
    return _LONG_B64_RUN.search(text) is not None


_LONG_B64_RUN = re.compile(r"[A-Za-z0-9+/]{12}")


def secret_kinds() -> list[str]:
    """Names of the secret kinds masked (documented in SECURITY.md)."""
    return [rule.kind for rule in _RULES]


def vendor_prefixes() -> list[str]:
    """The vendor token prefixes the ``vendor-token`` kind knows (documented in SECURITY.md)."""
    return sorted(_VENDOR_OF)
