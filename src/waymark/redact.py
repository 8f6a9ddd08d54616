"""Privacy before persistence: drop `<private>` spans and redact secrets.

Every stored field passes through `scrub` (or `scrub_value` for JSON-ish fields) so that
nothing unredacted reaches the database. Hook processes import this module on every
event, so it uses `re` only. Compiling all ~30 patterns costs 5-9 ms, more than the whole
import budget, so each pattern is compiled the first time a text could match it and kept.

Rules run most specific first: a key-shaped token gets its own marker before the generic
`password = ...` rule looks at it, and no rule matches a value that is already a marker,
which is what makes `scrub` idempotent. Every pattern starts with a literal or with a
look-behind that refuses to start inside a run of the same characters, so adversarial input
(100 KB of `a=`, one huge base64 run) is scanned in linear time.
"""

from __future__ import annotations

import re
from collections.abc import Callable

MARK = "[REDACTED:{}]"
_NOT_MARK = r"(?!\[REDACTED:)"

# A rule is (pattern source, flags, needles, decide). The rule only runs when one of its
# lower-case needles occurs in the text: a substring test is far cheaper than compiling or
# scanning, and most texts hold no secret at all. `decide` is the marker kind, or a function of the match that
# returns the kind or None to keep the match as it is. Only the group named s, s2, s3 or s4
# (the first that took part) is replaced, so `password=` and `user:` survive.
Decide = str | Callable[[re.Match[str]], str | None]
Rule = tuple[str, int, tuple[str, ...], Decide]

_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def _re(source: str, flags: int = 0) -> re.Pattern[str]:
    """The compiled pattern, compiled on first use (see the module docstring)."""
    pattern = _COMPILED.get((source, flags))
    if pattern is None:
        pattern = _COMPILED[source, flags] = re.compile(source, flags)
    return pattern


# --- private spans ----------------------------------------------------------------------

_PRIVATE_TAG = r"<\s*(/?)\s*private\s*>"


def _drop_private_once(text: str) -> tuple[str, int]:
    # Tags nest so that a `<private>` quoted inside a private span cannot end it early;
    # an unclosed span drops everything to the end (fail safe); a stray closer stays text.
    kept: list[str] = []
    count = depth = keep_from = 0
    for tag in _re(_PRIVATE_TAG, re.IGNORECASE).finditer(text):
        if not tag.group(1):
            if depth == 0:
                kept.append(text[keep_from : tag.start()])
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                keep_from = tag.end()
                count += 1
    if depth:
        return "".join(kept), count + 1
    if not count:
        return text, 0
    kept.append(text[keep_from:])
    return "".join(kept), count


def _drop_private(text: str) -> tuple[str, int]:
    # Dropping `<pri<private>x</private>vate>` joins a new tag; repeat until none is left.
    total = 0
    while "<" in text:
        text, count = _drop_private_once(text)
        if not count:
            break
        total += count
    return text, total


# --- PEM private key blocks ---------------------------------------------------------------

_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
# Body of a block whose END line is missing (truncated output): base64, header lines such
# as `Proc-Type: 4,ENCRYPTED`, real or JSON-escaped newlines.
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s:,.\-]|\\[nr])*"


def _redact_pem(text: str) -> tuple[str, int]:
    if "PRIVATE KEY" not in text:
        return text, 0
    out: list[str] = []
    pos = count = 0
    end_missing = False  # once no END follows, none follows later BEGINs either
    while begin := _re(_PEM_BEGIN).search(text, pos):
        end = None if end_missing else _re(_PEM_END).search(text, begin.end())
        end_missing = end is None
        body = end or _re(_PEM_BODY).match(text, begin.end())
        stop = body.end() if body else len(text)
        out += [text[pos : begin.start()], MARK.format("private_key")]
        pos, count = stop, count + 1
    out.append(text[pos:])
    return "".join(out), count


# --- checks used by rules ----------------------------------------------------------------


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    for name in ("s", "s2", "s3", "s4"):
        if name in m.re.groupindex and m.start(name) != -1:
            return m.span(name)
    return m.span()


