"""What each MCP tool returns, typed: the SDK publishes these as the tools' output schemas
and checks every result against them.

Open where the library's answer is open (a recall result at `full` detail carries the whole
record; `explain` is a score breakdown), closed everywhere else.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, with_config
from typing_extensions import NotRequired, TypedDict

OPEN = ConfigDict(extra="allow")


class Queued(TypedDict):
    """A write the confirm capture mode sent to the review queue."""

    id: str
    action: str
    status: str


class Memory(TypedDict):
    """One memory record, whole."""

    id: str
    project_id: str | None
    type: str
    title: str
    content: str
    scope_type: str
    scope_target: str | None
    tags: list[str]
    priority: int
    pinned: bool
    status: str
    actor: str
    client: str | None
    session_id: str | None
    source_ref: str | None
    evidence: list[dict[str, Any]]
    git_branch: str | None
    valid_until: str | None
    event_time: str
    created_at: str
    updated_at: str
    content_hash: str
    key: str | None
    queued: NotRequired[Queued]  # `forget` in capture confirm: the archive waits for review
    backups_holding: NotRequired[list[str]]  # `forget` erase: backups that still hold it
    backups: NotRequired[str]  # what to do about them (only the user rewrites backups)
    supersedes: str | None
    superseded_by: str | None
    erased_reason: str | None
    agent: str | None


@with_config(OPEN)
class MemoryView(TypedDict):
    """A memory at the detail asked for: compact (id, type, title, age, scope), summary (and
    content cut to 300 characters, tags, evidence) or full (every field of the record)."""

    id: str
    type: str
    title: str
    age: str
    scope: NotRequired[str]
    agent: NotRequired[str | None]
    content: NotRequired[str]
    tags: NotRequired[list[str]]
    evidence: NotRequired[list[dict[str, Any]]]
    evidence_state: NotRequired[dict[str, Any]]  # path evidence: FRESH or RECHECK_REQUIRED
    observation: NotRequired[dict[str, Any]]  # the latest, checked against its files now
    score: NotRequired[float]
    explain: NotRequired[dict[str, Any]]
    tokens: NotRequired[int]  # what this view costs in the answer
    full_tokens: NotRequired[int]  # what the full record would cost
    author: NotRequired[str]  # `team`: who sent it to the team store
    outcome: NotRequired[dict[str, Any]]  # what became of its change in git: held, reverted
    status: NotRequired[str]  # browsing inactive ones too: archived, superseded


class Project(TypedDict):
    id: str
    kind: str
    name: str | None
    root: str | None
    tree: str | None
    how: str


class ActiveCheckpoint(TypedDict):
    """The active checkpoint as a session should see it: next action first."""

    id: str
    revision_id: str
    updated_at: str
    next_action: str | None
    git_branch: NotRequired[str | None]  # the branch its revision was saved on
    text: str
    lessons: list[dict[str, Any]]
    evidence_state: str
    evidence: list[dict[str, Any]]


class Link(TypedDict):
    src: str
    dst: str
    kind: str
    created_at: str


class Recalled(TypedDict):
    project: Project
    semantic: bool
    checkpoint: NotRequired[ActiveCheckpoint | None]
    rules: NotRequired[list[MemoryView]]
    file_memories: NotRequired[list[MemoryView]]
    results: list[MemoryView]
    tokens: int  # the whole answer's estimated size
    omitted: NotRequired[str]
    omitted_counts: NotRequired[dict[str, int]]
    omitted_ids: NotRequired[dict[str, list[str]]]  # the ids of what the budget left out
    packets: NotRequired[list[dict[str, Any]]]  # `packet`: past injections, line by line
    map: NotRequired[dict[str, Any]]  # `map`: a code map answer, cited with its snapshot
    notes: NotRequired[list[dict[str, Any]]]  # the repository's note sections, cited
    dbt: NotRequired[list[str]]  # dbt models the query names: downstream, failing tests
    below_relevance_floor: NotRequired[int]  # ranked, too weak to show
    meaning: NotRequired[str]  # why meaning was not used: words only
    team: NotRequired[str]  # `team`: the shared project's key in the team store
    has_more: NotRequired[bool]  # no query: a page newest first
    next_offset: NotRequired[int | None]
    chain: NotRequired[list[Memory]]  # `id`: the memory's supersession chain, newest first
    links: NotRequired[list[Link]]
    observations: NotRequired[list[dict[str, Any]]]  # newest first, each checked now
    observations_total: NotRequired[int]
    output: NotRequired[dict[str, Any]]  # `id` named a trimmed tool output


class Saved(TypedDict):
    memory: NotRequired[Memory]  # absent when the write was queued for review
    queued: NotRequired[Queued]  # capture confirm: `waymark review ID` decides
    flags: NotRequired[list[str]]  # queued because the text reads as an instruction to the agent
    created: bool
    similar: list[str]
    redactions: int
    status: NotRequired[str]  # an edit: applied or already_applied
    observation: NotRequired[dict[str, Any]]  # `observe`: the observation as stored, checked
    links: NotRequired[list[dict[str, Any]]]  # `links`: {dst, kind, created} each
    links_not_made: NotRequired[str]  # the write was held for review: nothing to link from


class Revision(TypedDict):
    id: str
    checkpoint_id: str
    seq: int
    operation: str
    status: str
    body: dict[str, Any]
    tokens: int
    actor: str
    client: str | None
    session_id: str | None
    created_at: str
    git_branch: NotRequired[str | None]


class Checkpoint(TypedDict):
    id: str
    project_id: str
    status: str
    revision: Revision
    created_at: str
    updated_at: str


class CheckpointSaved(TypedDict):
    """A checkpoint operation's answer: the checkpoint and the revision it wrote; or, for
    record_event, the memory the event is kept as."""

    checkpoint: NotRequired[Checkpoint]
    saved_revision_id: NotRequired[str]
    tokens: NotRequired[int]
    memory: NotRequired[Memory]
    created: NotRequired[bool]
    queued: NotRequired[Queued]  # record_event whose summary reads as an instruction: held
    flags: NotRequired[list[str]]
    team: NotRequired[dict[str, Any]]  # {held_back: [fields], said}: kept off the team


class Status(TypedDict):
    project: Project
    data_home: str
    database: str
    database_bytes: int
    schema_version: int
    memories: dict[str, dict[str, int]]
    global_memories: int
    checkpoints: dict[str, int]
    semantic: dict[str, Any]
    handoff: dict[str, list[dict[str, str]]]
    capture: dict[str, Any]
    candidates: dict[str, Any]
