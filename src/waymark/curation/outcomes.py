"""Outcomes from git: did the change a decision, lesson or checkpoint led to hold, or was it
reverted? No model: git's own history says.

An item is linked to the change that followed it: the commits of its session (the git HEAD
the ledger recorded at the session's start and end) that touch the files it cites (a
memory's file scope and evidence paths, a checkpoint's relevant files and evidence), and the
commits it cites itself (evidence `{"commit": sha}`). Then, on each refresh:

- reverted: a later commit says `This reverts commit <sha>` of one of them (`git revert`),
  or its lines were restored by hand: HEAD holds again every line the change removed and
  none it added (its zero-context patch applies to HEAD forward, not in reverse; checked on a
  scratch index). A reverted memory ranks at REVERTED x its score and
  shows the flag in recall, `--explain` and the packets.
- held: HELD_AFTER or more later commits touched the same files and it was not reverted:
  ranked x (1 + held_boost).
- linked: neither yet (or the change is not on the branch checked out).

A person settles an item by hand (`waymark outcome ID --set ...`), and git leaves it so
until `--auto`; every change of state is in the audit log. Refreshed by the MCP server in
the background and by `waymark outcomes --refresh`; never on a hook's path.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json
from waymark.errors import InvalidArgument, NotFound
from waymark.projects import git
from waymark.projects.resolve import Project
from waymark.storage import checkpoints as checkpoint_rows
from waymark.storage import connection as db
from waymark.storage import memories as memory_rows
from waymark.storage import outcomes as rows
from waymark.storage import sessions
from waymark.storage.connection import Connection
from waymark.storage.events import log_event

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

TYPES = ("decision", "lesson")
STATES = ("linked", "held", "reverted")
HELD_AFTER = 3  # later commits touching the same files, the change standing
DAYS = 180  # items written in the last this many days are followed
ITEMS = 500  # at most, newest first, of each kind
CHECKPOINTS = 100
LOG_COMMITS = 2000  # commits from HEAD searched for `This reverts commit`
_REVERTS = r"This reverts commit ([0-9a-f]{7,40})"  # compiled where git is read: `re` costs
# `waymark show`, which reads an outcome, ~8 ms of its process


def refresh(conn: Connection, project: Project) -> dict[str, int]:
    """Link what is not linked yet and settle what can be settled; counts of each state
    after, and `changed` (items whose state moved, each audited)."""
    counts = {"linked": 0, "held": 0, "reverted": 0, "changed": 0}
    root = project.files
    if not root or not git.is_repo(root) or git.head(root) is None:
        return counts
    items = _items(conn, project)
    heads = sessions.heads(conn, [i["session_id"] for i in items if i["session_id"]])
    reverts = _reverted_commits(root)
    found = []
    for item in items:
        known = rows.get(conn, item["id"])
        if known is not None and known["set_by"] == "person":
            counts[known["state"]] += 1
            continue
        change = _change(root, item, heads, known)
        if change is None:
            continue
        found.append((item, known, change, _judge(root, change, reverts)))
    stamp = clock.now()
    with db.write(conn):
        for item, known, change, (state, by, later) in found:
            counts[state] += 1
            rows.put(conn, {
                "item_id": item["id"], "project_id": project.id, "kind": item["kind"],
                "commits": json.dumps(change["commits"]), "files": json.dumps(change["files"]),
                "state": state, "later": later, "reverted_by": by, "set_by": "git",
                "checked_at": stamp,
            })  # fmt: skip
            if known is None or known["state"] != state:
                counts["changed"] += 1
                _audit(conn, project, item, state, by=by, later=later, commits=change["commits"])
    return counts


def _items(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """What can be followed: {id, kind, session_id, files, commits}, memories then
    checkpoints."""
    since = clock.second(clock.epoch(clock.now()) - DAYS * 86400)
    out = []
    for m in memory_rows.cited_since(conn, project.id, TYPES, since, ITEMS):
        files = [m.scope_target] if m.scope_type == "file" and m.scope_target else []
        files += [e["path"] for e in m.evidence if isinstance(e.get("path"), str)]
        commits = [e["commit"] for e in m.evidence if isinstance(e.get("commit"), str)]
        out.append({"id": m.id, "kind": "memory", "session_id": _session_of(conn, project, m),
                    "files": _unique(files), "commits": _unique(commits)})  # fmt: skip
    for checkpoint_id in checkpoint_rows.checkpoint_ids(conn, project.id, CHECKPOINTS):
        revs = checkpoint_rows.revisions(conn, checkpoint_id)
        if not revs:
            continue
        body = json.loads(revs[-1][5]) if revs[-1][5] else {}
        files = [f for f in body.get("relevant_files") or [] if isinstance(f, str)]
        files += [e["path"] for e in body.get("evidence") or []
                  if isinstance(e, dict) and isinstance(e.get("path"), str)]  # fmt: skip
        session = next((r[9] for r in reversed(revs) if r[9]), None)
        out.append({"id": checkpoint_id, "kind": "checkpoint", "session_id": session,
                    "files": _unique(files), "commits": []})  # fmt: skip
    return [i for i in out if i["files"] or i["commits"]]


def _session_of(conn: Connection, project: Project, memory: Any) -> str | None:
    """The session a memory was written in: its own, or, written from no session (the CLI in
    a terminal beside the agent), the one session of the project open at that moment; two
    open then: none, never a guess."""
    if memory.session_id:
        return str(memory.session_id)
    found = sessions.open_at(conn, project.id, memory.created_at)
    return found[0] if len(found) == 1 else None


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(v for v in values if v))


def _change(
    root: str,
    item: dict[str, Any],
    heads: dict[str, tuple[str | None, str | None]],
    known: dict[str, Any] | None,
) -> dict[str, Any] | None:
    """{commits (oldest first), files} of the change that followed the item, or None."""
    if known is not None:  # linked once: the change is what it was
        return {"commits": json.loads(known["commits"]), "files": json.loads(known["files"])}
    commits = [c for c in (_full(root, c) for c in item["commits"]) if c]
    start, end = heads.get(item["session_id"] or "", (None, None))
    if start and end and start != end and item["files"]:
        listed = git.output(root, "rev-list", "--reverse", f"{start}..{end}", "--",
                            *item["files"])  # fmt: skip
        commits += [c for c in (listed or "").split() if c not in commits]
    if not commits:
        return None
    files = item["files"] or _touched(root, commits)
    return {"commits": commits, "files": files}


def _full(root: str, sha: str) -> str | None:
    import re

    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", sha):
        return None
    out = git.output(root, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}")
    return out.strip() if out else None


def _touched(root: str, commits: list[str]) -> list[str]:
    out = git.output(root, "show", "--name-only", "--format=", *commits) or ""
    return _unique(out.split("\n"))


def _reverted_commits(root: str) -> dict[str, str]:
    """sha (as the message gives it) -> the commit that reverted it, from HEAD's history."""
    import re

    out = git.output(root, "log", f"-{LOG_COMMITS}", "--format=%H%x1f%B%x1e") or ""
    found: dict[str, str] = {}
    for entry in out.split("\x1e"):
        sha, _, body = entry.strip().partition("\x1f")
        for reverted in re.findall(_REVERTS, body):
            found.setdefault(reverted, sha)
    return found


