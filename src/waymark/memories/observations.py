"""Implementation evidence on memories: immutable observations, checked on every read.

An observation says what a caller reports about an active memory, never what Waymark
certifies: REQUESTED (no links), REPORTED_IMPLEMENTED (an implementation link),
REPORTED_PASS or REPORTED_FAIL (a test link and a verification note). Up to 10 links, each
a project-relative file with a role (implementation, test, model, config, doc) and an
optional locator, hashed by Waymark itself (`memories.evidence`: 2 MiB a file, 8 MiB a
request; a read that fails is UNKNOWN with its reason, never UNCHANGED). No source text is
stored. Observations are never changed (a trigger refuses it): a newer one supersedes an older
one's claim, and on read the latest is RECHECK_REQUIRED as soon as a linked file changed,
vanished or cannot be read.
"""

from __future__ import annotations

from waymark.base import clock, redact
from waymark.base.text import mend
from waymark.errors import InvalidArgument
from waymark.memories import evidence, store
from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import observations as rows
from waymark.storage.connection import Connection
from waymark.storage.events import log_event

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("REQUESTED", "REPORTED_IMPLEMENTED", "REPORTED_PASS", "REPORTED_FAIL")
ROLES = ("implementation", "test", "model", "config", "doc")
NOTE_MAX = 2000
LOCATOR_MAX = 200
PAGE_MAX = 100
FRESH, RECHECK = "FRESH", "RECHECK_REQUIRED"


def _links(items: Any) -> list[dict[str, str]]:
    """[{role, path, locator?}], checked (the paths are resolved when hashed)."""
    if items is None:
        return []
    if not isinstance(items, list):
        raise InvalidArgument("links is a list of {role, path, locator?}", fields=["links"])
    out = []
    for item in items:
        if not isinstance(item, dict) or set(item) - {"role", "path", "locator"}:
            raise InvalidArgument(
                f"each link is {{role, path, locator?}} (got {item!r})", fields=["links"]
            )
        role, path = item.get("role"), item.get("path")
        if role not in ROLES:
            raise InvalidArgument(
                f"link role {role!r} is not one of {', '.join(ROLES)}", valid=list(ROLES)
            )
        if not isinstance(path, str) or not path.strip():
            raise InvalidArgument(f"a {role} link needs a path", fields=["links"])
        link = {"role": role, "path": path}
        locator = item.get("locator")
        if locator not in (None, ""):
            if not isinstance(locator, str) or len(locator) > LOCATOR_MAX:
                raise InvalidArgument(
                    f"a locator is text of at most {LOCATOR_MAX} characters (got {locator!r})"
                )
            link["locator"] = redact.scrub(mend(locator))[0]
        out.append(link)
    if len(out) > evidence.MAX_LINKS:
        raise InvalidArgument(f"{len(out)} links; at most {evidence.MAX_LINKS} an observation")
    return out


def _check_claim(status: str, links: list[dict[str, str]], note: str | None) -> None:
    """What each status needs; a caller's report, so the shape is all Waymark can check."""
    if status not in STATUSES:
        raise InvalidArgument(
            f"unknown status {status!r}; valid: {', '.join(STATUSES)}", valid=list(STATUSES)
        )
    roles = {link["role"] for link in links}
    if status == "REQUESTED" and links:
        raise InvalidArgument("a REQUESTED observation has no links (nothing is built yet)")
    if status == "REPORTED_IMPLEMENTED" and "implementation" not in roles:
        raise InvalidArgument("REPORTED_IMPLEMENTED needs an implementation link")
    if status in ("REPORTED_PASS", "REPORTED_FAIL"):
        if "test" not in roles:
            raise InvalidArgument(f"{status} needs a test link")
        if not note or not note.strip():
            raise InvalidArgument(f"{status} needs a verification note: what was run, and how")


