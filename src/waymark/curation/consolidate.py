"""Consolidation, reviewed: groups of near-duplicate or contradicting memories, each
proposed as one candidate that names all its sources. Nothing merges without approval.

Two active memories of the same type and scope are near-duplicates when their words agree
(rapidfuzz token-set ratio at least LEXICAL) or their vectors do (cosine at least VECTOR,
when both are embedded with the current model); groups are the connected sets of such
pairs. Two whose titles agree (ratio at least TITLE) while their contents do not (under
CONTRADICTION) may contradict: the newer is proposed to supersede the older. A merge keeps
the most complete member's text (the longest), every tag and piece of evidence, the highest
priority and any pin, and supersedes every member.

Candidates are found without comparing every pair: two memories are compared when they share
at least two of their RARE_WORDS rarest words (a near-copy shares all of the original's), or
their whole title; vectors are compared a block of rows at a time, within a bucket. 100k
memories take seconds (`bench/curation.py`); one FTS query per memory took minutes.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import memories as rows
from waymark.storage.connection import Connection
from waymark.storage.memories import Memory

LEXICAL = 85
VECTOR = 0.92
TITLE = 90
CONTRADICTION = 60
CANDIDATES = 10  # the most similar others compared with each memory
RARE_WORDS = 6  # the words of a memory that find its candidates
POSTING_CAP = 200  # a word shared by more memories than this finds none
TITLE_GROUP_CAP = 50  # memories with one title compared pairwise, at most
BLOCK = 1024  # rows of a bucket's vectors multiplied at a time
_WORD = re.compile(r"\w+")


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _bucket(m: Memory) -> tuple[str, str, str | None, str | None]:
    """Memories that may merge: same type, scope and agent (an agent's memory never merges
    into everyone's; it shadows it)."""
    return (m.type, m.scope_type, m.scope_target, m.agent)


def find(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """The groups: [{kind: duplicates | contradiction, members: [ids, oldest first], why}]."""
    from rapidfuzz import fuzz

    memories = rows.active_memories(conn, project.id)  # in the order they were written
    written = {m.id: n for n, m in enumerate(memories)}  # a clock tie cannot reorder these
    edges: dict[tuple[str, str], str] = {}
    contradictions: list[tuple[str, str, str]] = []
    for i, j in sorted(_candidate_pairs(memories)):
        m, other = memories[i], memories[j]
        if _bucket(other) != _bucket(m):
            continue
        a, b = sorted((m.id, other.id))
        ratio = fuzz.token_set_ratio(_norm(m.content), _norm(other.content))
        if ratio >= LEXICAL:
            edges[(a, b)] = f"words agree ({ratio:.0f}%)"
        elif (
            fuzz.token_set_ratio(_norm(m.title), _norm(other.title)) >= TITLE
            and ratio < CONTRADICTION
        ):
            contradictions.append((a, b, f"same title, text differs ({ratio:.0f}%)"))
    for (a, b), cosine in _vector_pairs(conn, project, memories).items():
        edges.setdefault((a, b), f"meaning agrees (cosine {cosine:.2f})")
    groups = _connected(edges, written)
    grouped = {i for g in groups for i in g["members"]}
    for a, b, why in contradictions:
        if a in grouped or b in grouped:
            continue  # a duplicate group already proposes what to keep
        older, newer = sorted((a, b), key=written.__getitem__)
        groups.append({"kind": "contradiction", "members": [older, newer], "why": [why]})
    return groups


def _candidate_pairs(memories: list[Memory]) -> set[tuple[int, int]]:
    """(i, j), i < j, worth comparing: sharing two of their RARE_WORDS rarest words (one,
    for a memory that has only one), up to CANDIDATES for each; or the same title."""
    words = [set(_WORD.findall((m.title + " " + m.content).casefold())) for m in memories]
    df = Counter(w for ws in words for w in ws)
    rare = [sorted(ws, key=lambda w: (df[w], w))[:RARE_WORDS] for ws in words]
    postings: dict[str, list[int]] = {}
    for i, ws in enumerate(rare):
        for w in ws:
            postings.setdefault(w, []).append(i)
    pairs: set[tuple[int, int]] = set()
    for i, ws in enumerate(rare):
        shared: Counter[int] = Counter()
        for w in ws:
            posting = postings[w]
            if len(posting) <= POSTING_CAP:
                shared.update(posting)
        shared.pop(i, None)
        need = min(2, len(ws))
        best = [j for j, n in shared.most_common(CANDIDATES) if n >= need]
        pairs.update((min(i, j), max(i, j)) for j in best)
    titled: dict[str, list[int]] = {}
    for i, m in enumerate(memories):
        titled.setdefault(_norm(m.title), []).append(i)
    for same in titled.values():
        same = same[:TITLE_GROUP_CAP]
        pairs.update((a, b) for n, a in enumerate(same) for b in same[n + 1 :])
    return pairs


def _vector_pairs(conn: Connection, project: Project, memories: list[Memory]) -> dict:
    """(id, id) -> cosine for same-bucket pairs at VECTOR or above (numpy; else none)."""
    try:
        import numpy as np
    except ImportError:
        return {}
    from waymark.recall.embed import MODEL_DIM, MODEL_ID
    from waymark.storage.vectors import get_vectors

    ids = rows.rowids_of(conn, [m.id for m in memories])
    by_rowid = {ids[m.id]: m for m in memories if m.id in ids}
    found = [(r, blob) for r, _, blob in get_vectors(conn, MODEL_ID, MODEL_DIM, list(by_rowid))]
    buckets: dict[tuple, list[tuple[str, Any]]] = {}
    for rowid, blob in found:
        m = by_rowid[rowid]
        buckets.setdefault(_bucket(m), []).append((m.id, np.frombuffer(blob, dtype="<f4")))
    out = {}
    for members in buckets.values():
        if len(members) < 2:
            continue
        matrix = np.stack([v for _, v in members])
        matrix = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        for start in range(0, len(members), BLOCK):  # a block of rows: bounded memory
            sims = matrix[start : start + BLOCK] @ matrix.T
            for r, j in zip(*np.nonzero(sims >= VECTOR), strict=True):
                i = start + int(r)
                if j > i:
                    a, b = sorted((members[i][0], members[int(j)][0]))
                    out[(a, b)] = float(sims[r, j])
    return out


def _connected(edges: dict[tuple[str, str], str], written: dict[str, int]) -> list[dict]:
    """The connected sets of `edges`, each oldest first (`written`: the order of writing)."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]  # halve the path as it is walked
            x = parent[x]
        return x

    for a, b in edges:
        parent.setdefault(a, a)
        parent.setdefault(b, b)
        parent[root(a)] = root(b)
    members: dict[str, list[str]] = {}
    for x in parent:
        members.setdefault(root(x), []).append(x)
    out = []
    for ids in members.values():
        ordered = sorted(ids, key=written.__getitem__)
        why = sorted({w for (a, b), w in edges.items() if a in ids})
        out.append({"kind": "duplicates", "members": ordered, "why": why})
    out.sort(key=lambda g: written[g["members"][0]])
    return out


def _merged(members: list[Memory], kind: str) -> dict[str, Any]:
    """The proposed memory: for duplicates the most complete member's text, for a
    contradiction the newer one's; tags, evidence, priority and pin from all."""
    base = members[-1] if kind == "contradiction" else max(members, key=lambda m: len(m.content))
    tags = list(dict.fromkeys(t for m in members for t in m.tags))
    evidence = list({repr(sorted(e.items())): e for m in members for e in m.evidence}.values())
    return {
        "type": base.type,
        "title": base.title,
        "content": base.content,
        "scope": base.scope_type,
        "target": base.scope_target,
        "tags": tags[:32],
        "evidence": evidence[:20],
        "priority": max(m.priority for m in members),
        "pinned": any(m.pinned for m in members),
        **({"agent": base.agent} if base.agent else {}),
    }


def propose(conn: Connection, project: Project) -> list[dict[str, Any]]:
    """Queue each group as a consolidation candidate (one transaction); the groups, each
    with its candidate id and whether it is new."""
    from waymark.curation import candidates
    from waymark.memories import store

    found = find(conn, project)
    with db.write(conn):
        for group in found:
            members = [store.get(conn, i) for i in group["members"]]
            row, new = candidates.propose(
                conn,
                project.id,
                kind="consolidation",
                action="supersede",
                sources=group["members"],
                fields=_merged(members, group["kind"]),
                reason=f"{len(members)} memories: " + "; ".join(group["why"]),
                fingerprint="consolidate:" + ",".join(sorted(group["members"])),
                evidence=[],
            )
            group["candidate"], group["new"] = row["id"], new
    return found
