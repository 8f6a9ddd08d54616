"""What a memory can be: its types and statuses (the record itself is
`waymark.storage.memories.Memory`)."""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs a hook ~3 ms
if TYPE_CHECKING:
    from collections.abc import Sequence

TYPES = (
    "decision", "fact", "convention", "warning", "lesson",
    "solution", "incident", "todo", "note", "preference",
)  # fmt: skip
STATUSES = ("active", "superseded", "archived", "erased")
PRIORITY_RANGE = (-10, 10)
# Types a packet shows as rules when their priority is positive (memories_rules indexes them).
RULE_TYPES = ("convention", "warning", "decision", "preference")


def check_types(types: Sequence[str]) -> None:
    """Refuse an unknown type in a filter, naming the valid ones."""
    bad = [t for t in types if t not in TYPES]
    if bad:
        from waymark.errors import InvalidArgument

        raise InvalidArgument(f"unknown type {bad[0]!r}; valid types: {', '.join(TYPES)}")
