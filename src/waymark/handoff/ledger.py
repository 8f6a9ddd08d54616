"""The per-session ledger: which files a session changed, which commands failed, and
whether its work was handed off. Small rows, no transcript, nothing of the prompt."""

from __future__ import annotations

import os

from waymark.base import clock
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.storage import checkpoints as handoffs
from waymark.storage import command_failures, sessions
from waymark.storage import connection as db

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from waymark.projects.ignore import Rules
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

ERROR_TAIL = 400
COMMAND_MAX = 300


def ensure_session(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    *,
    head: str | None = None,
    dirty: str | None = None,
    branch: str | None = None,
) -> None:
    """Create the session row if this is the first event we see of it."""
    if sessions.session_exists(conn, session_id):
        return
    with db.write(conn):
        sessions.insert_session(
            conn,
            session_id,
            client,
            project.id,
            clock.now(),
            head,
            dirty,
            stored_name(branch) if branch else None,
            project.tree,
        )


def record_tool(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    *,
    paths: Sequence[str] = (),
    command: str | None = None,
    failed: bool | None = None,
    tool_name: str | None = None,
    exit_code: int | None = None,
    error: str | None = None,
    cwd: str | None = None,
    looked_at: str | None = None,
    key: str | None = None,
) -> bool:
    """Files an edit tool changed; a failed command with a bounded, redacted error tail; and
    the call as one step of the session's work map (`looked_at`: the file a read names).
    What the project's capture rules ignore (`projects.ignore`) is dropped before any write:
    an ignored edit or command never enters storage. `key` is the hook event's delivery key:
    an event already recorded under it (by the warm server, for a hook that then missed its
    deadline) is not recorded again. True when the event was recorded."""
    from waymark.base import shell
    from waymark.projects import ignore

    rules = ignore.rules_for(cwd, project.files)
    if command is not None and ignore.command_ignored(command, rules):
        return False  # an ignored command is not recorded at all, nor what it did
    inside = [p for p in (relative(project, p) for p in paths) if p]
    kept = [p for p in inside if not ignore.path_ignored(p, rules)]
    if inside and not kept and command is None:
        return False  # an edit of ignored files only
    seen = relative(project, looked_at) if looked_at else None
    if seen and ignore.path_ignored(seen, rules):
        return False  # a read of an ignored file
    ensure_session(conn, project, session_id, client)
    edited = [stored_name(p) for p in kept]
    stamp = clock.now()
    target = _step_target(edited, command, stored_name(seen) if seen else None, rules)
    outcome = _outcome(failed, exit_code)
    passed = _earlier_failures(conn, project, command) if command and failed is False else []
    opened = (
        command_failures.open_failures(conn, session_id)
        if command and failed is False and shell.program(command) not in shell.READERS
        else []
    )
    with db.write(conn):
        if key is not None and not sessions.claim_delivery(conn, key, stamp, _day_before()):
            return False
        sessions.add_edits(conn, session_id, stamp, dict.fromkeys(edited))
        if edited:  # only the project's own files are work to hand off
            sessions.update_session(conn, session_id, last_change_at=stamp)
        if command is not None:
            sessions.update_session(conn, session_id, last_shell_at=stamp)
        if opened:
            _note_tried(conn, project, command or "", opened)
        if passed:
            _note_fix(conn, session_id, stamp, passed)
        if command is not None and failed is not None:
            _note_done_run(conn, session_id, command, failed, stamp)
        _renew(conn, session_id, stamp)
        if tool_name:
            sessions.add_step(conn, session_id, stamp, tool_name[:60], target, outcome)
        if failed and (command or tool_name):
            _record_failure(conn, project, session_id, stamp, command, tool_name, exit_code,
                            error)  # fmt: skip
    if passed and command is not None:  # a fix is rare: only it pays for the proposal
        from waymark.curation.failures import propose_lesson

        with db.write(conn):  # its own transaction: a failed proposal loses no ledger write
            propose_lesson(conn, project.id, session_id, earlier_failures(conn, project, command))
    return True


def _note_done_run(
    conn: Connection, session_id: str, command: str, failed: bool, stamp: str
) -> None:
    """A command a task the session holds names in its definition of done (the same command,
    in one spelling): that check's last run (`tasks.done_state`)."""
    from waymark.base.shell import normal
    from waymark.storage import tasks

    said = normal(command)
    for task_id, body in tasks.done_commands(conn, session_id):
        for item in json.loads(body).get("done_when", []):
            wanted = item.get("command")
            if wanted and normal(wanted) == said:
                tasks.put_check(conn, task_id, wanted, "fail" if failed else "pass", stamp,
                                session_id)  # fmt: skip