def _looks_random(token: str) -> bool:
    """True for key-like strings: a digit, or upper case after the first letter."""
    has_lower = any(c.islower() for c in token)
    return any(c.isdigit() for c in token) or (has_lower and any(c.isupper() for c in token[1:]))


def _if_random(kind: str) -> Callable[[re.Match[str]], str | None]:
    # For prefixes that also begin ordinary words (`sk-learn-...`, `xoxo-...`).
    def decide(m: re.Match[str]) -> str | None:
        start, end = _secret_span(m)
        return kind if _looks_random(m.string[start:end]) else None

    return decide


def _authorization(m: re.Match[str]) -> str | None:
    # A header value is a credential whatever it looks like; "the bearer of" is not.
    # Under 8 characters it is code (`"Authorization": f"Bearer {token}"`), not a credential.
    token = m.group("s")
    return "authorization" if len(token) >= 8 and (m.group("h") or _looks_random(token)) else None


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(m: re.Match[str]) -> str | None:
    # Luhn alone passes one long number in ten; issuer prefixes and lengths rule out
    # timestamps (leading 1), ISBNs (leading 9) and most ids.
    digits = m.group(0).replace(" ", "").replace("-", "")
    n, first = len(digits), digits[0]
    if first not in "23456" or len(set(digits)) < 2 or not _luhn_ok(digits):
        return None
    if (first == "4" and n not in (13, 16, 19)) or (digits[:2] in ("34", "37") and n != 15):
        return None
    if first in "25" and digits[:2] not in ("50", "56", "57", "58") and n != 16:
        return None
    return "card_number"


# Kind names for the generic assignment rule, by keyword.
_KIND_OF = {
    "passwd": "password",
    "pwd": "password",
    "pass": "password",
    "passphrase": "password",
    "credentials": "credential",
}
_KEY_SUFFIX = r"[_\-]?key$"
# Bare (unquoted) values that are code, not secrets: literals and type names.
_CODE_WORDS = frozenset(
    {"none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes", "int"}
    | {"bool", "any", "optional", "required", "secretstr", "return", "pass"}
)
_DOTTED_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
_ANNOTATION_TAIL = r"[ \t]*[=|,)]"
_PROSE_TAIL = r"[ \t]+[a-z]"


def _is_placeholder(value: str) -> bool:
    """`${DB_PASSWORD}`, `{{ secrets.X }}`, `%(pw)s`, `<your-token>`, `****`, SQL `?` / `:pw`."""
    if value in ("?", "%s") or set(value) <= set("*xX•."):
        return True
    return value.startswith(("$", "{{", "%(", "#{", "<", ":"))


def _is_code(m: re.Match[str], value: str) -> bool:
    """An unquoted value that reads as code or prose rather than a literal secret."""
    if value.lower() in _CODE_WORDS or value.lower() == m.group("k").lower():
        return True  # `token=None`, `password: str`, `{"password": password}`
    if "(" in value or "[" in value or value == "{" or _re(_DOTTED_NAME).fullmatch(value):
        return True  # `hash(pw)`, `tokens[0]`, `settings.SECRET_KEY`
    if value.startswith(("/", "~/", "./")):
        return True  # `PWD=/home/me`, `CREDENTIALS=/etc/app/key.json`
    sep, tail_at = m.groupdict().get("sep") or "=", m.end()
    annotated = value[0].isupper() and value.isidentifier()
    if ":" in sep and annotated and _re(_ANNOTATION_TAIL).match(m.string, tail_at):
        return True  # `def f(token: SecretStr, ...)`
    if ":" in sep or not sep.strip():  # "the token: it expires", "use --token to log in"
        return (
            value.isalpha() and value.islower() and bool(_re(_PROSE_TAIL).match(m.string, tail_at))
        )
    return False


