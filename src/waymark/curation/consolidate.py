"""Consolidation, reviewed: groups of near-duplicate or contradicting memories, each
proposed as one candidate that names all its sources. Nothing merges without approval.

Two active memories of the same type and scope are near-duplicates when their words agree
(rapidfuzz token-set ratio at least LEXICAL) or their vectors do (cosine at least VECTOR,
when both are embedded with the current model); groups are the connected sets of such
pairs. Two whose titles agree (ratio at least TITLE) while their contents do not (under
CONTRADICTION) may contradict: the newer is proposed to supersede the older. So do two that
agree but for a number, a version or a named choice ("port 8080" and the newer "port 9090",
"use tabs" and "use spaces"): a correction, never merged away as a duplicate. A merge keeps
the most complete member's text (the longest), every tag and piece of evidence, the highest
priority and any pin, and supersedes every member.

Candidates are found without comparing every pair: two memories are compared when they share
two of their five rarest shared words (a near-copy shares all of the original's) or their
whole title; vectors are compared a block of rows at a time, within a bucket (`bench/curation.py`
times 100k memories; one FTS query per memory took minutes at 10k).
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import combinations

from waymark.projects.resolve import Project
from waymark.storage import connection as db
from waymark.storage import memories as rows
from waymark.storage.connection import Connection
from waymark.storage.memories import Memory

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from typing import Any

LEXICAL = 85
VECTOR = 0.92
TITLE = 90
CONTRADICTION = 60
RARE = 5  # the rarest words of a memory, in pairs, that find its candidates
GROUP_CAP = 50  # memories sharing rare words (or a title) compared pairwise, at most
WINDOW = 5  # in a larger group, the ones written next that each is compared with
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
    texts = [_norm(m.content) for m in memories]
    titles = [_norm(m.title) for m in memories]
    at = {m.id: n for n, m in enumerate(memories)}
    for i, j in sorted(_candidate_pairs(memories, titles)):
        a, b = sorted((memories[i].id, memories[j].id))
        ratio = fuzz.token_set_ratio(texts[i], texts[j])
        if ratio >= LEXICAL:
            changed = corrected(texts[i], texts[j])
            if changed:
                contradictions.append((a, b, f"words agree ({ratio:.0f}%) but {changed}"))
            else:
                edges[(a, b)] = f"words agree ({ratio:.0f}%)"
        elif ratio < CONTRADICTION and fuzz.token_set_ratio(titles[i], titles[j]) >= TITLE:
            contradictions.append((a, b, f"same title, text differs ({ratio:.0f}%)"))
    for (a, b), cosine in _vector_pairs(conn, project, memories).items():
        changed = corrected(texts[at[a]], texts[at[b]])
        if changed:
            if not any(c[:2] == (a, b) for c in contradictions):
                contradictions.append((a, b, f"meaning agrees (cosine {cosine:.2f}) but {changed}"))
        else:
            edges.setdefault((a, b), f"meaning agrees (cosine {cosine:.2f})")
    groups = _connected(edges, written)
    grouped = {i for g in groups for i in g["members"]}
    for a, b, why in contradictions:
        if a in grouped or b in grouped:
            continue  # a duplicate group already proposes what to keep
        older, newer = sorted((a, b), key=written.__getitem__)
        groups.append({"kind": "contradiction", "members": [older, newer], "why": [why]})
    return groups


_TOKEN = re.compile(r"[\w.:/-]+")
CHOICE_WORDS = 3  # a replaced run this short, in otherwise equal text, is a choice


def corrected(a: str, b: str) -> str | None:
    """How `b` corrects `a` when the two say the same but for a number, a version or a named
    choice ("8080 -> 9090"); None when they differ otherwise (or only by what one adds)."""
    from difflib import SequenceMatcher

    left = [t.strip(".,:;") for t in _TOKEN.findall(a)]
    right = [t.strip(".,:;") for t in _TOKEN.findall(b)]
    changes = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, left, right, autojunk=False).get_opcodes():
        if op != "replace":
            continue
        was, now = left[i1:i2], right[j1:j2]
        if len(was) > CHOICE_WORDS or len(now) > CHOICE_WORDS:
            return None  # a rewrite, not a correction
        numeric = any(c.isdigit() for c in " ".join(was + now))
        if numeric or (was and now):
            changes.append(f"{' '.join(was)} -> {' '.join(now)}")
    return "; ".join(changes) if changes else None


def _candidate_pairs(memories: list[Memory], titles: list[str]) -> set[tuple[int, int]]:
    """(i, j), i < j, worth comparing: memories of one bucket (type, scope, agent) that share
    two of their RARE rarest words (among the words another memory has too: a near-copy has
    all of the original's, so the same rarest ones, whatever it adds), or the same title
    (`titles`, normalised). Each such pair of words is a group; a group of more than
    GROUP_CAP pairs each memory with the WINDOW written after it only, so none costs a
    square."""
    words = [set(_WORD.findall((m.title + " " + m.content).casefold())) for m in memories]
    df = Counter(w for ws in words for w in ws)
    # Each shared word's place in the order rarest first: ints sort and hash fast.
    order = {w: n for n, w in enumerate(sorted((w for w, k in df.items() if k > 1),
                                                key=lambda w: (df[w], w)))}  # fmt: skip
    place: dict[tuple[Any, ...], int] = {}
    groups: dict[tuple[int, ...], list[int]] = {}
    titled: dict[tuple[int, str], list[int]] = {}
    for i, ws in enumerate(words):
        where = place.setdefault(_bucket(memories[i]), len(place))
        rare = sorted(order[w] for w in ws if w in order)[:RARE]
        keys: list[tuple[int, ...]] = [*combinations(rare, 2)] or [tuple(rare)]
        for key in keys:
            groups.setdefault((where, *key), []).append(i)
        titled.setdefault((where, titles[i]), []).append(i)
    pairs: set[tuple[int, int]] = set()
    for same in [*groups.values(), *titled.values()]:
        if len(same) < 2:
            continue
        reach = len(same) if len(same) <= GROUP_CAP else WINDOW + 1
        pairs.update(
            (a, b) for n, a in enumerate(same) for b in same[n + 1 : n + reach]
        )  # in write order: a < b
    return pairs


def _vector_pairs(conn: Connection, project: Project, memories: list[Memory]) -> dict:
    """(id, id) -> cosine for same-bucket pairs at VECTOR or above (numpy; else none)."""
    try:
        import numpy as np
    except ImportError:
        return {}
    from waymark.recall.embed import chosen
    from waymark.storage.vectors import get_vectors

    spec = chosen(conn)  # the model recall searches with: vectors of two are never compared
    ids = rows.rowids_of(conn, [m.id for m in memories])
    by_rowid = {ids[m.id]: m for m in memories if m.id in ids}
    found = [(r, blob) for r, _, blob in get_vectors(conn, spec.id, spec.dim, list(by_rowid))]
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
            sims = matrix[start : start + BLOCK] @ matrix[start:].T  # the upper triangle
            for r, c in zip(*np.nonzero(sims >= VECTOR), strict=True):
                i, j = start + int(r), start + int(c)
                if j > i:
                    a, b = sorted((members[i][0], members[j][0]))
                    out[(a, b)] = float(sims[r, c])
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
    whys: dict[str, set[str]] = {}
    for (a, _), why in edges.items():
        whys.setdefault(root(a), set()).add(why)
    out = []
    for top, ids in members.items():
        ordered = sorted(ids, key=written.__getitem__)
        out.append({"kind": "duplicates", "members": ordered, "why": sorted(whys[top])})
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
            fields = _merged(members, group["kind"])
            winner = members[-1] if group["kind"] == "contradiction" else None
            keeps = (
                f"; the newer text wins ({winner.id}): {fields['content'][:160]!r}"
                if winner is not None
                else ""
            )
            row, new = candidates.propose(
                conn,
                project.id,
                kind="consolidation",
                action="supersede",
                sources=group["members"],
                fields=fields,
                reason=f"{len(members)} memories, {group['kind']}: "
                + "; ".join(group["why"])
                + keeps,
                fingerprint="consolidate:" + ",".join(sorted(group["members"])),
                evidence=[],
            )
            group["candidate"], group["new"] = row["id"], new
    return found
