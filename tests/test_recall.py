"""Ranking behaviour on small hand-made fixtures (lexical path; no model needed)."""

from __future__ import annotations

import math
import time

import apsw
import pytest

from waymark.base import clock
from waymark.errors import InvalidArgument
from waymark.memories import links, store
from waymark.memories.draft import make_draft
from waymark.recall import fusion
from waymark.recall import lexical as fts
from waymark.recall import ranked as recall
from waymark.storage import connection as db
from waymark.storage.events import count_use


def add(conn, project, content, **fields):
    fields.setdefault("type", "note")
    return store.remember(conn, project, make_draft(project, content=content, **fields)).memory


def top(conn, project, query, **kw):
    return [h.memory.id for h in recall.recall(conn, project, query, **kw)]


def test_the_matching_memory_ranks_first(conn, project):
    add(conn, project, "The CI pipeline runs on GitHub Actions")
    hit = add(conn, project, "Payments are retried three times with exponential backoff")
    add(conn, project, "Use black for formatting")
    assert top(conn, project, "how are payments retried?")[0] == hit.id


def test_a_superseded_record_never_outranks_its_successor(conn, project):
    old = add(conn, project, "Deploy with the deploy.sh script on the bastion host, deploy deploy")
    new = store.supersede(
        conn,
        project,
        old.id,
        make_draft(project, type="note", content="Deploy through the CD pipeline"),
    ).memory
    ranked = top(conn, project, "how do we deploy")
    assert ranked == [new.id]
    with_inactive = top(conn, project, "how do we deploy", include_inactive=True)
    assert with_inactive.index(new.id) < with_inactive.index(old.id)


def test_a_file_scoped_warning_rises_when_that_file_is_named(conn, project):
    generic = add(
        conn, project, "Warning: the core module is fragile; core tests are slow", type="warning"
    )
    scoped = add(
        conn,
        project,
        "Never call run() twice",
        type="warning",
        scope="file",
        target="src/pkg/core.py",
    )
    ranked = top(conn, project, "edit src/pkg/core.py to add a flag")
    assert ranked[0] == scoped.id and generic.id in ranked
    by_param = top(conn, project, "add a flag", paths=["src/pkg/core.py"])
    assert by_param[0] == scoped.id


def test_a_directory_memory_rises_for_a_file_below_it(conn, project):
    d = add(conn, project, "Everything under src is typed", scope="directory", target="src")
    add(conn, project, "Typed code is good")
    assert top(conn, project, "change src/pkg/core.py typed")[0] == d.id


def test_older_memories_decay_but_decisions_and_pins_do_not(conn, project):
    now = time.time()
    old = add(conn, project, "Cache invalidation uses the event bus")
    new = add(conn, project, "Cache invalidation uses the event bus, see notes")
    conn.execute(
        "UPDATE memories SET event_time = '2020-01-01T00:00:00.000Z' WHERE id = ?", (old.id,)
    )
    hits = {h.memory.id: h for h in recall.recall(conn, project, "cache invalidation", now=now)}
    assert (
        hits[old.id].explain["multipliers"]["recency"]
        < hits[new.id].explain["multipliers"]["recency"]
    )
    decision = add(conn, project, "Cache decision: event bus", type="decision")
    conn.execute(
        "UPDATE memories SET event_time = '2020-01-01T00:00:00.000Z' WHERE id = ?", (decision.id,)
    )
    hits = {h.memory.id: h for h in recall.recall(conn, project, "cache event bus", now=now)}
    assert hits[decision.id].explain["multipliers"]["recency"] == 1.0


def test_explain_fields_add_up(conn, project):
    add(conn, project, "Retry policy for payments", priority=3, pinned=True, tags=["pay"])
    add(conn, project, "Payments go through Stripe", tags=["pay"])
    for hit in recall.recall(conn, project, "payments retry"):
        ex = hit.explain
        assert math.isclose(ex["fused"], sum(t["part"] for t in ex["tiers"].values()), rel_tol=1e-9)
        for tier in ex["tiers"].values():
            assert 0.0 <= tier["norm"] <= 1.0
        product = ex["fused"]
        for value in ex["multipliers"].values():
            product *= value
        assert math.isclose(product, hit.score, rel_tol=1e-9)
        assert set(ex["multipliers"]) >= {"recency", "use", "priority", "scope"}


