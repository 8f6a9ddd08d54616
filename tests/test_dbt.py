"""A dbt project's artifacts as knowledge: a real manifest, run results and source freshness,
built by dbt-core with dbt-duckdb from the fixture project (tests/fixtures/dbt_shop) on a
local DuckDB file, then read by `waymark dbt`, the PreToolUse hook as a process, and recall
(CLI and MCP). The fixture has two failing tests on `orders` (a singular one and a
not_null), a model downstream of it with an exposure, and a source last loaded long ago.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import uuid

import pytest

from conftest import call_tool, git_env
from test_hooks import context_of, hook, payload
from waymark.cli import main
from waymark.knowledge import dbt, lineage
from waymark.projects.resolve import resolve

FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "dbt_shop"
DBT = pathlib.Path(sys.executable).parent / "dbt"
ORDERS = "analytics/models/marts/orders.sql"


def run_dbt(folder: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBT_")}
    env.update(DBT_PROFILES_DIR=str(folder), DBT_SEND_ANONYMOUS_USAGE_STATS="false",
               DO_NOT_TRACK="1", HOME=str(folder.parent), DBT_USE_COLORS="false")  # fmt: skip
    return subprocess.run(
        [str(DBT), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def build(folder: pathlib.Path) -> None:
    """`dbt seed`, `dbt build` (two tests fail: exit 1) and `dbt source freshness`."""
    assert run_dbt(folder, "seed").returncode == 0
    built = run_dbt(folder, "build")
    assert "ERROR=2" in built.stdout, built.stdout[-2000:]
    run_dbt(folder, "source", "freshness")  # the source is stale: exit 1, sources.json written
    for name in ("manifest.json", "run_results.json", "sources.json"):
        assert (folder / "target" / name).is_file(), name


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> pathlib.Path:
    folder = tmp_path_factory.mktemp("dbt") / "analytics"
    shutil.copytree(FIXTURE, folder)
    build(folder)
    return folder


@pytest.fixture
def shop(repo, built) -> pathlib.Path:
    """The repository with the built dbt project in `analytics/`, target/ ignored by git."""
    shutil.copytree(built, repo / "analytics")
    (repo / ".gitignore").write_text("target/\n*.duckdb*\nlogs/\n", encoding="utf-8")
    env = git_env(repo.parent)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "dbt"], check=True, env=env)
    return repo


def cli_json(*args: str, capsys) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_manifest_gives_models_lineage_tests_and_freshness(shop, monkeypatch, capsys):
    monkeypatch.chdir(shop)
    status = cli_json("dbt", capsys=capsys)
    (found,) = status["projects"]
    assert found["root"] == "analytics" and found["name"] == "shop"
    assert sorted(found["read"]) == ["manifest", "results", "sources"]
    assert status["status"]["counts"] == {"exposure": 1, "model": 4, "seed": 2, "source": 1,
                                          "test": 6}  # fmt: skip
    assert status["status"]["failing"] == 2 and status["status"]["stale"] == 1

    up_down = cli_json("dbt", "lineage", "orders", capsys=capsys)
    assert up_down["node"]["path"] == ORDERS and up_down["state"] == "FRESH"
    assert {(n["kind"], n["name"], n["depth"]) for n in up_down["upstream"]} == {
        ("model", "stg_orders", 1), ("model", "stg_customers", 1),
        ("source", "raw_orders", 2), ("seed", "raw_customers", 2),
    }  # fmt: skip
    assert [(n["kind"], n["name"], n["depth"]) for n in up_down["downstream"]] == [
        ("model", "customer_revenue", 1), ("exposure", "revenue_dashboard", 2)]  # fmt: skip
    assert {t["name"]: t["status"] for t in up_down["tests"]} == {
        "assert_no_refund_above_40": "fail", "not_null_orders_amount_cents": "fail",
        "not_null_orders_order_id": "pass", "unique_orders_order_id": "pass",
    }  # fmt: skip

    failing = cli_json("dbt", "tests", capsys=capsys)
    assert {(t["name"], t["tests_node"]) for t in failing["tests"]} == {
        ("assert_no_refund_above_40", "orders"),
        ("not_null_orders_amount_cents", "orders"),
    }
    assert all("Got 1 result" in t["message"] for t in failing["tests"])
    assert failing["counts"] == {"fail": 2, "pass": 4}
    assert len(cli_json("dbt", "tests", "--all", capsys=capsys)["tests"]) == 6

    (source,) = cli_json("dbt", "freshness", capsys=capsys)["sources"]
    assert source["name"] == "raw_orders" and source["freshness"] == "error"
    assert source["loaded_at"].startswith("2026-01-03") and source["age_s"] > 86400

    listed = cli_json("dbt", "list", capsys=capsys)["nodes"]
    assert ("model", "customer_revenue", "analytics/models/marts/customer_revenue.sql") in {
        (n["kind"], n["name"], n["path"]) for n in listed
    }
    assert not any(n["kind"] == "test" for n in listed)
    # Unchanged artifacts are not read again.
    assert cli_json("dbt", "refresh", capsys=capsys)["projects"][0]["read"] == []


def test_the_text_form_reads_as_a_person_expects(shop, monkeypatch, capsys):
    monkeypatch.chdir(shop)
    assert main(["dbt", "lineage", "orders"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"model orders ({ORDERS})\nupstream: 4\n")
    assert "  model customer_revenue  [skipped]\n    exposure revenue_dashboard" in out
    assert "fail     not_null_orders_amount_cents  Got 1 result" in out
    assert main(["dbt", "freshness"]) == 0
    assert "error    source.shop.raw.raw_orders  loaded 2026-01-03" in capsys.readouterr().out


def test_an_edited_model_is_recheck_and_a_deleted_one_missing(conn, shop):
    project = resolve(conn, str(shop))
    dbt.refresh(conn, project)
    assert lineage.lineage(conn, project, "orders")["state"] == "FRESH"
    with open(shop / ORDERS, "a", encoding="utf-8") as f:
        f.write("\n-- a comment changes the text\n")
    assert lineage.lineage(conn, project, "orders")["state"] == "RECHECK"
    (shop / ORDERS).unlink()
    assert lineage.lineage(conn, project, "orders")["state"] == "MISSING"


def test_a_model_that_is_not_there_is_a_clear_error(shop, monkeypatch, capsys):
    monkeypatch.chdir(shop)
    capsys.readouterr()
    assert main(["dbt", "lineage", "ordrs", "--json"]) == 1
    error = json.loads(capsys.readouterr().out)
    assert error["code"] == "not_found" and "waymark dbt list" in error["message"]
    assert main(["dbt", "lineage"]) == 2  # usage


def test_a_repository_without_dbt_says_so(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    assert main(["dbt"]) == 0
    assert "no dbt project here" in capsys.readouterr().out
    assert main(["dbt", "lineage", "orders"]) == 1
    assert "no dbt project read here" in capsys.readouterr().err


def test_editing_a_model_names_its_downstream_and_failing_tests_once(conn, enabled, shop):
    session = f"dbt-{uuid.uuid4().hex[:6]}"
    dbt.refresh(conn, resolve(conn, str(shop)))

    def before_edit(path: str):
        data = payload("claude-code", "PreToolUse-write", cwd=str(shop), session_id=session)
        data["tool_input"] = {"file_path": str(shop / path), "content": "select 1\n"}
        return hook("PreToolUse", data)

    said = context_of(before_edit(ORDERS))
    assert "## The dbt lineage" in said
    assert f"- dbt model `orders` ({ORDERS}): downstream `customer_revenue`" in said
    assert "exposures `revenue_dashboard`" in said
    assert "`not_null_orders_amount_cents` (fail: Got 1 result" in said
    assert "`assert_no_refund_above_40` (fail" in said
    assert before_edit(ORDERS).stdout.strip() == b""  # said once a session
    staged = context_of(before_edit("analytics/models/staging/stg_customers.sql"))
    assert "downstream `orders`, `customer_revenue`" in staged and "failing tests" not in staged
    receipts = conn.execute(
        "SELECT item FROM injections WHERE session_id = ? AND item LIKE 'dbt:%'", (session,)
    ).fetchall()
    assert len(receipts) == 2
    # A file no model is defined in says nothing of dbt.
    other = before_edit("README.md")
    assert b"dbt" not in other.stdout


def test_recall_names_the_model_a_query_names(conn, shop, monkeypatch, capsys):
    monkeypatch.chdir(shop)
    dbt.refresh(conn, resolve(conn, str(shop)))
    found = cli_json("recall", "why do the orders tests fail", capsys=capsys)
    (model,) = found["dbt"]
    assert model["name"] == "orders" and "failing tests" in model["line"]
    told = call_tool(shop, "recall", {"query": "what reads stg_orders", "include_session": False})
    assert not told.is_error, told.content
    (line,) = told.structured_content["dbt"]
    assert line.startswith("- dbt model `stg_orders`") and "`orders`, `customer_revenue`" in line


def test_a_new_run_is_read_and_fixed_tests_stop_failing(conn, shop):
    project = resolve(conn, str(shop))
    dbt.refresh(conn, project)
    seeds = shop / "analytics" / "seeds" / "raw_orders.csv"
    seeds.write_text(seeds.read_text(encoding="utf-8").replace("3,10,4500", "3,10,450")
                     .replace("4,12,,paid", "4,12,700,paid"), encoding="utf-8")  # fmt: skip
    assert run_dbt(shop / "analytics", "seed").returncode == 0
    assert run_dbt(shop / "analytics", "build").returncode == 0
    done = dbt.refresh(conn, project)
    assert "results" in done["projects"][0]["read"]
    assert lineage.tests(conn, project)["tests"] == []
    assert lineage.edit_lines(conn, project, [ORDERS])[0][1].count("failing") == 0


def test_a_broken_artifact_is_reported_and_keeps_the_last_reading(conn, shop, monkeypatch, capsys):
    project = resolve(conn, str(shop))
    dbt.refresh(conn, project)
    results = shop / "analytics" / "target" / "run_results.json"
    results.write_text("{not json", encoding="utf-8")
    done = dbt.refresh(conn, project)
    (problem,) = done["projects"][0]["problems"]
    assert problem.startswith("analytics/target/run_results.json:")
    assert len(lineage.tests(conn, project)["tests"]) == 2  # the last reading stands
    monkeypatch.chdir(shop)
    assert main(["dbt", "tests"]) == 0
    assert "warning: analytics/target/run_results.json:" in capsys.readouterr().out


def test_a_dbt_project_removed_from_the_repository_is_forgotten(conn, shop):
    project = resolve(conn, str(shop))
    dbt.refresh(conn, project)
    env = git_env(shop.parent)
    subprocess.run(["git", "-C", str(shop), "rm", "-q", "analytics/dbt_project.yml"], check=True,
                   env=env)  # fmt: skip
    done = dbt.refresh(conn, project)
    assert done["removed"] == ["analytics"] and done["nodes"] == 0
    assert conn.execute("SELECT count(*) FROM dbt_edges").fetchone()[0] == 0


def test_the_mcp_server_reads_the_artifacts_in_the_background(conn, enabled, shop):
    from test_server_process import start_server, wait_for

    server = start_server(shop)
    try:
        assert wait_for(
            lambda: conn.execute("SELECT count(*) FROM dbt_nodes").fetchone()[0] == 14, 30.0
        ), "the server never read the dbt artifacts"
    finally:
        server.stdin.close()
        server.wait(timeout=20)
        for stream in (server.stdout, server.stderr):
            stream.close()
