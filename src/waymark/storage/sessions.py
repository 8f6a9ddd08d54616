"""SQL for `sessions`, the per-session ledger (`session_ledger`: files edited, commands that
failed) and `session_injected` (memories a session was shown)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from waymark.storage.connection import Connection


def session_exists(conn: Connection, session_id: str) -> bool:
    return conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is not None


def client_of(conn: Connection, session_id: str) -> str | None:
    """The client a session runs in (`claude-code`, `codex`, ...), as its hooks said."""
    for (client,) in conn.execute("SELECT client FROM sessions WHERE id = ?", (session_id,)):
        return str(client)
    return None


def insert_session(
    conn: Connection,
    session_id: str,
    client: str,
    project_id: str,
    stamp: str,
    head: str | None,
    dirty: str | None,
    branch: str | None = None,
    tree: str | None = None,
) -> None:
    """The session's row, unless another delivery already wrote it."""
    conn.execute(
        "INSERT OR IGNORE INTO sessions (id, client, project_id, started_at, git_head_start,"
        " git_dirty_seen, git_branch_start, tree) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, client, project_id, stamp, head, dirty, branch, tree),
    )


def get_session(conn: Connection, session_id: str) -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT git_dirty_seen, last_shell_at, last_change_at, asked_for, handed_off_at,"
        " started_at, tree FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    names = (
        "git_dirty_seen", "last_shell_at", "last_change_at", "asked_for", "handed_off_at",
        "started_at", "tree",
    )  # fmt: skip
    return dict(zip(names, row, strict=True))