def _assignment(m: re.Match[str]) -> str | None:
    groups = m.groupdict()
    quoted = groups.get("s") or groups.get("s2") or groups.get("s3")
    value = quoted or groups["s4"]
    if _is_placeholder(value) or (not quoted and _is_code(m, value)):
        return None
    keyword = _re(_KEY_SUFFIX).sub("_key", m.group("k").lower())
    return _KIND_OF.get(keyword, keyword)


# --- the rules ---------------------------------------------------------------------------

_KEYWORD = (
    r"(?P<k>password|passwd|passphrase|pwd|(?<![a-z])pass|secret|token|credentials?|apikey"
    r"|(?:api|access|secret|private|auth|client|signing|encryption|master|session)[_\-]?key)"
)
# A value: escaped-JSON string, "string", 'string' (closing quote optional so that an
# unterminated string is still redacted to the end of the line), or a bare word.
_VALUE = (
    rf'(?:\\"{_NOT_MARK}(?P<s>(?:[^"\\\n]|\\[^"\n])+)(?:\\")?'
    rf'|"{_NOT_MARK}(?P<s2>(?:[^"\\\n]|\\.)+)"?'
    rf"|'{_NOT_MARK}(?P<s3>(?:[^'\\\n]|\\.)+)'?"
    rf"|{_NOT_MARK}(?P<s4>[^\s\"'`,;&)}}\]\\]+))"
)
_ASSIGN_SEP = r"(?P<sep>(?:\\?[\"']\]?)?[ \t]*(?::=|=>|=(?!=)|:(?![:=]))[ \t]*)"
_TOKEN_START = r"(?<![A-Za-z0-9_\-])"


def _rule(source: str, needles: tuple[str, ...], decide: Decide, flags: int = 0) -> Rule:
    return source, flags, needles, decide


_I = re.IGNORECASE
_RULES: list[Rule] = [
    _rule(
        r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        ("akia", "asia", "abia", "acca"),
        "aws_access_key",
    ),
    _rule(
        r"(?<![A-Za-z0-9])(?:aws[_\-]?)?secret[_\-]?access[_\-]?key(?:\\?[\"'])?[ \t]*"
        r"(?::=|=>|[:=])[ \t]*(?:\\?[\"'])?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
        ("secret",),
        "aws_secret_key",
        _I,
    ),
    _rule(_TOKEN_START + r"AIza[0-9A-Za-z_\-]{35}", ("aiza",), "gcp_api_key"),
    _rule(
        r"(?<![A-Za-z0-9_\-./:])(?:ya29\.[0-9A-Za-z_\-]{20,}|1//0[0-9A-Za-z_\-]{40,})",
        ("ya29.", "1//0"),
        "google_oauth_token",
    ),
    _rule(
        r"(?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/=]{20,})",
        ("accountkey", "sharedaccesskey"),
        "azure_storage_key",
        _I,
    ),
    _rule(r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})", ("sig=",), "azure_sas_signature"),
    _rule(
        r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        "github_token",
    ),
    _rule(
        _TOKEN_START + r"gl(?:pat|dt|rt|ptt|ft)-[A-Za-z0-9_\-]{20,}",
        ("glpat-", "gldt-", "glrt-", "glptt-", "glft-"),
        "gitlab_token",
    ),
    _rule(
        _TOKEN_START + r"(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}",
        ("xox", "xapp-"),
        _if_random("slack_token"),
    ),
    _rule(
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})",
        ("hooks.slack.com",),
        "slack_webhook",
    ),
    _rule(
        r"(?<![A-Za-z0-9_])(?:[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|whsec_[A-Za-z0-9]{24,})",
        ("k_live_", "k_test_", "whsec_"),
        _if_random("stripe_key"),
    ),
    _rule(_TOKEN_START + r"sk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",), "anthropic_key"),
    _rule(
        _TOKEN_START + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        ("sk-",),
        _if_random("openai_key"),
    ),
    _rule(
        r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])",
        ("hf_",),
        _if_random("huggingface_token"),
    ),
    _rule(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36,}", ("npm_",), _if_random("npm_token")),
    _rule(_TOKEN_START + r"pypi-AgE[A-Za-z0-9_\-]{50,}", ("pypi-age",), "pypi_token"),
    _rule(r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", ("sk",), "twilio_api_key"),
    _rule(
        r"(?<![A-Za-z0-9_\-.])SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}",
        ("sg.",),
        "sendgrid_key",
    ),
    _rule(
        _TOKEN_START + r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
        ("eyj",),
        "jwt",
    ),
    # With an Authorization header the scheme is optional; without one, Bearer/Basic must
    # be followed by something key-like.
    _rule(
        _TOKEN_START + r"(?:(?P<h>authorization[\"']?[ \t]*[:=][ \t]*[\"']?)"
        r"(?:(?:bearer|basic|token|digest)[ \t]+)?|(?:bearer|basic)[ \t]+)"
        r"(?!(?:bearer|basic|token|digest)(?![A-Za-z0-9\-._~+/]))(?P<s>[A-Za-z0-9\-._~+/]+=*)",
        ("bearer", "basic", "authorization"),
        _authorization,
        _I,
    ),
    # Credentials in URLs and connection strings; greedy to the last `@` so that an
    # unescaped `@` inside the password is still covered.
    _rule(
        r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]*://[^\s:/?#@\"'<>]*:"
        + _NOT_MARK
        + r"(?P<s>[^\s/?#\"'<>]+)(?=@)",
        ("://",),
        "password",
    ),
    _rule(
        r"<(?:[A-Za-z0-9.\-]+[_.\-:])?" + _KEYWORD + r">" + _NOT_MARK + r"(?P<s>[^<\n]+)</",
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _assignment,
        _I,
    ),
    _rule(
        r"(?<![A-Za-z0-9_\-])--(?:[A-Za-z0-9]+[_\-])*?"
        + _KEYWORD
        + r"(?P<sep>=|[ \t]+)(?!-)"
        + _VALUE,
        ("--",),
        _assignment,
        _I,
    ),
    _rule(
        _KEYWORD + _ASSIGN_SEP + _VALUE,
        ("pass", "pwd", "secret", "token", "key", "credential"),
        _assignment,
        _I,
    ),
    # The look-behind sits after the first digit so that `re` can skip to digits fast.
    _rule(r"[0-9](?<![\w\-.][0-9])(?:[ \-]?[0-9]){12,18}(?![\w\-])", (), _card),
]


