"""Privacy before persistence: drop `<private>` spans and redact secrets.

Every stored field passes through `scrub` (or `scrub_value` for JSON-ish fields) so that
nothing unredacted reaches the database. Hook processes import this module on every event,
so it uses `re` only. Compiling all ~30 patterns costs 5-9 ms, more than the whole import
budget, so a pattern is compiled the first time a text could match it, then kept.

Rules run most specific first: a key-shaped token gets its own marker before the generic
`password = ...` rule sees it, and no rule matches a value that is already a marker, which
is what makes `scrub` idempotent. Every pattern starts with a literal or with a look-behind
that refuses to start inside a run of the characters it consumes, so adversarial input
(100 KB of `a=`, one huge base64 run) is scanned in linear time.

Over 600 lines and kept whole: most of it is the rules table (data), each rule beside the
function that decides its matches; and a clearance stamp (`clearance`) names the redactor by
this one file's source, so a change to any rule or decision makes stamps scan again.
"""

from __future__ import annotations

TYPE_CHECKING = False  # mypy honours the name; importing typing would cost hooks ~3 ms
if TYPE_CHECKING:
    import re
    from collections.abc import Callable
    from typing import TypeVar

    T = TypeVar("T")
    # A rule's decision: see `Rule` below.
    Decide = str | Callable[[re.Match[str], str], str | None]
    Rule = tuple[str, bool, tuple[str, ...], Decide]

_IGNORECASE = 2  # re.IGNORECASE: `re` itself is imported only when a pattern is needed

MARK = "[REDACTED:{}]"
_NOT_MARK = r"(?!\[(?i:redacted):)"  # case-insensitive: some rules scan lower()

# A rule is (pattern source, case_insensitive, needles, decide). It runs only when one of
# its lower-case needles occurs in the text: a substring test is far cheaper than a scan,
# and most texts hold no secret. `decide` is the marker kind, or a function of the match and
# the original text returning the kind, or None to keep the match. Only the group named
# s, s2, s3 or s4 (the first that took part) is replaced, so `password=` and `user:` stay.
# A rule without needles (card numbers) runs only where the text holds 13 digits or more.
# Most texts pass every needle test, so most never import `re` (about 6 ms in a hook).

_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def _re(source: str, flags: int = 0) -> re.Pattern[str]:
    """The compiled pattern, compiled on first use (see the module docstring)."""
    pattern = _COMPILED.get((source, flags))
    if pattern is None:
        import re

        pattern = _COMPILED[source, flags] = re.compile(source, flags)
    return pattern


# --- private spans and PEM blocks --------------------------------------------------------

_PRIVATE_TAG = r"<\s*(/?)\s*private\s*>"


def _drop_private_once(text: str) -> tuple[str, int]:
    # Tags nest, so a `<private>` quoted inside a private span cannot end it early; an
    # unclosed span drops everything to the end (fail safe); a stray closer stays as text.
    kept: list[str] = []
    count = depth = keep_from = 0
    for tag in _re(_PRIVATE_TAG, _IGNORECASE).finditer(text):
        if not tag.group(1):
            if depth == 0:
                kept.append(text[keep_from : tag.start()])
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                keep_from, count = tag.end(), count + 1
    if depth:
        return "".join(kept), count + 1
    if not count:
        return text, 0
    kept.append(text[keep_from:])
    return "".join(kept), count


def _drop_private(text: str) -> tuple[str, int]:
    # Dropping `<pri<private>x</private>vate>` joins a new tag: repeat until none is left.
    total = 0
    while "<" in text:
        text, count = _drop_private_once(text)
        if not count:
            break
        total += count
    return text, total


_PEM_BEGIN = r"-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----"
# The body of a block whose END line is missing (truncated output): base64, header lines
# such as `Proc-Type: 4,ENCRYPTED`, real or JSON-escaped newlines.
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s:,.\-]|\\[nr])*"


def _redact_pem(text: str) -> tuple[str, int]:
    # A search for END, not a non-greedy regex, keeps many BEGINs without END linear.
    if "PRIVATE KEY" not in text:
        return text, 0
    out: list[str] = []
    pos = count = 0
    end_missing = False  # once no END follows one BEGIN, none follows the later ones
    while begin := _re(_PEM_BEGIN).search(text, pos):
        end = None if end_missing else _re(_PEM_END).search(text, begin.end())
        end_missing = end is None
        body = end or _re(_PEM_BODY).match(text, begin.end())
        out += [text[pos : begin.start()], MARK.format("private_key")]
        pos, count = body.end() if body else len(text), count + 1
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


def _if_random(kind: str) -> Callable[[re.Match[str], str], str | None]:
    # For prefixes that also begin ordinary words (`sk-learn-...`, `xoxo-...`).
    def decide(m: re.Match[str], text: str) -> str | None:
        start, end = _secret_span(m)
        return kind if _looks_random(text[start:end]) else None

    return decide


def _authorization(m: re.Match[str], text: str) -> str | None:
    # "the bearer of" is not a credential; a key-like word of 8 characters or more is.
    token = text[m.start("s") : m.end("s")]
    return "authorization" if len(token) >= 8 and _looks_random(token) else None


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(m: re.Match[str], text: str) -> str | None:
    # Luhn alone passes one long number in ten; issuer prefixes and lengths rule out
    # timestamps (leading 1), ISBNs (leading 9) and most ids.
    digits = m.group(0).replace(" ", "").replace("-", "")
    n, first, two = len(digits), digits[0], digits[:2]
    if first not in "23456" or len(set(digits)) < 2 or not _luhn_ok(digits):
        return None
    if (first == "4" and n not in (13, 16, 19)) or (two in ("34", "37") and n != 15):
        return None
    if first in "25" and two not in ("50", "56", "57", "58") and n != 16:
        return None
    return "card_number"


