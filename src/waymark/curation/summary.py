"""Session summaries, opt-in per project: at each Stop, a bounded extractive summary of the
session as a candidate note (refreshed while it waits), never the transcript.

    [summary]
    enabled = true

What it says comes from what the hooks already recorded (the files edited, the commands and
how they ended, the errors) and from the assistant's last message, which both clients send
at Stop: redacted, cut to SUMMARY_TOKENS. No model, and nothing is read from the transcript.
"""

from __future__ import annotations

from waymark.base import tokens
from waymark.storage import sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

SUMMARY_TOKENS = 400
FILES_NAMED = 12
STEPS_READ = 60
ERRORS_NAMED = 5
SHELL_TOOLS = ("Bash", "shell", "exec_command", "shell_command", "local_shell")


def enabled(cwd: str | None, root: str | None) -> bool:
    """True when the nearest `.waymark.toml` has `[summary] enabled = true`."""
    from waymark.projects.ignore import nearest_table

    found = nearest_table(cwd, root, "summary")
    if found is None:
        return False
    value = found[1].get("enabled", False)
    if not isinstance(value, bool):
        from waymark.errors import InvalidArgument

        raise InvalidArgument(f"{found[0]}: [summary] enabled must be true or false")
    return value


def build(conn: Connection, session_id: str, last_message: str | None) -> str | None:
    """The summary's text, within SUMMARY_TOKENS, or None when the session did nothing."""
    from waymark.base import redact

    files = sessions.files_changed(conn, session_id, FILES_NAMED + 1)
    commands: dict[str, str] = {}
    for tool, target, outcome in sessions.steps(conn, session_id, STEPS_READ):
        if tool in SHELL_TOOLS and target:
            commands[target] = outcome  # the last outcome of each command wins
    failed = sessions.failures(conn, session_id, ERRORS_NAMED)
    if not files and not commands:
        return None
    lines = []
    if files:
        more = " (and more)" if len(files) > FILES_NAMED else ""
        lines.append("Files changed: " + ", ".join(files[:FILES_NAMED]) + more + ".")
    if commands:
        lines.append(
            "Commands: " + "; ".join(f"`{c}` {o}" for c, o in list(commands.items())[-10:]) + "."
        )
    if failed:
        said = [f"`{c[:80]}`" + (f" (exit {x})" if x is not None else "") for c, x in failed]
        lines.append("Failures seen: " + "; ".join(said) + ".")
    head = "\n".join(lines)
    if last_message and last_message.strip():
        room = max(0, SUMMARY_TOKENS - tokens.estimate(head) - 10) * 3  # ~3 chars a token
        last = redact.scrub_cut(" ".join(last_message.split()), max(room, 0))[0]
        if last:
            head += "\nLast message: " + last
    return redact.scrub(head)[0]


def refresh(
    conn: Connection,
    project: Project,
    session_id: str,
    cwd: str | None,
    last_message: str | None,
) -> str | None:
    """At a Stop: where the project opted in (`enabled`), queue or refresh this session's
    summary candidate in a transaction of its own; its id, or None."""
    if not enabled(cwd, project.files):
        return None
    from waymark.storage import connection as db

    with db.write(conn):
        return propose(conn, project, session_id, last_message)


def propose(
    conn: Connection, project: Project, session_id: str, last_message: str | None
) -> str | None:
    """Queue or refresh this session's summary candidate (inside the caller's transaction);
    its id, or None when there is nothing to say."""
    from waymark.base import clock
    from waymark.curation import candidates

    text = build(conn, session_id, last_message)
    if text is None:
        return None
    fields = {
        "type": "note",
        "title": f"Session summary {clock.now()[:10]}",
        "content": text,
        "tags": ["session-summary"],
    }
    row, _ = candidates.propose(
        conn,
        project.id,
        kind="summary",
        reason="an opt-in summary of the session ([summary] in .waymark.toml)",
        fingerprint=f"summary:{session_id}",
        fields=fields,
        session_id=session_id,
    )
    return str(row["id"])
