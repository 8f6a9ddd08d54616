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


OPT_OUT = "#no-recall"  # a prompt that says it is given nothing
QUIET = "#no-capture"  # a prompt whose turn records nothing (`projects.capture.policy`)


def asks_no_recall(prompt: str) -> bool:
    """Whether the prompt opts out of recall: `#no-recall` as a word of its own, any case."""
    return _tagged(prompt, OPT_OUT)


def asks_no_capture(prompt: str) -> bool:
    """Whether the prompt's turn is not to be recorded: `#no-capture`, as `#no-recall` is."""
    return _tagged(prompt, QUIET)


def _tagged(prompt: str, tag: str) -> bool:
    lowered = prompt.lower()
    at = lowered.find(tag)
    while at != -1:
        end = at + len(tag)
        if (at == 0 or not _word(prompt[at - 1])) and (end == len(prompt) or not (
                _word(prompt[end]) or prompt[end] == "-")):  # fmt: skip
            return True
        at = lowered.find(tag, end)
    return False


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


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
    `sections_out`, when given, receives the packet's sections (what the receipt reads).
    Its sections are SECTIONS, in order: each a function of what was asked (`Asked`) that
    returns its Section, and notes what it showed so the later ones leave it out. A prompt
    that says `#no-recall` gets nothing."""
    if asks_no_recall(prompt):
        return None
    from waymark import settings
    from waymark.handoff import ledger
    from waymark.packets.render import render, shrunk
    from waymark.packets.seen import note_injected
    from waymark.projects import pathnames
    from waymark.storage import sessions
    from waymark.storage.connection import read_only

    writable = record and not read_only(conn)  # read-only: its memory, unrecorded
    if writable:
        ledger.ensure_session(conn, project, session_id, client)
        ledger.renew_claims(conn, session_id)
    tokens, items, floor = settings.budget(conn, "prompt")
    ask = Asked(conn, project, client, prompt, neighbours, agent, floor,
                seen=sessions.injected(conn, session_id),
                named=pathnames.normalise(project, pathnames.mentioned(prompt)))  # fmt: skip
    parts = [section(ask) for section in SECTIONS]
    parts = shrunk(parts, sessions.section_factors(conn, project.id))
    if sections_out is not None:
        sections_out.extend(parts)
    text = render("prompt", parts, tokens, items)
    reports = _from_subagents(conn, session_id) if writable else None
    if not text:
        return reports
    if writable:
        note_injected(
            conn, session_id, [m for m in ask.memories if m in text],
            receipt=(project.id, "UserPromptSubmit", "prompt", text, parts),
            others=[key for key, line in ask.others if line in text],
        )  # fmt: skip
    return text + ("\n\n" + reports if reports else "")


def _from_subagents(conn: Connection, session_id: str) -> str | None:
    from waymark.packets.agents import from_subagents

    return from_subagents(conn, session_id)


class Asked:
    """What every section of a prompt's packet reads: the prompt, the paths it names, what
    the session was shown before (`seen`) and what an earlier section of this packet showed
    (`shown`); and what the sections put in it, for the record of what was injected."""

    def __init__(
        self, conn: Connection, project: Project, client: str, prompt: str,
        neighbours: Callable[[], list[list[tuple[int, float]]] | None] | None,
        agent: str | None, floor: float, *, seen: set[str], named: list[str],
    ) -> None:  # fmt: skip
        self.conn, self.project, self.client, self.prompt = conn, project, client, prompt
        self.neighbours, self.agent, self.seen, self.named = neighbours, agent, seen, named
        self.floor = floor  # `packet.prompt_floor`: the share of the best match's score
        self.shown: set[str] = set()  # by an earlier section of this packet
        self.memories: list[str] = []  # every memory a section lists, in order
        self.others: list[tuple[str, str]] = []  # (seen key, its line) of what is not a memory
        self._stated: list[str] = []

    def new(self, memories: list[Any]) -> list[Any]:
        """Those not shown before in this session, nor by an earlier section."""
        return [m for m in memories if m.id not in self.seen and m.id not in self.shown]

    def not_restated(self, memories: list[Any]) -> list[Any]:
        """Those whose text the client's own files (CLAUDE.md, AGENTS.md) do not say already:
        those files read once a packet, and only when a section has memories to check."""
        from waymark.projects.client_files import already_stated, stated_text

        if not memories:
            return memories
        if not self._stated:
            self._stated.append(stated_text(self.project, self.client))
        stated = self._stated[0]
        return [m for m in memories if not already_stated(m.content, m.title, stated, m.id)]

    def flagged(self, memories: list[Any]) -> Callable[[str], str]:
        """A memory's flag in its line: REVERTED where git showed its change reverted."""
        from waymark.storage.outcomes import reverted_among

        reverted = reverted_among(self.conn, self.project.id, [m.id for m in memories])
        return lambda memory_id: "REVERTED" if memory_id in reverted else ""