_KIND_OF = {"passwd": "password", "pwd": "password", "pass": "password"}
_KIND_OF |= {"passphrase": "password", "credentials": "credential"}
# Bare (unquoted) values that are code, not secrets: literals and type names.
_CODE_WORDS = {"none", "null", "nil", "true", "false", "undefined", "str", "string", "bytes"}
_CODE_WORDS |= {"int", "bool", "any", "optional", "required", "secretstr", "return", "pass"}
_DOTTED_NAME = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
_ANNOTATION_TAIL = r"[ \t]*[=|,)]"
_PROSE_TAIL = r"[ \t]+[a-z]"


def _is_placeholder(value: str) -> bool:
    """`${DB_PASSWORD}`, `{{ secrets.X }}`, `%(pw)s`, `<your-token>`, `****`, SQL `?`, `:pw`."""
    if value in ("?", "%s") or (len(value) >= 3 and set(value) <= set("*xX•.")):
        return True
    return value.startswith(("$", "{{", "%(", "#{", "<", ":"))


def _is_code(m: re.Match[str], text: str, value: str) -> bool:
    """An unquoted value that reads as code or prose rather than a literal secret."""
    low, after = value.lower(), text[m.end() : m.end() + 1]
    if low in _CODE_WORDS or low == m.group("k").lower() or value == "{":
        return True  # `token=None`, `password: str`, `{"password": password}`
    if after in ("(", "[") or _re(_DOTTED_NAME).fullmatch(value):
        return True  # `hash(pw)`, `tokens[0]`, `settings.SECRET_KEY`
    if value.startswith(("/", "~/", "./")):
        return True  # `PWD=/home/me`, `CREDENTIALS=/etc/app/key.json`
    sep = m.groupdict().get("sep") or "="
    annotated = value[0].isupper() and value.isidentifier()
    if ":" in sep and annotated and _re(_ANNOTATION_TAIL).match(text, m.end()):
        return True  # `def f(token: SecretStr, ...)`
    if ":" in sep or not sep.strip():  # "the token: it expires", "use --token to log in"
        prose_tail = _re(_PROSE_TAIL).match(text, m.end())
        return value.isalpha() and value.islower() and prose_tail is not None
    return False


def _assignment(m: re.Match[str], text: str) -> str | None:
    keyword, (start, end) = m.group("k").lower(), _secret_span(m)
    if keyword == "pass" and text[m.start("k") - 1 : m.start("k")].isalpha():
        return None  # `bypass: true`, `compass = north`
    value, bare = text[start:end], m.groupdict().get("s4") is not None
    if _is_placeholder(value) or (bare and _is_code(m, text, value)):
        return None
    keyword = keyword.replace("-", "_")
    if keyword.endswith("key") and not keyword.endswith("_key"):
        keyword = keyword[:-3] + "_key"  # `secretKey` -> secret_key
    return _KIND_OF.get(keyword, keyword)


def _flag_password(m: re.Match[str], text: str) -> str | None:
    """A password given on a command line: not a placeholder (`$PASS`, `PASS`, `<pw>`)."""
    start, end = _secret_span(m)
    value = text[start:end].strip("'\"")
    if not value or _is_placeholder(value) or (value.isupper() and value.isalpha()):
        return None
    return "password"


def _config_set(m: re.Match[str], text: str) -> str | None:
    name = m.group("n").lower()
    start, end = _secret_span(m)
    value = text[start:end].strip("'\"")
    if (
        not value
        or _is_placeholder(value)
        or (name.endswith("key") and "_" not in name and "api" not in name and "auth" not in name)
    ):
        return None  # `keyboard`-like names: only keys that say what they are count
    if "secret_access_key" in name:
        return "aws_secret_key"
    for word, kind in (("token", "token"), ("pass", "password"), ("secret", "secret")):
        if word in name:
            return kind
    return "credential" if "credential" in name else "api_key"


_PROSE = r"[a-z]+(?:[ \t]+[a-z]+)*[.,;:!?]?"


def _authorization_header(m: re.Match[str], text: str) -> str | None:
    # Code builds the header (`f"Token {token}"`, `"Bearer " + t`); prose describes it
    # ("Authorization: required for admin routes").
    start, end = _secret_span(m)
    value = text[start:end].strip()
    if "[REDACTED:" in value or value.startswith("{") or _is_placeholder(value):
        return None
    if len(value.split()[0] if value else "") < 8:
        return None
    scheme = m.group("sc") or m.group("sc2") or ""
    if scheme.isalpha() and _re(_PROSE).fullmatch(value) and value.islower():
        return None
    return "authorization"


def _cookie(m: re.Match[str], text: str) -> str | None:
    start, end = _secret_span(m)
    value = text[start:end].strip()
    return "cookie" if "=" in value and not _is_placeholder(value) else None


def _url_password(m: re.Match[str], text: str) -> str | None:
    # `https://host:8080/@types/node` is a port and a path, not a password.
    before_special = m.group("p")
    return "password" if before_special and not before_special.isdigit() else None


def _directive(m: re.Match[str], text: str) -> str | None:
    # `AuthLDAPBindPassword x` names what it holds; a bare `secret sauce` line may be prose,
    # so there the value must be quoted or key-like.
    kind = _flag_password(m, text)
    start, end = _secret_span(m)
    value = text[start:end]
    if kind and m.group("k") in ("password", "passwd", "passphrase", "secret"):
        quoted = value[:1] in ("'", '"')
        if not quoted and value.isalpha() and not _looks_random(value):
            return None
    return kind


