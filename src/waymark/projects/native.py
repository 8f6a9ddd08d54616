"""Where Claude Code and Codex keep their own memory and instructions, and what of it is
already in front of the model: light (no `json`, no `re`), for the hooks' packets.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project

CLAUDE_LOADED_LINES, CLAUDE_LOADED_BYTES = 200, 25 * 1024


def claude_config_dir() -> str:
    return os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


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


_PUNCT = str.maketrans({c: " " for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\t\r\n"})
MIN_STATED = 16  # shorter texts match by accident


def normal(text: str) -> str:
    return " ".join(text.lower().translate(_PUNCT).split())


PROJECT_FILES = (
    "CLAUDE.md", os.path.join(".claude", "CLAUDE.md"), "CLAUDE.local.md", "AGENTS.md",
    "AGENTS.override.md",
)  # fmt: skip


def instruction_files(project: Project) -> list[str]:
    """The files both clients load into the model's context for this project: CLAUDE.md and
    AGENTS.md (project and user level) and Claude Code's own MEMORY.md index."""
    root = project.files or project.root
    found = []
    if root:
        for rel in PROJECT_FILES:
            found.append(os.path.join(root, rel))
    found.append(os.path.join(claude_config_dir(), "CLAUDE.md"))
    found.append(os.path.join(codex_home(), "AGENTS.md"))
    memory = claude_memory_dir(root)
    if memory:
        found.append(os.path.join(memory, "MEMORY.md"))
    return [p for p in found if os.path.isfile(p)]


def stated_text(project: Project) -> str:
    """Everything those files put in front of the model, normalised ("" without them)."""
    parts = []
    for path in instruction_files(project):
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


def already_stated(content: str, title: str, stated: str) -> bool:
    """True when the memory's text (or its title) is said in `stated` (normalised) already."""
    if not stated:
        return False
    for text in (content, title):
        said = normal(text)
        if len(said) >= MIN_STATED and said in stated:
            return True
    return False
