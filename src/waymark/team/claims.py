"""Claims across machines: the tasks of a project shared with a team store are held through
it, with the same rules as on one machine (`handoff.tasks`).

- An explicit claim (`waymark task claim`, the MCP `claim`) asks the server first: refused
  there, it is refused here, naming the other machine's session. With the server out of
  reach, the agent works on its local claim, and the next sync sends it.
- A sync (`team.sync`) sends this machine's live claims and their renewals, and lets go on
  the server of what this machine no longer holds. A claim the server refuses (another
  machine took the task while this one was offline) becomes a review candidate on this
  machine, never two holders in silence. Then it brings the other machines' live claims
  here, so the board, SessionStart and PreToolUse name them like local agents.

The network is only touched by these faces' calls and the sync, never by a hook.
"""

from __future__ import annotations

from waymark.base import clock
from waymark.base import jsonlite as json
from waymark.curation import candidates
from waymark.errors import Conflict, InvalidArgument, TeamUnreachable, WaymarkError
from waymark.handoff import checkpoints, claims, tasks
from waymark.storage import connection as db
from waymark.storage import tasks as rows
from waymark.teamstore import connection as team_db
from waymark.teamstore import tasks as team_tasks

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from waymark.handoff.checkpoints import Checkpoint, Origin
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

REMOTE = "remote"  # what a mirrored claim says of itself: another machine's session


def shared(conn: Connection, project: Project) -> tuple[str, str, str] | None:
    """(the store's conninfo, the project's key, this machine's id) when the project is
    shared with a connected team store, else None."""
    from waymark.team import keys, link

    found = link.configured()
    if found is None:
        return None
    try:
        key = keys.project_key(conn, project)
    except InvalidArgument:
        return None
    return found[0], key, keys.machine(conn, found[0], project)


def claim(conn: Connection, project: Project, checkpoint_id: str, origin: Origin) -> Checkpoint:
    """`tasks.claim`, asked of the team store first when the project is shared: another
    machine's live claim refuses it (a conflict naming that machine and session); a store
    out of reach leaves the local claim for the next sync to send."""
    if not origin.session_id:
        return tasks.claim(conn, project, checkpoint_id, origin)  # refused there, as usual
    where = shared(conn, project)
    if where is None:
        return tasks.claim(conn, project, checkpoint_id, origin)
    conninfo, key, machine = where
    task = checkpoints.get(conn, project, checkpoint_id)
    try:
        pg = team_db.connect(conninfo)
    except TeamUnreachable:
        return tasks.claim(conn, project, task.id, origin)  # offline: sent at the next sync
    try:
        with team_db.write(pg):
            taken = team_tasks.take(pg, task.id, origin.session_id, origin.agent or "",
                                    claims.about(conn, origin), clock.now(), claims.lease_until(conn),
                                    claims.where(project), key, machine)  # fmt: skip
            held = None if taken else _holder(pg, key, task.id)
        if held is not None:
            raise _elsewhere(task.id, held)
        try:
            return tasks.claim(conn, project, task.id, origin)
        except WaymarkError:  # a session here holds it: the server's claim goes back
            team_tasks.let_go(pg, task.id, origin.session_id)
            raise
    finally:
        pg.close()


def _holder(pg: Any, key: str, task_id: str) -> dict[str, Any] | None:
    return next((h for h in team_tasks.holders(pg, key) if h["checkpoint_id"] == task_id), None)


def _elsewhere(task_id: str, held: dict[str, Any]) -> Conflict:
    return Conflict(
        f"task {task_id} is held by session {str(held['holder_session'])[:8]} on machine "
        f"{str(held['machine'])[:10]} since {held['claimed_at']} (lease until "
        f"{held['lease_until']}), through the team store; pick another task, or wait for its "
        "handoff",
        id=task_id,
        holder=held["holder_session"],
        machine=held["machine"],
        since=held["claimed_at"],
        lease_until=held["lease_until"],
    )


def exchange(conn: Connection, pg: Any, project: Project, key: str, machine: str) -> dict[str, int]:
    """A sync's part for claims: this machine's live claims sent (renewals too), what it no
    longer holds let go there, a refusal made a review candidate; then the other machines'
    live claims mirrored here. {claims_sent, claims_refused, claims_seen}."""
    stamp = clock.now()
    theirs = {h["checkpoint_id"]: h for h in team_tasks.holders(pg, key)}
    sent = refused = seen = 0
    for row in rows.board(conn, project.id, tasks.BOARD_LIMIT * 4):
        task_id, (session, agent, about, _, until, base, branch, tree, _) = row[0], row[2:]
        said = json.loads(about) if about else {}
        live = bool(session and until and until > stamp)
        there = theirs.get(task_id)
        if live and not said.get(REMOTE):
            with team_db.write(pg):
                ok = team_tasks.take(pg, task_id, session, agent or "", about or "{}", stamp,
                                     until, (base, branch, tree), key, machine)  # fmt: skip
            sent += ok
            if not ok and there is not None:
                refused += _refusal(conn, project, task_id, session, there)
        elif said.get(REMOTE) and (there is None or there["holder_session"] != session):
            with db.write(conn):  # the other machine let it go: so here
                rows.let_go(conn, task_id)
        elif there is not None and there["machine"] == machine:
            with team_db.write(pg):  # released, finished or lapsed here: so on the server
                team_tasks.let_go(pg, task_id, there["holder_session"])
    for task_id, held in theirs.items():
        if held["machine"] != machine and held["lease_until"] and held["lease_until"] > stamp:
            seen += _mirror(conn, task_id, held, stamp)
    return {"claims_sent": sent, "claims_refused": refused, "claims_seen": seen}


def _mirror(conn: Connection, task_id: str, held: dict[str, Any], stamp: str) -> int:
    """Another machine's live claim, held here in its name (while no session here holds the
    task): 1 when written."""
    about = {**(json.loads(held["holder_about"]) if held["holder_about"] else {}),
             "machine": held["machine"], REMOTE: True}  # fmt: skip
    with db.write(conn):
        if rows.claim_of(conn, task_id) is None:
            return 0  # a task this machine does not have (yet)
        taken = rows.take(conn, task_id, held["holder_session"], "", json.dumps(about), stamp,
                          held["lease_until"], (None, held["branch"], None))  # fmt: skip
    return int(taken)


def _refusal(
    conn: Connection, project: Project, task_id: str, session: str, there: dict[str, Any]
) -> int:
    """A review candidate: this machine's session holds a task the team store gives to
    another machine's. Approving gives it up here; rejecting keeps working on it here. 1 when
    new."""
    task = checkpoints.get(conn, project, task_id)
    objective = task.revision.body.get("objective") or task_id
    with db.write(conn):
        _, created = candidates.propose(
            conn, project.id, kind="conflict", action="claim",
            fields={"title": f"task {task_id[:10]}: {objective}",
                    "content": f"Two holders for task {task_id} \"{objective}\"",
                    "checkpoint": {"id": task_id, "holder": session}},
            sources=[task_id],
            reason=(f"a team conflict: session {session[:8]} of this machine holds task "
                    f"{task_id}, which the team store gives to session "
                    f"{str(there['holder_session'])[:8]} of machine "
                    f"{str(there['machine'])[:10]} (since {there['claimed_at']}); approving "
                    "gives it up here, rejecting keeps working on it here"),
            fingerprint=f"claim:{task_id}:{session}:{there['holder_session']}",
        )  # fmt: skip
    return int(created)