def _php_define(m: re.Match[str], text: str) -> str | None:
    start, end = _secret_span(m)
    if _is_placeholder(text[start:end]):
        return None
    name = m.group("n")
    return "password" if "pass" in name else "token" if "token" in name else "secret"


_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_[]*")


def _pgpass(m: re.Match[str], text: str) -> str | None:
    # The host is the word right before the port, wherever the line puts it (`echo h:5432:
    # db:user:pw >> ~/.pgpass`, a prompt before it). Clock readings and IPv6 addresses have
    # colons too: a credential line has a word in it.
    start = m.start()
    while start > 0 and text[start - 1] in _HOST_CHARS:
        start -= 1
    host = text[start : m.start()]
    if start > 0 and text[start - 1] not in " \t\r\n'\"=(>,;|`":
        return None  # a field of a longer colon-separated line (`/etc/shadow`), not a host
    if not _re(r"[A-Za-z0-9.\-_\[\]]+|\*").fullmatch(host):
        return None
    line = host + m.group(0).rstrip()
    if _re(r"[0-9A-Fa-f:.*]+").fullmatch(line) or _is_placeholder(text[slice(*_secret_span(m))]):
        return None
    return "credential_line"


def _tool_flag(tool: str, flag: str, needle: str) -> Rule:
    """`tool ... flag VALUE` (or `flagVALUE` when the flag ends in `=`-less glue, `-p`):
    within the same command, never past a pipe or `;`."""
    return (
        tool
        + r"(?![\w\-])[^\n|;&]{0,160}?[ \t]"
        + flag
        + _NOT_MARK
        + r"(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"\-][^\s'\"]*)",
        False,
        (needle,),
        _flag_password,
    )


_CLI_PASSWORDS: list[Rule] = [
    # curl and wget: `-u user:password`, `--user user:password` (a token as user or password).
    (r"\b(?:curl|wget)(?![\w\-])[^\n|;&]{0,160}?[ \t](?:-[A-Za-z]*u|--user|--http-user)[ \t=]+['\"]?"
     r"[^\s:'\"\[\]]*:" + _NOT_MARK + r"(?P<s>[^\s'\"@]+)", False, ("curl", "wget"), _flag_password),
    _tool_flag(r"\bmysql(?:dump|admin|sh|import)?", "-p", "mysql"),
    _tool_flag(r"\bmariadb(?:-dump|-admin)?", "-p", "mariadb"),
    _tool_flag(r"\bsshpass", r"-p[ \t]*", "sshpass"),
    _tool_flag(r"\bdocker[ \t]+login", r"-p[ \t]+", "docker"),
    _tool_flag(r"\bpodman[ \t]+login", r"-p[ \t]+", "podman"),
    _tool_flag(r"\bredis-cli", r"-a[ \t]+", "redis-cli"),
    _tool_flag(r"\bmongo(?:sh|dump|restore|import|export)?", r"-p[ \t]+", "mongo"),
    _tool_flag(r"\bldap\w+", r"-w[ \t]+", "ldap"),
    _tool_flag(r"\bsqlcmd", r"-P[ \t]+", "sqlcmd"),
    _tool_flag(r"\baz[ \t]+login", r"-p[ \t]+", "az login"),
    (r"\b(?:smbclient|rpcclient|smbmap|smbget|net)(?![\w\-])[^\n|;&]{0,160}?[ \t]-U[ \t]+['\"]?"
     r"[^\s%'\"]+%" + _NOT_MARK + r"(?P<s>[^\s'\"]+)", False, ("smb", "rpcclient", "net "),
     _flag_password),
    (r"\bhtpasswd[ \t]+-[A-Za-z]*b[A-Za-z]*[ \t]+(?:-[A-Za-z]+[ \t]+)*(?!-)\S+[ \t]+(?!-)\S+[ \t]+"
     + _NOT_MARK + r"(?P<s>[^\s|;&]+)", False, ("htpasswd",), _flag_password),
]  # fmt: skip


# --- the rules (sources of case-insensitive rules are written in lower case) -------------

_KEYWORD = (
    r"(?P<k>pass(?:word|wd|phrase)?|pwd|secret|token|credentials?|apikey"
    r"|(?:api|access|secret|private|auth|client|signing|encryption|master|session)[_\-]?key"
    r"|secret[_\-]?key[_\-]?base|app[_\-]?key|salt|pepper)"
)
# A value: escaped-JSON string, "string", 'string' (closing quote optional so that an
# unterminated string is still redacted to the end of the line), or a bare word. A bare word
# stops before `(` and `[`, which mark code; it never runs on into a later assignment.
_VALUE = (
    rf'(?:\\"{_NOT_MARK}(?P<s>(?:[^"\\\n]|\\[^"\n])+)(?:\\")?'
    rf'|"{_NOT_MARK}(?P<s2>(?:[^"\\\n]|\\.)+)"?'
    rf"|'{_NOT_MARK}(?P<s3>(?:[^'\\\n]|\\.)+)'?"
    rf"|{_NOT_MARK}(?P<s4>[^\s\"'`,;&()\[\]}}\\]+))"
)
_ASSIGN_SEP = r"(?P<sep>(?:\\?[\"']\]?)?[ \t]*(?::=|=>|=(?!=)|:(?![:=]))[ \t]*)"
_KEYWORD_NEEDLES = ("pass", "pwd", "secret", "token", "key", "credential", "salt", "pepper")
_TOKEN = r"A-Za-z0-9_\-"  # characters that continue a token: a key never starts after one
# A vendor prefix glued after `-` or `_` (`notes-sk-proj-...`) is still a key: only letters
# and digits before it mean it is the inside of a word (`task-`, `risk`).
_WORD = "A-Za-z0-9"