def hand_off(
    conn: Connection, project_id: str, stamp: str, session_id: str | None, paths: Sequence[str]
) -> list[str]:
    """Mark as handed off at `stamp` the project's sessions a save covers: its own session,
    and each session with work not yet handed off that edited one of `paths`. Their ids."""
    from waymark.base import jsonlite as json

    found = [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM sessions WHERE project_id = ? AND (id = ? OR (last_change_at IS NOT"
            " NULL AND (handed_off_at IS NULL OR handed_off_at < last_change_at) AND EXISTS"
            " (SELECT 1 FROM session_ledger l WHERE l.session_id = sessions.id AND"
            " l.kind = 'edit' AND l.path IN (SELECT value FROM json_each(?)))))",
            (project_id, session_id or "", json.dumps(list(paths))),
        )
    ]
    for found_id in found:
        conn.execute("UPDATE sessions SET handed_off_at = ? WHERE id = ?", (stamp, found_id))
    return found


def update_session(conn: Connection, session_id: str, **values: str | None) -> None:
    """Set some of: last_change_at, last_shell_at, git_dirty_seen, asked_for, ended_at,
    end_reason, git_head_end."""
    allowed = {
        "last_change_at", "last_shell_at", "git_dirty_seen", "asked_for",
        "ended_at", "end_reason", "git_head_end",
    }  # fmt: skip
    unknown = set(values) - allowed
    if unknown or not values:
        raise ValueError(f"cannot set session column(s) {sorted(unknown) or '(none)'}")
    columns = ", ".join(f"{name} = ?" for name in values)
    conn.execute(f"UPDATE sessions SET {columns} WHERE id = ?", (*values.values(), session_id))


def add_edits(conn: Connection, session_id: str, stamp: str, paths: Iterable[str]) -> None:
    for path in paths:
        conn.execute(
            "INSERT INTO session_ledger (session_id, at, kind, path) VALUES (?, ?, 'edit', ?)",
            (session_id, stamp, path),
        )


def add_failure(
    conn: Connection,
    session_id: str,
    stamp: str,
    command: str,
    exit_code: int | None,
    error_tail: str,
) -> None:
    conn.execute(
        "INSERT INTO session_ledger (session_id, at, kind, command, exit_code, error_tail)"
        " VALUES (?, ?, 'failure', ?, ?, ?)",
        (session_id, stamp, command, exit_code, error_tail),
    )


def claim_delivery(conn: Connection, key: str, stamp: str, forget_before: str) -> bool:
    """Claim a hook event's delivery key (inside the write that records it): False when it
    was claimed already, so the event is recorded once whoever got there first. Keys older
    than `forget_before` are let go."""
    conn.execute("DELETE FROM hook_deliveries WHERE at < ?", (forget_before,))
    conn.execute("INSERT OR IGNORE INTO hook_deliveries (key, at) VALUES (?, ?)", (key, stamp))
    return bool(conn.changes())


def edited(conn: Connection, session_id: str) -> set[str]:
    """Every path the session's ledger records as edited."""
    return {
        str(r[0])
        for r in conn.execute(
            "SELECT path FROM session_ledger WHERE session_id = ? AND kind = 'edit'", (session_id,)
        )
    }


def files_changed(conn: Connection, session_id: str, limit: int = 20, since: str = "") -> list[str]:
    """The session's edited paths (at or after `since`), most recently edited first."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT path FROM session_ledger WHERE session_id = ? AND kind = 'edit' AND at >= ?"
            " GROUP BY path ORDER BY max(seq) DESC LIMIT ?",
            (session_id, since, limit),
        )
    ]


def failures(conn: Connection, session_id: str, limit: int) -> list[tuple[str, int | None]]:
    """(command, exit code) of the session's failed commands, newest first."""
    return [
        (str(c), x)
        for c, x in conn.execute(
            "SELECT command, exit_code FROM session_ledger WHERE session_id = ? AND"
            " kind = 'failure' ORDER BY seq DESC LIMIT ?",
            (session_id, limit),
        )
    ]


def recent_sessions(
    conn: Connection, project_id: str, except_session: str, limit: int
) -> list[tuple[str, str, str]]:
    """(id, client, started_at) of the project's other sessions, newest first."""
    return [
        (str(i), str(c), str(s))
        for i, c, s in conn.execute(
            "SELECT id, client, started_at FROM sessions WHERE project_id = ? AND id <> ?"
            " ORDER BY started_at DESC, id DESC LIMIT ?",
            (project_id, except_session, limit),
        )
    ]


def open_sessions_since(
    conn: Connection, project_id: str, since: str
) -> list[tuple[str, str | None]]:
    """(id, working tree) of the project's sessions that started at or after `since` and have
    not ended."""
    return [
        (str(row[0]), None if row[1] is None else str(row[1]))
        for row in conn.execute(
            "SELECT id, tree FROM sessions WHERE project_id = ? AND ended_at IS NULL"
            " AND started_at >= ? ORDER BY started_at",
            (project_id, since),
        )
    ]


def session_capture(conn: Connection, session_id: str) -> str | None:
    """The capture mode this session was switched to, or None (the project's applies)."""
    if not session_id:
        return None
    row = conn.execute(
        "SELECT capture_mode, capture_confirm FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    if row is None or row[0] is None:
        return None
    return "confirm" if row[1] and row[0] == "on" else str(row[0])


def put_session_capture(
    conn: Connection, session_id: str, client: str, project_id: str, mode: str, stamp: str
) -> None:
    """Switch one session's capture mode (its row is made if the session is new)."""
    conn.execute(
        "INSERT OR IGNORE INTO sessions (id, client, project_id, started_at) VALUES (?, ?, ?, ?)",
        (session_id, client, project_id, stamp),
    )
    conn.execute(
        "UPDATE sessions SET capture_mode = ?, capture_confirm = ? WHERE id = ?",
        ("on" if mode == "confirm" else mode, int(mode == "confirm"), session_id),
    )


def previous_branch(conn: Connection, project_id: str, except_session: str) -> str | None:
    """The branch the project's latest other session (that knew one) started on."""
    row = conn.execute(
        "SELECT git_branch_start FROM sessions WHERE project_id = ? AND id <> ?"
        " AND git_branch_start IS NOT NULL ORDER BY started_at DESC, id DESC LIMIT 1",
        (project_id, except_session),
    ).fetchone()
    return None if row is None else str(row[0])


def previous_head(conn: Connection, project_id: str, except_session: str) -> str | None:
    """The git HEAD the project's latest other session ended (or else started) at."""
    row = conn.execute(
        "SELECT coalesce(git_head_end, git_head_start) FROM sessions WHERE project_id = ?"
        " AND id <> ? AND coalesce(git_head_end, git_head_start) IS NOT NULL"
        " ORDER BY started_at DESC, id DESC LIMIT 1",
        (project_id, except_session),
    ).fetchone()
    return None if row is None else row[0]


def previous_start(conn: Connection, project_id: str, except_session: str) -> str | None:
    """When the project's latest other session started."""
    row = conn.execute(
        "SELECT started_at FROM sessions WHERE project_id = ? AND id <> ?"
        " ORDER BY started_at DESC, id DESC LIMIT 1",
        (project_id, except_session),
    ).fetchone()
    return None if row is None else row[0]


def add_injected(conn: Connection, session_id: str, memory_ids: Iterable[str]) -> None:
    for memory_id in memory_ids:
        conn.execute(
            "INSERT OR IGNORE INTO session_injected (session_id, memory_id) VALUES (?, ?)",
            (session_id, memory_id),
        )


def forget_injected(conn: Connection, session_id: str) -> None:
    """The model no longer has what was shown (a compaction, a clear): show it again."""
    conn.execute("DELETE FROM session_injected WHERE session_id = ?", (session_id,))


def injected(conn: Connection, session_id: str) -> set[str]:
    return {
        str(r[0])
        for r in conn.execute(
            "SELECT memory_id FROM session_injected WHERE session_id = ?", (session_id,)
        )
    }


RECEIPTS_KEPT = 50_000  # lines, over every project: months of ordinary use


def add_receipts(
    conn: Connection,
    packet: str,
    stamp: str,
    project_id: str,
    session_id: str,
    hook: str,
    kind: str,
    lines: Iterable[tuple[str, str | None, str, int, str | None]],
) -> None:
    """One packet's receipts: (section, item, why, tokens, text) per line; the oldest beyond
    RECEIPTS_KEPT are dropped now and then."""
    rows = [(packet, stamp, project_id, session_id, hook, kind, *line) for line in lines]
    conn.cursor().executemany(
        "INSERT INTO injections (packet, at, project_id, session_id, hook, kind, section, item,"
        " why, tokens, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    last = conn.last_insert_rowid()
    if last // 500 != (last - len(rows)) // 500:  # crossed a multiple of 500: trim
        conn.execute("DELETE FROM injections WHERE seq <= ?", (last - RECEIPTS_KEPT,))


RECEIPT_KEYS = (
    "packet", "at", "session_id", "hook", "kind", "section", "item", "why", "tokens", "text",
)  # fmt: skip


def receipts(
    conn: Connection,
    project_id: str,
    *,
    session_id: str | None = None,
    packet: str | None = None,
    packets: int = 20,
) -> list[dict[str, Any]]:
    """The receipts of the project's newest `packets` packets (of one session, or one
    packet), oldest line first."""
    where, params = "project_id = ?", [project_id]
    if session_id:
        where += " AND session_id = ?"
        params.append(session_id)
    if packet:
        where += " AND packet = ?"
        params.append(packet)
    chosen = (
        f"SELECT packet FROM injections WHERE {where} GROUP BY packet"
        " ORDER BY max(seq) DESC LIMIT ?"
    )
    rows = conn.execute(
        f"SELECT {', '.join(RECEIPT_KEYS)} FROM injections WHERE {where}"
        f" AND packet IN ({chosen}) ORDER BY seq",
        (*params, *params, packets),
    ).fetchall()
    return [dict(zip(RECEIPT_KEYS, row, strict=True)) for row in rows]


STEPS_KEPT = 60  # per session


def add_step(
    conn: Connection, session_id: str, stamp: str, tool: str, target: str | None, outcome: str
) -> None:
    """One tool call in the session's work map; only the newest STEPS_KEPT stay."""
    conn.execute(
        "INSERT INTO session_steps (session_id, at, tool, target, outcome) VALUES (?, ?, ?, ?, ?)",
        (session_id, stamp, tool, target, outcome),
    )
    conn.execute(
        "DELETE FROM session_steps WHERE session_id = ? AND seq <= (SELECT seq FROM"
        " session_steps WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
        (session_id, session_id, STEPS_KEPT),
    )


def steps(conn: Connection, session_id: str, limit: int) -> list[tuple[str, str | None, str]]:
    """(tool, target, outcome) of the session's newest `limit` steps, oldest first."""
    rows = conn.execute(
        "SELECT tool, target, outcome FROM session_steps WHERE session_id = ?"
        " ORDER BY seq DESC LIMIT ?",
        (session_id, limit),
    ).fetchall()
    return [(str(t), None if g is None else str(g), str(o)) for t, g, o in reversed(rows)]


def put_output(conn: Connection, row: dict[str, Any]) -> None:
    """A trimmed tool output, whole and redacted; expired ones are dropped now."""
    conn.execute("DELETE FROM tool_outputs WHERE expires_at <= ?", (row["at"],))
    keys = list(row)
    conn.execute(
        f"INSERT INTO tool_outputs ({', '.join(keys)}) VALUES ({', '.join('?' * len(keys))})",
        [row[k] for k in keys],
    )


OUTPUT_KEYS = (
    "id", "project_id", "session_id", "at", "expires_at", "tool", "command", "output", "chars",
    "shown_chars",
)  # fmt: skip


def get_output(conn: Connection, output_id: str, now: str) -> dict[str, Any] | None:
    row = conn.execute(
        f"SELECT {', '.join(OUTPUT_KEYS)} FROM tool_outputs WHERE id = ? AND expires_at > ?",
        (output_id, now),
    ).fetchone()
    return None if row is None else dict(zip(OUTPUT_KEYS, row, strict=True))


def steps_between(
    conn: Connection, session_id: str, since: str, until: str
) -> list[tuple[str, str | None, str]]:
    """(tool, target, outcome) of the session's steps after `since` and before `until`."""
    rows = conn.execute(
        "SELECT tool, target, outcome FROM session_steps WHERE session_id = ? AND at > ?"
        " AND at < ? ORDER BY seq",
        (session_id, since, until),
    ).fetchall()
    return [(str(t), None if g is None else str(g), str(o)) for t, g, o in rows]


SESSION_KEYS = (
    "id", "client", "project_id", "started_at", "ended_at", "end_reason", "asked_for",
    "branch", "edits", "failures", "shown", "packets", "tokens",
)  # fmt: skip
_SESSION_SELECT = (
    "SELECT s.id, s.client, s.project_id, s.started_at, s.ended_at, s.end_reason, s.asked_for,"
    " s.git_branch_start,"
    " (SELECT count(*) FROM session_ledger l WHERE l.session_id = s.id AND l.kind = 'edit'),"
    " (SELECT count(*) FROM session_ledger l WHERE l.session_id = s.id AND l.kind = 'failure'),"
    " (SELECT count(*) FROM session_injected i WHERE i.session_id = s.id),"
    " (SELECT count(DISTINCT packet) FROM injections j WHERE j.session_id = s.id),"
    " (SELECT coalesce(sum(tokens), 0) FROM injections j WHERE j.session_id = s.id)"
    " FROM sessions s"
)


def session_rows(conn: Connection, project_id: str, limit: int, offset: int = 0) -> list[dict]:
    """The project's sessions, newest first, each with its counts: files edited, commands
    failed, memories shown, packets and tokens injected."""
    found = conn.execute(
        f"{_SESSION_SELECT} WHERE s.project_id = ? ORDER BY s.started_at DESC, s.id DESC"
        " LIMIT ? OFFSET ?",
        (project_id, limit, offset),
    ).fetchall()
    return [dict(zip(SESSION_KEYS, row, strict=True)) for row in found]


def session_row(conn: Connection, session_id: str) -> dict | None:
    found = conn.execute(f"{_SESSION_SELECT} WHERE s.id = ?", (session_id,)).fetchone()
    return dict(zip(SESSION_KEYS, found, strict=True)) if found else None


def count_sessions(conn: Connection, project_id: str) -> int:
    for (n,) in conn.execute("SELECT count(*) FROM sessions WHERE project_id = ?", (project_id,)):
        return int(n)
    return 0


def injected_per_session(
    conn: Connection, project_id: str, limit: int
) -> list[tuple[str, str, int]]:
    """(session id, first packet's time, tokens) of the project's newest `limit` sessions that
    were injected anything, oldest first."""
    found = conn.execute(
        "SELECT session_id, min(at), sum(tokens) FROM injections WHERE project_id = ?"
        " GROUP BY session_id ORDER BY min(at) DESC LIMIT ?",
        (project_id, limit),
    ).fetchall()
    return [(str(s), str(at), int(t or 0)) for s, at, t in reversed(found)]


def shown_in(conn: Connection, session_id: str) -> list[str]:
    """The memory ids the session was shown (each once)."""
    return [str(m) for (m,) in conn.execute(
        "SELECT memory_id FROM session_injected WHERE session_id = ? ORDER BY memory_id",
        (session_id,),
    )]  # fmt: skip


def open_at(conn: Connection, project_id: str, stamp: str) -> list[str]:
    """Ids of the project's sessions open at `stamp` (begun by then, not ended before)."""
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM sessions WHERE project_id = ? AND started_at <= ?"
            " AND (ended_at IS NULL OR ended_at >= ?) ORDER BY started_at DESC LIMIT 2",
            (project_id, stamp, stamp),
        )
    ]


def heads(conn: Connection, session_ids: Iterable[str]) -> dict[str, tuple[str | None, str | None]]:
    """session id -> (git HEAD at its start, at its end) for those recorded."""
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return {}
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, git_head_start, git_head_end FROM sessions WHERE id IN ({marks})", ids
    ).fetchall()
    return {str(i): (None if s is None else str(s), None if e is None else str(e))
            for i, s, e in rows}  # fmt: skip