def test_expired_archived_and_erased_records_never_rank(conn, project):
    expired = add(conn, project, "Freeze on the payments service", valid_until="2020-01-01")
    archived = add(conn, project, "Payments service runs on host A")
    store.archive(conn, project, archived.id)
    erased = add(conn, project, "Payments service password rotation")
    store.erase(conn, project, erased.id, reason="x")
    alive = add(conn, project, "Payments service owner is the core team")
    assert top(conn, project, "payments service") == [alive.id]
    assert expired.id in top(conn, project, "payments service", include_inactive=True)


def test_recall_is_read_only_and_order_independent(conn, project):
    for i in range(20):
        add(conn, project, f"note {i} about topic {'alpha' if i % 2 else 'beta'} and gamma")
    before = conn.total_changes()
    first = [top(conn, project, q) for q in ("alpha", "beta gamma", "gamma")]
    second = [top(conn, project, q) for q in ("gamma", "beta gamma", "alpha")][::-1]
    assert first == second
    assert conn.total_changes() == before


def test_use_is_bounded_so_a_generic_record_never_outranks_a_relevant_one(conn, project):
    generic = add(conn, project, "General project notes about many things and the database")
    relevant = add(conn, project, "Database migrations run with alembic upgrade head")
    for _ in range(500):
        mark_used(conn, [generic.id])
    ranked = top(conn, project, "how do database migrations run")
    assert ranked.index(relevant.id) < ranked.index(generic.id)


def test_a_typo_is_repaired_by_the_fuzzy_tier(conn, project):
    hit = add(conn, project, "The reconciliation job runs nightly")
    add(conn, project, "Unrelated text about lunch")
    hits = recall.recall(conn, project, "when does reconcilation happen")
    assert hits[0].memory.id == hit.id and "fuzzy" in hits[0].explain["tiers"]


def test_linked_and_same_tag_memories_come_along_one_hop(conn, project):
    cause = add(conn, project, "Outage on 3 May: connection pool exhausted", type="incident")
    fix = add(conn, project, "Raised the pool size to 50 and added a timeout", type="solution")
    links.relate(conn, project, fix.id, cause.id, "solves")
    tagged = add(conn, project, "Pool metrics dashboard lives in Grafana", tags=["pool"])
    add(conn, project, "Pool sizing rule: twice the worker count", tags=["pool"])
    ranked = top(conn, project, "outage connection exhausted", limit=10)
    assert ranked[0] == cause.id and fix.id in ranked
    hits = recall.recall(conn, project, "sizing rule twice worker")
    assert tagged.id in [h.memory.id for h in hits]


def test_global_memories_are_recalled_in_every_project(conn, project):
    g = add(
        conn, project, "I prefer descriptive commit messages", scope="global", type="preference"
    )
    assert top(conn, project, "commit messages") == [g.id]


def test_semantic_neighbours_from_the_caller_are_fused(conn, project):
    a = add(conn, project, "alpha text")
    b = add(conn, project, "beta text")
    rowid = conn.execute("SELECT rowid FROM memories WHERE id = ?", (b.id,)).fetchone()[0]
    hits = recall.recall(conn, project, "zzz unrelated words", semantic=[(rowid, 0.9)])
    assert [h.memory.id for h in hits] == [b.id] and "semantic" in hits[0].explain["tiers"]
    assert a.id not in [h.memory.id for h in hits]


def rowid_of(conn, memory):
    return conn.execute("SELECT rowid FROM memories WHERE id = ?", (memory.id,)).fetchone()[0]


def test_each_tier_is_scaled_to_its_own_candidate_pool():
    full = [(1, 10.0), (2, 5.0), (3, 2.0)]
    assert fusion.normalise(full, cap=3) == [1.0, 0.375, 0.0]  # the cap was hit: last is 0
    assert fusion.normalise(full, cap=100) == [1.0, 0.5, 0.2]  # it was not: 0 is no match
    assert fusion.normalise([(1, 4.0), (2, 4.0)], cap=2) == [1.0, 1.0]
    assert fusion.normalise([(1, 0.9), (2, 1.7)], cap=None) == [0.9, 1.0]  # already 0-1
    assert fusion.normalise([], cap=10) == []


