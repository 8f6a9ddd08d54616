"""Browse memories: the `list` contract shared by the CLI and the MCP server.

A literal, case-insensitive substring query (no wildcards: `%`, `_` and `\\` are plain
characters), filters that narrow, newest first with the id as tie-break, and paging that
selects limit + 1 rows to know whether there is more. Every query is bounded by a deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import apsw

from waymark.errors import InvalidArgument
from waymark.memories.record import COLUMNS, Memory, from_row, kind_filters
from waymark.memories.scope import PATH_SCOPES, SCOPES
from waymark.projects.resolve import Project
from waymark.storage import connection as db

LIMIT_RANGE = (1, 100)
OFFSET_RANGE = (0, 100_000)
TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Page:
    results: list[Memory]
    has_more: bool
    next_offset: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "results": [m.to_dict() for m in self.results],
            "has_more": self.has_more,
            "next_offset": self.next_offset,
        }


def list_memories(
    conn: apsw.Connection,
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
) -> Page:
    _check_range("limit", limit, LIMIT_RANGE)
    _check_range("offset", offset, OFFSET_RANGE)
    kinds, kind_params = kind_filters(types, tags)
    if target is not None and scope not in PATH_SCOPES:
        raise InvalidArgument("--target needs --scope directory, file or symbol")
    if scope is not None and scope not in SCOPES:
        raise InvalidArgument(f"unknown scope {scope!r}; valid scopes: {', '.join(SCOPES)}")

    where = ["m.project_id IS ?" if scope == "global" else "m.project_id = ?"]
    params: list[Any] = [None if scope == "global" else project.id]
    if not include_inactive:
        where.append("m.status = 'active'")
    where += kinds
    params += kind_params
    if scope is not None:
        where.append("m.scope_type = ?")
        params.append(scope)
        if target is not None:
            where.append("m.scope_target = ?")
            params.append(target)
    if query:
        conn.create_scalar_function("wm_fold", _fold, 1, deterministic=True)  # type: ignore[arg-type]
        where.append("instr(wm_fold(m.title || ' ' || m.content || ' ' || m.tags), ?) > 0")
        params.append(_fold(query))
    sql = (
        f"SELECT {', '.join('m.' + c for c in COLUMNS.split(', '))} FROM memories m"
        f" WHERE {' AND '.join(where)} ORDER BY m.created_at DESC, m.id DESC LIMIT ? OFFSET ?"
    )
    with db.deadline(conn, TIMEOUT_S):
        rows = conn.execute(sql, (*params, limit + 1, offset)).fetchall()
    has_more = len(rows) > limit
    return Page(
        results=[from_row(r) for r in rows[:limit]],
        has_more=has_more,
        next_offset=offset + limit if has_more else None,
    )


def _fold(text: Any) -> str:
    return text.casefold() if isinstance(text, str) else ""


def _check_range(name: str, value: int, bounds: tuple[int, int]) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        raise InvalidArgument(
            f"{name} must be an integer from {bounds[0]} to {bounds[1]} (got {value!r})",
            **{name: value},
        )