def shown_unused(conn: Connection, session_id: str) -> list[tuple[str, str, str]]:
    """(item, when first shown, the hook that first showed it) of what the session's
    packets showed and it has not been seen to use yet, oldest first."""
    rows = conn.execute(
        "SELECT j.item, min(j.at), j.hook FROM injections j WHERE j.session_id = ? AND"
        " j.item IS NOT NULL AND j.tokens > 0 AND NOT EXISTS (SELECT 1 FROM injected_used u"
        " WHERE u.session_id = j.session_id AND u.item = j.item) GROUP BY j.item"
        " ORDER BY min(j.at)",
        (session_id,),
    ).fetchall()
    return [(str(i), str(a), str(h)) for i, a, h in rows]


def session_activity(
    conn: Connection, session_id: str
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """([(at, path edited)], [(at, program and subcommand of a command that ran)])."""
    edits = conn.execute(
        "SELECT at, path FROM session_ledger WHERE session_id = ? AND kind = 'edit'"
        " AND path IS NOT NULL ORDER BY seq",
        (session_id,),
    ).fetchall()
    steps = conn.execute(
        "SELECT at, target FROM session_steps WHERE session_id = ? AND target IS NOT NULL"
        " AND tool IN ('Bash', 'shell', 'exec_command', 'shell_command', 'local_shell')"
        " ORDER BY seq",
        (session_id,),
    ).fetchall()
    return [(str(a), str(p)) for a, p in edits], [(str(a), str(t)) for a, t in steps]


def mark_used(
    conn: Connection, session_id: str, used: Iterable[tuple[str, str]], stamp: str
) -> None:
    """(item, how) the session used; a memory's `used` count goes up once per session."""
    for item, how in used:
        conn.execute(
            "INSERT OR IGNORE INTO injected_used (session_id, item, how, at) VALUES (?, ?, ?, ?)",
            (session_id, item, how, stamp),
        )
        if conn.changes():
            conn.execute(
                "UPDATE memory_use SET used = used + 1 WHERE memory_rowid ="
                " (SELECT rowid FROM memories WHERE id = ?)",
                (item,),
            )


def use_rows(conn: Connection, project_id: str, since: str) -> list[tuple[Any, ...]]:
    """Every receipt line of the project since `since` that showed a record: (session, hook,
    kind, section, item, tokens, memory type or None, how it was used or None, packet)."""
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT j.session_id, j.hook, j.kind, j.section, j.item, j.tokens, m.type, u.how,"
            " j.packet FROM injections j LEFT JOIN memories m ON m.id = j.item"
            " LEFT JOIN injected_used u ON u.session_id = j.session_id AND u.item = j.item"
            " WHERE j.project_id = ? AND j.at >= ? ORDER BY j.seq",
            (project_id, since),
        )
    ]


