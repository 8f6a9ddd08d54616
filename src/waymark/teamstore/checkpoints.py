"""SQL for the team's checkpoints (the sibling of `storage.checkpoints`): each revision a
machine sends, and each checkpoint's head, the team's line of it."""

from __future__ import annotations

import json
from typing import Any

COLUMNS = ("id", "checkpoint_id", "seq", "operation", "status", "body", "tokens", "actor",
           "client", "session_id", "created_at", "git_branch")  # fmt: skip


def insert_revision(
    conn: Any, values: dict[str, Any], parent: str | None, project_key: str, machine: str
) -> bool:
    """Store one revision (`values` keyed by COLUMNS, its body a dict) made from `parent`,
    inside the caller's transaction; whether it is on the team's line: made from the head
    (or the first), it becomes the head; made from anything else, it is a conflict. Sending
    it again changes nothing and answers as the first time."""
    found = conn.execute(
        "SELECT mainline FROM team_checkpoint_revisions WHERE id = %s", (values["id"],)
    ).fetchone()
    if found is not None:
        return bool(found[0])
    checkpoint_id = values["checkpoint_id"]
    conn.execute(
        "INSERT INTO team_checkpoints (id, project_key, head) VALUES (%s, %s, %s)"
        " ON CONFLICT (id) DO NOTHING",
        (checkpoint_id, project_key, values["id"]),
    )
    row = conn.execute(
        "SELECT head FROM team_checkpoints WHERE id = %s FOR UPDATE", (checkpoint_id,)
    ).fetchone()
    mainline = row[0] == values["id"] or (parent is not None and row[0] == parent)
    if mainline:
        conn.execute(
            "UPDATE team_checkpoints SET head = %s WHERE id = %s", (values["id"], checkpoint_id)
        )
    conn.execute(
        "INSERT INTO team_checkpoint_revisions (id, checkpoint_id, project_key, seq, parent,"
        " mainline, operation, status, body, tokens, actor, client, session_id, created_at,"
        " git_branch, machine) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        " %s, %s, %s)",
        (values["id"], checkpoint_id, project_key, values["seq"], parent, mainline,
         values["operation"], values["status"], json.dumps(values["body"]), values["tokens"],
         values["actor"], values["client"], values["session_id"], values["created_at"],
         values["git_branch"], machine),
    )  # fmt: skip
    return mainline


def get_revisions(conn: Any, revision_ids: list[str]) -> dict[str, dict[str, Any]]:
    """The revisions the server has of these ids: COLUMNS, with parent, mainline, author
    and machine."""
    if not revision_ids:
        return {}
    names = (*COLUMNS, "parent", "mainline", "author", "machine")
    rows = conn.execute(
        f"SELECT {', '.join(names)} FROM team_checkpoint_revisions WHERE id = ANY(%s)",
        (list(dict.fromkeys(revision_ids)),),
    ).fetchall()
    out = {}
    for row in rows:
        item = dict(zip(names, row, strict=True))
        if isinstance(item["body"], str):
            item["body"] = json.loads(item["body"])
        out[item["id"]] = item
    return out