def _lead(literal: str, before: str = _WORD) -> str:
    """`literal`, not preceded by a `before` character.

    The look-behind comes after the literal so that `re` can skip ahead to the literal
    instead of trying the look-behind at every position (3-10x faster on code).
    """
    escaped = "".join("\\" + c if c in _SPECIAL else c for c in literal)
    return f"{escaped}(?<![{before}]{escaped})"


_SPECIAL = frozenset(".^$*+?{}[]\\|()-/#&~ ")  # what re.escape would escape in a literal


_RULES: list[Rule] = [
    # Cookies: a `Cookie:` or `Set-Cookie:` header's value, or curl's `--cookie`, whole
    # and first, so that no vendor rule's marker splits one and leaves its other pairs.
    (f"(?:{_lead('cookie', 'A-Za-z0-9_')}[\"']?[ \\t]*:[ \\t]*[\"']?|{_lead('--cookie', _TOKEN)}"
     r"[ \t=]+[\"']?)" + _NOT_MARK + r"(?P<s>[^\r\n\"'\\]+)", True, ("cookie",), _cookie),
    (_lead("AKIA", "A-Za-z0-9") + "[A-Z0-9]{16}(?![A-Za-z0-9])", False, ("akia",), "aws_access_key"),
    (_lead("ASIA", "A-Za-z0-9") + "[A-Z0-9]{16}(?![A-Za-z0-9])", False, ("asia",), "aws_access_key"),
    (_lead("secret", "a-z0-9") + r"[_\-]?access[_\-]?key(?:\\?[\"'])?[ \t]*(?::=|=>|[:=])"
     r"[ \t]*(?:\\?[\"'])?(?P<s>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])", True,
     ("secret",), "aws_secret_key"),
    (_lead("AIza") + r"[0-9A-Za-z_\-]{35}", False, ("aiza",), "gcp_api_key"),
    (f"(?:{_lead('ya29.', _TOKEN + './:')}|{_lead('1//0', _TOKEN + './:')})"
     r"[0-9A-Za-z_\-]{30,}", False, ("ya29.", "1//0"), "google_oauth_token"),
    (f"(?:{_lead('accountkey', 'a-z0-9')}|{_lead('sharedaccesskey', 'a-z0-9')})"
     r"=(?P<s>[A-Za-z0-9+/=]{20,})", True, ("accountkey", "sharedaccesskey"), "azure_storage_key"),
    (r"[?&]sig=(?P<s>[A-Za-z0-9%+/=]{20,})", False, ("sig=",), "azure_sas_signature"),
    (f"(?:{_lead('gh', 'A-Za-z0-9_')}[pousr]_[A-Za-z0-9]{{36,}}"
     f"|{_lead('github_pat_', 'A-Za-z0-9_')}[A-Za-z0-9_]{{22,}})", False,
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), "github_token"),
    (_lead("gl") + r"(?:pat|dt|rt|ptt|ft)-[A-Za-z0-9_\-]{20,}", False,
     ("glpat-", "gldt-", "glrt-", "glptt-", "glft-"), "gitlab_token"),
    (f"(?:{_lead('xox')}[abposre]|{_lead('xapp')})" r"-[A-Za-z0-9\-]{10,}", False,
     ("xox", "xapp-"), _if_random("slack_token")),
    (r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})", False,
     ("hooks.slack.com",), "slack_webhook"),
    (f"(?:(?:{_lead('sk_', 'A-Za-z0-9_')}|{_lead('rk_', 'A-Za-z0-9_')})(?:live|test)_"
     f"[A-Za-z0-9]{{10,}}|{_lead('whsec_', 'A-Za-z0-9_')}[A-Za-z0-9]{{24,}})", False,
     ("k_live_", "k_test_", "whsec_"), _if_random("stripe_key")),
    (_lead("sk-ant-") + r"[A-Za-z0-9_\-]{20,}", False, ("sk-ant-",), "anthropic_key"),
    (_lead("sk-") + r"(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", False,
     ("sk-",), _if_random("openai_key")),
    (_lead("hf_", "A-Za-z0-9_") + "[A-Za-z0-9]{30,}(?![A-Za-z0-9_])", False,
     ("hf_",), _if_random("huggingface_token")),
    (_lead("npm_", "A-Za-z0-9_") + "[A-Za-z0-9]{36,}", False, ("npm_",), _if_random("npm_token")),
    (_lead("pypi-AgE") + r"[A-Za-z0-9_\-]{50,}", False, ("pypi-age",), "pypi_token"),
    (_lead("AC", "A-Za-z0-9") + "[0-9a-fA-F]{32}:(?P<s>[A-Za-z0-9]{32})(?![A-Za-z0-9])",
     False, ("ac",), "twilio_auth_token"),
    (_lead("SK", "A-Za-z0-9") + "[0-9a-fA-F]{32}:(?P<s>[A-Za-z0-9]{32})(?![A-Za-z0-9])",
     False, ("sk",), "twilio_auth_token"),
    (_lead("SK", "A-Za-z0-9") + "[0-9a-fA-F]{32}(?![A-Za-z0-9])", False, ("sk",), "twilio_api_key"),
    (_lead("HRKU-", "A-Za-z0-9") + r"[A-Za-z0-9_\-]{36,}", False, ("hrku-",), "heroku_key"),
    # A Heroku API key of the older shape is a bare UUID: only where it is named as one.
    (_lead("heroku", "a-z0-9") + r"[ \t_\-]?(?:api[ \t_\-]?)?(?:key|token)[\"']?[ \t]*[:=]?[ \t]*"
     r"[\"']?" + _NOT_MARK + r"(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})",
     True, ("heroku",), "heroku_key"),
    (_lead("SG.", _WORD + "_.") + r"[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", False,
     ("sg.",), "sendgrid_key"),
    (_lead("eyJ") + r"[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*", False,
     ("eyj",), "jwt"),
    (_lead("dop_v1_", "A-Za-z0-9_") + "[a-f0-9]{64}", False, ("dop_v1_",), "digitalocean_token"),
    (_lead("shp", "A-Za-z0-9_") + "(?:at|ss|ca|pa)_[a-fA-F0-9]{32}", False,
     ("shpat_", "shpss_", "shpca_", "shppa_"), "shopify_token"),
    (f"(?:{_lead('glsa_', 'A-Za-z0-9_')}[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}"
     f"|{_lead('glc_', 'A-Za-z0-9_')}[A-Za-z0-9+/]{{32,}}={{0,2}})", False,
     ("glsa_", "glc_"), "grafana_token"),
    (_lead("lin_api_", "A-Za-z0-9_") + "[A-Za-z0-9]{40}", False, ("lin_api_",), "linear_key"),
    (_lead("dckr_pat_", "A-Za-z0-9_") + r"[A-Za-z0-9_\-]{20,}", False, ("dckr_pat_",),
     "docker_token"),
    (_lead("hv", "A-Za-z0-9_.") + r"[sbr]\.[A-Za-z0-9_\-]{24,}", False, ("hvs.", "hvb.", "hvr."),
     _if_random("vault_token")),
    (_lead("ATATT3", "A-Za-z0-9") + r"[A-Za-z0-9_\-=]{50,}", False, ("atatt3",), "atlassian_token"),
    (_lead("sntry", "A-Za-z0-9_") + r"[su]_[A-Za-z0-9+/=_\-]{40,}", False,
     ("sntrys_", "sntryu_"), "sentry_token"),
    (_lead("pscale_", "A-Za-z0-9_") + r"(?:tkn|pw|oauth)_[A-Za-z0-9_\-]{32,}", False,
     ("pscale_",), "planetscale_token"),
    (_lead("AGE-SECRET-KEY-1", "A-Za-z0-9\\-") + "[0-9A-Z]{58}", False, ("age-secret-key-1",),
     "age_secret_key"),
    (_lead("figd_", "A-Za-z0-9_") + r"[A-Za-z0-9_\-]{40,}", False, ("figd_",), "figma_token"),
    (_lead("ntn_", "A-Za-z0-9_") + "[A-Za-z0-9]{40,}", False, ("ntn_",),
     _if_random("notion_token")),
    (_lead("key-", _TOKEN) + "[0-9a-f]{32}(?![A-Za-z0-9])", False, ("key-",),
     _if_random("mailgun_key")),
    (_lead("sq0", "A-Za-z0-9") + r"(?:atp-[A-Za-z0-9_\-]{22}|csp-[A-Za-z0-9_\-]{43})", False,
     ("sq0atp-", "sq0csp-"), "square_token"),
    (_lead("pul-", _TOKEN) + "[a-f0-9]{40}(?![A-Za-z0-9])", False, ("pul-",), "pulumi_token"),
    (_lead("dapi", "A-Za-z0-9_") + r"[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", False, ("dapi",),
     "databricks_token"),
    (_lead("dp.", _WORD + "_.") + r"(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_.\-]{40,}", False,
     ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."), "doppler_token"),
    (r"\.atlasv1\.(?<=[A-Za-z0-9]{14}\.atlasv1\.)[A-Za-z0-9_\-=]{60,}", False, (".atlasv1.",),
     "terraform_token"),
    (_lead("NRAK-", "A-Za-z0-9") + "[A-Z0-9]{27}(?![A-Za-z0-9])", False, ("nrak-",),
     "newrelic_key"),
    (r"[0-9](?<![0-9][0-9])[0-9]{7,9}:AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])", False,
     (":aa",), "telegram_bot_token"),
    (_lead("LTAI", "A-Za-z0-9") + "[A-Za-z0-9]{12,30}(?![A-Za-z0-9])", False, ("ltai",),
     _if_random("alibaba_access_key")),
    # Passwords that command-line tools take as flags or in user:password arguments.
    *_CLI_PASSWORDS,
    # Credentials in config files: netrc, container registry auth, kubeconfig keys, and
    # `config set` commands of package managers and cloud CLIs.
    (r"\bmachine[ \t]+\S+(?:\s+login[ \t]+\S+)?\s+password[ \t]+" + _NOT_MARK + r"(?P<s>\S+)",
     False, ("machine",), _flag_password),
    (r'"auth"[ \t]*:[ \t]*"(?P<s>[A-Za-z0-9+/]{16,}={0,2})"', False, ('"auth"',), "registry_auth"),
    (r"client-key-data:[ \t]*(?P<s>[A-Za-z0-9+/]{16,}={0,2})", False, ("client-key-data",),
     "private_key"),
    (r"(?:config(?:ure)?[ \t]+set|config:set|set-credentials)[ \t]+(?:-\S+[ \t]+)*?"
     r"(?P<n>[\w./:@\-]*(?:token|secret|passw(?:or)?d|key|credential)[\w./:\-]*)[ \t]+"
     + _NOT_MARK + r"(?P<s>'[^'\n]*'|\"[^\"\n]*\"|[^\s'\"]+)", True,
     ("config set", "configure set", "config:set", "set-credentials"), _config_set),
    # Password directives of server config files: `requirepass x` (Redis), `rootpw x`
    # (slapd), `AuthLDAPBindPassword x` (Apache), `auth_pass x` (keepalived), `secret "x";`
    # (BIND), haproxy's `insecure-password x`: a directive, blanks, a value ending the line.
    (r"(?<![\w\-])(?:requirepass|masterauth|rootpw|bindpw|auth_pass|insecure-password)[ \t]+"
     + _NOT_MARK + r"(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s;]+)", True,
     ("requirepass", "masterauth", "rootpw", "bindpw", "auth_pass", "insecure-password"),
     _flag_password),
    (r"(?m)^[ \t]*(?P<k>[a-z0-9_]*(?:password|passwd|passphrase|secret))[ \t]+" + _NOT_MARK
     + r"(?P<s>\"[^\"\n]*\"|'[^'\n]*'|[^\s;\"']+)[ \t]*;?[ \t]*$", True,
     ("password", "passwd", "passphrase", "secret"), _directive),
    # PHP constants: `define('DB_PASSWORD', '...')`, WordPress's `AUTH_KEY` and `*_SALT`.
    (r"define\([ \t]*['\"](?P<n>[a-z0-9_]*(?:key|salt|password|passwd|secret|token))['\"]"
     r"[ \t]*,[ \t]*(?:'" + _NOT_MARK + r"(?P<s>[^'\n]+)'|\"" + _NOT_MARK + r"(?P<s2>[^\"\n]+)\")",
     True, ("define",), _php_define),
    # Credential files: `.pgpass` lines (host:port:database:user:password) and password
    # hashes of `.htpasswd` and `/etc/shadow` lines (`user:$apr1$...`, `user:{SHA}...`).
    # The match starts at the port's colon, which `re` finds fast; `_pgpass` checks the host.
    (r":(?:[0-9]{1,5}|\*):[^\s:'\"\[\]]+:[^\s:'\"\[\]]+:" + _NOT_MARK + r"(?P<s>[^\s'\"]+)", False,
     (":",), _pgpass),
    (r"(?<![A-Za-z0-9._\-])[A-Za-z0-9._\-]+:" + _NOT_MARK
     + r"(?P<s>\$(?:apr1|2[abxy]?|1|5|6|y|gy|7|argon2(?:id|i|d))\$[^\s:]+"
     r"|\{(?:SSHA|SHA|SHA256|SSHA256|SHA512|SSHA512|MD5|SMD5|CRYPT)\}[A-Za-z0-9+/=.$]+)",
     False, (":$", ":{"), "password_hash"),
    # An `Authorization:` header's value is a credential whatever its scheme (Bearer, SSWS,
    # Bot, DeepL-Auth-Key, AWS4-HMAC-SHA256, OAuth ...): everything after the scheme, to the
    # quote that opened it or the end of the line. Without the header, Bearer or Basic must
    # be followed by something key-like.
    (_lead("authorization", "A-Za-z0-9_") + r"[\"']?[ \t]*[:=][ \t]*"
     r"(?:(?P<q>[\"'])(?:(?P<sc>[a-z][a-z0-9._\-]*)[ \t]+)?" + _NOT_MARK
     + r"(?P<s>[^\"'\r\n\\]+)"
     r"|(?:(?P<sc2>[a-z][a-z0-9._\-]*)[ \t]+)?" + _NOT_MARK
     + r"(?P<s2>[^\s\"'\\](?:[^\r\n\"'\\]|\"[^\"\r\n]*\"(?=[ \t]*(?:,|$)))*))",
     True, ("authorization",), _authorization_header),
    (f"(?:{_lead('bearer', _TOKEN)}|{_lead('basic', _TOKEN)})[ \\t]+"
     r"(?!(?:bearer|basic|token|digest)(?![a-z0-9\-._~+/]))(?P<s>[A-Za-z0-9\-._~+/]+=*)",
     True, ("bearer", "basic"), _authorization),
    # Credentials in URLs and connection strings, greedy to the last `@` so that an
    # unescaped `@` inside the password is covered too. No brackets in the user part, or
    # the `:` inside an earlier marker (`https://[REDACTED:github_token]@`) would count.
    (r"://[^\s:/?#@\"'<>\[\]]*:" + _NOT_MARK + r"(?P<s>[^\s/?#\"'<>]+)(?=@)", False,
     ("://",), "password"),
    # ... and a password holding `/`, `?` or `#` unescaped (`postgres://app:ab#cd@db/shop`),
    # which URL parsers split at that character: up to the `@` before the host.
    (r"://[^\s:/?#@\"'<>\[\]]*:" + _NOT_MARK + r"(?P<s>(?P<p>[^\s/?#@\"'<>]{1,256})[/?#][^\s\"'<>]{0,256}?)"
     r"(?=@[A-Za-z0-9.\-_~%]+(?::[0-9]+)?(?:[/?#\s\"'<>]|$))", False, ("://",), _url_password),
    (r"<(?:[a-z0-9.\-]+[_.\-:])?" + _KEYWORD + ">" + _NOT_MARK + r"(?P<s>[^<\n]+)</", True,
     _KEYWORD_NEEDLES, _assignment),
    (_lead("--", _TOKEN) + r"(?:[a-z0-9]+[_\-])*?" + _KEYWORD + r"(?P<sep>=|[ \t]+)(?!-)" + _VALUE,
     True, ("--",), _assignment),
    (_KEYWORD + _ASSIGN_SEP + _VALUE, True, _KEYWORD_NEEDLES, _assignment),
    # The look-behind sits after the first digit so that `re` can skip ahead to digits.
    (r"[0-9](?<![\w\-.][0-9])(?:[ \-]?[0-9]){12,18}(?![\w\-])", False, (), _card),
]  # fmt: skip