def _record_failure(
    conn: Connection, project: Project, session_id: str, stamp: str, command: str | None,
    tool_name: str | None, exit_code: int | None, error: str | None,
) -> None:  # fmt: skip
    """A failed command (or tool) in the session's ledger, and a command's in the project's
    failures with its signature: each redacted and cut before it is stored."""
    from waymark import settings
    from waymark.base import (
        redact,  # its patterns need `re` (~6 ms): only failures pay
        shell,
    )

    contacts = bool(settings.get(conn, "capture.redact_contacts"))
    cmd, _ = redact.scrub_cut(command or tool_name or "", COMMAND_MAX, contacts=contacts)
    tail, _ = redact.scrub_cut(error or "", ERROR_TAIL, tail=True, contacts=contacts)
    sessions.add_failure(conn, session_id, stamp, cmd, exit_code, tail)
    if command:
        same = redact.scrub_cut(shell.normal(command), COMMAND_MAX, contacts=contacts)
        head = redact.scrub_cut(shell.head(command), 200, contacts=contacts)[0]
        from waymark.curation import signature

        _sign_older(conn, project.id)  # one index probe once none are left
        command_failures.add_command_failure(
            conn, project.id, session_id, stamp, head, same[0], exit_code, tail,
            signature.of(same[0], tail),
        )  # fmt: skip


def _day_before() -> str:
    import time

    return clock.second(time.time() - DELIVERY_KEPT_S)


DELIVERY_KEPT_S = 86400  # a delivery key outlives any hook's deadline by far


def _step_target(
    edited: list[str], command: str | None, seen: str | None, rules: Rules
) -> str | None:
    """A step's target, in a few words: the file(s), or the command's program and subcommand
    (never its arguments, which can hold a secret) and the first file it writes."""
    from waymark.base import shell
    from waymark.projects import ignore

    if command is not None:
        wrote = [
            p
            for p in shell.written_files(command)
            if not p.startswith("/") and not ignore.path_ignored(p, rules)
        ]
        said = shell.summary(command)
        return f"{said} -> {stored_name(wrote[0])}" if wrote else said or None
    if edited:
        return edited[0] + (f" +{len(edited) - 1}" if len(edited) > 1 else "")
    return seen


def _outcome(failed: bool | None, exit_code: int | None) -> str:
    if failed:
        return f"failed (exit {exit_code})" if exit_code is not None else "failed"
    return "ok" if failed is False else "done"


EARLIER = 20  # failures of one command head looked at


def earlier_failures(
    conn: Connection, project: Project, command: str, *, contacts: bool | None = None
) -> list[dict]:
    """The project's recorded failures of exactly this command (as stored: redacted, in one
    spelling), newest first. Costs one index lookup; the redactor runs only when the
    command's first words failed before, no stored command equals it as it is, and it has a
    word that could hold a secret (a plain command is stored unchanged)."""
    from waymark.base import shell

    head = shell.head(command)
    if not head:
        return []
    found = command_failures.command_failures(conn, project.id, head, EARLIER)
    if not found:
        return []
    plain = shell.normal(command)[:COMMAND_MAX]
    same = [f for f in found if f["command"] == plain]
    if same or not shell.could_hold_secret(plain):
        return same
    from waymark import settings
    from waymark.base import redact

    if contacts is None:
        contacts = bool(settings.get(conn, "capture.redact_contacts"))
    scrubbed = redact.scrub_cut(shell.normal(command), COMMAND_MAX, contacts=contacts)[0]
    return [f for f in found if f["command"] == scrubbed]


def _earlier_failures(conn: Connection, project: Project, command: str) -> list[dict]:
    return [f for f in earlier_failures(conn, project, command) if f["passed_at"] is None]


FIX_FILES = 4
TRIED = 3  # commands kept per open failure: the last ones before it passed


