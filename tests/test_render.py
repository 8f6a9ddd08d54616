"""Budgeted rendering: one rule for hook packets and the MCP `recall` tool."""

from __future__ import annotations

from waymark.packets.render import Section, render, within


def test_within_takes_items_in_order_until_the_next_does_not_fit():
    assert within(["a", "bb", "c"], 3, len) == (["a", "bb"], 1)
    assert within(["a", "bbbb", "c"], 3, len) == (["a"], 2)  # "c" would fit, but comes later
    assert within([], 0, len) == ([], 0)
    assert within(["abc"], 3, len) == (["abc"], 0)


def test_a_packet_says_how_many_lines_its_budget_left_out():
    lines = [f"- memory line number {i} " + "word " * 20 for i in range(10)]
    text = render("prompt", [Section("Relevant memories", lines, 120)], 1000)
    shown = [line for line in lines if line in text]
    assert shown == lines[: len(shown)] and 0 < len(shown) < 10
    assert f"Left out: {10 - len(shown)} from relevant memories (budget)" in text


def test_a_rule_line_says_its_text_once_when_the_title_is_its_beginning():
    from waymark.packets.lines import said_once

    long = "Always run the migrations in a transaction and never against production " * 2
    cut = long.strip()[:79].rstrip() + "…"
    assert said_once(cut, long) == " ".join(long.split())
    assert said_once("Use ruff", "Use ruff") == "Use ruff"
    assert said_once("Use ruff", "Use ruff for lint and format") == "Use ruff for lint and format"
    assert said_once("Lint", "Use ruff for lint and format") == "Lint: Use ruff for lint and format"


def test_a_remembered_long_rule_appears_once_in_the_packet(conn, repo):
    from waymark.memories import store
    from waymark.memories.draft import make_draft
    from waymark.packets import sections
    from waymark.projects.resolve import resolve

    project = resolve(conn, str(repo))
    text = "Never call the billing API from a request handler; queue it on the jobs worker " * 2
    store.remember(conn, project, make_draft(project, type="convention", content=text, pinned=True))
    lines, _, _, _ = sections.rules(conn, project)
    assert lines[0].count("Never call the billing API") == 2  # the text says it twice itself
    assert "…" not in lines[0]