def test_a_decisive_keyword_match_is_not_outvoted_by_middling_neighbours(conn, project):
    exact = add(conn, project, "The flux capacitor needs 1.21 gigawatts")
    vague = add(conn, project, "Power requirements were discussed in the meeting")
    fillers = [
        add(conn, project, f"Unrelated filler note number {i} on topic {i}") for i in range(30)
    ]
    # The caller's neighbours put the vague note first and the exact one far down. Rank
    # fusion (k = 60) let that outvote the only memory naming the flux capacitor.
    near = [(rowid_of(conn, vague), 0.62)]
    near += [(rowid_of(conn, m), 0.6 - 0.005 * i) for i, m in enumerate(fillers)]
    near.append((rowid_of(conn, exact), 0.40))
    ranked = top(conn, project, "flux capacitor power", semantic=near)
    assert ranked[0] == exact.id


needs_fts5_tokenizer = pytest.mark.skipif(
    not hasattr(apsw.Connection, "fts5_tokenizer"), reason="APSW 3.47+ runs FTS5 tokenizers"
)


@needs_fts5_tokenizer
def test_words_of_the_top_hits_find_a_memory_phrased_unlike_the_query(conn, project):
    add(conn, project, "We went camping at Lake Tahoe and roasted marshmallows at night")
    later = add(conn, project, "Tahoe marshmallows by the fire were the best part of summer")
    for i in range(12):
        add(conn, project, f"Sprint {i} retro: the build queue was slow on day {i}")
    hits = recall.recall(conn, project, "camping trip")
    found = {h.memory.id: h for h in hits}
    assert later.id in found and "expansion" in found[later.id].explain["tiers"]
    off = recall.Settings(expansion_weight=0.0)
    assert later.id not in top(conn, project, "camping trip", settings=off)


@needs_fts5_tokenizer
def test_a_long_query_is_searched_by_its_rarest_words(conn, project):
    add(conn, project, "Release notes mention the zebra crossing")
    for i in range(6):
        add(conn, project, f"Deploy step {i} runs the migrations")
    # quokka is in no memory: it can match nothing, so it goes first.
    expr = fts.focused_expression(conn, "deploy zebra quokka", keep=2)
    assert expr == '"deploy" OR "zebra"'
    assert fts.focused_expression(conn, "deploy zebra", keep=2) == fts.match_expression(
        "deploy zebra"
    )


def test_expansion_is_skipped_when_apsw_cannot_tokenize():
    assert fts.expansion_expression(object(), "camping trip", ["We went camping"]) is None


def test_scoring_stops_early_without_changing_the_answer(conn, project, monkeypatch):
    for i in range(70):
        add(
            conn,
            project,
            f"Cache note {i}: eviction runs every {i} minutes" + " cache" * (i % 4),
            priority=(i * 7) % 21 - 10,
            pinned=i % 9 == 0,
        )
    queries = ["cache eviction", "cache minutes 42", "eviction"]
    early = [top(conn, project, q, limit=5) for q in queries]
    monkeypatch.setattr(
        fusion, "ceiling", lambda named, s, branch=None, dated=None: math.inf
    )  # score every candidate
    assert [top(conn, project, q, limit=5) for q in queries] == early


def test_use_counts_belong_to_their_own_memory(conn, project):
    used = add(conn, project, "Cache warm-up runs at boot")
    other = add(conn, project, "Cache size is 2 GB")
    mark_used(conn, [used.id])
    hits = {h.memory.id: h for h in recall.recall(conn, project, "cache")}
    assert hits[used.id].explain["multipliers"]["use"] > 1.0
    assert hits[other.id].explain["multipliers"]["use"] == 1.0


def test_only_an_exact_shared_tag_brings_a_memory_along(conn, project):
    add(conn, project, "Invoice totals are rounded half-even", tags=["pay", 'say"hi"'])
    exact = add(conn, project, "Stripe webhooks retry for three days", tags=["pay"])
    partial = add(conn, project, "Buy now, settle next month", tags=["pay-later"])
    quoted = add(conn, project, "Greeting copy lives in the locale files", tags=['say"hi"'])
    ranked = top(conn, project, "invoice totals rounding")
    assert exact.id in ranked and quoted.id in ranked and partial.id not in ranked