def _judge(
    root: str, change: dict[str, Any], reverts: dict[str, str]
) -> tuple[str, str | None, int]:
    """(state, what reverted it, later commits touching its files)."""
    commits, files = change["commits"], change["files"]
    last = commits[-1]
    for commit in commits:
        by = next((r for sha, r in reverts.items() if commit.startswith(sha)), None)
        if by:
            return "reverted", by, 0
    if git.output(root, "merge-base", "--is-ancestor", last, "HEAD") is None:
        return "linked", None, 0  # not on the branch checked out
    later_out = git.output(root, "rev-list", "--count", f"{last}..HEAD", "--", *files)
    later = int(later_out.strip()) if later_out and later_out.strip().isdigit() else 0
    patch = git.output(root, "diff", "-U0", f"{commits[0]}^", last, "--", *files)
    if patch and later:
        raw = patch.encode("utf-8")
        if git.applies_to_head(root, raw) and not git.applies_to_head(root, raw, reverse=True):
            return "reverted", "restored", later  # the lines it replaced are back, its own gone
    return ("held" if later >= HELD_AFTER else "linked"), None, later


def _audit(
    conn: Connection, project: Project, item: dict[str, Any], state: str, **detail: Any
) -> None:
    log_event(
        conn, f"outcome.{state}", project_id=project.id,
        memory_id=item["id"] if item["kind"] == "memory" else None, actor="git",
        **({"checkpoint": item["id"]} if item["kind"] == "checkpoint" else {}), **detail,
    )  # fmt: skip


def settle(
    conn: Connection, project: Project, item_id: str, state: str | None, *, reason: str = ""
) -> dict[str, Any]:
    """A person's say on an item's outcome (`state` one of STATES), or None: back to git's
    judgement at the next refresh. The row after; audited."""
    if state is not None and state not in STATES:
        raise InvalidArgument(f"an outcome is one of {', '.join(STATES)} (got {state!r})")
    known = rows.get(conn, item_id)
    if known is None or known["project_id"] != project.id:
        raise NotFound(f"no outcome for {item_id} in this project: `waymark outcomes` lists them")
    row = dict(known, set_by="git" if state is None else "person",
               state=known["state"] if state is None else state, checked_at=clock.now())  # fmt: skip
    if state is None:
        row["reverted_by"], row["later"] = known["reverted_by"], known["later"]
    elif state != "reverted":
        row["reverted_by"] = None
    item = {"id": item_id, "kind": known["kind"]}
    if reason:
        from waymark.base import redact

        reason = redact.scrub_cut(reason, 200)[0]
    with db.write(conn):
        rows.put(conn, row)
        log_event(
            conn, "outcome.set" if state else "outcome.auto", project_id=project.id,
            memory_id=item_id if item["kind"] == "memory" else None, actor="person",
            state=state, was=known["state"], **({"reason": reason} if reason else {}),
        )  # fmt: skip
    return row


def listing(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """Every outcome of the project: its row, the commits and files decoded."""
    return [
        dict(r, commits=json.loads(r["commits"]), files=json.loads(r["files"]))
        for r in rows.of_project(conn, project.id)
    ]


def of_item(conn: Connection, item_id: str) -> dict[str, Any] | None:
    """The outcome of one memory or checkpoint, decoded, or None when none is linked."""
    row = rows.get(conn, item_id)
    if row is None:
        return None
    return dict(row, commits=json.loads(row["commits"]), files=json.loads(row["files"]))


def said(row: dict[str, Any]) -> str:
    """One line for people: `outcome: reverted by 1a2b3c4d5e (2 commits: src/a.py)`."""
    how = {"reverted": "reverted", "held": f"held ({row['later']} later commits)",
           "linked": "linked, not settled yet"}[row["state"]]  # fmt: skip
    if row["state"] == "reverted" and row["reverted_by"]:
        by = row["reverted_by"]
        how += " (its lines restored)" if by == "restored" else f" by {str(by)[:10]}"
    shas = ", ".join(c[:10] for c in row["commits"][:3])
    hand = "; set by hand" if row["set_by"] == "person" else ""
    return f"outcome: {how}; change {shas} on {', '.join(row['files'][:3])}{hand}"