# --- public API ----------------------------------------------------------------------------


def _apply(rule: Rule, text: str, lower: str) -> tuple[str, int]:
    source, case_insensitive, _, decide = rule
    if not case_insensitive:
        matches = _re(source).finditer(text)
    elif len(lower) == len(text):
        # 5x faster than re.IGNORECASE; the spans line up because lower() kept the length.
        matches = _re(source).finditer(lower)
    else:  # a few characters (`İ`) lower-case to two
        matches = _re(source, _IGNORECASE).finditer(text)
    out: list[str] = []
    pos = count = 0
    for m in matches:
        kind = decide if isinstance(decide, str) else decide(m, text)
        if kind is not None:
            start, end = _secret_span(m)
            out += [text[pos:start], MARK.format(kind)]
            pos, count = end, count + 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


_NO_DIGITS = str.maketrans("", "", "0123456789")
# Everything but digits, blanks and hyphens breaks a run (what else is kept only makes the
# check say yes more often, and then the pattern decides).
_BREAKS = str.maketrans(
    dict.fromkeys("abcdefghijklmnopqrstuvwxyz.,:;/_=+()[]{}<>'\"!?@#$%^&*~`|\\\n\t", "x")
)


def _digit_run(lower: str) -> bool:
    """Whether `lower` may hold 13 digits with only blanks or hyphens between them."""
    if len(lower) - len(lower.translate(_NO_DIGITS)) < 13:
        return False
    for part in lower.translate(_BREAKS).split("x"):  # a plain loop, shortest parts out first
        if len(part) >= 13 and len(part) - len(part.translate(_NO_DIGITS)) >= 13:
            return True
    return False


