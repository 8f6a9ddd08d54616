"""A project's history on one axis (`health.timeline`): sessions, checkpoint saves,
decisions and reverts, from what hooks, the CLI and git wrote."""

from __future__ import annotations

import pytest

from test_outcomes import cli, git, worked  # noqa: F401  (a decision reverted in git)
from waymark.base import clock
from waymark.errors import InvalidArgument
from waymark.handoff import checkpoints
from waymark.health.timeline import timeline


def test_sessions_decisions_saves_and_reverts_share_one_axis(conn, enabled, worked, capsys):  # noqa: F811
    cli(capsys, "outcomes", "--refresh")  # git's verdict: the decision's change was reverted
    checkpoints.create(conn, enabled, {"objective": "Charge once", "next_action": "add a test"})
    seen = timeline(conn, enabled, days=7)
    kinds = [e["kind"] for e in seen["events"]]
    assert kinds.count("session") == 2 and kinds.count("decision") == 1
    assert kinds.count("checkpoint") == 1 and kinds.count("revert") == 1
    assert [e["at"] for e in seen["events"]] == sorted(e["at"] for e in seen["events"])
    (revert,) = [e for e in seen["events"] if e["kind"] == "revert"]
    assert revert["id"] == worked["decision"].id and revert["detail"] == worked["revert"]
    (saved,) = [e for e in seen["events"] if e["kind"] == "checkpoint"]
    assert (saved["what"], saved["detail"], saved["next"]) == (
        "create",
        "Charge once",
        "add a test",
    )
    assert seen["counts"] == {"session": 2, "checkpoint": 1, "decision": 1, "revert": 1}
    assert seen["older"] is None and seen["newer"] is None  # all of it, as of now

    earlier = timeline(conn, enabled, days=1, before=clock.ago(2))
    assert earlier["events"] == [] and earlier["newer"] is not None  # a window with nothing
    with pytest.raises(InvalidArgument):
        timeline(conn, enabled, days=3)