SECTION_ROWS = 20_000  # newest receipt lines a section's use is counted over


def section_counts(conn: Connection, project_id: str, since: str) -> list[tuple[str, int, int]]:
    """(section, items shown, items used) of the project's packets since `since`, each item
    once per session."""
    rows = conn.execute(
        "SELECT section, count(*), sum(used) FROM (SELECT j.section, j.session_id, j.item,"
        " max(u.item IS NOT NULL) AS used FROM (SELECT section, session_id, item FROM"
        " injections WHERE project_id = ? AND at >= ? AND item IS NOT NULL AND tokens > 0"
        " ORDER BY seq DESC LIMIT ?) j LEFT JOIN injected_used u"
        " ON u.session_id = j.session_id AND u.item = j.item"
        " GROUP BY j.section, j.session_id, j.item) GROUP BY section",
        (project_id, since, SECTION_ROWS),
    ).fetchall()
    return [(str(s), int(str(n)), int(str(u or 0))) for s, n, u in rows]


def put_section_use(
    conn: Connection, project_id: str, rows: Iterable[tuple[str, int, int, float]], stamp: str
) -> None:
    conn.execute("DELETE FROM section_use WHERE project_id = ?", (project_id,))
    conn.cursor().executemany(
        "INSERT INTO section_use (project_id, section, shown, used, factor, at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [(project_id, s, n, u, f, stamp) for s, n, u, f in rows],
    )