def scrub(text: str) -> tuple[str, int]:
    """Drop `<private>` spans and redact secrets; return the new text and the redaction count.

    A dropped span leaves nothing behind and counts as one; a secret becomes
    `[REDACTED:<kind>]`, keeping the non-secret part around it
    (`password=[REDACTED:password]`). Idempotent: scrubbing the result changes nothing.
    """
    text, total = _drop_private(text)
    text, count = _redact_pem(text)
    return _run(text, total + count, 0)


def scrub_many(texts: list[str]) -> list[tuple[str, int]]:
    """`scrub` of each text, the same results, checking every rule's words once for all of
    them: a record's short fields (title, tags, key) cost a third as much together."""
    done = []
    for text in texts:
        text, total = _drop_private(text)
        text, count = _redact_pem(text)
        done.append((text, total + count))
    joined = "\n".join(text for text, _ in done).lower()  # holds every word any text holds
    live = [i for i, rule in enumerate(_RULES) if _may_match(rule, joined)]
    return [_run_some(text, total, live) for text, total in done]


def _may_match(rule: Rule, lower: str) -> bool:
    needles = rule[2]
    if needles:  # a plain loop: a generator here cost a third of a short text's scrub
        for needle in needles:  # noqa: SIM110
            if needle in lower:
                return True
        return False
    return _digit_run(lower)  # a card number is a run of 13 digits at least


