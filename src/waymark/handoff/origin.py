"""Who saves: the actor, client, session and branch of a revision (each None when not
known), and the agent (a subagent's id) and its type when a hook knows them. A session that
saves holds the task it saves (`handoff.claims`): another session's live claim is a
conflict. Its own module so that checkpoints and claims both read it."""

from __future__ import annotations

from waymark.base.record import record

Origin = record(
    "Origin",
    "actor client session_id git_branch agent agent_type",
    defaults=("agent", None, None, None, None, None),
)
