"""Measured use of what the packets inject: an id the agent cites, a file it names edited,
a command it names run; `waymark stats` per section, hook and type with the tokens; a memory
shown often and never used decays faster; a section never used shrinks in the budget.

Hooks as real processes with the clients' payload shapes, over a real database."""

from __future__ import annotations

import json

from test_hooks import hook, payload
from waymark.cli import main
from waymark.curation import use
from waymark.memories import store
from waymark.memories.draft import make_draft
from waymark.packets import render
from waymark.packets.seen import note_injected
from waymark.storage import sessions


def remember(conn, project, content: str, **kw):
    draft = make_draft(project, type=kw.pop("type", "warning"), content=content, **kw)
    return store.remember(conn, project, draft).memory


def prompt(repo, session: str, text: str, prompt_id: str | None = None) -> str | None:
    """The prompt hook's packet; `prompt_id` names the prompt (else each call is a new one)."""
    data = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id=session,
                   prompt=text, **({"prompt_id": prompt_id} if prompt_id else {}))  # fmt: skip
    done = hook("UserPromptSubmit", data, fresh=prompt_id is None)
    assert done.returncode == 0, done.stderr
    return (
        json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else None
    )


def stop(repo, session: str, message: str = "") -> None:
    data = payload("claude-code", "Stop", cwd=str(repo), session_id=session,
                   last_assistant_message=message)  # fmt: skip
    assert hook("Stop", data).returncode == 0


def stats(capsys) -> dict:
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_cited_id_an_edited_file_and_a_run_command_count_as_used(
    conn, enabled, repo, capsys, monkeypatch
):
    monkeypatch.chdir(repo)
    cited = remember(conn, enabled, "core.py retries must stay idempotent", scope="file",
                     target="src/pkg/core.py")  # fmt: skip
    edited = remember(conn, enabled, "README.md is generated: edit docs/intro.md instead",
                      scope="file", target="README.md")  # fmt: skip
    ran = remember(conn, enabled, "Run `make migrate` after changing core.py", type="convention",
                   scope="file", target="src/pkg/core.py")  # fmt: skip
    idle = remember(conn, enabled, "pkg/core.py logs through structlog", type="fact",
                    scope="file", target="src/pkg/core.py")  # fmt: skip
    said = prompt(repo, "u1", "Change src/pkg/core.py and README.md; make migrate first?")
    assert said and all(m.id in said for m in (cited, edited, idle, ran))
    write = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id="u1")
    write["tool_input"] = {"file_path": str(repo / "README.md"), "content": "x"}
    assert hook("PostToolUse", write).returncode == 0
    bash = payload("claude-code", "PostToolUse-bash", cwd=str(repo), session_id="u1")
    bash["tool_input"] = {"command": "make migrate"}
    assert hook("PostToolUse", bash).returncode == 0
    stop(repo, "u1", f"Done, keeping retries idempotent as {cited.id} says.")
    data = stats(capsys)
    assert data["sessions"] == 1 and data["shown"] >= 3
    assert data["by_how"]["cited"] == 1 and data["by_how"]["file"] == 1
    assert data["by_how"]["command"] == 1  # its command ran after it was shown
    assert idle.id not in {i for i, _ in use.settle(conn, enabled, "u1", "")}
    rows = {r["section"]: r for r in data["by_section"]}
    assert rows["For the files you named"]["used"] >= 2
    assert {r["hook"] for r in data["by_hook"]} == {"UserPromptSubmit"}
    assert data["tokens"]["per_session"] > 0 and data["tokens"]["per_prompt"] > 0
    assert data["tokens"]["per_used_item"] is not None
    assert data["tool_definitions"]["tokens"] > 0 and len(data["tool_definitions"]["tools"]) <= 8
    capsys.readouterr()
    assert main(["stats"]) == 0
    text = capsys.readouterr().out
    assert "items shown" in text and "MCP tool definitions:" in text and "use by section:" in text