def _run(text: str, total: int, start: int) -> tuple[str, int]:
    """The rules from `start` on, each where its words are in the text."""
    lower = text.lower()
    for rule in _RULES[start:] if start else _RULES:
        needles = rule[2]
        if needles:  # inlined `_may_match`: this loop is most of a short text's scrub
            for needle in needles:
                if needle in lower:
                    break
            else:
                continue
        elif not _digit_run(lower):
            continue
        text, count = _apply(rule, text, lower)
        if count:
            total += count
            lower = text.lower()
    return text, total


def _run_some(text: str, total: int, live: list[int]) -> tuple[str, int]:
    """`_run` over the rules whose words some text of the batch holds. Until one redacts,
    the text is as the batch saw it, so no other rule can match; after, a marker it wrote
    may hold a rule's words, so the rest run as `scrub` runs them."""
    lower = text.lower()
    for i in live:
        rule = _RULES[i]
        if not _may_match(rule, lower):
            continue
        text, count = _apply(rule, text, lower)
        if count:
            return _run(text, total + count, i + 1)
    return text, total


def flagged(text: str) -> bool:
    """Whether `text` holds anything a redactor flagged: a marker an earlier scrub left, or
    a secret this one finds (an older redactor may have known less)."""
    return "[REDACTED:" in text or scrub(text)[1] > 0


def clearance(text: str) -> str | None:
    """A stamp that this redactor found nothing in `text`, or None when it flags it: kept
    beside a record, it makes checking the same text again (`cleared`) a digest instead of
    a scan. A stamp names the redactor it came from, so a changed rule scans again."""
    if flagged(text):
        return None
    return _stamp(text)


def cleared(text: str, stamp: str | None) -> bool:
    """Whether `stamp` is this redactor's clearance of exactly `text`."""
    return stamp is not None and stamp == _stamp(text)


_VERSION: list[bytes] = []


def _stamp(text: str) -> str:
    import hashlib

    if not _VERSION:  # this module's own source: any change to a rule is a new redactor
        import sys

        try:
            with open(__file__, "rb") as source:
                own = source.read() + sys.version.encode()
        except OSError:  # no source to name it by: stamps of this process match no other's
            import os

            own = os.urandom(32)
        _VERSION.append(hashlib.sha256(own).digest())
    return hashlib.blake2b(text.encode(), digest_size=12, key=_VERSION[0][:32]).hexdigest()