def observe(
    conn: Connection,
    project: Project,
    memory_id: str,
    status: str,
    links: Any = None,
    note: str | None = None,
    *,
    actor: str = "user",
    session_id: str | None = None,
) -> dict[str, Any]:
    """Attach a new observation to the project's active memory `memory_id`; the observation
    as stored, with its freshness (FRESH: just hashed)."""
    given = _links(links)
    if note is not None and not isinstance(note, str):
        raise InvalidArgument("note must be text", fields=["note"])
    if note is not None and len(note) > NOTE_MAX:
        raise InvalidArgument(f"note is {len(note)} characters; the limit is {NOTE_MAX}")
    _check_claim(status, given, note)
    kept_note = redact.scrub(mend(note.strip()))[0] if note and note.strip() else None
    hashed = evidence.hash_links(project.files, given, keep=("role", "locator"))  # before the lock
    with db.write(conn):
        memory = store.active_in(conn, project, memory_id, "observed")
        row = {
            "id": "obs_" + clock.new_id(),
            "memory_id": memory.id,
            "project_id": project.id,
            "status": status,
            "links": hashed,
            "note": kept_note,
            "actor": actor,
            "session_id": session_id,
            "created_at": clock.now(),
        }
        rows.add_observation(conn, row)
        log_event(
            conn, "observe", project_id=project.id, memory_id=memory.id, actor=actor,
            session_id=session_id, observation=row["id"], status=status, links=len(hashed),
        )  # fmt: skip
    return checked(row, project.files)


def checked(row: dict[str, Any], root: str | None) -> dict[str, Any]:
    """`row` with each link's state now and the observation's `state`: RECHECK_REQUIRED when
    any linked file changed, vanished or cannot be read; FRESH otherwise (none for no links)."""
    out = dict(row)
    if row["links"]:
        links, recheck = evidence.freshness(root, row["links"])
        out["links"] = links
        out["state"] = RECHECK if recheck else FRESH
    else:
        out["state"] = None
    return out


def history(
    conn: Connection, project: Project, memory_id: str, *, limit: int = 20, offset: int = 0
) -> dict[str, Any]:
    """The memory's observations in this project, newest first, a page at a time; each with
    its freshness now."""
    if not 1 <= limit <= PAGE_MAX or offset < 0:
        raise InvalidArgument(f"limit is 1-{PAGE_MAX} and offset 0 or more")
    memory = store.get(conn, memory_id)
    if memory.project_id not in (project.id, None):
        raise InvalidArgument(f"memory {memory.id} belongs to another project", id=memory.id)
    found = rows.observations_of(conn, memory.id, project.id, limit + 1, offset)
    more = len(found) > limit
    return {
        "memory_id": memory.id,
        "observations": [checked(r, project.files) for r in found[:limit]],
        "total": rows.count_observations(conn, memory.id, project.id),
        "has_more": more,
        "next_offset": offset + limit if more else None,
    }


def latest(conn: Connection, project: Project, memory_ids: list[str]) -> dict[str, dict]:
    """memory id -> a short view of its latest observation here, checked now."""
    out = {}
    for memory_id, row in rows.latest_observations(conn, memory_ids, project.id).items():
        full = checked(row, project.files)
        view = {"id": full["id"], "status": full["status"], "at": full["created_at"]}
        if full["state"]:
            view["state"] = full["state"]
            view.update(_recheck(full["links"]))
        out[memory_id] = view
    return out


def _recheck(links: list[dict[str, Any]]) -> dict[str, list[str]]:
    """{recheck: ["path STATE", ...]} for the links that are not unchanged, or nothing."""
    stale = [f"{link['path']} {link['state']}" for link in links
             if link["state"] != evidence.UNCHANGED]  # fmt: skip
    return {"recheck": stale} if stale else {}


def evidence_state(memory: Any, root: str | None) -> dict[str, Any] | None:
    """The freshness of a memory's own path evidence (hashed when the revision was written):
    {state, recheck?}, or None when it names no file."""
    paths = [e for e in memory.evidence if e.get("path")]
    if not paths:
        return None
    links, recheck = evidence.freshness(root, paths)
    view: dict[str, Any] = {"state": RECHECK if recheck else FRESH}
    view.update(_recheck(links))
    return view


def checks(conn: Connection, project: Project, memories: list[Any]) -> dict[str, dict[str, Any]]:
    """memory id -> its latest `observation` and its `evidence_state`, checked now against
    the files, for the memories that have either (what recall shows beside each result)."""
    found = latest(conn, project, [m.id for m in memories])
    out: dict[str, dict[str, Any]] = {}
    for m in memories:
        view: dict[str, Any] = {}
        if m.id in found:
            view["observation"] = found[m.id]
        fresh = evidence_state(m, project.files)
        if fresh:
            view["evidence_state"] = fresh
        if view:
            out[m.id] = view
    return out