def _note_tried(
    conn: Connection, project: Project, command: str, opened: list[tuple[int, str, str | None]]
) -> None:
    """A command ran well while this session had failures open: kept on each (the last
    TRIED, redacted), since it may be what fixed them. Not on the failed command itself."""
    from waymark.base import shell

    plain = shell.normal(command)[:COMMAND_MAX]
    if shell.could_hold_secret(plain):
        from waymark import settings
        from waymark.base import redact

        contacts = bool(settings.get(conn, "capture.redact_contacts"))
        plain = redact.scrub_cut(plain, COMMAND_MAX, contacts=contacts)[0]
    for failure_id, failed, tried in opened:
        if failed == plain:
            continue
        kept = [c for c in (json.loads(tried) if tried else []) if c != plain]
        command_failures.set_tried(conn, failure_id, json.dumps([*kept, plain][-TRIED:]))


def _sign_older(conn: Connection, project_id: str) -> None:
    """Signatures for the project's failures stored before Waymark kept them (once)."""
    from waymark.curation import signature

    older = command_failures.unsigned_failures(conn, project_id)
    if older:
        command_failures.set_signatures(conn, [(i, signature.of(c, t)) for i, c, t in older])


def _note_fix(conn: Connection, session_id: str, stamp: str, failures: list[dict]) -> None:
    """The command passed now: each earlier failure is marked passed, with the files this
    session edited since the failure (or since it began) as the fix."""
    oldest = min(f["failed_at"] for f in failures)
    fixed = sessions.files_changed(conn, session_id, FIX_FILES, since=oldest)
    command_failures.mark_command_passed(
        conn, [f["id"] for f in failures], stamp, session_id, json.dumps(fixed) if fixed else None
    )


def stored_name(path: str) -> str:
    """A path as stored: redacted only when a part of it could be a credential (long, with
    letters and digits, or `=`/`@`), so an ordinary edit never pays for the redactor."""
    if not any(
        "=" in part
        or "@" in part
        or (len(part) >= 16 and not part.isalpha() and not part.isdigit())
        for part in path.replace(".", "/").replace("-", "/").replace("_", "/").split("/")
    ):
        return path
    from waymark.base import redact

    return redact.scrub(path)[0]


def relative(project: Project, path: str) -> str | None:
    """`path` relative to the project's root, in POSIX form; None when outside it."""
    root = project.files
    if not root:
        return None
    full = path if os.path.isabs(path) else os.path.join(root, path)
    try:
        rel = os.path.relpath(os.path.realpath(full), os.path.realpath(root))
    except ValueError:
        return None
    if rel.startswith(os.pardir):
        return None
    return rel.replace(os.sep, "/")


def note_shell_writes(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    command: str,
    cwd: str | None = None,
) -> bool:
    """Before a shell command that writes files (an `apply_patch` heredoc, a redirection):
    mark the session's shell work, so Stop looks at what git shows changed
    (`note_git_changes`); a denied or failed command changes nothing git sees. Codex applies
    an `apply_patch` sent through the shell itself and reports it to PreToolUse only: its
    files are noted as the files this session is editing from here (another agent about to
    edit one is told at once), but not as a change: whether anything changed is still git's
    to say at Stop. True when marked."""
    from waymark.base import shell

    wrote = shell.written_files(command) if project.files else []
    if not wrote:
        return False
    codex_patch = client == "codex" and shell.program(command) == "apply_patch"
    patched = _patched(project, cwd, wrote) if codex_patch else []
    ensure_session(conn, project, session_id, client)
    stamp = clock.now()
    with db.write(conn):
        sessions.add_edits(conn, session_id, stamp, patched)
        sessions.update_session(conn, session_id, last_shell_at=stamp)
    return True


def _patched(project: Project, cwd: str | None, wrote: list[str]) -> list[str]:
    """The project's files a patch names, as the ledger stores them; ignored ones left out."""
    from waymark.projects import ignore

    rules = ignore.rules_for(cwd, project.files)
    inside = [relative(project, os.path.join(cwd or project.files or "", p)) for p in wrote]
    return [stored_name(p) for p in inside if p and not ignore.path_ignored(p, rules)]