def section_factors(conn: Connection, project_id: str) -> dict[str, float]:
    """section -> the share of its budget it keeps, for those that shrank."""
    return {
        str(s): float(f)
        for s, f in conn.execute(
            "SELECT section, factor FROM section_use WHERE project_id = ? AND factor < 1",
            (project_id,),
        )
    }


def relied_on(conn: Connection, session_id: str, types: Sequence[str], limit: int) -> list[str]:
    """Memory ids of `types` the session's packets showed (not as the standing rules every
    session start shows), those it used first, then in the order shown."""
    marks = ", ".join("?" * len(types))
    rows = conn.execute(
        "SELECT j.item FROM injections j JOIN memories m ON m.id = j.item"
        " LEFT JOIN injected_used u ON u.session_id = j.session_id AND u.item = j.item"
        f" WHERE j.session_id = ? AND m.type IN ({marks}) AND m.status = 'active'"
        " AND j.section <> 'Rules'"
        " GROUP BY j.item ORDER BY max(u.item IS NOT NULL) DESC, min(j.seq) LIMIT ?",
        (session_id, *types, limit),
    ).fetchall()
    return [str(r[0]) for r in rows]


def set_compact_dropped(conn: Connection, session_id: str, dropped: str | None) -> None:
    conn.execute("UPDATE sessions SET compact_dropped = ? WHERE id = ?", (dropped, session_id))


def compact_dropped(conn: Connection, session_id: str) -> str | None:
    row = conn.execute(
        "SELECT compact_dropped FROM sessions WHERE id = ?", (session_id,)
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def shown_and_used(conn: Connection, session_id: str) -> tuple[str, int, int, bool] | None:
    """(project id, records the session's packets showed, those of them it used, whether it
    changed files since its last handoff) of a session, or None when no hook opened it: what
    the status line counts."""
    row = conn.execute(
        "SELECT project_id, last_change_at IS NOT NULL AND (handed_off_at IS NULL OR"
        " handed_off_at < last_change_at) FROM sessions WHERE id = ?",
        (session_id,),
    ).fetchone()
    if row is None:
        return None
    ((shown,),) = conn.execute(
        "SELECT count(DISTINCT item) FROM injections WHERE session_id = ? AND item IS NOT NULL"
        " AND tokens > 0",
        (session_id,),
    )
    ((used,),) = conn.execute("SELECT count(*) FROM injected_used WHERE session_id = ?",
                              (session_id,))  # fmt: skip
    return str(row[0]), int(shown), int(used), bool(row[1])
