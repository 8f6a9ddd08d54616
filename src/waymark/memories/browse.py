"""Browse memories: the `list` contract shared by the CLI and the MCP server.

A literal, case-insensitive substring query (no wildcards: `%`, `_` and `\\` are plain
characters), filters that narrow, newest first with the id as tie-break, and paging that
selects limit + 1 rows to know whether there is more. Every query is bounded by a deadline.
"""

from __future__ import annotations

from waymark.errors import InvalidArgument
from waymark.memories.kinds import check_types
from waymark.memories.scope import PATH_SCOPES, SCOPES, scope_of
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import memories as rows
from waymark.storage.connection import Connection
from waymark.storage.memories import Memory

LIMIT_RANGE = (1, 100)
OFFSET_RANGE = (0, 100_000)
TIMEOUT_S = 5.0

TYPE_CHECKING = False  # typing costs `waymark list` ~4 ms of its whole process
if TYPE_CHECKING:
    from typing import Any


class Page:
    """A page of memories. A plain class: a dataclass (~6 ms) or a NamedTuple (typing, ~4 ms)
    would cost `waymark list` that much of its whole process."""

    __slots__ = ("results", "has_more", "next_offset")

    def __init__(self, results: list[Memory], has_more: bool, next_offset: int | None) -> None:
        self.results = results
        self.has_more = has_more
        self.next_offset = next_offset

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [m.to_dict() for m in self.results],
            "has_more": self.has_more,
            "next_offset": self.next_offset,
        }


def list_memories(
    conn: Connection,
    project: Project,
    *,
    query: str | None = None,
    types: list[str] | tuple[str, ...] = (),
    tags: list[str] | tuple[str, ...] = (),
    scope: str | None = None,
    target: str | None = None,
    include_inactive: bool = False,
    limit: int = 20,
    offset: int = 0,
    branch: str | None = None,
    agent: str | None = None,
    base: str | None = None,
) -> Page:
    """One page of the project's memories (or the global ones), newest first; with `agent`,
    only that agent's. A relative `target` is taken against `base` (the caller's directory)
    first, then the root, as a write takes it."""
    _check_range("limit", limit, LIMIT_RANGE)
    _check_range("offset", offset, OFFSET_RANGE)
    where = _filters(project, query, types, tags, scope, target, include_inactive, branch,
                     agent, base)  # fmt: skip
    with db.deadline(conn, TIMEOUT_S):
        found = rows.browse(conn, **where, limit=limit + 1, offset=offset)
    has_more = len(found) > limit
    return Page(
        results=found[:limit],
        has_more=has_more,
        next_offset=offset + limit if has_more else None,
    )


COUNT_CAP = 100_000
COUNT_TIMEOUT_S = 0.15


def count_memories(
    conn: Connection,
    project: Project,
    *,
    query: str | None = None,
    types: list[str] | tuple[str, ...] = (),
    tags: list[str] | tuple[str, ...] = (),
    scope: str | None = None,
    target: str | None = None,
    include_inactive: bool = False,
    branch: str | None = None,
    agent: str | None = None,
    base: str | None = None,
) -> int | None:
    """How many memories `list_memories` pages through with the same filters (at most
    COUNT_CAP + 1); None when counting takes longer than COUNT_TIMEOUT_S (a words filter
    reads every memory's text): a page then says "more" instead of a total."""
    from waymark.errors import QueryTimeout

    where = _filters(project, query, types, tags, scope, target, include_inactive, branch,
                     agent, base)  # fmt: skip
    try:
        with db.deadline(conn, COUNT_TIMEOUT_S):
            return rows.count_browsed(conn, **where, cap=COUNT_CAP)
    except QueryTimeout:
        return None


def _filters(
    project: Project,
    query: str | None,
    types: list[str] | tuple[str, ...],
    tags: list[str] | tuple[str, ...],
    scope: str | None,
    target: str | None,
    include_inactive: bool,
    branch: str | None,
    agent: str | None,
    base: str | None,
) -> dict[str, Any]:
    """The browse contract's filters, checked, as the storage seam takes them (what a page
    and its total share)."""
    check_types(types)
    if target is not None and scope is None:
        scope = scope_of(target, project.files, base)  # as a write with a bare target does
    if target is not None and scope not in PATH_SCOPES:
        raise InvalidArgument("--target needs --scope directory, file or symbol")
    if scope is not None and scope not in SCOPES:
        raise InvalidArgument(f"unknown scope {scope!r}; valid scopes: {', '.join(SCOPES)}")
    return {
        "project_id": None if scope == "global" else project.id,
        "include_inactive": include_inactive,
        "types": types,
        "tags": tags,
        "scope": scope,
        "target": spellings(target, project, base) if target is not None else None,
        "folded_query": _fold(query) if query else None,
        "fold": _fold,
        "branch": branch,
        "agent": agent,
    }  # fmt: skip


def spellings(target: str, project: Project, base: str | None = None) -> list[str]:
    """Every way a target may be stored: as Waymark stores it (relative to the root, POSIX,
    found by the rule every path follows: `pathnames.spelled`), and as older records and
    imports spelled it (`./x`, absolute under the root)."""
    import os

    from waymark.projects.pathnames import spelled

    path, sep, symbol = target.partition("::")
    root = project.files
    paths = spelled(path, root, base) if root else []
    if not paths:  # no directory, or outside it: only the spelling as given can match
        paths = [path.replace("\\", "/").rstrip("/") or "."]
    forms = []
    for rel in paths:
        forms += [rel, f"./{rel}"]
        if root:
            forms += [os.path.join(root, rel), os.path.join(os.path.realpath(root), rel)]
    tail = f"{sep}{symbol}" if sep else ""
    return list(dict.fromkeys(f"{form}{tail}" for form in forms))


def _fold(text: Any) -> str:
    return text.casefold() if isinstance(text, str) else ""


def _check_range(name: str, value: int, bounds: tuple[int, int]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise InvalidArgument(
            f"{name} must be an integer from {bounds[0]} to {bounds[1]} (got {value!r})",
            **{name: value},
        )