# --- public API ----------------------------------------------------------------------------


def _apply(rule: Rule, text: str) -> tuple[str, int]:
    source, flags, _, decide = rule
    count = 0

    def replace(m: re.Match[str]) -> str:
        nonlocal count
        kind = decide if isinstance(decide, str) else decide(m)
        if kind is None:
            return m.group(0)
        count += 1
        start, end = _secret_span(m)
        whole, offset = m.group(0), m.start()
        return whole[: start - offset] + MARK.format(kind) + whole[end - offset :]

    return _re(source, flags).sub(replace, text), count


def scrub(text: str) -> tuple[str, int]:
    """Drop `<private>` spans and redact secrets; return the new text and the redaction count.

    A dropped span leaves nothing behind; a secret becomes `[REDACTED:<kind>]`, keeping the
    non-secret part around it (`password=[REDACTED:password]`). Idempotent.
    """
    text, total = _drop_private(text)
    text, count = _redact_pem(text)
    total += count
    lower = text.lower()
    for rule in _RULES:
        needles = rule[2]
        if needles and not any(needle in lower for needle in needles):
            continue
        text, count = _apply(rule, text)
        total += count
    return text, total


def scrub_value(value: object) -> tuple[object, int]:
    """Scrub every string inside a JSON-ish value (str, list, tuple, dict values; keys kept)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, (list, tuple)):
        pairs = [scrub_value(item) for item in value]
        items = [item for item, _ in pairs]
        return (tuple(items) if isinstance(value, tuple) else items), sum(n for _, n in pairs)
    if isinstance(value, dict):
        total = 0
        out = {}
        for key, item in value.items():
            out[key], count = scrub_value(item)
            total += count
        return out, total
    return value, 0
