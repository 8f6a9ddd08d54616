"""The memory record as read from the database: a lean type for every read path.

A namedtuple rather than a dataclass, because hooks read memories too and `dataclasses`
costs a short-lived process about 8 ms to import.
"""

from __future__ import annotations

from collections import namedtuple

from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms

TYPE_CHECKING = False  # typing costs a hook ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

TYPES = (
    "decision", "fact", "convention", "warning", "lesson",
    "solution", "incident", "todo", "note", "preference",
)  # fmt: skip
STATUSES = ("active", "superseded", "archived", "erased")


class Memory(
    namedtuple(
        "_Memory",
        "id project_id type title content scope_type scope_target tags priority pinned status"
        " actor client session_id source_ref evidence git_branch valid_until event_time"
        " created_at updated_at content_hash key supersedes superseded_by erased_reason",
    )
):
    """One memory. `tags` is a list of exact strings; `evidence` a list of
    {path | command | url, note?}; times are UTC ISO 8601 strings."""

    __slots__ = ()

    def to_dict(self) -> dict:
        return self._asdict()


FIELDS = Memory._fields
COLUMNS = ", ".join(FIELDS)


def from_row(row: tuple) -> Memory:
    if len(row) != len(FIELDS):
        raise ValueError(f"expected {len(FIELDS)} columns, got {len(row)}")
    values = list(row)
    values[7] = json.loads(values[7])  # tags
    values[9] = bool(values[9])  # pinned
    values[15] = json.loads(values[15])  # evidence
    return Memory(*values)


def kind_filters(types: Sequence[str], tags: Sequence[str]) -> tuple[list[str], list[str]]:
    """SQL conditions on memories `m` for any of `types` and every one of `tags`, and their
    parameters; an unknown type is refused with the valid ones."""
    bad = [t for t in types if t not in TYPES]
    if bad:
        from waymark.errors import InvalidArgument

        raise InvalidArgument(f"unknown type {bad[0]!r}; valid types: {', '.join(TYPES)}")
    where = [f"m.type IN ({', '.join('?' * len(types))})"] if types else []
    where += ["EXISTS (SELECT 1 FROM json_each(m.tags) t WHERE t.value = ?)"] * len(tags)
    return where, [*types, *tags]
