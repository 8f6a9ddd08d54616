"""The content of a checkpoint revision: normalising a model's natural call, and rendering.

A revision holds objective, progress, decisions (each with its why), failed approaches (each
with why it failed), blockers, tests run, evidence, next action, relevant files, lessons and
the task's definition of done (commands that must pass, files, behaviour).
Plain strings are accepted where a list of one is meant, and where an object is meant its
main field is filled from the string, so a model's natural call works.
"""

from __future__ import annotations

from waymark.base.text import mend
from waymark.errors import InvalidArgument

TYPE_CHECKING = False  # typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

LIST_FIELDS = (
    "progress",
    "decisions",
    "failed_approaches",
    "blockers",
    "tests",
    "evidence",
    "relevant_files",
    "lessons",
    "done_when",
)
TEXT_FIELDS = ("objective", "next_action")
# The operations that hand the work off: they satisfy the Stop rule and clear the markers
# (a lesson alone does not; neither does a revise that changes nothing, which is not written).
HANDOFFS = ("create", "revise", "complete", "abandon", "release", "assign")
FIELDS = TEXT_FIELDS + LIST_FIELDS
TEST_RESULTS = ("pass", "fail", "not_run")
MAX_ITEMS = 50
MAX_TEXT = 4000

# For each object-shaped field: its keys, the one a plain string fills, the ones required.
SHAPES: dict[str, tuple[tuple[str, ...], str, tuple[str, ...]]] = {
    "decisions": (("decision", "why"), "decision", ("decision",)),
    "failed_approaches": (("approach", "why_failed"), "approach", ("approach",)),
    "tests": (("command", "result", "note"), "command", ("command",)),
    "evidence": (("path", "note"), "path", ("path",)),
    "lessons": (
        ("trigger", "mistaken_assumption", "correction", "prevention", "evidence"),
        "correction",
        ("correction",),
    ),
    # Any one of them; a plain string is a command that must pass.
    "done_when": (("command", "file", "behaviour"), "command", ()),
}


def normalise(fields: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Validated, scrubbed fields (only those given) and the number of redactions."""
    unknown = set(fields) - set(FIELDS)
    if unknown:
        raise InvalidArgument(
            f"unknown checkpoint field(s) {sorted(unknown)}; fields: {', '.join(FIELDS)}"
        )
    out: dict[str, Any] = {}
    for name, value in fields.items():
        if value is None:
            continue
        out[name] = _text(name, value) if name in TEXT_FIELDS else _list(name, value)
    from waymark.base import (
        redact,  # its patterns need `re`: a SessionStart that only renders skips it
    )

    clean, redactions = redact.scrub_value(out)
    assert isinstance(clean, dict)
    return clean, redactions


def _text(name: str, value: Any) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be text")
    value = mend(value.strip())
    if len(value) > MAX_TEXT:
        raise InvalidArgument(f"{name} is {len(value)} characters; the limit is {MAX_TEXT}")
    return value


def _list(name: str, value: Any) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_ITEMS:
        raise InvalidArgument(f"{name} has {len(items)} items; the limit is {MAX_ITEMS}")
    if name not in SHAPES:
        return [
            _text(name, item) for item in items if not (isinstance(item, str) and not item.strip())
        ]
    keys, main, required = SHAPES[name]
    out = []
    for item in items:
        if isinstance(item, str):
            item = {main: item}
        if not isinstance(item, dict):
            raise InvalidArgument(
                f"each item of {name} is text or an object with {', '.join(keys)}"
            )
        extra = set(item) - set(keys)
        if extra:
            raise InvalidArgument(f"{name} items take {', '.join(keys)} (got {sorted(extra)})")
        entry = {k: _text(f"{name}.{k}", v) for k, v in item.items() if v not in (None, "")}
        missing = [k for k in required if not entry.get(k)]
        if missing:
            raise InvalidArgument(f"each item of {name} needs {', '.join(missing)}")
        if not entry:
            raise InvalidArgument(f"each item of {name} needs one of {', '.join(keys)}")
        if name == "tests":
            entry["result"] = entry.get("result", "not_run").lower().replace("-", "_")
            if entry["result"] not in TEST_RESULTS:
                raise InvalidArgument(f"a test result is one of {', '.join(TEST_RESULTS)}")
        out.append(entry)
    return out


def render(body: dict[str, Any], *, status: str = "active") -> str:
    """The revision as compact text: the form budgets are measured on and packets show."""
    lines = [f"Objective: {body.get('objective', '')}"]
    if body.get("next_action"):
        lines.append(f"Next action: {body['next_action']}")
    if status != "active":
        lines.append(f"Status: {status}")
    sections = [
        ("Progress", body.get("progress", []), lambda x: x),
        (
            "Decisions",
            body.get("decisions", []),
            lambda d: d["decision"] + (f" (why: {d['why']})" if d.get("why") else ""),
        ),
        (
            "Failed approaches",
            body.get("failed_approaches", []),
            lambda f: (
                f["approach"] + (f" (failed: {f['why_failed']})" if f.get("why_failed") else "")
            ),
        ),
        ("Blockers", body.get("blockers", []), lambda x: x),
        (
            "Tests",
            body.get("tests", []),
            lambda t: (
                f"[{t['result']}] {t['command']}" + (f" ({t['note']})" if t.get("note") else "")
            ),
        ),
        (
            "Evidence",
            body.get("evidence", []),
            lambda e: e["path"] + (f" ({e['note']})" if e.get("note") else ""),
        ),
        ("Relevant files", body.get("relevant_files", []), lambda x: x),
        ("Lessons", body.get("lessons", []), render_lesson),
        ("Done when", body.get("done_when", []), render_done),
    ]
    for title, items, fmt in sections:
        if items:
            lines.append(f"{title}:")
            lines.extend(f"- {fmt(item)}" for item in items)
    return "\n".join(lines)


def render_done(item: dict[str, str]) -> str:
    said = [f"`{item['command']}` passes"] if item.get("command") else []
    said += [f"{item['file']} is in place"] if item.get("file") else []
    said += [item["behaviour"]] if item.get("behaviour") else []
    return "; ".join(said)


def render_lesson(lesson: dict[str, str]) -> str:
    parts = []
    if lesson.get("trigger"):
        parts.append(f"when {lesson['trigger']}")
    if lesson.get("mistaken_assumption"):
        parts.append(f"assumed {lesson['mistaken_assumption']}")
    parts.append(f"but {lesson['correction']}" if parts else lesson["correction"])
    if lesson.get("evidence"):
        parts.append(f"(evidence: {lesson['evidence']})")
    if lesson.get("prevention"):
        parts.append(f"next time: {lesson['prevention']}")
    return "; ".join(parts)
