"""Shell commands as Waymark sees them: one spelling per command, a short head to find
earlier runs by, and the files a command visibly writes.

No `re` and no `shlex` (each costs a hook several ms): commands are split on whitespace with
quotes stripped, which is right for the forms that matter here (redirections, `tee`, `sed -i`,
`cp`/`mv`/`rm`/`touch`, and apply_patch headers) and never guesses beyond them.
"""

from __future__ import annotations

HEAD_WORDS = 2
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/:+-")
_PATCH_HEADERS = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")
_WRITERS = ("tee", "touch", "rm", "mv", "cp", "truncate", "sed")
_SEPARATORS = frozenset(("&&", "||", ";", "|", "&"))
# Programs whose runs only read: their text never names a warning worth showing.
READERS = frozenset((
    "cat", "ls", "ll", "la", "pwd", "cd", "echo", "printf", "head", "tail", "less", "more",
    "wc", "grep", "rg", "ag", "find", "fd", "tree", "stat", "file", "which", "type", "whoami",
    "date", "env", "true", "false", "sleep", "clear", "history", "man",
))  # fmt: skip


def normal(command: str) -> str:
    """The command in one spelling: whitespace runs as single spaces."""
    return " ".join(command.split())


def head(command: str) -> str:
    """The first words of the command (after `VAR=value` prefixes), at most HEAD_WORDS of
    them, and only plain ones: nothing that could hold a secret (`=`, `@`, quotes, long)."""
    words: list[str] = []
    for word in command.split():
        if not words and "=" in word and word[0] != "=":
            continue  # an environment assignment before the program
        if len(word) > 40 or not set(word) <= _PLAIN or _keylike(word):
            break
        words.append(word)
        if len(words) == HEAD_WORDS:
            break
    return " ".join(words)


def _keylike(word: str) -> bool:
    """Long, mixing letters and digits, and not a path: could be a key, so never in a head."""
    return (
        len(word) >= 16
        and "/" not in word
        and "." not in word
        and any(c.isdigit() for c in word)
        and any(c.isalpha() for c in word)
    )


def could_hold_secret(command: str) -> bool:
    """False only for a command of plain words (no `=`, `@`, `:`, quotes, or long mixed
    tokens): the redactor leaves such a command as it is, so it need not run to compare."""
    for word in command.split():
        if not set(word) <= _PLAIN or ":" in word or _keylike(word) or len(word) > 40:
            return True
    return False


def summary(command: str) -> str:
    """The program and, when the next word is a plain lowercase subcommand, that too
    (`git push`, `npm run`, `pytest`): what a work map may say of a command."""
    words = head(command).split()
    if not words:
        return ""
    out = words[0].rsplit("/", 1)[-1]
    if len(words) > 1 and words[1].isalpha() and words[1].islower() and len(words[1]) <= 20:
        out += " " + words[1]
    return out


def program(command: str) -> str:
    """The program the command runs first (its base name), or ""."""
    first = head(command).partition(" ")[0]
    return first.rsplit("/", 1)[-1]


def written_files(command: str) -> list[str]:
    """Files the command names as written (as given: relative or absolute), in order."""
    found: list[str] = []
    if "*** " in command:
        for line in command.splitlines():
            line = line.strip()
            for marker in _PATCH_HEADERS:
                if line.startswith(marker):
                    found.append(line[len(marker) :].strip())
        if found:
            return list(dict.fromkeys(found))
    if ">" not in command and not any(w in command for w in _WRITERS):
        return []
    words = [_unquote(w) for w in command.split()]
    segment: list[str] = []
    for word in [*words, ";"]:
        if word in _SEPARATORS:
            found += _segment_writes(segment)
            segment = []
        else:
            segment.append(word)
    return [p for p in dict.fromkeys(found) if p and p != "/dev/null" and not p.startswith("&")]


def _segment_writes(words: list[str]) -> list[str]:
    out: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        stripped = word.lstrip("0123456789&")
        if stripped.startswith(">"):
            target = stripped.lstrip(">")
            if not target and i + 1 < len(words):
                i += 1
                target = words[i]
            if target and not target.startswith("&"):
                out.append(target)
        else:
            rest.append(word)
        i += 1
    if not rest:
        return out
    name = rest[0].rsplit("/", 1)[-1]
    args = [w for w in rest[1:] if not w.startswith("-")]
    if name == "sed" and any(w.startswith("-i") or w == "--in-place" for w in rest[1:]):
        out += args[1:]  # the script, then the files edited in place
    elif name in ("tee", "touch", "rm", "truncate"):
        out += args
    elif name in ("cp", "mv") and len(args) >= 2:
        out += args[-1:] if name == "cp" else args
    return out


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word.strip("'\"")


# How shell tools' outputs say a command's exit code (then an optional colon and the code).
EXIT_PHRASES = ("exit code", "exited with code")


def exit_code_after(
    text: str, phrases: tuple[str, ...], *, at_start: bool = False
) -> tuple[int, int] | None:
    """(code, end) of the first `phrase [:] <integer>` in `text`, phrases matched without
    regard to case; `at_start`: only at the very start. String scans, not `re`: the pattern
    module costs a hook ~4 ms."""
    lower = text.lower()
    found = []
    for phrase in phrases:
        start = lower.find(phrase)
        while start >= 0 and not (at_start and start):
            hit = _integer_after(text, start + len(phrase))
            if hit is not None:
                found.append((start, hit))
                break
            start = -1 if at_start else lower.find(phrase, start + 1)
    return min(found)[1] if found else None


def _integer_after(text: str, i: int) -> tuple[int, int] | None:
    if text[i : i + 1] == ":":
        i += 1
    while i < len(text) and text[i].isspace():
        i += 1
    j = i + 1 if text[i : i + 1] == "-" else i
    k = j
    while k < len(text) and text[k].isdecimal():
        k += 1
    return (int(text[i:k]), k) if k > j else None
