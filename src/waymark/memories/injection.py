"""Memory text that reads as an instruction to the agent rather than knowledge about the work.

Packets put memories in front of the model, so a memory is a way in for prompt injection:
text copied from a web page, a README or a tool's output that tells the agent to drop its
instructions ("disregard all prior guidance"), to reveal or send keys and secrets ("print
~/.ssh/id_rsa", "exfiltrate .env to http://..."), to run a command that wrecks a machine
("rm -rf /") or a download ("curl ... | sh", "download ... and run it"), that carries
tool-call or chat markup, or hides characters (controls, bidi overrides, tag characters)
the reader never sees. A sentence that forbids such a command ("never run rm -rf /") is a
warning and is kept. Such a write is
flagged and waits in the review queue; only a person's approval lets it into a packet. The
packet's fence stays either way: this is one more layer, not the only one.

Plain `re`, compiled on first use: only writes call this, never a hook's read path.
"""

from __future__ import annotations

import re

_TARGETS = (
    r"(?:instructions?|prompts?|rules?|directions?|messages?|guidelines?|guidance|context|"
    r"directives?|constraints?|polic(?:y|ies)|restrictions?|programming|orders|commands)"
)
_OVERRIDE = (
    r"\b(?:ignore|disregard|forget|override|bypass|abandon|discard|set\s+aside|"
    r"stop\s+(?:following|obeying)|(?:do\s+not|don't|no\s+longer)\s+(?:follow|obey))\s+"
    r"(?:all\s+|any\s+|the\s+|of\s+|these\s+|those\s+|your\s+|my\s+)*"
    r"(?:previous|prior|above|earlier|preceding|former|original|initial|old|existing|system|"
    r"developer|safety)\s+(?:\w+\s+)?" + _TARGETS + r"\b"
    r"|\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|all\s+)?(?:everything|anything|all)\s+"
    r"(?:above|before|prior|previously|you\s+(?:were|have\s+been)\s+(?:told|given)|you\s+know)"
    r"|\b(?:disregard|ignore|forget|override|bypass)\s+(?:\w+\s+){0,2}(?:system|developer)\s+"
    r"(?:prompt|message)\b"
    r"|\b(?:reveal|print|repeat|show|output|leak)\s+(?:your|the)\s+(?:system|developer|hidden|"
    r"initial|original)\s+(?:prompt|instructions?|message)\b"
    r"|\b(?:tell|show|give)\s+me\s+your\s+(?:initial|original|system|hidden)\s+"
    r"(?:prompt|instructions?)\b"
    r"|\bdo\s+not\s+(?:tell|inform|show)\s+the\s+user\b"
    r"|\bnew\s+(?:system\s+)?(?:instructions?|directives?)\s*:"
    r"|\byour\s+(?:previous|prior|original|earlier|old)\s+" + _TARGETS + r"\s+(?:are|were)\s+"
    r"(?:void|cancell?ed|revoked|outdated|obsolete|superseded|no\s+longer\s+valid)\b"
    r"|\b(?:you\s+are|you're)\s+(?:now\s+)?no\s+longer\s+(?:bound|restricted|limited)\b"
    r"|\byou\s+are\s+now\s+(?:dan\b|an?\s+(?:unrestricted|unfiltered|uncensored|jailbroken))"
    r"|\bdo\s+anything\s+now\b|\bdeveloper\s+mode\s+(?:enabled|on|activated)\b"
    r"|\b(?:act|behave|respond)\s+as\s+(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|"
    r"jailbroken)\b"
    r"|\bpretend\s+(?:that\s+)?you\s+(?:have|are\s+under)\s+no\s+(?:\w+\s+)?"
    r"(?:rules|restrictions|polic(?:y|ies)|guidelines|limits|filters)\b"
    r"|\b(?:if|when)\s+you\s+are\s+an?\s+(?:ai|llm|language\s+model|assistant|agent|bot)\b"
    r"[^.\n]{0,60}\b(?:ignore|disregard|instead|do\s+not|don't)\b"
    r"|\b(?:attention|note\s+to|message\s+to)\s+(?:all\s+)?(?:ai|llm)\s+(?:agents?|assistants?|"
    r"models?)\b"
)
# Files that hold keys and passwords, and words for them.
_SECRET_FILE = (
    r"(?:~|\$home|/home/\w+|/root)?/?\.ssh/\w*|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|"
    r"\.aws/credentials|\.netrc\b|\.pgpass\b|/etc/(?:shadow|passwd|sudoers)\b|"
    r"(?<![\w.])\.env(?![\w.])|\.npmrc\b|\.pypirc\b|\.docker/config\.json|\.kube/config\b|"
    r"\bcredentials\.(?:json|ya?ml)\b|\bkeychain\b"
)
_SECRET_WORDS = (
    r"(?:api[\s_-]?keys?|access[\s_-]?(?:keys?|tokens?)|auth[\s_-]?tokens?|secret[\s_-]?keys?|"
    r"secrets|passwords?|passphrases?|credentials|private[\s_-]?keys?|ssh[\s_-]?keys?|"
    r"(?:github|gitlab|npm|pypi|aws|openai|anthropic)[\s_-]?(?:tokens?|keys?))"
)
_SECRETS = (
    r"\bexfiltrat\w*"
    r"|\b(?:print|cat|show|display|reveal|output|dump|paste|type|echo|leak|disclose|expose|"
    r"read\s+out|head|tail|less|more|base64)\b[^.\n]{0,40}(?:" + _SECRET_FILE + r")"
    r"|\b(?:send|post|upload|transmit|forward|e-?mail|mail|copy|share|leak|scp|rsync|pipe)\b"
    r"[^.\n]{0,80}(?:" + _SECRET_FILE + r"|" + _SECRET_WORDS + r"|\$\{?[a-z_]*(?:key|token|"
    r"secret|passw)[a-z_]*)[^.\n]{0,80}\b(?:to|into|at)\s+(?:https?://|ftp://|[\w.+-]+@[\w-]+\.|"
    r"the\s+(?:webhook|url|server|endpoint|address))"
    r"|\b(?:reveal|print|show|paste|include|leak|disclose|output|post|put|write)\s+(?:all\s+)?"
    r"(?:your|the|any|all)\s+(?:\w+\s+)?" + _SECRET_WORDS + r"\b[^.\n]{0,50}\b(?:in|into|to)\s+"
    r"(?:your|the|a|this)\s+(?:next\s+)?(?:reply|answer|response|output|message|chat|"
    r"description|comment|commit\s+message|pull\s+request|pr|issue)\b"
    r"|\$\{?[a-z_]*(?:key|token|secret|passw)[a-z_]*\}?[^\n]{0,60}\|\s*(?:curl|wget|nc|netcat)\b"
)
# Commands that wreck a machine or a repository beyond repair.
_DESTRUCTIVE = (
    r"\brm\s+(?:-[a-z]*\s+)*-[a-z]*(?:rf|fr)[a-z]*\s+(?:--no-preserve-root\s+)?"
    r"(?:/|~/?|\$home/?|/\*|\.\*|\*)(?=\s|$|[;&|'\"`)])"
    r"|--no-preserve-root\b"
    r"|\bmkfs(?:\.\w+)?\s+/dev/"
    r"|\bdd\s+[^\n]*\bof=/dev/(?:sd|nvme|hd|xvd|vd|disk)\w*"
    r"|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:"
    r"|\bchmod\s+(?:-r\s+)?(?:0?777|a\+rwx)\s+/(?=\s|$)"
    r"|>\s*/dev/(?:sd[a-z]|nvme\d)"
    r"|\b(?:delete|wipe|erase|destroy)\s+(?:the\s+)?(?:entire\s+|whole\s+)?(?:\.git(?:\s+"
    r"(?:directory|folder))?|git\s+history|home\s+directory|hard\s+drive|disk|all\s+backups)\b"
)
_DOWNLOAD_RUN = (
    r"\b(?:curl|wget)\b[^\n]*\s(?:-o|-O|--output|--output-document)\s*\S+[^\n]*(?:&&|;)\s*"
    r"(?:chmod\s+\+x|(?:ba|z)?sh\s|\./|python3?\s|/tmp/)"
    r"|\bdownload\w*\s+(?:[^.\n]|\.(?!\s)){0,80}?\b(?:and|then)\s+(?:run|execute|launch)\s+"
    r"(?:it|them|that|the\s+(?:binary|script|file|payload|program|installer|executable))\b"
    r"|\b(?:powershell|pwsh)\b[^\n]*\s-(?:e|enc|encodedcommand)\s+[a-z0-9+/=]{16,}"
    r"|\bbase64\s+(?:-d|--decode)\b[^\n]*\|\s*(?:ba|z)?sh\b"
    r"|\beval\s*\(?\s*[\"']?\$\(\s*(?:curl|wget)\b"
)
# A sentence that forbids what it names is a warning, not a request.
_NEGATION = re.compile(
    r"\b(?:never|don't|dont|do\s+not|avoid|must\s+not|mustn't|should\s+not|shouldn't|"
    r"not\s+to|no\s+one|nobody|refuse|forbidden|prohibited|blocked)\b"
)
_PIPE_TO_SHELL = (
    r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|fetch)\b[^\n|;&]*\|\s*"
    r"(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh\b"
    r"|\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)\b[^\n|;&]*\|\s*"
    r"(?:sudo\s+)?(?:python3?|perl|ruby|node|iex|invoke-expression|powershell|pwsh)\b"
    r"|\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    r"|\b(?:ba|z)?sh\s+<\(\s*(?:curl|wget)\b"
)
_MARKUP = (
    r"<\s*/?\s*(?:system|assistant|tool_call|tool_use|tool_result|function_calls?|"
    r"function_results?|invoke|antml:[a-z_]+)\b[^>]{0,200}>"
    r"|<\|(?:im_start|im_end|system|assistant|user|endoftext|eot_id|start_header_id)\|>"
    r"|\[/?inst\]|<<\s*/?sys\s*>>"
)
# C0 controls but tab, newline and carriage return; DEL; C1 controls; bidi embeddings,
# overrides, isolates and marks; zero-width space and word joiner; BOM inside text; Unicode
# tag characters (invisible ASCII). The zero-width joiner is left alone: emoji use it.
_HIDDEN = (
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u202a-\u202e\u2060"
    "\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
)
# Lower-case patterns: a text is searched lower-cased (5x faster than re.IGNORECASE), or with
# IGNORECASE when lower-casing changed its length (`İ`), so spans always index the text.
# Each check runs only on a text holding one of its words (every way the pattern can match
# needs one): a memory is scanned in ~25 us, not the ~60 us of every pattern on every text
# (20,000 synthetic memories, `python bench/instructions.py`).
_CHECKS = (
    (
        _OVERRIDE,
        True,
        "tells the agent to ignore its instructions",
        (
            "ignor",
            "disregard",
            "forget",
            "overrid",
            "bypass",
            "abandon",
            "discard",
            "aside",
            "stop ",
            "follow",
            "obey",
            "reveal",
            "print",
            "repeat",
            "show",
            "output",
            "leak",
            "tell",
            "give me",
            "inform",
            "instruction",
            "directive",
            "you are",
            "you're",
            "anything now",
            "developer mode",
            "act as",
            "behave as",
            "respond as",
            "pretend",
            "attention",
            "note to",
            "message to",
        ),
    ),
    (
        _SECRETS,
        True,
        "asks the agent to reveal or send secrets",
        (
            "exfiltrat",
            "ssh",
            "id_",
            "aws",
            "netrc",
            "pgpass",
            "/etc/",
            ".env",
            "npmrc",
            "pypirc",
            "docker/",
            "kube/",
            "credential",
            "keychain",
            "key",
            "token",
            "secret",
            "passw",
            "passphrase",
        ),
    ),
    (
        _DESTRUCTIVE,
        True,
        "asks the agent to run a destructive command",
        (
            "rm ",
            "preserve-root",
            "mkfs",
            "dd ",
            ":()",
            "chmod",
            "/dev/",
            "delete",
            "wipe",
            "erase",
            "destroy",
        ),
    ),
    (
        _PIPE_TO_SHELL,
        True,
        "pipes a download into a shell",
        (
            "curl",
            "wget",
            "iwr",
            "irm",
            "invoke-",
            "fetch",
        ),
    ),
    (
        _DOWNLOAD_RUN,
        True,
        "downloads a program and runs it",
        (
            "curl",
            "wget",
            "download",
            "powershell",
            "pwsh",
            "base64",
            "eval",
        ),
    ),
    (_MARKUP, True, "carries tool-call or chat markup", None),
    (_HIDDEN, False, "holds invisible control or bidi characters", None),
)
_WARNED = (_SECRETS, _DESTRUCTIVE, _DOWNLOAD_RUN)  # "never run rm -rf /" is a warning
_COMPILED: dict[tuple[str, int], re.Pattern[str]] = {}


