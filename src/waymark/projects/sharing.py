"""Whether a project is shared with a team: `[team]` in its `.waymark.toml` (`share = true`;
`promote = "direct"` lets `waymark share` skip the review queue)."""

from __future__ import annotations

from waymark.projects.ignore import nearest_table


def is_shared(root: str | None) -> bool:
    """True when the `.waymark.toml` at `root` says `[team] share = true`."""
    found = nearest_table(root, root, "team") if root else None
    return bool(found and found[1].get("share") is True)


def promotes_directly(root: str | None) -> bool:
    """True when the project lets a personal memory become the team's without review."""
    found = nearest_table(root, root, "team") if root else None
    return bool(found and found[1].get("promote") == "direct")