def test_filters_by_type_and_tag(conn, project):
    d = add(conn, project, "queue choice: rabbit", type="decision", tags=["queue"])
    add(conn, project, "queue note: rabbit is slow", type="note", tags=["queue"])
    assert top(conn, project, "rabbit queue", types=["decision"]) == [d.id]
    assert len(top(conn, project, "rabbit queue", tags=["queue"])) == 2


@pytest.mark.parametrize(
    "query",
    [
        "?!.,;",
        "a" * 100_000,
        'NEAR("x" "y") AND OR NOT *',
        '"unbalanced',
        "caf\udce9 bytes",
        "emoji 🚀🔥 deploy",
        "col:title ^start",
        "x" + " y" * 50_000,
    ],
)
def test_hostile_queries_never_raise(conn, project, query):  # an empty one is refused: below
    add(conn, project, "deploy the rocket")
    hits = recall.recall(conn, project, query)
    assert isinstance(hits, list)


@pytest.mark.parametrize("limit", [0, 201, True, "5"])
def test_invalid_parameters_are_clear_errors(conn, project, limit):
    with pytest.raises(InvalidArgument):
        recall.recall(conn, project, "x", limit=limit)


def test_the_half_life_setting_changes_decay(conn, project):
    from waymark import settings

    m = add(conn, project, "Old note about the cache layer")
    conn.execute(
        "UPDATE memories SET event_time = '2026-01-01T00:00:00.000Z' WHERE id = ?", (m.id,)
    )
    now = 1_780_000_000.0  # mid 2026
    before = recall.recall(
        conn, project, "cache layer", now=now, settings=recall.settings_for(conn)
    )[0].explain["multipliers"]["recency"]
    settings.set_value(conn, "recall.half_life_days", 7)
    after = recall.recall(
        conn, project, "cache layer", now=now, settings=recall.settings_for(conn)
    )[0].explain["multipliers"]["recency"]
    assert after < before


def test_words_in_a_large_share_of_memories_can_be_left_out_of_the_search(conn, project):
    from waymark.recall import lexical as fts

    for i in range(40):
        add(conn, project, f"common words appear here again {i}")
    add(conn, project, "the zanzibar importer is rare")
    expr = fts.focused_expression(conn, "common zanzibar words appear", max_share=0.05)
    assert expr is not None and '"zanzibar"' in expr and '"appear"' not in expr
    kept = fts.focused_expression(conn, "common words appear", max_share=0.05)
    assert kept is not None and kept.count('"') == 2 * fts.MIN_KEPT  # the rarest still search
    full = fts.focused_expression(conn, "common zanzibar words appear")
    assert full is not None and '"common"' in full


def test_a_large_store_leaves_its_commonest_words_out_of_the_search(conn, project, monkeypatch):
    for i in range(30):
        add(conn, project, f"shared word everywhere {i}")
    assert recall._max_share(conn, recall.DEFAULT) == 1.0  # a small store keeps every word
    monkeypatch.setattr(recall, "LARGE_STORE", 10)  # pretend this store is large
    assert recall._max_share(conn, recall.DEFAULT) == recall.LARGE_STORE_SHARE
    hooks = recall.DEFAULT._replace(query_max_share=0.05)
    assert recall._max_share(conn, hooks) == 0.05  # an explicit setting wins


def test_cached_document_counts_follow_writes_from_any_connection(conn, project):
    from waymark.storage import connection as db

    add(conn, project, "zeppelin maintenance")
    assert fts._frequencies(conn, ["zeppelin", "absent"]) == {"zeppelin": 1}
    other = db.connect()
    try:
        add(other, project, "zeppelin hangar")  # another connection commits
        assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 2}
        assert fts._frequencies(other, ["zeppelin"]) == {"zeppelin": 2}  # and back again
        add(conn, project, "zeppelin crew")  # this connection writes
        assert fts._frequencies(other, ["zeppelin"]) == {"zeppelin": 3}
        assert fts._frequencies(conn, ["zeppelin", "absent"]) == {"zeppelin": 3}
    finally:
        other.close()


