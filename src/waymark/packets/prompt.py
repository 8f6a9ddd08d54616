"""The UserPromptSubmit packet: the few memories that matter for this prompt, and nothing the
session was shown before.

The prompt is used for ranking and forgotten: it is never stored. Semantic neighbours come
from the warm MCP server when it answers within its deadline; otherwise recall is lexical.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection

CANDIDATES = 12
# A prompt's words found in more than 5% of memories (`test`, `src`, `py`) are not searched:
# they cost the most and rank the least.
PROMPT_MAX_SHARE = 0.05
# And the words searched stop, rarest first, at 20,000 postings: at 100k memories a long
# prompt's mid-frequency words scored 30,000+ rows. Measured on 120 prompts at 100k: recall
# p95 29.6 -> 20.7 ms, 97% of packets identical, every relevant memory still found.
PROMPT_MAX_ROWS = 20_000
# No typo repair on every prompt: rapidfuzz's import and a vocabulary scan cost 20 ms at
# 100k memories, most often for a prompt that simply has no memory. `recall` still repairs.
PROMPT_FUZZY_BELOW = 0
# The server embeds a prompt's first 64 tokens (embed.QUERY_MAX_TOKENS, said here so the hook
# need not import embed): a pasted log of 256 tokens would always miss the 50 ms deadline.
PROMPT_SEMANTIC_TOKENS = 64


def ask_neighbours(prompt: str, cwd: str) -> Callable[[], list[list[tuple[int, float]]] | None]:
    """Ask the warm server for the prompt's neighbours now, naming the project by its
    directory: it embeds while the hook opens the database and runs the lexical tiers. It
    answers only where capture is on. The returned function collects the answer."""
    from waymark.recall import semantic

    return semantic.ask_warm(None, [prompt], max_tokens=PROMPT_SEMANTIC_TOKENS, cwd=cwd)


def prompt_packet(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    prompt: str,
    neighbours: Callable[[], list[list[tuple[int, float]]] | None] | None = None,
    *,
    record: bool = True,
    agent: str | None = None,
    sections_out: list[Any] | None = None,
) -> str | None:
    """The packet for `prompt`, or None when nothing new is relevant enough; with `record`
    False (capture read-only) nothing is written. `agent` reads that agent's tiers too;
    `sections_out`, when given, receives the packet's sections (what the receipt reads)."""
    from waymark import settings
    from waymark.handoff import ledger
    from waymark.packets import sections
    from waymark.packets.briefing import file_memories
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section, fence_text, render
    from waymark.packets.seen import note_injected
    from waymark.projects import git, pathnames
    from waymark.recall import ranked
    from waymark.recall.floor import relevant_hits
    from waymark.storage import sessions
    from waymark.storage.connection import read_only

    writable = record and not read_only(conn)  # read-only: its memory, unrecorded
    if writable:
        ledger.ensure_session(conn, project, session_id, client)
    seen = sessions.injected(conn, session_id)
    named = pathnames.normalise(project, pathnames.mentioned(prompt))
    scoped = [m for m in file_memories(conn, project, named, 8) if m.id not in seen]
    hits = ranked.recall(
        conn,
        project,
        prompt,
        limit=CANDIDATES,
        paths=named,
        scan_paths=False,  # `named` holds the paths the prompt mentions
        current_branch=git.branch(project.files),
        semantic=(lambda: _first(neighbours())) if neighbours else None,
        agent=agent,
        settings=ranked.settings_for(conn)._replace(
            query_max_share=PROMPT_MAX_SHARE,
            fuzzy_below=PROMPT_FUZZY_BELOW,
            query_max_rows=PROMPT_MAX_ROWS,
            expansion_weight=0.0,  # feedback words find weak matches; a prompt needs strong ones
        ),
    )
    shown_scoped = {m.id for m in scoped}
    chosen = [
        h
        for h in relevant_hits(hits, conn=conn)
        if h.memory.id not in seen and h.memory.id not in shown_scoped
    ]
    impact, around = _impact(conn, project, named, prompt, seen | shown_scoped)
    shown_scoped |= {m.id for m in around}
    chosen = [h for h in chosen if h.memory.id not in shown_scoped]
    restated = sections.not_restated(project, scoped + [h.memory for h in chosen], client)
    scoped = [m for m in scoped if m not in restated]
    chosen = [h for h in chosen if h.memory not in restated]
    relevant = [h.memory for h in chosen]
    from waymark.storage.outcomes import reverted_among

    reverted = reverted_among(conn, project.id, [m.id for m in scoped + around + relevant])
    flag = lambda memory_id: "REVERTED" if memory_id in reverted else ""  # noqa: E731
    from waymark.storage import notes as note_rows

    procedure = None
    if note_rows.any_of_kinds(conn, project.id, note_rows.PROCEDURE_KINDS):  # else no import
        from waymark.knowledge.notes import applies

        procedure = applies(conn, project, prompt)
    if procedure is not None and f"note:{procedure['path']}" in seen:
        procedure = None
    said = (f"- {procedure['kind']} `{fence_text(procedure['heading'])}` applies"
            f" ({procedure['path']}): {fence_text(procedure['description'] or '')[:240]}"
            f"{'' if procedure['state'] == 'FRESH' else ' [' + procedure['state'] + ']'}"
            if procedure else None)  # fmt: skip
    parts = [
        Section(
            "Procedure that applies",
            [said] if said else [],
            100,
            0,
            [(None, "its trigger matches the prompt")] if said else [],
            raw=True,
        ),
        Section(
            "For the files you named",
            [memory_line(m, flag(m.id)) for m in scoped],
            500,
            0,
            [(m.id, f"path match: {m.scope_target}") for m in scoped],
        ),
        Section(
            "What depends on what you named",
            [line for _, line in impact] + [memory_line(m, flag(m.id)) for m in around],
            300,
            0,
            [(None, "the code map's static dependents")] * len(impact)
            + [(m.id, f"path match: {m.scope_target} (a dependent)") for m in around],
            raw=True,
        ),
        Section(
            "Relevant memories",
            [memory_line(m, flag(m.id)) for m in relevant],
            900,
            0,
            [(h.memory.id, why_recalled(h)) for h in chosen],
        ),
    ]
    from waymark.packets.render import shrunk
    from waymark.storage.sessions import section_factors

    parts = shrunk(parts, section_factors(conn, project.id))
    if sections_out is not None:
        sections_out.extend(parts)
    text = render("prompt", parts, settings.get(conn, "packet.prompt_tokens"))
    if not text:
        return None
    if writable:
        note_injected(
            conn, session_id, [m.id for m in scoped + around + relevant if m.id in text],
            receipt=(project.id, "UserPromptSubmit", "prompt", text, parts),
            others=[k for k, line in impact if line in text]
            + ([f"note:{procedure['path']}"] if procedure and said and said in text else []),
        )  # fmt: skip
    return text


