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