def test_a_memory_shown_often_and_never_used_decays_faster(conn, enabled, repo, capsys,
                                                           monkeypatch):  # fmt: skip
    monkeypatch.chdir(repo)
    ignored = remember(conn, enabled, "Tabs are four spaces in the zebra module", type="fact")
    helpful = remember(conn, enabled, "Zebra module imports stream rows in batches", type="fact")
    for n in range(6):
        session = f"d{n}"
        note_injected(conn, session, [ignored.id, helpful.id], new_session="claude-code",
                      receipt=(enabled.id, "UserPromptSubmit", "prompt", f"{ignored.id} {helpful.id}",
                               [render.Section("Relevant memories", [ignored.id, helpful.id], 900, 0,
                                               [(ignored.id, "x"), (helpful.id, "x")])]))  # fmt: skip
        use.settle(conn, enabled, session, f"as {helpful.id} says")
    capsys.readouterr()
    assert main(["recall", "zebra module", "--explain", "--json", "--lexical"]) == 0
    hits = {r["memory"]["id"]: r for r in json.loads(capsys.readouterr().out)["results"]}
    assert hits[ignored.id]["explain"]["multipliers"]["unused"] == 0.9  # 6 showings, no use
    assert hits[helpful.id]["explain"]["multipliers"]["unused"] == 1.0


def test_a_section_never_used_shrinks_in_the_budget_and_the_handoff_never_does(conn, enabled, repo):
    items = [remember(conn, enabled, f"Note {n} about the ledger format", type="fact").id
             for n in range(35)]  # fmt: skip
    for n in range(35):
        lines = {"Relevant memories": [items[n]], "Active checkpoint": [f"cp{n}"]}
        parts = [render.Section(t, ls, 900, 0, [(x, "x") for x in ls]) for t, ls in lines.items()]
        note_injected(conn, f"s{n}", [items[n]], new_session="claude-code",
                      receipt=(enabled.id, "UserPromptSubmit", "prompt", " ".join(items + ["cp"] +
                               [f"cp{i}" for i in range(35)]), parts))  # fmt: skip
    end = payload("claude-code", "SessionEnd", cwd=str(repo), session_id="s34")
    assert hook("SessionEnd", end).returncode == 0
    factors = sessions.section_factors(conn, enabled.id)
    assert factors == {"Relevant memories": 0.5}  # the checkpoint's section stays whole
    shrunk = render.shrunk([render.Section("Relevant memories", [], 900),
                            render.Section("Rules", [], 450)], factors)  # fmt: skip
    assert [s.budget for s in shrunk] == [450, 450]
    # Used again: whole again at the next SessionEnd.
    use.settle(conn, enabled, "s33", f"per {items[33]}")
    for n in range(30):
        use.settle(conn, enabled, f"s{n}", f"per {items[n]}")
    assert hook("SessionEnd", end).returncode == 0
    assert sessions.section_factors(conn, enabled.id) == {}


def test_what_pretooluse_showed_is_not_used_by_the_call_that_brought_it(conn, enabled, repo):
    """A file's warning shown before an edit of the file is not used by that edit (it would
    never decay), nor a command's memory by the run it was shown before; a later edit or run
    is use. Codex's patch (noted at PreToolUse) the same."""
    warned = remember(conn, enabled, "core.py retries must stay idempotent", scope="file",
                      target="src/pkg/core.py")  # fmt: skip
    target = str(repo / "src" / "pkg" / "core.py")

    def before_and_after(session: str, client: str = "claude-code", shows: bool = True) -> None:
        if client == "codex":
            patch = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/pkg/core.py\n"
                     "@@\n-a\n+b\n*** End Patch\nEOF\n")  # fmt: skip
            pre = payload("codex", "PreToolUse-patch", cwd=str(repo), session_id=session)
            pre["tool_input"] = {"command": patch}
            done = hook("PreToolUse", pre, "codex")
            assert done.returncode == 0, done.stderr
            return
        pre = payload("claude-code", "PreToolUse-write", cwd=str(repo), session_id=session)
        pre["tool_input"] = {"file_path": target, "content": "x"}
        done = hook("PreToolUse", pre)
        assert done.returncode == 0 and (warned.id in done.stdout.decode()) is shows
        post = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id=session)
        post["tool_input"] = {"file_path": target, "content": "x"}
        assert hook("PostToolUse", post).returncode == 0

    for client in ("claude-code", "codex"):
        session = f"w-{client}"
        before_and_after(session, client)
        assert use.settle(conn, enabled, session, "") == []  # the edit it was shown before
        if client == "codex":
            post = payload("claude-code", "PostToolUse-write", cwd=str(repo), session_id=session)
            post["tool_input"] = {"file_path": target, "content": "y"}
            assert hook("PostToolUse", post).returncode == 0
        else:
            before_and_after(session, shows=False)  # shown once: the second edit is use
        assert use.settle(conn, enabled, session, "") == [(warned.id, "file")]
