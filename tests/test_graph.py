"""The memory graph around one memory (`memories.graph`): links, revisions, the files
memories are about, a few steps out and bounded."""

from __future__ import annotations

import pytest

from waymark.errors import InvalidArgument, NotFound
from waymark.memories import graph, links, store
from waymark.memories.draft import make_draft


def add(conn, project, content, **fields):
    fields.setdefault("type", "note")
    return store.remember(conn, project, make_draft(project, content=content, **fields)).memory


@pytest.fixture
def web(conn, project, repo):
    (repo / "pay.py").write_text("def charge():\n    return 1\n")
    made = {
        "cents": add(conn, project, "Money is integer cents", type="decision"),
        "idem": add(conn, project, "charge() must stay idempotent", type="warning",
                    target="pay.py", scope="file"),
        "retry": add(conn, project, "Retry the gateway with backoff", type="lesson",
                     target="pay.py", scope="file"),
        "floats": add(conn, project, "Floats lost a cent in March", type="note"),
        "far": add(conn, project, "Rounding is banker's rounding", type="note"),
        "alone": add(conn, project, "Nothing links here"),
    }  # fmt: skip
    links.relate(conn, project, made["floats"].id, made["cents"].id, "causes")
    links.relate(conn, project, made["cents"].id, made["idem"].id, "related")
    links.relate(conn, project, made["far"].id, made["floats"].id, "related")
    revised = store.supersede(
        conn, project, made["cents"].id,
        make_draft(project, type="decision", content="Money is integer cents, always"),
    ).memory  # fmt: skip
    made["cents2"] = revised
    return made


def test_links_revisions_and_files_a_step_at_a_time(conn, project, web):
    one = graph.neighbourhood(conn, project, web["cents"].id, depth=1)
    ids = {n["id"]: n for n in one["nodes"]}
    assert one["nodes"][0]["id"] == web["cents"].id and one["nodes"][0]["depth"] == 0
    assert web["floats"].id in ids and web["idem"].id in ids  # its links, both ways
    assert web["cents2"].id in ids  # the revision that replaced it
    assert web["far"].id not in ids and "file:pay.py" not in ids  # two steps out
    kinds = {(e["src"], e["dst"], e["kind"]) for e in one["edges"]}
    assert (web["cents2"].id, web["cents"].id, "supersedes") in kinds
    assert (web["floats"].id, web["cents"].id, "causes") in kinds

    two = graph.neighbourhood(conn, project, web["cents"].id, depth=2)
    ids = {n["id"]: n for n in two["nodes"]}
    assert ids[web["far"].id]["depth"] == 2 and ids["file:pay.py"]["depth"] == 2
    assert ids["file:pay.py"]["kind"] == "file" and ids["file:pay.py"]["title"] == "pay.py"
    three = graph.neighbourhood(conn, project, web["cents"].id, depth=3)
    assert web["retry"].id in {n["id"] for n in three["nodes"]}  # about the same file
    assert web["alone"].id not in {n["id"] for n in three["nodes"]}
    assert all(e["src"] in ids or e["dst"] in ids for e in two["edges"])


def test_a_busy_neighbourhood_is_bounded_and_says_how_many_it_left_out(conn, project, web):
    for i in range(12):
        other = add(conn, project, f"Linked note number {i}")
        links.relate(conn, project, web["idem"].id, other.id, "related")
    seen = graph.neighbourhood(conn, project, web["idem"].id, depth=1, most=5)
    assert len(seen["nodes"]) == 5 and seen["left_out"] >= 9
    drawn = {n["id"] for n in seen["nodes"]}
    assert all(e["src"] in drawn and e["dst"] in drawn for e in seen["edges"])


def test_where_to_start_and_what_is_refused(conn, project, web):
    (first, count), *_ = graph.starts(conn, project)
    assert count >= 2 and first.status == "active"
    assert web["cents"].id not in {m.id for m, _ in graph.starts(conn, project)}  # replaced
    with pytest.raises(NotFound):
        graph.neighbourhood(conn, project, "0" * 26)
    with pytest.raises(InvalidArgument):
        graph.neighbourhood(conn, project, web["cents"].id, depth=9)