def _impact(
    conn: Connection, project: Project, named: list[str], prompt: str, seen: set[str]
) -> tuple[list[tuple[str, str]], list[Any]]:
    """For a file or declaration the prompt names (two at most): (seen key, a line of how
    many files depend on it and which), and the memories scoped to those dependents."""
    from waymark.codemap import facts
    from waymark.packets.briefing import file_memories

    lines, files = [], []
    for node in facts.named_in_prompt(conn, project.id, named, prompt):
        found = facts.dependents(conn, project.id, node)
        if found and f"map:{found['snapshot']}:{node}" not in seen:
            lines.append((f"map:{found['snapshot']}:{node}", facts.dependents_line(node, found)))
            files += [f for f in found["top"] if f not in files]
    around = (
        [m for m in file_memories(conn, project, files, 4) if m.id not in seen] if files else []
    )
    return lines, around


def why_recalled(hit: Any) -> str:
    """`score 0.031 (lexical #1, semantic #4 by all-MiniLM-L6-v2)`: a ranked hit's receipt,
    its tiers' ranks, and the model whose vectors the semantic tier compared."""
    explain = hit.explain if isinstance(hit.explain, dict) else {}
    tiers = explain.get("tiers") or {}
    parts = ", ".join(
        f"{name} #{entry['rank']}" + (f" by {entry['model']}" if entry.get("model") else "")
        for name, entry in tiers.items()
    )
    return f"score {hit.score:.3f}" + (f" ({parts})" if parts else "")


def _first(found: list[list[tuple[int, float]]] | None) -> list[tuple[int, float]] | None:
    return found[0] if found else None


def for_prompt(
    conn: Connection,
    project: Project,
    session_id: str,
    client: str,
    prompt: str,
    neighbours: Callable[[], list[list[tuple[int, float]]] | None] | None,
    *,
    record: bool,
) -> str | None:
    """What UserPromptSubmit injects: the prompt packet and, after a compaction whose summary
    dropped facts, what it dropped (said here where the client shows no PostCompact)."""
    text = prompt_packet(conn, project, session_id, client, prompt, neighbours, record=record)
    if record:
        from waymark.storage.sessions import compact_dropped

        if compact_dropped(conn, session_id):
            from waymark.packets.compaction import dropped_packet

            dropped = dropped_packet(conn, project, session_id, "UserPromptSubmit")
            text = "\n".join(t for t in (text, dropped) if t) or None
    return text


def answer(conn: Connection, request: dict, *, embedder: Any = None) -> dict:
    """The warm server's reply to a `prompt` request: the packet a prompt hook relays
    (`{"ok": true, "text": str | None}`), made where everything is loaded; with `embedder`
    (the model this process holds) its neighbours join, embedded while the lexical tiers run."""
    from waymark.projects.capture import EVENT_ERROR, hook_project, requested_event

    event = requested_event(request)
    if event is None:
        return {"ok": False, "error": EVENT_ERROR}
    prompt = request.get("prompt")
    if not isinstance(prompt, str):
        return {"ok": False, "error": "prompt must be a string"}
    if not prompt.strip() or event.get("agent_id"):
        return {"ok": True, "text": None}  # a subagent's task: its own packet is what it gets
    found = hook_project(conn, event["cwd"], event["session_id"])
    if found is None or not found[1]["enabled"]:
        return {"ok": True, "text": None}
    project, chosen = found
    neighbours = None
    if embedder is not None:
        from waymark.recall import semantic

        near = semantic.overlapped(conn, project.id, prompt, embedder, PROMPT_SEMANTIC_TOKENS)
        neighbours = lambda: [near()]  # noqa: E731
    text = for_prompt(conn, project, event["session_id"], event["client"], prompt, neighbours,
                      record=bool(chosen["records"]))  # fmt: skip
    return {"ok": True, "text": text}