def scrub_value(value: T) -> tuple[T, int]:
    """Scrub every string in a JSON-ish value: str, list, tuple, dict values (keys kept).

    Returns a new value of the same shape and the total redaction count.
    """
    new, count = _scrub_any(value)
    return new, count  # type: ignore[return-value]  # same shape, so the same type


def _scrub_any(value: object) -> tuple[object, int]:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, (list, tuple)):
        pairs = [_scrub_any(item) for item in value]
        items = [item for item, _ in pairs]
        return (tuple(items) if isinstance(value, tuple) else items), sum(n for _, n in pairs)
    if isinstance(value, dict):
        total, out = 0, {}
        for key, item in value.items():
            out[key], count = _scrub_any(item)
            total += count
        return out, total
    return value, 0


# --- cutting ---------------------------------------------------------------------------------

WINDOW = 64 * 1024  # what is scrubbed around the part a cut keeps, when the text is longer


def scrub_cut(
    text: str, limit: int, *, tail: bool = False, contacts: bool = False
) -> tuple[str, int]:
    """`scrub`, then keep the first `limit` characters (or the last, with `tail`).

    The whole text is redacted before the cut, so a cut never strips the start of a secret
    that would have told what it is (a private key's BEGIN line, the opening of a `<private>`
    span, a token's prefix). Text longer than WINDOW is scrubbed over the WINDOW characters
    next to the part kept, carrying in what the rest left open: an unclosed `<private>` span
    or a private key without its END line. A cut may split a marker; it never splits a
    secret out of one.
    """
    if len(text) > WINDOW:
        if tail:
            before, text = text[:-WINDOW], text[-WINDOW:]
            text = _carried(before) + text
        else:
            text = text[:WINDOW]
    clean, count = scrub(text)
    if contacts:
        clean, found = scrub_contacts(clean)
        count += found
    return (clean[-limit:] if tail else clean[:limit]), count


def scrub_long(text: str, *, contacts: bool = False) -> tuple[str, int]:
    """`scrub` of a text of any length, window by window (WINDOW characters, cut at a line
    end), each window reopened with what the text before it left open (`_carried`), so the
    whole text is kept and every part of it redacted, in linear time."""
    if len(text) <= WINDOW:
        clean, count = scrub(text)
        if contacts:
            clean, found = scrub_contacts(clean)
            count += found
        return clean, count
    parts: list[str] = []
    count = start = 0
    while start < len(text):
        end = min(len(text), start + WINDOW)
        if end < len(text):
            newline = text.rfind("\n", start, end)
            end = newline + 1 if newline > start else end
        carried = _carried(text[:start]) if start else ""
        clean, found = scrub(carried + text[start:end])
        if contacts:
            clean, more = scrub_contacts(clean)
            found += more
        if carried and clean.startswith(carried):
            clean = clean[len(carried) :]
        parts.append(clean)
        count += found
        start = end
    return "".join(parts), count


def _carried(before: str) -> str:
    """What the text before a window leaves open, as a prefix that reopens it."""
    depth = 0
    for tag in _re(_PRIVATE_TAG, _IGNORECASE).finditer(before):
        depth = depth + 1 if not tag.group(1) else max(depth - 1, 0)
    if depth:
        return "<private>"
    begins = list(_re(_PEM_BEGIN).finditer(before)) if "PRIVATE KEY" in before else []
    if begins and not _re(_PEM_END).search(before, begins[-1].end()):
        return begins[-1].group(0) + "\n"
    return ""


# --- contacts in captured tool output ------------------------------------------------------

_LOCAL = "A-Za-z0-9._%+\\-"
_EMAIL = (
    f"[{_LOCAL}](?<![{_LOCAL}][{_LOCAL}])[{_LOCAL}]*@"  # starts only where a local part does
    r"[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])"
)
_IPV4 = r"[0-9](?<![0-9.][0-9])[0-9]{0,2}(?:\.[0-9]{1,3}){3}(?![0-9]|\.[0-9])"
_IPV6 = (
    r"[0-9A-Fa-f](?<![0-9A-Fa-f:][0-9A-Fa-f])[0-9A-Fa-f]{0,3}"
    r"(?:(?::[0-9A-Fa-f]{1,4}){7}|(?::[0-9A-Fa-f]{1,4})*::(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?)"
    r"(?![0-9A-Fa-f:])"
)
_NOT_IDENTIFYING = ("127.0.0.1", "0.0.0.0", "255.255.255.255")


def scrub_contacts(text: str) -> tuple[str, int]:
    """E-mail and IP addresses as markers (`[REDACTED:email]`, `[REDACTED:ip_address]`):
    captured tool output is full of them and they identify people and machines. Loopback
    and broadcast addresses stay."""
    count = 0
    if "@" in text:
        text, count = _re(_EMAIL).subn(MARK.format("email"), text)
    replaced = [0]

    def ipv4(m: re.Match[str]) -> str:
        address = m.group(0)
        if address in _NOT_IDENTIFYING or any(int(part) > 255 for part in address.split(".")):
            return address
        replaced[0] += 1
        return MARK.format("ip_address")

    if "." in text:
        text = _re(_IPV4).sub(ipv4, text)
    if "::" in text or text.count(":") >= 7:
        text, found = _re(_IPV6).subn(MARK.format("ip_address"), text)
        count += found
    return text, count + replaced[0]