def test_the_lexical_tier_filters_through_the_live_index(conn, project):
    add(conn, project, "zeppelin maintenance")
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert "memories_live" in names
    plan = " ".join(
        str(row[3])
        for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT f.rowid FROM memories_fts f"
            " JOIN memories m INDEXED BY memories_live ON m.rowid = f.rowid"
            " WHERE memories_fts MATCH 'zeppelin' AND m.project_id = ? AND m.status = 'active'",
            (project.id,),
        )
    )
    assert "COVERING INDEX memories_live" in plan


def test_cached_document_counts_do_not_keep_a_connection_alive():
    import gc
    import weakref

    from waymark.storage import connection as db

    other = db.connect()
    fts._frequencies(other, ["anything"])
    gone = weakref.ref(other)
    other.close()
    del other
    gc.collect()
    assert gone() is None


def test_file_memories_most_specific_first_then_priority_without_expired(conn, project):
    from waymark.packets import briefing

    here = add(conn, project, "core: keep run() pure", scope="file", target="src/pkg/core.py")
    symbol = add(
        conn, project, "run: no I/O", scope="symbol", target="src/pkg/core.py::run", priority=1
    )
    folder_low = add(conn, project, "pkg: low", scope="directory", target="src/pkg")
    folder_high = add(conn, project, "pkg: high", scope="directory", target="src/pkg", priority=3)
    root = add(conn, project, "repo-wide rule", scope="directory", target=".")
    add(conn, project, "expired", scope="file", target="src/pkg/core.py", valid_until="2001-01-01")
    add(conn, project, "unrelated", scope="file", target="README.md")
    found = [m.id for m in briefing.file_memories(conn, project, ["src/pkg/core.py"])]
    assert found == [symbol.id, here.id, folder_high.id, folder_low.id, root.id]
    assert [m.id for m in briefing.file_memories(conn, project, ["src/pkg/core.py"], 2)] == [
        symbol.id,
        here.id,
    ]
    full = briefing.file_memories(conn, project, ["src/pkg/core.py"], 1)[0]
    assert full.content == "run: no I/O" and full.tags == []  # read whole, not just ranked


def test_path_memories_are_found_through_the_covering_index(conn, project):
    add(conn, project, "core: keep run() pure", scope="file", target="src/pkg/core.py")
    plan = " ".join(
        str(row[3])
        for row in conn.execute(
            "EXPLAIN QUERY PLAN SELECT rowid, scope_target FROM memories WHERE project_id = ?"
            " AND status = 'active' AND scope_target IS NOT NULL AND scope_target IN (?, ?)",
            (project.id, "src/pkg/core.py", "src"),
        )
    )
    assert "COVERING INDEX memories_by_target" in plan


def test_a_posting_budget_drops_the_commonest_words_first(conn, project):
    for n in range(30):
        add(conn, project, f"common words everywhere {n}")
    add(conn, project, "common words and one zebra")
    full = fts.focused_expression(conn, "zebra common words everywhere", keep=12)
    assert set(full.split(" OR ")) == {'"zebra"', '"common"', '"words"', '"everywhere"'}
    budget = fts.focused_expression(conn, "zebra common words everywhere", keep=12, max_rows=40)
    assert budget.split(" OR ") == ['"zebra"', '"everywhere"']  # rarest kept, in query order
    # However tight, the query's two rarest words still search.
    assert fts.focused_expression(conn, "common words", keep=12, max_rows=1).count('"') == 4
    hits = recall.recall(
        conn, project, "zebra common words everywhere", settings=recall.DEFAULT._replace(
            query_max_rows=40))  # fmt: skip
    assert hits[0].memory.content == "common words and one zebra"


def mark_used(conn, memory_ids):
    """A real use of each memory, as a packet or `show` records it."""
    with db.write(conn):
        count_use(conn, memory_ids, clock.now())


def test_a_memory_a_strong_hit_links_to_clears_the_relevance_floor(conn, project):
    from waymark.packets.prompt import prompt_packet
    from waymark.recall.floor import relevant_hits

    cause = add(
        conn, project, "Nightly reconciliation job deadlocks on the ledger table", type="incident"
    )
    fix = add(conn, project, "Take the advisory lock before any row lock", type="solution")
    for i in range(20):
        add(conn, project, f"Unrelated filler note number {i} about topic {i}")
    links.relate(conn, project, fix.id, cause.id, "solves")
    hits = recall.recall(conn, project, "why does the nightly reconciliation job deadlock")
    kept = [h.memory.id for h in relevant_hits(hits)]
    assert kept[0] == cause.id and fix.id in kept
    linked = next(h for h in hits if h.memory.id == fix.id)
    assert linked.explain["linked_from"] == [cause.id]
    text = prompt_packet(
        conn, project, "s-link", "claude-code", "why does the nightly reconciliation job deadlock"
    )
    assert text is not None and "advisory lock" in text


