"""The line helpers every packet uses: a memory as one line, its title and text said once."""

from __future__ import annotations

from waymark.packets.render import fence_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from waymark.storage.memories import Memory


def memory_line(m: Memory, flag: str = "") -> str:
    """`- [warning · src/db.py · 2026-11-20 · id 01JD…] Title: content`, on one line;
    `flag` ("REVERTED") after the type."""
    where = (f" · {flag}" if flag else "") + (f" · {m.scope_target}" if m.scope_target else "")
    text = said_once(m.title, m.content)
    evidence = ""
    if m.evidence:
        first = m.evidence[0]
        cited = first.get("path") or first.get("command") or first.get("url")
        evidence = f" (evidence: {cited or 'commit ' + str(first.get('commit'))[:12]})"
    return (
        f"- [{m.type}{where} · {m.event_time[:10]} · id {m.id}] {fence_text(text)[:600]}{evidence}"
    )


def said_once(title: str, content: str) -> str:
    """`Title: content`, or the content alone where the title is only its beginning (a title
    made from the first 80 characters, cut with "…"), or the title alone where they agree."""
    title, body = " ".join(title.split()), " ".join(content.split())
    stem = title.removesuffix("…").rstrip()
    if body == title or not body:
        return title
    if stem and body.startswith(stem):
        return body
    return f"{title}: {body}"
