"""Each hook's packet within its budget in tokens and in records, and above its relevance
floor (`packet.<hook>_tokens`, `_items`, `_floor`): set as a user sets them (`waymark
config`), the hooks run as real processes."""

from __future__ import annotations

import pytest

from test_failure_recall import TRACE, fail
from test_hooks import context_of, hook, payload, remember
from test_pre_tool_use import before_edit, context
from waymark import settings
from waymark.cli import main
from waymark.handoff import checkpoints
from waymark.packets.render import Section, render


def config(capsys, key: str, value: str) -> int:
    code = main(["config", key, value])
    capsys.readouterr()
    return code


def listed(text: str) -> list[str]:
    """The memory ids a packet lists, in order."""
    return [line.split(" · id ", 1)[1].split("]", 1)[0] for line in text.splitlines()
            if line.startswith("- [") and " · id " in line]  # fmt: skip


def test_render_counts_records_not_lines_and_says_what_the_cap_left_out():
    sections = [
        Section(
            "Active checkpoint",
            ["objective: x", "next: y"],
            300,
            0,
            [("cp-1", "active checkpoint")] * 2,
        ),  # fmt: skip
        Section(
            "Memories", ["- a", "- b", "- c"], 300, 0, [("m-a", "r"), ("m-b", "r"), ("m-c", "r")]
        ),  # fmt: skip
        Section("Recent work", ["did a thing"], 100),  # no record: never counted
    ]
    text = render("prompt", sections, 1000, items=2)
    assert "objective: x" in text and "next: y" in text  # one record, two lines
    assert "- a" in text and "- b" not in text and "- c" not in text
    assert "did a thing" in text
    assert "Left out: 2 from memories (budget)" in text
    assert render("prompt", sections, 1000) == render("prompt", sections, 1000, items=50)


def test_the_settings_are_checked_like_every_other(conn, capsys):
    assert settings.budget(conn, "prompt") == (1300, 12, 0.5)
    assert config(capsys, "packet.tool_floor", "1.5") == 1
    assert config(capsys, "packet.prompt_items", "0") == 1
    assert config(capsys, "packet.failure_floor", "1") == 0
    assert settings.budget(conn, "failure") == (200, 3, 1.0)


def test_a_prompt_packet_lists_at_most_its_items_and_only_what_clears_its_floor(
    conn, enabled, repo, capsys
):
    for n, words in enumerate(("quorum leader election", "quorum leader", "quorum")):
        remember(conn, enabled, f"Raft note {n}: the {words} timeout is 300 ms")
    for n in range(30):  # the rarer words weigh more against these
        remember(conn, enabled, f"Unrelated note {n} about lunch and the coffee machine")
    prompt = payload("claude-code", "UserPromptSubmit", cwd=str(repo), session_id="p1",
                     prompt="what is the quorum leader election timeout?")  # fmt: skip
    everything = listed(context_of(hook("UserPromptSubmit", prompt)))
    assert len(everything) >= 2, everything
    assert config(capsys, "packet.prompt_items", "1") == 0
    text = context_of(hook("UserPromptSubmit", {**prompt, "session_id": "p2"}))
    assert listed(text) == everything[:1]
    assert f"Left out: {len(everything) - 1} from relevant memories" in text
    assert config(capsys, "packet.prompt_items", "12") == 0
    assert config(capsys, "packet.prompt_floor", "0.9") == 0
    strict = listed(context_of(hook("UserPromptSubmit", {**prompt, "session_id": "p3"})))
    assert strict and strict[0] == everything[0] and len(strict) < len(everything)


def test_before_an_edit_the_floor_keeps_the_file_and_leaves_folders_far_above(
    conn, enabled, repo, capsys
):
    own = remember(conn, enabled, "core.py: run() is not reentrant", type="warning",
                   scope="file", target="src/pkg/core.py")  # fmt: skip
    folder = remember(conn, enabled, "pkg: everything here is sync", type="warning",
                      scope="directory", target="src/pkg")  # fmt: skip
    above = remember(conn, enabled, "src: no prints, use the logger", type="convention",
                     scope="directory", target="src")  # fmt: skip
    ids = [m.id for m in (own, folder, above)]
    first = context(before_edit(repo, session="t1"))
    assert [i for i in ids if i in first] == ids
    assert config(capsys, "packet.tool_floor", "0.5") == 0
    half = context(before_edit(repo, session="t2"))
    assert own.id in half and folder.id in half and above.id not in half
    assert config(capsys, "packet.tool_floor", "1") == 0
    whole = context(before_edit(repo, session="t3"))
    assert own.id in whole and folder.id not in whole
    assert config(capsys, "packet.tool_floor", "0") == 0
    assert config(capsys, "packet.tool_items", "1") == 0
    one = context(before_edit(repo, session="t4"))
    assert own.id in one and folder.id not in one and above.id not in one


def test_after_a_failure_a_memory_naming_only_its_words_stays_below_a_strict_floor(
    conn, enabled, repo, capsys
):
    words = remember(conn, enabled, "fatal missing header foo: install libfoo-dev first",
                     type="lesson")  # fmt: skip
    named = remember(conn, enabled, "requests_mock comes with the dev extras", type="lesson")
    said = fail("claude-code", repo, "f1", "make", "fatal: missing header foo.h")
    assert said is not None and words.id in said  # by the error's words: it has no name
    assert named.id in fail("claude-code", repo, "f2", "pytest", TRACE.format(n=1))
    assert config(capsys, "packet.failure_floor", "1") == 0
    strict = fail("claude-code", repo, "f3", "make", "fatal: missing header foo.h")
    assert strict is not None and "failed the same way" in strict  # the same error: 1
    assert words.id not in strict
    assert named.id in fail("claude-code", repo, "f4", "pytest", TRACE.format(n=2))


def test_a_strict_session_start_keeps_the_handoff_and_leaves_older_context(
    conn, enabled, repo, capsys
):
    remember(conn, enabled, "We chose SQLite over Postgres for the local store", type="decision")
    checkpoints.create(conn, enabled, {"objective": "Ship v1", "next_action": "tag the release"})
    start = payload("claude-code", "SessionStart", cwd=str(repo), session_id="s-old")
    hook("SessionStart", start)
    hook("SessionEnd", payload("claude-code", "SessionEnd", cwd=str(repo), session_id="s-old"))
    again = payload("claude-code", "SessionStart", cwd=str(repo), session_id="s-new")
    full = context_of(hook("SessionStart", again))
    assert "tag the release" in full and "SQLite over Postgres" in full
    assert config(capsys, "packet.session_start_floor", "0.8") == 0
    strict = context_of(hook("SessionStart", {**again, "session_id": "s-newer"}))
    assert "tag the release" in strict and "SQLite over Postgres" not in strict


@pytest.mark.parametrize("hook_name", ["session_start", "prompt", "tool", "failure"])
def test_every_hook_has_its_three_settings_documented(hook_name):
    for part in ("tokens", "items", "floor"):
        assert f"packet.{hook_name}_{part}" in settings.HELP