def test_a_weak_fix_found_beside_its_incident_is_kept_with_it(conn, project, monkeypatch):
    """Both found, both among the graph's seeds: the fix gets no graph score from the link
    (seeds never do), but it is named linked, so the floor keeps it beside the incident
    however far below the best it ranks. It was dropped once the relative floor cut it."""
    from waymark.recall import floor

    cause = add(conn, project, "CI fails: port 55432 already allocated, port clash between"
                " runner jobs starting the compose database port", type="incident")  # fmt: skip
    fix = add(conn, project, "Service containers pick a random host port now", type="solution")
    for i in range(20):
        add(conn, project, f"Unrelated filler note number {i} about topic {i}")
    links.relate(conn, project, fix.id, cause.id, "solves")
    hits = recall.recall(conn, project, "port 55432 already allocated in CI")
    assert [h.memory.id for h in hits[:2]] == [cause.id, fix.id]  # both seeds of the graph
    assert hits[1].explain["linked_from"] == [cause.id]
    assert "graph" not in hits[1].explain["tiers"]  # the link adds no score to a seed
    assert hits[0].explain.get("linked_from") == [fix.id]
    monkeypatch.setattr(floor, "RELATIVE_MIN", 0.99)  # the fix alone would never clear it
    assert [h.memory.id for h in floor.relevant_hits(hits)] == [cause.id, fix.id]


def test_a_new_stores_first_memories_reach_the_prompt_packet(conn, project):
    """In one, two or three memories no word is rare, so BM25 weighs every match near zero:
    the floor falls with the store's size, and what the prompt is about is still shown
    (lexical only: no model here) while a prompt about something else shows nothing."""
    from waymark.packets.prompt import prompt_packet

    first = add(conn, project, "Payments retry with exponential backoff; the webhook handler "
                "must stay idempotent.", type="decision")  # fmt: skip
    text = prompt_packet(conn, project, "s-new-1", "claude-code", "why does the webhook retry?")
    assert text is not None and first.id in text
    assert (
        prompt_packet(conn, project, "s-new-2", "claude-code", "add dark mode to settings") is None
    )
    second = add(conn, project, "Never run alembic downgrade against production.", type="warning")
    add(conn, project, "Money is stored as integer cents everywhere.", type="convention")
    text = prompt_packet(
        conn, project, "s-new-3", "claude-code", "can I downgrade the alembic migration?"
    )
    assert text is not None and second.id in text and first.id not in text
    assert (
        prompt_packet(conn, project, "s-new-4", "claude-code", "rename the docker service") is None
    )


def test_the_lexical_floor_falls_only_in_a_small_store():
    from waymark.recall.floor import LEXICAL_MIN, SMALL_STORE, lexical_floor

    floors = [lexical_floor(n) for n in range(1, SMALL_STORE + 1)]
    assert floors[0] == floors[1] == 0.0  # one or two memories: every BM25 weight is zero
    assert all(floors[i] < floors[i + 1] for i in range(1, len(floors) - 1))  # rising
    assert lexical_floor(SMALL_STORE) == lexical_floor(10**6) == lexical_floor(None) == LEXICAL_MIN


@pytest.mark.parametrize("query", ["", "   ", "\x00"])
def test_an_empty_query_is_refused_not_answered_with_an_arbitrary_memory(conn, project, query):
    from waymark.errors import InvalidArgument

    add(conn, project, "The reconciliation job runs nightly")
    with pytest.raises(InvalidArgument, match="recall needs a query"):
        recall.recall(conn, project, query, semantic=[(1, 0.9)])


