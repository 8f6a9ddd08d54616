"""bench/cache_prefix.py, which the prompt-cache bench and its real-client test read requests
with: what counts as the cache's prefix, and how a break is found and named."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import cache_prefix as cp  # noqa: E402

TOOLS = [{"name": "Bash", "input_schema": {"type": "object"}}]


def anthropic(*messages: dict) -> dict:
    return {"model": "m", "system": [{"type": "text", "text": "You code."}], "tools": TOOLS,
            "messages": list(messages)}  # fmt: skip


def test_a_moved_breakpoint_or_a_text_block_for_a_string_changes_no_cached_byte():
    one = anthropic({"role": "user", "content": [
        {"type": "text", "text": "Fix it.", "cache_control": {"type": "ephemeral"}}]})  # fmt: skip
    two = anthropic({"role": "user", "content": "Fix it."},
                    {"role": "assistant", "content": [{"type": "text", "text": "Done."}]})  # fmt: skip
    (pair,) = cp.pairs([one, two])
    assert pair.appends and pair.kept == 1.0


def test_text_put_before_the_end_is_a_break_named_with_whose_it_was():
    one = anthropic({"role": "user", "content": "Fix it."},
                    {"role": "assistant", "content": "Done."})  # fmt: skip
    packet = '<waymark-memory kind="prompt">x</waymark-memory>'
    two = anthropic({"role": "user", "content": [{"type": "text", "text": "Fix it."},
                                                 {"type": "text", "text": packet}]},
                    {"role": "assistant", "content": "Done."},
                    {"role": "user", "content": "Next."})  # fmt: skip
    (pair,) = cp.pairs([one, two])
    assert not pair.appends and pair.differs_at == "messages[0] (user)"
    assert pair.whose == "waymark" and 0 < pair.kept < 1
    changed_tools = {**one, "tools": [*TOOLS, {"name": "Late"}]}
    (late,) = cp.pairs([one, changed_tools])
    assert late.differs_at == "tools[1]"  # a tool added late: the cache starts over at it
    assert late.whose == "client" and late.kept < 0.5


def test_each_request_is_compared_with_the_last_of_its_own_conversation():
    lead = anthropic({"role": "user", "content": "Fix it."})
    sub = anthropic({"role": "user", "content": "Review it."})
    lead_two = anthropic({"role": "user", "content": "Fix it."},
                         {"role": "assistant", "content": "Done."})  # fmt: skip
    found = cp.pairs([lead, sub, lead_two])
    assert [p.index for p in found] == [2] and found[0].appends
    responses = {"model": "m", "instructions": "You code.", "tools": TOOLS,
                 "input": [{"role": "user", "content": "Fix it."}]}  # fmt: skip
    assert cp.api_of(responses) == "responses" and cp.segments(responses)[0][0] == "instructions"
