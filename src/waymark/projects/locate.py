"""Which project a directory belongs to, read from the filesystem alone.

Hooks call this in short-lived processes, so it never spawns git and imports only the
stdlib; the TOML parser is imported only when a `.waymark.toml` exists.

The root is the git repository's top, except that a linked worktree resolves to the main
repository it belongs to, so every worktree shares one memory. When that main repository
is bare (`git clone --bare` then `git worktree add`), there is no main working tree: the
root is the bare directory itself, which keeps the sharing. A submodule is its own project.
"""

from __future__ import annotations

import os
import sys

from waymark.base.record import record
from waymark.errors import ProjectError

TYPE_CHECKING = False  # hooks import this: typing would cost them ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

CONFIG_NAME = ".waymark.toml"
NAME_MAX = 100
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_HEX = frozenset("0123456789abcdef")


# A namedtuple, not a dataclass: `dataclasses` costs a hook process ~8 ms to import.
#   root         realpath'd project root; the main repository's root for a linked worktree
#   how          "git" | "git-worktree" | "directory"
#   name         from .waymark.toml, when one names the project
#   config_path  the .waymark.toml that named it
#   git_dir      the main repository's common git dir, when git
#   top          the working tree holding the path: a worktree's own top, else == root
Location = record("Location", "root how name config_path git_dir top")


def locate(path: str | os.PathLike[str]) -> Location:
    """Resolve the project that the file or directory `path` belongs to."""
    given = os.fspath(path)
    start = os.path.realpath(given)
    if not os.path.exists(start):
        raise ProjectError(
            f"{given} does not exist; pass an existing file or directory", path=given
        )
    if not os.path.isdir(start):
        start = os.path.dirname(start)
    top, dirs = _find_repo(start)
    if dirs is None:
        root, how, git_dir = start, "directory", None
    else:
        git_dir = dirs[1]
        root, how = _main_root(top, *dirs)
    name, config_path = _read_name(top, root)
    return Location(root, how, name, config_path, git_dir, top)


def git_branch(where: Location | str | os.PathLike[str]) -> str | None:
    """The branch checked out where `where` is ("main"); None when detached or not git."""
    head = _head(where)
    if head is None or not head[0].startswith("ref:"):
        return None
    ref = head[0][4:].strip()
    return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None


def git_head(where: Location | str | os.PathLike[str]) -> str | None:
    """The commit checked out, from a loose ref or packed-refs; None when not cheaply known."""
    head = _head(where)
    if head is None:
        return None
    value, head_dir, common = head
    for _ in range(5):  # symbolic refs may chain; bound it so a cycle cannot hang a hook
        if not value.startswith("ref:"):
            return value if len(value) in (40, 64) and set(value) <= _HEX else None
        ref = value[4:].strip()
        found = _loose_ref(ref, head_dir, common) or _packed_ref(ref, common)
        if found is None:  # unborn branch, or a ref store we do not read (reftable)
            return None
        value = found
    return None


def _find_repo(start: str) -> tuple[str, tuple[str, str] | None]:
    directory = start
    while True:
        dirs = _git_dirs(directory)
        if dirs is not None:
            return directory, dirs
        parent = os.path.dirname(directory)
        if parent == directory:
            return start, None
        directory = parent


def _git_dirs(top: str) -> tuple[str, str] | None:
    """(this working tree's git dir, the common git dir) when `top` holds a `.git`."""
    dot_git = os.path.join(top, ".git")
    if os.path.isdir(dot_git):
        # Like git, pass over a stray `.git` directory that is not a repository.
        return (dot_git, dot_git) if os.path.isfile(os.path.join(dot_git, "HEAD")) else None
    if not os.path.isfile(dot_git):
        return None
    text = _read(dot_git) or ""
    if not text.startswith("gitdir:"):
        raise ProjectError(
            f"{dot_git} is not a valid git file (no 'gitdir:' line); fix or remove it",
            path=dot_git,
        )
    head_dir = _resolve(top, text[len("gitdir:") :].strip())
    commondir = _read(os.path.join(head_dir, "commondir"))
    common = _resolve(head_dir, commondir.strip()) if commondir else head_dir
    for needed in (head_dir, common):
        if not os.path.isdir(needed):
            raise ProjectError(
                f"{dot_git} points to {needed}, which does not exist; "
                "run `git worktree prune` or fix the file",
                path=dot_git,
            )
    return head_dir, common


def _main_root(top: str, head_dir: str, common: str) -> tuple[str, str]:
    if head_dir == common:  # an ordinary repository or a submodule: its own project
        return top, "git"
    if os.path.basename(common) == ".git":
        return os.path.dirname(common), "git-worktree"
    # A submodule's git dir lives under .git/modules and names its checkout in core.worktree;
    # anything else is a bare repository, which is the only shared place its worktrees have.
    return _core_worktree(common) or common, "git-worktree"


def _core_worktree(common: str) -> str | None:
    section = ""
    for raw in (_read(os.path.join(common, "config")) or "").splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "worktree":
                path = _resolve(common, value.strip().strip('"'))
                return path if os.path.isdir(path) else None
    return None


def _read_name(top: str, root: str) -> tuple[str | None, str | None]:
    # A worktree's own file wins, so one checkout can be told apart on purpose.
    for directory in dict.fromkeys((top, root)):
        path = os.path.join(directory, CONFIG_NAME)
        if os.path.isfile(path):
            name = _parse_name(path)
            if name is not None:
                return name, path
    return None, None