def test_a_huge_store_scores_only_memories_holding_all_its_rarest_common_words(
    conn, project, monkeypatch
):
    """Past HUGE_STORE memories recall keeps its words within a posting budget; when even the
    rarest words pass it, only the memories holding all of them are scored (AND)."""
    both = [add(conn, project, f"scheduler retry loop number {i}") for i in range(3)]
    for i in range(30):
        add(conn, project, f"scheduler only, entry {i}")
        add(conn, project, f"retry only, entry {i}")
    rare = add(conn, project, "the zanzibar scheduler")
    expr = fts.focused_expression(conn, "scheduler retry", max_rows=20, strict=True)
    assert expr == '"scheduler" AND "retry"'
    # A rare word within the budget keeps the ordinary OR.
    assert fts.focused_expression(conn, "zanzibar retry", max_rows=40, strict=True) == (
        '"zanzibar" OR "retry"'
    )
    assert fts.focused_expression(conn, "scheduler retry", max_rows=20) == (
        '"scheduler" OR "retry"'  # a hook's budget without strict: unchanged
    )
    monkeypatch.setattr(recall, "HUGE_STORE", 10)
    monkeypatch.setattr(recall, "HUGE_STORE_ROWS", 20)
    found = top(conn, project, "scheduler retry", limit=10)
    assert set(found[:3]) == {m.id for m in both}
    assert top(conn, project, "zanzibar")[0] == rare.id
    monkeypatch.setattr(recall, "HUGE_STORE", 10**9)  # a small store searches every word
    assert len(top(conn, project, "scheduler retry", limit=50)) > 30


def test_a_callers_own_budget_narrows_to_and_in_a_huge_store_too(conn, project, monkeypatch):
    from waymark.recall.knobs import DEFAULT

    add(conn, project, "one memory")
    prompt_like = DEFAULT._replace(query_max_rows=20)
    assert recall._max_rows(conn, prompt_like) == (20, False)
    assert recall._max_rows(conn, DEFAULT) == (0, False)
    monkeypatch.setattr(recall, "HUGE_STORE", 0)
    assert recall._max_rows(conn, prompt_like) == (20, True)  # the prompt hook's budget
    assert recall._max_rows(conn, DEFAULT) == (recall.HUGE_STORE_ROWS, True)


def test_term_counts_stay_cached_across_writes_that_leave_the_index_alone(
    conn, project, monkeypatch
):
    from waymark import settings
    from waymark.storage import search

    add(conn, project, "the zeppelin hangar")
    counted: list[str] = []
    real = search.doc_frequency
    monkeypatch.setattr(search, "doc_frequency", lambda c, s: counted.append(s) or real(c, s))
    assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 1}
    settings.set_value(conn, "recall.half_life_days", 30)  # a write, not to the index
    assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 1}
    assert counted == ["zeppelin"]  # counted once
    add(conn, project, "a second zeppelin")  # the index changed: counted again
    assert fts._frequencies(conn, ["zeppelin"]) == {"zeppelin": 2}
    assert counted == ["zeppelin", "zeppelin"]


def test_file_memories_of_a_crowded_file_match_a_ranking_of_every_row(conn, project, monkeypatch):
    """Each target's best rows are read, not every row; the packet's choice is the same,
    with seen ones excluded and expired ones among the best."""
    from waymark.packets import briefing
    from waymark.storage import guidance

    with db.write(conn):
        for i in range(120):
            store.insert(conn, project, make_draft(
                project, type="note", content=f"core note {i}", scope="file",
                target="src/pkg/core.py", priority=i % 7,
                valid_until="2001-01-01" if i % 5 == 0 else None))  # fmt: skip
        for i in range(30):
            store.insert(conn, project, make_draft(
                project, type="note", content=f"package note {i}", scope="directory",
                target="src/pkg", priority=i % 3))  # fmt: skip
    paths = ["src/pkg/core.py"]
    first = briefing.file_memories(conn, project, paths, limit=12)
    seen = {m.id for m in first[:8]}
    limited = briefing.file_memories(conn, project, paths, limit=12, exclude=seen)
    real = guidance.targeted
    monkeypatch.setattr(guidance, "targeted", lambda *a, **k: real(*a[:5]))  # every row
    assert [m.id for m in briefing.file_memories(conn, project, paths, limit=12)] == [
        m.id for m in first]  # fmt: skip
    everything = briefing.file_memories(conn, project, paths, limit=12, exclude=seen)
    assert [m.id for m in limited] == [m.id for m in everything]
    assert not seen & {m.id for m in limited} and len(limited) == 12