def _procedure(ask: Asked) -> Any:
    """The procedure, skill or agent profile whose trigger the prompt matches, in a line."""
    from waymark.packets.render import Section, fence_text
    from waymark.storage import notes as note_rows

    found = None
    if note_rows.any_of_kinds(
        ask.conn, ask.project.id, note_rows.PROCEDURE_KINDS
    ):  # else no import
        from waymark.knowledge.notes import applies

        found = applies(ask.conn, ask.project, ask.prompt)
    if found is None or f"note:{found['path']}" in ask.seen:
        return Section("Procedure that applies", [], 100, 0, [], raw=True)
    said = (f"- {found['kind']} `{fence_text(found['heading'])}` applies"
            f" ({found['path']}): {fence_text(found['description'] or '')[:240]}"
            f"{'' if found['state'] == 'FRESH' else ' [' + found['state'] + ']'}")  # fmt: skip
    ask.others.append((f"note:{found['path']}", said))
    return Section("Procedure that applies", [said], 100, 0,
                   [(None, "its trigger matches the prompt")], raw=True)  # fmt: skip


def _for_files(ask: Asked) -> Any:
    """The memories about the files the prompt names."""
    from waymark.packets.briefing import file_memories
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section

    scoped = ask.new(file_memories(ask.conn, ask.project, ask.named, 8))
    ask.shown |= {m.id for m in scoped}  # left out of the later sections, restated or not
    scoped = ask.not_restated(scoped)
    flag = ask.flagged(scoped)
    ask.memories += [m.id for m in scoped]
    return Section("For the files you named", [memory_line(m, flag(m.id)) for m in scoped], 500,
                   0, [(m.id, f"path match: {m.scope_target}") for m in scoped])  # fmt: skip


def _depends(ask: Asked) -> Any:
    """What depends on a file or declaration the prompt names, and the memories about it."""
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section

    impact, around = _impact(ask.conn, ask.project, ask.named, ask.prompt, ask.seen | ask.shown)
    ask.shown |= {m.id for m in around}
    flag = ask.flagged(around)
    ask.memories += [m.id for m in around]
    ask.others += impact
    return Section(
        "What depends on what you named",
        [line for _, line in impact] + [memory_line(m, flag(m.id)) for m in around], 300, 0,
        [(None, "the code map's static dependents")] * len(impact)
        + [(m.id, f"path match: {m.scope_target} (a dependent)") for m in around],
        raw=True,
    )  # fmt: skip


def _relevant(ask: Asked) -> Any:
    """The memories recall ranks for the prompt, above the floor."""
    from waymark.packets.lines import memory_line
    from waymark.packets.render import Section
    from waymark.projects import git
    from waymark.recall import ranked
    from waymark.recall.floor import relevant_hits

    neighbours = ask.neighbours
    hits = ranked.recall(
        ask.conn, ask.project, ask.prompt, limit=CANDIDATES, paths=ask.named,
        scan_paths=False,  # `named` holds the paths the prompt mentions
        current_branch=git.branch(ask.project.files),
        semantic=(lambda: _first(neighbours())) if neighbours else None, agent=ask.agent,
        settings=ranked.settings_for(ask.conn)._replace(
            query_max_share=PROMPT_MAX_SHARE, fuzzy_below=PROMPT_FUZZY_BELOW,
            query_max_rows=PROMPT_MAX_ROWS,
            expansion_weight=0.0,  # feedback words find weak matches; a prompt needs strong ones
        ),
    )  # fmt: skip
    fresh = {m.id for m in ask.new([h.memory for h in hits])}
    kept = {m.id for m in ask.not_restated([h.memory for h in hits if h.memory.id in fresh])}
    chosen = [h for h in relevant_hits(hits, conn=ask.conn, share=ask.floor)
              if h.memory.id in kept]  # fmt: skip
    flag = ask.flagged([h.memory for h in chosen])
    ask.memories += [h.memory.id for h in chosen]
    return Section("Relevant memories", [memory_line(h.memory, flag(h.memory.id)) for h in chosen],
                   900, 0, [(h.memory.id, why_recalled(h)) for h in chosen])  # fmt: skip


# The packet's sections, in the order the model reads them; a new one is a function above
# and a line here.
SECTIONS = (_procedure, _for_files, _depends, _relevant)


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
    dropped facts, what it dropped (said here where the client shows no PostCompact);
    nothing for a prompt that says `#no-recall`."""
    if asks_no_recall(prompt):
        return None
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
    from waymark.base.markers import quiet_turn

    quiet_turn(event["session_id"], asks_no_capture(prompt))  # as the prompt hook does
    if asks_no_recall(prompt):
        return {"ok": True, "text": None}
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
