"""Where Claude Code and Codex keep their own memory and instructions, and what of it is
already in front of the model: light (no `json`, no `re`), for the hooks' packets.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project

CLAUDE_LOADED_LINES, CLAUDE_LOADED_BYTES = 200, 25 * 1024


def client_dir(variable: str, default: str) -> str:
    """A client's config folder: the one its environment variable names (as the client
    itself honours it), else its default under the home directory."""
    explicit = os.environ.get(variable, "").strip()
    return os.path.abspath(os.path.expanduser(explicit or default))


def claude_config_dir() -> str:
    return client_dir("CLAUDE_CONFIG_DIR", "~/.claude")


def codex_home() -> str:
    return client_dir("CODEX_HOME", "~/.codex")


def claude_slug(path: str) -> str:
    """Claude Code's folder name for a project: its absolute path, every character that is
    not a letter or digit turned into '-'."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in os.path.abspath(path))


def claude_memory_dir(root: str | None) -> str | None:
    """Claude Code's auto-memory folder for the project at `root` (None without a root)."""
    if not root:
        return None
    return os.path.join(claude_config_dir(), "projects", claude_slug(root), "memory")


def codex_memory_dir() -> str:
    return os.path.join(codex_home(), "memories")


# The clients' own memory, as `waymark import --from` names it; its memories are keyed
# `source:...`.
MEMORY_SOURCES = ("claude-memory", "codex-memories")


def memory_folder(source: str, root: str | None) -> str | None:
    """Where `source` keeps its memory for the project at `root`."""
    return claude_memory_dir(root) if source == "claude-memory" else codex_memory_dir()


_PUNCT = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\t\r\n"})
MIN_STATED = 16  # shorter texts match by accident


def normal(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCT).split())


CLAUDE_FILES = ("CLAUDE.md", os.path.join(".claude", "CLAUDE.md"), "CLAUDE.local.md")
CODEX_FILES = ("AGENTS.override.md", "AGENTS.md")
CODEX_SUMMARY = "memory_summary.md"


def instruction_files(project: Project, client: str | None = None) -> list[str]:
    """The files `client` loads into the model's context for this project: Claude Code its
    CLAUDE.md files (project and user level) and its own MEMORY.md index, Codex its
    AGENTS.md (an override in place of the file beside it, and the one in CODEX_HOME). Codex
    never reads CLAUDE.md, nor Claude Code AGENTS.md. No client: both clients' files."""
    root = project.files or project.root
    found = []
    if client in (None, "claude-code"):
        found += [os.path.join(root, rel) for rel in CLAUDE_FILES] if root else []
        found.append(os.path.join(claude_config_dir(), "CLAUDE.md"))
        memory = claude_memory_dir(root)
        if memory:
            found.append(os.path.join(memory, "MEMORY.md"))
    if client in (None, "codex"):
        for folder in ([root] if root else []) + [codex_home()]:
            first = next(
                (p for p in (os.path.join(folder, n) for n in CODEX_FILES) if os.path.isfile(p)),
                None,
            )
            if first:
                found.append(first)
        # Codex's own memories, where they are on: the summary it loads into every prompt.
        found.append(os.path.join(codex_memory_dir(), CODEX_SUMMARY))
    return [p for p in found if os.path.isfile(p)]


def stated_text(project: Project, client: str | None = None) -> str:
    """Everything `client`'s files put in front of the model, normalised ("" without them)."""
    parts = []
    for path in instruction_files(project, client):
        try:
            with open(path, "rb") as f:
                data = f.read(CLAUDE_LOADED_BYTES if path.endswith("MEMORY.md") else 64 * 1024)
        except OSError:
            continue
        text = data.decode("utf-8", "replace")
        if path.endswith("MEMORY.md"):
            text = "\n".join(text.splitlines()[:CLAUDE_LOADED_LINES])
        parts.append(normal(text))
    return "\n".join(parts)


def already_stated(content: str, title: str, stated: str, memory_id: str | None = None) -> bool:
    """True when the memory's text (or its title) is said in `stated` (normalised) already,
    or its reference `waymark:<id>` (how Codex's memories cite what Waymark gave them)."""
    if not stated:
        return False
    if memory_id and normal(f"waymark:{memory_id}") in stated:
        return True
    for text in (content, title):
        said = normal(text)
        if len(said) >= MIN_STATED and said in stated:
            return True
    return False
