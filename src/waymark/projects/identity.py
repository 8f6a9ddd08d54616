"""What identifies a repository when its folder moves: the commits it started from.

A git repository's root commits do not change when it is renamed, moved or cloned; a plain
folder keeps its inode when it is renamed on the same disk. A path project records this
identity once, so a repository found at a new root can be given back its memories. Learning it
costs one `git` process, once per project.
"""

from __future__ import annotations

import os

from waymark.projects.git import output
from waymark.projects.locate import Location, locate


def of(loc: Location) -> str | None:
    """`git:<root commit>[,<root commit>...]`, `dir:<device>:<inode>`, or None (a repository
    with no commit yet)."""
    if loc.how == "directory":
        try:
            st = os.stat(loc.root)
        except OSError:
            return None
        return f"dir:{st.st_dev}:{st.st_ino}"
    out = output(loc.root, "rev-list", "--max-parents=0", "HEAD")
    roots = sorted(line.strip() for line in (out or "").splitlines() if line.strip())
    return "git:" + ",".join(roots) if roots else None


def still_there(root: str, identity: str) -> bool:
    """True when `root` still holds the repository with `identity` (a clone elsewhere, not a
    move)."""
    if not os.path.isdir(root):
        return False
    try:
        here = locate(root)
    except OSError:
        return False
    return here.root == root and of(here) == identity