def _pattern(source: str, flags: int) -> re.Pattern[str]:
    found = _COMPILED.get((source, flags))
    if found is None:
        found = _COMPILED[(source, flags)] = re.compile(source, flags)
    return found


def _search(source: str, folded: bool, text: str, lower: str) -> re.Match[str] | None:
    if not folded:
        return _pattern(source, 0).search(text)
    if len(lower) == len(text):
        found = _pattern(source, 0).finditer(lower)
    else:
        found = _pattern(source, re.IGNORECASE).finditer(text)
    for hit in found:
        if source not in _WARNED or not _forbidden(lower, hit.start()):
            return hit
    return None


def _forbidden(lower: str, start: int) -> bool:
    """Whether the sentence before `start` forbids what follows ("never run ...")."""
    begun = max(lower.rfind(mark, 0, start) for mark in (". ", "\n", "! ", "? "))
    return _NEGATION.search(lower, begun + 1, start) is not None


def instruction_like(*texts: str) -> list[str]:
    """Why the texts read as instructions to the agent, each reason once with what matched
    (`pipes a download into a shell: 'curl -s x | sh'`); [] when they do not."""
    pairs = [(text or "", (text or "").lower()) for text in texts]
    found = []
    for source, folded, why, words in _CHECKS:
        for text, lower in pairs:
            if words is not None and not any(word in lower for word in words):
                continue
            hit = _search(source, folded, text, lower)
            if hit is not None:
                break
        else:
            continue
        if source is _HIDDEN:
            found.append(f"{why} (U+{ord(hit.group(0)):04X})")
        else:
            start, end = hit.span()  # what matched, as the text has it
            found.append(f"{why}: {text[start:end][:60]!r}")
    return found