def load_config(path: str) -> dict:
    """A `.waymark.toml` as data; ProjectError (naming the line) when it cannot be read."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as e:
        raise ProjectError(f"cannot read {path}: {e.strerror}", path=path) from e
    except ValueError as e:  # TOMLDecodeError (names the line), or bytes that are not UTF-8
        raise ProjectError(f"{path} is not valid TOML: {e}; fix or remove it", path=path) from e


def _parse_name(path: str) -> str | None:
    data = load_config(path)
    name = data.get("name")
    if name is None and isinstance(data.get("project"), dict):
        name = data["project"].get("name")
    if name is None:
        return None
    if not (isinstance(name, str) and 1 <= len(name) <= NAME_MAX and set(name) <= _NAME_CHARS):
        # Never the value itself: a name is what a pasted secret lands in, and this message
        # goes to the hooks' log. Its length and the characters that may not be are enough.
        bad = sorted(set(name) - _NAME_CHARS) if isinstance(name, str) else []
        what = (f"{len(name)} characters" + (f", with {_shown(bad)}" if bad else "")
                if isinstance(name, str) else f"a {type(name).__name__}, not text")  # fmt: skip
        raise ProjectError(
            f"{path}: the project name is invalid ({what}); use 1-{NAME_MAX} characters "
            "from letters, digits, '.', '_' and '-'",
            path=path,
        )
    if secret_like(name):
        raise ProjectError(
            f"{path}: the project name looks like it holds a secret (the redactor flags it); "
            "choose another name: it is shown in every packet and log",
            path=path,
        )
    return name


def secret_like(name: str) -> bool:
    """Whether the redactor flags a project name. Only a name with a long part of letters
    and digits pays for the redactor's patterns (a hook imports no `re` otherwise)."""
    parts = name.replace(".", "-").replace("_", "-").split("-")
    if not any(len(p) >= 16 and not p.isalpha() and not p.isdigit() for p in parts):
        return False
    from waymark.base import redact

    return redact.scrub(name)[1] > 0


def _shown(chars: list[str]) -> str:
    """The characters a name may not hold, as a person reads them (never letters of it)."""
    named = {" ": "spaces", "\t": "tabs", "\n": "line breaks"}
    out = [named.get(c) or (repr(c) if not c.isalnum() else "letters outside A-Z") for c in chars]
    return ", ".join(dict.fromkeys(out))


def _head(where: Location | str | os.PathLike[str]) -> tuple[str, str, str] | None:
    location = where if isinstance(where, Location) else locate(where)
    if location.how == "directory":
        return None
    dirs = _git_dirs(location.top)
    if dirs is None:
        return None
    text = _read(os.path.join(dirs[0], "HEAD"))
    return None if text is None else (text.strip(), *dirs)


def _loose_ref(ref: str, head_dir: str, common: str) -> str | None:
    # Per-worktree refs live in the worktree's git dir; branches in the common one.
    for directory in dict.fromkeys((head_dir, common)):
        text = _read(os.path.join(directory, *ref.split("/")))
        if text and text.strip():
            return text.strip()
    return None


def _packed_ref(ref: str, common: str) -> str | None:
    for line in (_read(os.path.join(common, "packed-refs")) or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref:
            return sha
    return None


def _resolve(base: str, path: str) -> str:
    # normpath turns a Windows gitdir's separators into the native ones.
    return os.path.realpath(os.path.join(base, os.path.normpath(path)))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return None


# Every table and key a `.waymark.toml` may hold (a top-level key maps to None). Anything
# else is a typo that would otherwise be ignored in silence (`ignore_path` excluding nothing).
KNOWN_KEYS: dict[str, tuple[str, ...] | None] = {
    "name": None,
    "project": ("name",),
    "capture": ("ignore_paths", "ignore_commands"),
    "guard": ("ask_paths", "ask_commands"),
    "output": ("trim_over", "keep_days"),
    "summary": ("enabled",),
    "team": ("share", "promote"),
    "knowledge": ("paths",),
    "repository": ("share",),
}


def unknown_keys(path: str) -> list[str]:
    """What the `.waymark.toml` at `path` holds that Waymark does not read, one sentence
    each with the closest known name; [] for a file that does not parse (its own error
    says that)."""
    try:
        data = load_config(path)
    except ProjectError:
        return []
    found = []
    for key, value in data.items():
        if key not in KNOWN_KEYS:
            is_table = isinstance(value, dict)
            shown = "[{}]" if is_table else "{}"
            names = [shown.format(k) for k, v in KNOWN_KEYS.items() if (v is not None) == is_table]
            what = shown.format(key)
            found.append(f"unknown {'table' if is_table else 'key'} {what}" + _closest(what, names))
            continue
        keys = KNOWN_KEYS[key]
        if keys is not None and isinstance(value, dict):
            for inner in value:
                if inner not in keys:
                    found.append(f"[{key}] has no setting {inner}" + _closest(inner, keys))
    return [f"{path}: {sentence}" for sentence in found]


def _closest(word: str, names: Sequence[str]) -> str:
    import difflib

    near = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    known = ", ".join(names)
    return f"; did you mean {near[0]}? (known: {known})" if near else f" (known: {known})"


def config_files(cwd: str | None, root: str | None) -> list[str]:
    """The `.waymark.toml` files from `cwd` up to the project root, nearest first (a `cwd`
    outside the root counts as the root). Only stats: nothing is read."""
    if not root:
        return []
    here = os.path.realpath(cwd) if cwd else root
    top = os.path.realpath(root)
    if not (here == top or here.startswith(top + os.sep)):
        here = top
    found = []
    while True:
        path = os.path.join(here, CONFIG_NAME)
        if os.path.isfile(path):
            found.append(path)
        if here == top or os.path.dirname(here) == here:
            return found
        here = os.path.dirname(here)
