"""Memory records: the typed unit of what Waymark remembers, and the operations on it.

Every operation is one transaction and appends one row to `events`. Text is scrubbed of
secrets and `<private>` spans before it reaches the database (see `redact`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from waymark.base import clock, redact
from waymark.base.text import mend
from waymark.errors import InvalidArgument, InvalidScope, InvalidType
from waymark.memories.evidence import HASHED, hash_paths
from waymark.memories.injection import instruction_like
from waymark.memories.kinds import PRIORITY_RANGE, TYPES
from waymark.memories.scope import check_agent, normalise_target
from waymark.projects.resolve import Project
from waymark.storage.memories import Memory

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

ACTORS = ("user", "agent", "hook", "import")
MAX_TITLE = 200
MAX_CONTENT = 20_000
MAX_TAGS = 32
MAX_EVIDENCE = 20
EVIDENCE_KINDS = ("path", "command", "url", "commit")
# What Waymark adds to a path it hashed; carried over from an older revision, it is dropped and
# the file hashed again (a caller's hash is never trusted).


@dataclass(frozen=True)
class Draft:
    """A validated, scrubbed memory not yet written."""

    type: str
    title: str
    content: str
    scope_type: str = "project"
    scope_target: str | None = None
    tags: list[str] = field(default_factory=list)
    priority: int = 0
    pinned: bool = False
    evidence: list[dict[str, str]] = field(default_factory=list)
    valid_until: str | None = None
    event_time: str | None = None
    key: str | None = None
    actor: str = "user"
    client: str | None = None
    session_id: str | None = None
    source_ref: str | None = None
    git_branch: str | None = None
    agent: str | None = None
    redactions: int = 0
    # Why the text reads as an instruction to the agent (`injection`): such a write waits
    # for a person's review instead of reaching a packet. [] for ordinary text.
    flags: list[str] = field(default_factory=list)
    # A personal memory of a shared project never leaves this machine (team sync).
    personal: bool = False


@dataclass(frozen=True)
class Saved:
    """What a write returns: the record, whether it is new, and what the caller should know."""

    memory: Memory
    created: bool
    similar: list[str]
    redactions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "memory": self.memory.to_dict(),
            "created": self.created,
            "similar": self.similar,
            "redactions": self.redactions,
        }


def make_draft(
    project: Project,
    *,
    type: str,
    content: str,
    title: str | None = None,
    scope: str = "project",
    target: str | None = None,
    tags: list[str] | tuple[str, ...] = (),
    priority: int = 0,
    pinned: bool = False,
    evidence: list[dict[str, str]] | tuple[dict[str, str], ...] = (),
    valid_until: str | None = None,
    event_time: str | None = None,
    key: str | None = None,
    actor: str = "user",
    client: str | None = None,
    session_id: str | None = None,
    source_ref: str | None = None,
    git_branch: str | None = None,
    agent: str | None = None,
    base_dir: str | None = None,
    check_symbol: bool = False,
    mapped: Any = None,
    check_evidence: bool = True,
    personal: bool = False,
    expiry_given: bool = False,
) -> Draft:
    """Validate every field, scrub secrets, and return a Draft; raise on bad input.

    A new evidence path must be a file in the project (as a checkpoint's link must); one
    carried from an earlier revision (it has its hash) is kept as it was, and so is every
    one with `check_evidence=False` (a candidate's, from a session whose files may be gone).
    `expiry_given`: `valid_until` was given in this write, so it must be still to come."""
    _check_kind(type, actor, priority)
    content = _text(content, "content", MAX_CONTENT)
    given_title = _text(title, "title", MAX_TITLE) if title else None
    raw_tags = _tags(tags)
    raw_key = _text(key, "key", 500) if key else None
    # The short fields and the content scrubbed together: their rules' words checked once.
    short = [t for t in (given_title, *raw_tags, raw_key) if t is not None]
    scrubbed = redact.scrub_many([content, *short])
    content, n_content = scrubbed[0]
    if not content.strip():
        raise InvalidArgument("content is empty (after removing <private> spans)")
    clean = iter(scrubbed[1:])
    title, n_title = next(clean) if given_title else redact.scrub(title_from(content))
    tags_done = [next(clean) for _ in raw_tags]
    clean_tags, n_tags = [t for t, _ in tags_done], sum(n for _, n in tags_done)
    clean_key = next(clean)[0] if raw_key is not None else None
    clean_evidence, n_evidence = _clean_evidence(project, evidence, base_dir, check_evidence)
    source_ref, n_ref = redact.scrub(mend(source_ref)) if source_ref else (None, 0)
    return Draft(
        type=type,
        title=title,
        content=content,
        scope_type=scope,
        scope_target=normalise_target(
            scope, target, project.files, base_dir, check_symbol=check_symbol, mapped=mapped
        ),
        tags=clean_tags,
        priority=int(priority),
        pinned=bool(pinned),
        evidence=clean_evidence,
        valid_until=_expiry(valid_until, expiry_given),
        event_time=parse_time(event_time, "timestamp"),
        key=clean_key,
        actor=actor,
        client=client,
        session_id=session_id,
        source_ref=source_ref,
        git_branch=redact.scrub(mend(git_branch))[0] if git_branch else None,
        agent=_agent(agent),
        redactions=n_content + n_title + n_tags + n_evidence + n_ref,
        flags=instruction_like(title, content),
        personal=bool(personal),
    )


def _check_kind(type: str, actor: str, priority: int) -> None:
    """Refuse an unknown type or actor, or a priority out of PRIORITY_RANGE."""
    if type not in TYPES:
        raise InvalidType(
            f"unknown type {type!r}; valid types: {', '.join(TYPES)}", valid=list(TYPES)
        )
    if actor not in ACTORS:
        raise InvalidArgument(f"unknown actor {actor!r}; valid: {', '.join(ACTORS)}")
    if not PRIORITY_RANGE[0] <= int(priority) <= PRIORITY_RANGE[1]:
        raise InvalidArgument(
            f"priority must be between {PRIORITY_RANGE[0]} and {PRIORITY_RANGE[1]}"
        )


def _clean_evidence(
    project: Project, evidence: Any, base_dir: str | None, check_evidence: bool
) -> tuple[list[dict[str, str]], int]:
    """The evidence redacted, a new path checked and hashed (one carried from an earlier
    revision kept as it was); how many redactions."""
    given, carried = _evidence(evidence)
    clean, count = redact.scrub_value(given)
    assert isinstance(clean, list)
    if any(e.get("path") for e in clean):
        new = [not was and check_evidence for was in carried]
        clean = hash_paths(project.files, clean, base_dir, checked=new)
    return clean, count


def _agent(name: str | None) -> str | None:
    """A valid agent name (`scope.check_agent`) that holds no secret: a name is kept as
    given or refused, never stored redacted."""
    name = check_agent(name or None)
    if name is not None and redact.scrub(name)[1]:
        raise InvalidScope("the agent name looks like a secret; nothing was stored", agent=None)
    return name


def _text(value: Any, name: str, limit: int) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{name} must be text")
    if len(value) > limit:
        raise InvalidArgument(f"{name} is {len(value)} characters; the limit is {limit}")
    return mend(value.replace("\x00", ""))


def title_from(content: str) -> str:
    """The title a memory gets when none is given: its first line, cut to 80 characters."""
    first = next((line.strip() for line in content.splitlines() if line.strip()), "")
    return first if len(first) <= 80 else first[:79].rstrip() + "…"


def _tags(tags: Any) -> list[str]:
    if isinstance(tags, str):
        tags = [tags]
    out: list[str] = []
    for tag in tags or ():
        if (
            not isinstance(tag, str)
            or not tag.strip()
            or len(tag) > 64
            or any(c.isspace() for c in tag)
        ):
            raise InvalidArgument(f"a tag is 1-64 characters without spaces (got {tag!r})")
        tag = mend(tag)
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise InvalidArgument(f"{len(out)} tags; the limit is {MAX_TAGS}")
    return out


def _evidence(items: Any) -> tuple[list[dict[str, str]], list[bool]]:
    """The items in their one shape, and for each whether it was carried from an earlier
    revision (it comes with its hash)."""
    if isinstance(items, dict):
        items = [items]
    out, carried = [], []
    for item in items or ():
        if isinstance(item, str):
            item = {"path": item}
        kinds = [k for k in EVIDENCE_KINDS if item.get(k)] if isinstance(item, dict) else []
        extra = set(item) - {*EVIDENCE_KINDS, "note", *HASHED} if isinstance(item, dict) else set()
        if len(kinds) != 1 or extra:
            raise InvalidArgument(
                "each evidence item is {path | command | url | commit, note?} with exactly one"
                f" of path, command, url, commit (got {item!r})"
            )
        if kinds[0] == "commit" and not _is_sha(item["commit"]):
            raise InvalidArgument(
                f"evidence commit {item['commit']!r} is not a commit id (7 to 40 hex digits)"
            )
        entry = {kinds[0]: mend(str(item[kinds[0]]))}
        if item.get("note"):
            entry["note"] = mend(str(item["note"]))
        out.append(entry)
        carried.append(any(k in item for k in HASHED))
    if len(out) > MAX_EVIDENCE:
        raise InvalidArgument(f"{len(out)} evidence items; the limit is {MAX_EVIDENCE}")
    return out, carried


def _expiry(value: str | None, given: bool) -> str | None:
    """`valid_until` as stored; one `given` in this write (not carried from an earlier
    revision, nor imported as history) must be still to come: a memory already expired would
    never be active, yet a write that stored it would say it was."""
    until = parse_time(value, "valid_until", end_of_day=True)
    if given and until is not None and until <= clock.now():
        raise InvalidArgument(
            f"valid_until {value!r} has passed: the memory would never be active; give a "
            "later date, or none",
            fields=["valid_until"],
        )
    return until


def _is_sha(value: Any) -> bool:
    text = str(value)
    return 7 <= len(text) <= 40 and all(c in "0123456789abcdefABCDEF" for c in text)


def parse_time(value: str | None, name: str, *, end_of_day: bool = False) -> str | None:
    """ISO 8601 date or date-time (naive means UTC) → canonical UTC string."""
    if value is None or value == "":
        return None
    text = str(value).strip()
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidArgument(
            f"{name} {value!r} is not an ISO 8601 date or time (e.g. 2026-12-31 or "
            "2026-12-31T18:00:00Z)"
        ) from None
    if end_of_day and len(text) == 10:
        parsed += timedelta(days=1, milliseconds=-1)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    parsed = parsed.astimezone(timezone.utc)
    return parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z"


def content_hash(content: str) -> str:
    """Hash of the normalised content: whitespace collapsed, case folded."""
    normal = " ".join(content.split()).casefold()
    return hashlib.sha256(normal.encode("utf-8", "surrogatepass")).hexdigest()


def revision_of(project: Project, old: Any, **changes: Any) -> Draft:
    """A draft of `old` (a Memory) with `changes` (content, target, actor, client,
    session_id), every other field as it was: what an edit or a retarget saves."""
    fields: dict[str, Any] = {
        "type": old.type,
        "content": old.content,
        "title": old.title if old.title != title_from(old.content) else None,
        "scope": old.scope_type,
        "target": old.scope_target,
        "tags": old.tags,
        "priority": old.priority,
        "pinned": old.pinned,
        "evidence": old.evidence,
        "valid_until": old.valid_until,
        "key": old.key,
        "source_ref": old.source_ref,
        "git_branch": old.git_branch,
        "agent": old.agent,
    }
    return make_draft(project, **(fields | changes))