def note_git_changes(conn: Connection, project: Project, session_id: str) -> None:
    """Work done through the shell shows up only in git: if the dirty set moved since the
    session started, count it as a change made at the last shell command."""
    from waymark.projects import git

    row = sessions.get_session(conn, session_id)
    if row is None or row["last_shell_at"] is None or not project.files:
        return
    shell_at, change_at = row["last_shell_at"], row["last_change_at"]
    before = json.loads(row["git_dirty_seen"]) if row["git_dirty_seen"] else None
    now = stored_dirty(git.dirty(project.files))
    if before is None or now is None or now == before:
        return
    from waymark.projects import ignore

    rules = ignore.rules_for(None, project.files)
    changed = sorted(
        p
        for p in set(now) | set(before)
        if now.get(p) != before.get(p) and not ignore.path_ignored(p, rules)
    )
    if not changed:
        return
    known = sessions.edited(conn, session_id)
    with db.write(conn):
        sessions.add_edits(conn, session_id, shell_at, [p for p in changed if p not in known])
        if change_at is None or shell_at > change_at:
            sessions.update_session(conn, session_id, last_change_at=shell_at)
        sessions.update_session(conn, session_id, git_dirty_seen=json.dumps(now, sort_keys=True))


def stored_dirty(dirty: dict[str, str] | None) -> dict[str, str] | None:
    """git's dirty set as it may be stored: each path as the ledger stores paths (`_named`:
    redacted where a part of it could be a credential)."""
    return None if dirty is None else {stored_name(path): state for path, state in dirty.items()}


def settle(conn: Connection, project: Project, session_id: str, client: str) -> str | None:
    """Bring the session's record of changes up to date (edits, and shell work git shows);
    then the time of its last change if no checkpoint was saved after it, else None."""
    ensure_session(conn, project, session_id, client)
    note_git_changes(conn, project, session_id)
    return unsaved(conn, project, session_id)


def mark_if_unsaved(
    conn: Connection, project: Project, session_id: str, client: str, why: str
) -> None:
    """Leave the "handoff needed" marker when the session's changes have no checkpoint."""
    if settle(conn, project, session_id, client):
        mark_handoff_needed(conn, project, session_id, why)


def unsaved(conn: Connection, project: Project, session_id: str) -> str | None:
    """The session's last change time when no handoff covered it since: a checkpoint saved
    from this session, or naming one of its files (`checkpoints._write`)."""
    row = sessions.get_session(conn, session_id)
    if row is None or row["last_change_at"] is None:
        return None
    changed = str(row["last_change_at"])
    handed = row["handed_off_at"]
    return None if handed is not None and str(handed) >= changed else changed


def mark_handoff_needed(conn: Connection, project: Project, session_id: str, why: str) -> None:
    from waymark.storage.events import log_event

    with db.write(conn):
        handoffs.put_marker(conn, project.id, session_id, why, clock.now())
        log_event(conn, "handoff.marked", project_id=project.id, session_id=session_id, why=why)


def end_session(
    conn: Connection, project: Project, session_id: str, reason: str, head: str | None
) -> None:
    """Close the session's row: when, why (at most 40 characters) and at which HEAD. The
    tasks it held are anyone's to claim from now (their checkpoints, and who had them, stay)."""
    from waymark.storage import tasks

    if not reason.replace("_", "").replace("-", "").isalnum():  # not a client's plain word
        from waymark.base import redact

        reason = redact.scrub_cut(reason, 40)[0]
    with db.write(conn):
        stamp = clock.now()
        sessions.update_session(
            conn, session_id, ended_at=stamp, end_reason=reason[:40], git_head_end=head
        )
        for task_id in tasks.lapse(conn, session_id, stamp):
            from waymark.storage.events import log_event

            log_event(conn, "task.lapsed", project_id=project.id, session_id=session_id,
                      actor="hook", checkpoint=task_id)  # fmt: skip


LEASE_SETTING = "task.lease_minutes"


def lease_seconds(conn: Connection) -> float:
    from waymark import settings

    return 60 * float(settings.get(conn, LEASE_SETTING))


def renew_claims(conn: Connection, session_id: str) -> None:
    """A sign of work (a prompt): the session's live claims run on. Written only when less
    than half a lease is left, so most prompts write nothing."""
    from waymark.storage import tasks

    stamp = clock.now()
    ends = tasks.lease_ends(conn, session_id, stamp)
    if ends is None:
        return  # the session holds nothing: one indexed read, no setting read
    lease = lease_seconds(conn)
    if ends < clock.later(lease / 2):
        with db.write(conn):
            tasks.renew(conn, session_id, stamp, clock.later(lease), clock.later(lease / 2))


def _renew(conn: Connection, session_id: str, stamp: str) -> None:
    """Inside the ledger's write: a tool call is a sign of work (`renew_claims`)."""
    from waymark.storage import tasks

    lease = lease_seconds(conn)
    tasks.renew(conn, session_id, stamp, clock.later(lease), clock.later(lease / 2))
