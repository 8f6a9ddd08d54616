"""The CLI in-process: exact exit codes and output, real database underneath."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from waymark.cli import main
from waymark.cli.dispatch import build_parser
from waymark.memories import store
from waymark.storage import connection as db

COMMANDS = [
    "remember",
    "list",
    "show",
    "history",
    "supersede",
    "archive",
    "erase",
    "project",
    "status",
    "import",
    "backup",
    "restore",
    "export",
    "install",
    "uninstall",
    "doctor",
    "recall",
    "relate",
    "index",
    "checkpoint",
    "mcp",
    "enable",
    "disable",
    "config",
]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv):
    code, out, err = run(capsys, *argv, "--json")
    return code, json.loads(out)


@pytest.fixture(autouse=True)
def in_repo(repo, monkeypatch):
    monkeypatch.chdir(repo)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))


def test_remember_then_list_show_and_history(capsys):
    code, saved = run_json(
        capsys,
        "remember",
        "--type",
        "decision",
        "--title",
        "Use apsw",
        "--content",
        "apsw everywhere",
        "--tag",
        "db",
    )
    assert code == 0 and saved["created"] is True
    mid = saved["memory"]["id"]
    code, page = run_json(capsys, "list")
    assert code == 0 and [m["id"] for m in page["results"]] == [mid]
    assert page["has_more"] is False and page["next_offset"] is None
    code, out, _ = run(capsys, "show", mid)
    assert code == 0 and "apsw everywhere" in out and "decision" in out
    code, chain = run_json(capsys, "history", mid)
    assert [m["id"] for m in chain] == [mid]


def test_content_from_stdin(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("from a pipe\nsecond line"))
    code, saved = run_json(capsys, "remember", "--type", "fact")
    assert code == 0 and saved["memory"]["content"] == "from a pipe\nsecond line"
    assert saved["memory"]["title"] == "from a pipe"


def test_missing_content_is_a_clear_refusal(capsys):
    code, out, err = run(capsys, "remember", "--type", "fact")
    assert code == 2 and "--content" in err and "[usage]" in err


def test_unknown_type_is_bad_usage_with_exit_2(capsys):
    assert main(["remember", "--type", "idea", "--content", "x"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_errors_in_json_have_code_message_details(capsys):
    code, err = run_json(capsys, "show", "01NOTHERE")
    assert code == 1
    assert err["code"] == "not_found" and "01NOTHERE" in err["message"] and "details" in err


def test_missing_target_has_a_stable_code(capsys):
    code, err = run_json(
        capsys, "remember", "--content", "x", "--scope", "file", "--target", "nope.py"
    )
    assert code == 1 and err["code"] == "target_not_found"


def test_target_alone_infers_file_or_directory_scope(capsys):
    _, saved = run_json(capsys, "remember", "--content", "x", "--target", "README.md")
    assert saved["memory"]["scope_type"] == "file"
    _, saved = run_json(capsys, "remember", "--content", "y", "--target", "src")
    assert saved["memory"]["scope_type"] == "directory"


def test_supersede_carries_unset_fields_and_a_second_supersede_conflicts(capsys):
    _, saved = run_json(
        capsys,
        "remember",
        "--type",
        "convention",
        "--content",
        "tabs",
        "--tag",
        "style",
        "--target",
        "src/pkg/core.py",
    )
    old = saved["memory"]["id"]
    code, new = run_json(capsys, "supersede", old, "--content", "spaces")
    assert code == 0
    m = new["memory"]
    assert (m["type"], m["tags"], m["scope_target"], m["supersedes"]) == (
        "convention",
        ["style"],
        "src/pkg/core.py",
        old,
    )
    code, err = run_json(capsys, "supersede", old, "--content", "both")
    assert code == 1 and err["code"] == "conflict"
    code, via_remember = run_json(
        capsys, "remember", "--supersedes", m["id"], "--content", "4 spaces"
    )
    assert code == 0 and via_remember["memory"]["supersedes"] == m["id"]


def test_archive_and_erase(capsys):
    _, saved = run_json(capsys, "remember", "--content", "temporary")
    mid = saved["memory"]["id"]
    assert run_json(capsys, "archive", mid)[1]["status"] == "archived"
    assert run_json(capsys, "list")[1]["results"] == []
    assert len(run_json(capsys, "list", "--include-inactive")[1]["results"]) == 1
    code, erased = run_json(capsys, "erase", mid, "--reason", "oops")
    assert code == 0 and erased["content"] == "" and erased["erased_reason"] == "oops"


def test_global_by_flag_or_by_scope(capsys):
    code, saved = run_json(capsys, "remember", "--content", "x", "--global")
    assert code == 0 and saved["memory"]["scope_type"] == "global"
    code, err = run_json(capsys, "remember", "--content", "y", "--global", "--scope", "file")
    assert code == 2 and err["code"] == "usage"


def test_redactions_are_reported(capsys):
    code, out, _ = run(capsys, "remember", "--content", "db at postgres://app:s3cretpw@db/prod")
    assert code == 0 and "redacted 1 secret" in out


def test_project_shows_id_and_how(capsys, repo):
    code, fresh = run_json(capsys, "project")  # a read: nothing is bound yet
    assert code == 0 and fresh["project"] == {
        "root": str(repo.resolve()),
        "bound": False,
        "same_repository": [],
        "named": [],
    }
    run_json(capsys, "remember", "--content", "binds the directory")
    code, proj = run_json(capsys, "project")
    assert code == 0 and proj["root"] == str(repo.resolve()) and proj["kind"] == "path"
    assert "git repository" in proj["how"]
    assert run_json(capsys, "project")[1]["id"] == proj["id"]  # stable


def test_named_project_via_flag(capsys):
    code, err = run_json(capsys, "list", "--project", "no-such-name")
    assert code == 1 and err["code"] == "not_found"
    run_json(capsys, "remember", "--project", "notes", "--content", "hello")
    code, page = run_json(capsys, "list", "--project", "notes")
    assert code == 0 and len(page["results"]) == 1
    assert run_json(capsys, "list")[1]["results"] == []


def test_status_counts(capsys):
    run_json(capsys, "remember", "--type", "fact", "--content", "a")
    run_json(capsys, "remember", "--type", "fact", "--content", "b")
    code, status = run_json(capsys, "status")
    assert code == 0 and status["memories"]["active"]["fact"] == 2
    assert status["schema_version"] >= 1


def test_newer_schema_exits_1_with_its_code(capsys):
    conn = db.connect()
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    code, err = run_json(capsys, "status")
    assert code == 1 and err["code"] == "schema_too_new"


def test_import_loads_then_skips_unchanged_and_supersedes_changed(capsys, tmp_path):
    lines = [
        {"key": "a", "text": "Alice likes tea", "timestamp": "2023-05-08T13:56:00"},
        {
            "key": "b",
            "content": "Bob likes coffee",
            "title": "Bob",
            "type": "fact",
            "tags": ["people"],
        },
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, report = run_json(capsys, "import", str(src), "--project", "people")
    assert code == 0 and report["created"] == 2
    code, report = run_json(capsys, "import", str(src), "--project", "people")
    assert (report["created"], report["unchanged"]) == (0, 2)
    lines[0]["text"] = "Alice likes green tea"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, report = run_json(capsys, "import", str(src), "--project", "people")
    assert (report["superseded"], report["unchanged"]) == (1, 1)
    page = run_json(capsys, "list", "--project", "people")[1]["results"]
    alice = next(m for m in page if m["key"] == "a")
    assert alice["content"] == "Alice likes green tea"
    assert alice["event_time"] == "2023-05-08T13:56:00.000Z" and alice["actor"] == "import"


def test_a_key_twice_in_one_batch_is_superseded_by_its_later_line(capsys, tmp_path):
    """The batch reads every key's latest record at once; a later line of a key the batch
    already wrote still supersedes it (and the same text again is unchanged)."""
    lines = [{"key": "k", "text": "first"}, {"key": "other", "text": "other"},
             {"key": "k", "text": "second"}, {"key": "k", "text": "second"}]  # fmt: skip
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, report = run_json(capsys, "import", str(src), "--project", "twice")
    assert code == 0
    assert (report["created"], report["superseded"], report["unchanged"]) == (2, 1, 1)
    page = run_json(capsys, "list", "--project", "twice")[1]["results"]
    assert sorted(m["content"] for m in page) == ["other", "second"]


def test_import_bad_line_names_the_line_and_writes_nothing_of_its_batch(capsys, tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"key": "a", "text": "fine"}\n{"key": "b"}\n', encoding="utf-8")
    code, err = run_json(capsys, "import", str(src), "--project", "p")
    assert code == 1 and "line 2" in err["message"]
    conn = db.connect()
    assert conn.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_every_command_has_help_with_an_example(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in COMMANDS:
        assert name in sub.choices
        text = sub.choices[name].format_help()
        assert "example:" in text and f"waymark {name}" in text


def test_the_overview_lists_every_command_once_under_its_heading_in_short_lines():
    from waymark.cli import overview

    listed = [name for _, commands in overview.GROUPS for name, _ in commands]
    from waymark.cli.table import COMMANDS as TABLE

    assert sorted(listed) == sorted(n for n, _, _ in TABLE), "the overview and the table differ"
    headings = [heading for heading, _ in overview.GROUPS]
    assert headings == ["set-up", "memories", "recall", "handoff", "curation", "knowledge",
                        "team", "faces", "data"]  # fmt: skip
    text = overview.text()
    assert all(len(line) <= 80 for line in text.splitlines()), "an overview line over 80"
    for argv in ([], ["--help"], ["-h"], ["--json", "--help"]):
        done = subprocess.run([sys.executable, "-m", "waymark", *argv], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert done.returncode == 0 and done.stdout == text, argv
    assert text.index("\nset-up:\n  install ") < text.index("\nmemories:\n  remember ")


def test_list_ranges_are_errors_not_clamps(capsys):
    for flag, value in (
        ("--limit", "0"),
        ("--limit", "101"),
        ("--offset", "-1"),
        ("--offset", "100001"),
    ):
        code, err = run_json(capsys, "list", flag, value)
        assert code == 2 and err["code"] == "usage", (flag, value)


def test_store_and_cli_share_one_database(capsys):
    _, saved = run_json(capsys, "remember", "--content", "shared")
    conn = db.connect()
    assert store.get(conn, saved["memory"]["id"]).content == "shared"


def test_recall_explain_prints_each_results_breakdown(capsys):
    run_json(capsys, "remember", "--type", "fact", "--content", "The cache TTL is 300 seconds")
    code, out, _ = run(capsys, "recall", "cache ttl", "--explain", "--lexical")
    assert code == 0 and "fused" in out and "lexical #1" in out
    code, data = run_json(capsys, "recall", "cache ttl", "--explain", "--lexical")
    assert code == 0 and data["results"][0]["explain"]["tiers"]["lexical"]["rank"] == 1


def cli_process(*args: str | bytes, cwd=None) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "waymark", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
    )


@pytest.mark.skipif(os.name != "posix", reason="bytes in argv are a POSIX thing")
def test_bytes_that_are_not_utf8_in_argv_are_mended_not_an_internal_error(repo):
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "remember", "--json", "--content", b"login \xff loop"],
        capture_output=True,
        cwd=repo,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["memory"]["content"] == "login \ufffd loop"
    checkpoint = subprocess.run(
        [sys.executable, "-m", "waymark", "checkpoint", "create", "--json",
         "--objective", b"fix \xfe it", "--next-action", "run the tests"],
        capture_output=True,
        cwd=repo,
    )  # fmt: skip
    assert checkpoint.returncode == 0, checkpoint.stderr
    found = subprocess.run(
        [sys.executable, "-m", "waymark", "recall", "--json", b"login \xff"],
        capture_output=True,
        cwd=repo,
    )
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["results"][0]["memory"]["content"] == "login \ufffd loop"


def test_a_reader_that_goes_away_ends_the_command_quietly(repo):
    assert main(["remember", "--project", str(repo), "--content", "one memory"]) == 0
    proc = cli_process("list", "--project", str(repo), "--json")
    proc.stdout.close()  # like `waymark list | head -0`: gone before the first write
    with proc.stderr:
        err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == b""


@pytest.mark.parametrize("command", [["recall", "--batch"], ["import"]])
def test_a_file_that_cannot_be_read_is_a_clear_refusal(capsys, tmp_path, command):
    for path, why in ((tmp_path / "missing.jsonl", "No such file"), (tmp_path, "directory")):
        code, error = run_json(capsys, *command, str(path))
        assert code == 1 and error["code"] == "invalid_argument"
        assert error["message"].startswith(f"cannot read {path}: ") and why in error["message"]


def test_a_batch_file_with_bytes_that_are_not_utf8_still_ranks(capsys, tmp_path):
    assert run(capsys, "remember", "--content", "the login loop")[0] == 0
    batch = tmp_path / "queries.jsonl"
    batch.write_bytes(b'{"qid": "q1", "query": "login \xff loop"}\n')
    code, out, _ = run(capsys, "recall", "--batch", str(batch))
    assert code == 0 and len(json.loads(out)["ranked"]) == 1


def test_config_of_an_unknown_key_is_a_clear_refusal_and_a_bad_value_names_the_current_one(
    capsys,
):
    code, out = run_json(capsys, "config", "recall.half_lfe_days", "30")
    assert code == 1 and out["code"] == "invalid_argument"
    assert "unknown setting 'recall.half_lfe_days'" in out["message"]
    assert run(capsys, "config", "recall.half_life_days", "30")[0] == 0
    code, out = run_json(capsys, "config", "recall.half_life_days", '"soon"')
    assert code == 1 and "now 30.0, default 90.0" in out["message"]


def test_usage_errors_are_exit_2_and_json_under_json(capsys):
    code, out = run_json(capsys, "list", "--limit", "0")
    assert code == 2 and out["code"] == "usage" and "--limit" in out["message"]
    code, out = run_json(capsys, "remember", "--type")
    assert code == 2 and out["code"] == "usage"
    code, _, err = run(capsys, "lst")
    assert code == 2 and "invalid choice: 'lst'" in err and "[usage]" in err
    assert run(capsys, "recall", "x", "--limit", "201")[0] == 2
    code, out = run_json(capsys, "recall")  # no query: the command line, not the data
    assert code == 2 and out["code"] == "usage"
    code, out = run_json(capsys, "map", "impact")
    assert code == 2 and out["code"] == "usage"
    code, _, err = run(capsys, "statuss")
    assert code == 2 and "did you mean status?" in err


def test_json_and_project_may_come_before_the_command(capsys, repo):
    code, out, _ = run(capsys, "--json", "status")
    assert code == 0 and json.loads(out)["project"]["root"] == str(repo)
    run(capsys, "remember", "--content", "a first memory makes the project")
    code, out, _ = run(capsys, "--project", str(repo), "--json", "list", "--limit", "5")
    assert code == 0 and len(json.loads(out)["results"]) == 1
    code, out, _ = run(capsys, "--json", "stauts")
    assert code == 2 and json.loads(out)["code"] == "usage"


def test_waymark_alone_prints_the_help(capsys):
    code, out, _ = run(capsys)
    assert code == 0 and out.startswith("usage: waymark") and "remember" in out


def test_a_setting_out_of_its_range_is_refused_and_a_typo_gets_the_closest_name(capsys):
    from waymark import settings

    for key, default in settings.DEFAULTS.items():  # every number has a range holding its default
        if isinstance(default, (int, float)) and not isinstance(default, bool):
            low, high = settings.RANGES[key]
            assert low <= default <= high, key
    code, out = run_json(capsys, "config", "packet.session_start_tokens", "999999")
    assert code == 1 and "packet.session_start_tokens is 200-8000 (got 999999" in out["message"]
    code, out = run_json(capsys, "config", "pakcet.session_start_tokens", "10")
    assert "did you mean packet.session_start_tokens?" in out["message"]
    assert run(capsys, "config", "packet.session_start_tokens", "2500")[0] == 0


def test_supersede_with_new_content_keeps_a_hand_written_title(capsys):
    _, saved = run_json(capsys, "remember", "--title", "Use apsw", "--content", "apsw bundles it")
    _, new = run_json(capsys, "supersede", saved["memory"]["id"], "--content", "apsw 3.46+")
    assert new["memory"]["title"] == "Use apsw"
    _, plain = run_json(capsys, "remember", "--content", "first line\nmore")
    _, next_ = run_json(capsys, "supersede", plain["memory"]["id"], "--content", "other line")
    assert next_["memory"]["title"] == "other line"  # a title that was only the old first line


def test_bytes_that_are_not_utf8_in_any_argument_are_mended_not_an_internal_error(capsys):
    bad = b"caf\xff".decode("utf-8", "surrogateescape")
    assert run_json(capsys, "remember", "--content", f"{bad} menu", "--tag", bad)[0] == 0
    code, page = run_json(capsys, "list", "--query", bad, "--tag", bad)
    assert code == 0 and page["results"][0]["content"] == "caf\ufffd menu"
    code, err = run_json(capsys, "show", bad)
    assert code == 1 and err["code"] == "not_found"


def test_a_progress_bar_names_its_work_and_ends_once(monkeypatch):
    from waymark.cli.common import progress_bar

    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    show = progress_bar(4, "embedding")
    for done in (0, 2, 4, 4):  # the last count reported twice, as a final call does
        show(done)
    assert err.getvalue() == (
        "\rembedding [------------------------------] 0/4"
        "\rembedding [###############---------------] 2/4"
        "\rembedding [##############################] 4/4\n"
    )


@pytest.mark.parametrize(
    ("spelled", "result"),
    [
        ("pytest=PASS", "pass"),
        ("pytest=passed", "pass"),
        ("make test=Failed", "fail"),
        ("e2e=skipped", "not_run"),
        ("FOO=1 make check=ok", "pass"),
    ],
)
def test_checkpoint_test_results_accept_the_usual_spellings(capsys, spelled, result):
    code, saved = run_json(
        capsys, "checkpoint", "create", "--objective", "o", "--next-action", "n", "--test", spelled
    )
    assert code == 0, saved
    assert saved["revision"]["body"]["tests"][0]["result"] == result


@pytest.mark.parametrize("spelled", ["pytest", "pytest=maybe", "=pass"])
def test_checkpoint_test_results_refuse_anything_else(capsys, spelled):
    code, err = run_json(
        capsys, "checkpoint", "create", "--objective", "o", "--next-action", "n", "--test", spelled
    )
    assert code == 1 and err["code"] == "invalid_argument" and "RESULT" in err["message"]


def test_a_second_create_does_not_hide_the_active_checkpoint(capsys):
    code, first = run_json(
        capsys, "checkpoint", "create", "--objective", "first task", "--next-action", "n"
    )
    assert code == 0
    code, err = run_json(
        capsys, "checkpoint", "create", "--objective", "second task", "--next-action", "m"
    )
    assert code == 1 and err["code"] == "conflict"
    assert first["id"] in err["message"] and "first task" in err["message"]
    code, shown = run_json(capsys, "checkpoint")
    assert code == 0 and first["id"] in json.dumps(shown)


def test_targets_from_a_subdirectory_find_the_root_path_and_say_where_they_looked(
    capsys, repo, monkeypatch
):
    monkeypatch.chdir(repo / "src")
    code, saved = run_json(capsys, "remember", "--content", "c", "--target", "README.md")
    assert code == 0 and saved["memory"]["scope_target"] == "README.md"
    code, saved = run_json(capsys, "remember", "--content", "d", "--target", "pkg/core.py")
    assert code == 0 and saved["memory"]["scope_target"] == "src/pkg/core.py"
    code, err = run_json(capsys, "remember", "--content", "e", "--target", "missing.md")
    assert code == 1 and err["code"] == "target_not_found"
    assert str(repo / "src" / "missing.md") in err["message"]
    assert str(repo / "missing.md") in err["message"]


def test_scope_global_is_the_same_as_global_and_a_global_target_is_refused(capsys):
    code, saved = run_json(capsys, "remember", "--content", "everywhere", "--scope", "global")
    assert code == 0 and saved["memory"]["scope_type"] == "global"
    for argv in (("--global", "--target", "README.md"), ("--scope", "global", "--target", "x")):
        code, err = run_json(capsys, "remember", "--content", "t", *argv)
        assert code == 2 and err["code"] == "usage" and "no target" in err["message"]


def test_a_symbol_target_must_be_defined_in_its_file(capsys, repo):
    (repo / "src" / "pkg" / "web.js").write_text("export function render(x) { return x }\n")
    (repo / "src" / "pkg" / "store.py").write_text(
        "class Store:\n    def save(self):\n        pass\n"
    )
    for target in (
        "src/pkg/core.py::run",
        "src/pkg/store.py::Store.save",
        "src/pkg/web.js::render",
    ):
        code, saved = run_json(capsys, "remember", "--content", target, "--target", target)
        assert code == 0, saved
    for target, hint in (
        ("src/pkg/core.py::walk", ""),
        ("src/pkg/store.py::Stor", "Store"),
        ("src/pkg/web.js::rendr", ""),
    ):
        code, err = run_json(capsys, "remember", "--content", target, "--target", target)
        assert code == 1 and err["code"] == "target_not_found", target
        assert "is not defined in" in err["message"] and hint in err["message"]


@pytest.mark.parametrize(
    "argv",
    [
        ["list", "--project", "no-such-name", "--json"],  # a refusal, as JSON on stdout
        ["list", "--limit", "0", "--json"],  # a usage error, as JSON on stdout
        ["status", "--json"],
        ["export", "--all", "--out", "-"],
    ],
)
def test_a_closed_pipe_is_exit_141_on_every_path_without_a_traceback(repo, argv):
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        done = subprocess.run(
            [sys.executable, "-m", "waymark", *argv],
            stdout=write,
            stderr=subprocess.PIPE,
            cwd=repo,
            timeout=60,
        )
    finally:
        os.close(write)
    assert done.returncode == 141, done.stderr
    assert b"Traceback" not in done.stderr and b"Exception ignored" not in done.stderr


def test_the_audit_log_answers_with_filters_and_logs_config_capture_and_handoffs(capsys, repo):
    run_json(capsys, "remember", "--content", "a decision")
    run_json(capsys, "config", "recall.half_life_days", "45")
    run_json(capsys, "disable")
    run_json(capsys, "enable")
    code, made = run_json(capsys, "checkpoint", "create", "--objective", "o", "--next-action", "n")
    assert code == 0
    code, everything = run_json(capsys, "log")
    ops = [e["op"] for e in everything["events"]]
    assert {
        "remember",
        "config.set",
        "capture.disable",
        "capture.enable",
        "checkpoint.create",
    } <= set(ops)
    assert ops.index("checkpoint.create") < ops.index("config.set")  # newest first
    code, configs = run_json(capsys, "log", "--op", "config.")
    assert [e["detail"] for e in configs["events"]] == [
        {"key": "recall.half_life_days", "old": 90.0, "new": 45.0, "via": "cli"}
    ]
    code, recent = run_json(capsys, "log", "--since", "1h", "--limit", "2")
    assert code == 0 and len(recent["events"]) == 2
    code, err = run_json(capsys, "log", "--since", "yesterday")
    assert code == 1 and err["code"] == "invalid_argument"
    text = run(capsys, "log")[1]
    assert "config.set" in text and "key=recall.half_life_days" in text
    assert "a decision" not in text  # ids and metadata, never content
    code, bogus = run_json(capsys, "log", "--op", "bogus")  # a name no event has: said so
    assert code == 0 and bogus["events"] == [] and bogus["unknown_ops"] == ["bogus"]
    said = run(capsys, "log", "--op", "bogus")[1]
    assert "no event named 'bogus' was ever logged here" in said and "config.set" in said
    code, none_yet = run_json(capsys, "log", "--op", "config.", "--since", "2099-01-01")
    assert none_yet["events"] == [] and "unknown_ops" not in none_yet  # a real name


def test_diagnostics_is_an_owner_only_bundle_without_content_paths_or_ids(
    capsys, repo, waymark_home
):
    code, saved = run_json(capsys, "remember", "--content", "secret plan zqx-content-marker")
    memory_id = saved["memory"]["id"]
    code, done = run_json(capsys, "diagnostics")
    assert code == 0
    path = done["path"]
    assert path.startswith(str(waymark_home)) and os.stat(path).st_mode & 0o777 == 0o600
    with open(path, encoding="utf-8") as f:
        text = f.read()
    bundle = json.loads(text)
    assert bundle["versions"]["waymark"] and bundle["store"]["counts"]["memories"]
    assert {f["check"] for f in bundle["findings"]} >= {"database", "interpreter"}
    for leak in ("zqx-content-marker", memory_id, str(repo), str(waymark_home)):
        assert leak not in text, leak


def test_a_symbol_that_went_away_does_not_block_a_supersede(capsys, repo):
    (repo / "src" / "pkg" / "store.py").write_text("def save():\n    pass\n")
    code, saved = run_json(
        capsys, "remember", "--content", "save is idempotent", "--target", "src/pkg/store.py::save"
    )
    assert code == 0
    (repo / "src" / "pkg" / "store.py").write_text("def persist():\n    pass\n")  # renamed
    code, newer = run_json(
        capsys, "supersede", saved["memory"]["id"], "--content", "save is idempotent and retried"
    )
    assert code == 0, newer
    assert newer["memory"]["scope_target"] == "src/pkg/store.py::save"  # carried over as it was


def test_a_target_is_found_by_list_from_where_remember_stored_it(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo / "src" / "pkg")
    _, saved = run_json(capsys, "remember", "--type", "note", "--content", "core is hot",
                     "--target", "core.py")  # fmt: skip
    assert saved["memory"]["scope_target"] == "src/pkg/core.py"
    for args in (["--target", "core.py"], ["--scope", "file", "--target", "./core.py"],
                 ["--target", "src/pkg/core.py"], ["--target", str(repo / "src/pkg/core.py")]):  # fmt: skip
        found = run_json(capsys, "list", *args)[1]["results"]
        assert [m["id"] for m in found] == [saved["memory"]["id"]], args


def test_a_scope_that_does_not_fit_the_path_says_which_does(repo, monkeypatch, capsys):
    monkeypatch.chdir(repo)
    assert main(["remember", "--json", "--type", "note", "--content", "x", "--scope", "file",
                 "--target", "src"]) == 1  # fmt: skip
    error = json.loads(capsys.readouterr().out)
    assert error["code"] == "invalid_scope" and "use --scope directory" in error["message"]
    assert main(["remember", "--json", "--type", "note", "--content", "x", "--scope",
                 "directory", "--target", "README.md"]) == 1  # fmt: skip
    assert "use --scope file" in json.loads(capsys.readouterr().out)["message"]


def test_a_one_line_c_function_is_a_symbol_before_any_map(repo, monkeypatch, capsys):
    (repo / "src" / "m.c").write_text(
        "int add(int a, int b) { return a + b; }\nstatic int\nsub(int a, int b)\n{ return a - b; }\n"
    )
    monkeypatch.chdir(repo)
    for name in ("add", "sub"):
        _, saved = run_json(capsys, "remember", "--type", "note", "--content", f"{name} is pure",
                         "--target", f"src/m.c::{name}")  # fmt: skip
        assert saved["memory"]["scope_target"] == f"src/m.c::{name}"
    assert main(["remember", "--json", "--type", "note", "--content", "x",
                 "--target", "src/m.c::mul"]) == 1  # fmt: skip
    assert json.loads(capsys.readouterr().out)["code"] == "target_not_found"


def test_showing_no_checkpoint_is_not_found(capsys):
    code, out = run_json(capsys, "checkpoint", "show")
    assert code == 1 and out["code"] == "not_found"


def test_checkpoint_help_says_revise_replaces_lists_and_the_test_format(capsys):
    with pytest.raises(SystemExit):
        main(["checkpoint", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "revise keeps each field you do not give and replaces each list you do" in text
    assert "--test CMD=pass|fail|not_run" in text


def test_supersede_help_says_unset_flags_keep_the_replaced_memorys_values(capsys):
    with pytest.raises(SystemExit):
        main(["supersede", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "kind of memory (default: the replaced memory's)" in text
    assert "default: note" not in text and "(default 0)" not in text
    with pytest.raises(SystemExit):
        main(["remember", "--help"])
    assert "default: note" in capsys.readouterr().out


def test_show_prints_links_and_why_a_memory_was_archived(capsys):
    _, a = run_json(capsys, "remember", "--type", "decision", "--content", "use apsw")
    _, b = run_json(capsys, "remember", "--content", "apsw bundles sqlite")
    a, b = a["memory"]["id"], b["memory"]["id"]
    assert run(capsys, "relate", a, b, "--kind", "depends_on")[0] == 0
    assert run(capsys, "archive", b, "--reason", "folded into the decision")[0] == 0
    code, out, _ = run(capsys, "show", b)
    assert f"link: <- depends_on {a}" in out
    assert "by user: folded into the decision" in out
    _, data = run_json(capsys, "show", a)
    assert data["links"][0]["dst"] == b and data["links"][0]["kind"] == "depends_on"


def test_bad_windows_dates_and_values_are_clear_errors_not_crashes(capsys):
    """#44: `--days -5` was a window into the future, `backfill --since notadate` an internal
    ValueError, and a config value of the wrong kind said "takes a int"."""
    for command in ("stats", "errors"):
        for days in ("-5", "0", "x"):
            code, out = run_json(capsys, command, "--days", days)
            assert code == 2 and out["code"] == "usage" and "--days" in out["message"], days
    run(capsys, "remember", "--content", "a first memory makes the project")
    code, out = run_json(capsys, "backfill", "--since", "notadate", "--dry-run")
    assert code == 1 and out["code"] == "invalid_argument"
    assert "--since takes a date" in out["message"]
    code, out = run_json(capsys, "backfill", "--since", "2026-11-01", "--dry-run")
    assert code == 0
    code, out = run_json(capsys, "config", "recall.int8_queries", "7")
    assert code == 1 and "takes true or false" in out["message"], out


def test_a_duplicate_remember_keeps_its_new_tag_and_a_past_expiry_is_refused(capsys, repo):
    """The same text again with a new tag (or a pin) is a revision holding both, never a
    write that drops what was asked; a `--valid-until` already past is refused, as in the
    MCP tool, and nothing is stored."""
    from conftest import call_tool

    code, first = run_json(capsys, "remember", "--content", "Use uv for installs", "--tag", "a")
    code, again = run_json(capsys, "remember", "--content", "Use uv for installs", "--tag", "b")
    assert code == 0 and again["created"] is True
    assert again["memory"]["supersedes"] == first["memory"]["id"]
    assert again["memory"]["tags"] == ["a", "b"]
    code, same = run_json(capsys, "remember", "--content", "Use uv for installs", "--tag", "b")
    assert same["created"] is False and same["memory"]["id"] == again["memory"]["id"]
    code, err = run_json(capsys, "remember", "--content", "Old freeze", "--valid-until",
                         "2020-01-01")  # fmt: skip
    assert code == 1 and err["code"] == "invalid_argument" and "has passed" in err["message"]
    code, listed = run_json(capsys, "list")
    assert "Old freeze" not in [m["content"] for m in listed["results"]]
    done = call_tool(repo, "remember", {"type": "note", "content": "Old freeze",
                                        "valid_until": "2020-01-01"})  # fmt: skip
    assert done.is_error and "has passed" in done.content[0].text
    code, later = run_json(capsys, "remember", "--content", "Freeze", "--valid-until", "2099-01-01")
    assert code == 0 and later["memory"]["valid_until"].startswith("2099-01-01")


def test_a_lesson_or_decision_given_as_json_on_the_cli_is_stored_as_its_fields(capsys, repo):
    code, made = run_json(
        capsys, "checkpoint", "create", "--objective", "o", "--lesson",
        '{"trigger": "a migration ran twice", "correction": "guard it with IF NOT EXISTS"}',
        "--decision", '{"decision": "Use apsw", "why": "it loads sqlite-vec"}',
    )  # fmt: skip
    assert code == 0, made
    body = made["revision"]["body"]
    assert body["lessons"] == [
        {"trigger": "a migration ran twice", "correction": "guard it with IF NOT EXISTS"}
    ]
    assert body["decisions"] == [{"decision": "Use apsw", "why": "it loads sqlite-vec"}]
    code, err = run_json(capsys, "checkpoint", "revise", "--lesson", "{not json")
    assert code == 1 and err["code"] == "invalid_argument" and "--lesson" in err["message"]
    code, plain = run_json(capsys, "checkpoint", "revise", "--lesson", "run the guard first")
    assert plain["revision"]["body"]["lessons"] == [{"correction": "run the guard first"}]


def test_the_command_table_is_what_the_modules_register():
    """`waymark COMMAND` imports only the module the table names: the table must say what the
    modules register (regenerate it, never edit it)."""
    from waymark.cli import table

    assert tuple(table.registered()) == table.COMMANDS, (
        "the command table drifted: python -m waymark.cli.table > src/waymark/cli/table.py"
    )


def test_a_command_imports_only_its_own_module():
    probe = (
        "import sys\n"
        "from waymark.cli import main\n"
        "try:\n"
        "    main(sys.argv[1:])\n"
        "except SystemExit:\n"
        "    pass\n"
        "shared = ('waymark.cli.common', 'waymark.cli.table', 'waymark.cli.dispatch',\n"
        "          'waymark.cli.run', 'waymark.cli.quick', 'waymark.cli.parsers')\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('waymark.cli.') and\n"
        "                m not in shared)\n"
        "print('argparse' in sys.modules, loaded, file=sys.stderr)\n"
    )
    for argv, modules in ((["--help"], "False ['waymark.cli.overview']"),
                          (["--version"], "False []"), (["list"], "False ['waymark.cli.memory']"),
                          (["status"], "False ['waymark.cli.project']"),
                          (["list", "--limit", "0"], "True ['waymark.cli.memory']")):  # fmt: skip
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                              text=True, timeout=60)  # fmt: skip
        assert done.stderr.strip().splitlines()[-1] == modules, (argv, done.stderr)
