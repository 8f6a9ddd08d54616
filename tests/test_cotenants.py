"""The co-tenant view: the whole hook chain per event from Claude Code's own transcript
lines (their recorded shapes: `hook_success` attachments, `stop_hook_summary`), Waymark's
share, and a warning when the chain nears the client's timeout."""

from __future__ import annotations

import json

from waymark.health import cotenants

OURS = '"/venv/bin/python" -I -c "from waymark.hooks.stop import main;main()" claude-code'
START = '"/venv/bin/python" -I -c "from waymark.hooks.session_start import main;main()" claude-code'
OTHER = "node /opt/other-plugin/hook.js"


def attachment(event: str, key: str, command: str, ms: int) -> dict:
    return {"type": "attachment", "uuid": f"u-{key}-{ms}", "attachment": {
        "type": "hook_success", "hookName": f"{event}:startup", "toolUseID": key,
        "hookEvent": event, "content": "SECRET-CONTENT", "stdout": "SECRET-CONTENT\n",
        "stderr": "", "exitCode": 0, "command": command, "durationMs": ms}}  # fmt: skip


def stop(key: str, *hooks: tuple[str, int]) -> dict:
    return {"type": "system", "subtype": "stop_hook_summary", "hookCount": len(hooks),
            "hookInfos": [{"command": c, "durationMs": ms} for c, ms in hooks],
            "hookErrors": [], "toolUseID": key, "uuid": f"s-{key}"}  # fmt: skip


def transcript(folder, name: str, lines: list[dict | str]) -> None:
    project = folder / "-tmp-project"
    project.mkdir(parents=True, exist_ok=True)
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    (project / f"{name}.jsonl").write_text(text, encoding="utf-8")


def is_ours(command: str) -> bool:
    return "waymark.hooks." in command


def test_each_events_chain_is_its_slowest_hook_and_waymarks_share_is_its_time(tmp_path):
    transcript(tmp_path, "a", [
        {"type": "user", "message": {"content": "a prompt, never read"}},
        attachment("SessionStart", "k1", START, 40), attachment("SessionStart", "k1", OTHER, 160),
        stop("t1", (OURS, 30), (OTHER, 90)),
        '{"type": "attachment", "durationMs": 5, cut mid-line',
    ])  # fmt: skip
    transcript(tmp_path, "b", [
        attachment("SessionStart", "k2", START, 50), stop("t2", (OURS, 20), (OTHER, 380)),
        stop("t3", (OURS, 25), (OTHER, 60)),
    ])  # fmt: skip
    found = cotenants.instances(str(tmp_path))
    assert all("SECRET" not in json.dumps(i) for i in found)  # numbers and commands only
    rows = {r["event"]: r for r in cotenants.chains(found, is_ours)}
    assert set(rows) == {"SessionStart", "Stop"}
    s = rows["SessionStart"]
    assert (s["instances"], s["hooks"], s["others"]) == (2, 2, 1)
    assert (s["chain_p50"], s["chain_p95"]) == (50.0, 160.0)  # k1: 160 (the other), k2: 50
    assert (s["ours_p50"], s["ours_p95"]) == (40.0, 50.0)
    assert s["share"] == round((40 + 50) / (160 + 50), 3)
    t = rows["Stop"]
    assert (t["instances"], t["chain_p50"], t["chain_p95"]) == (3, 90.0, 380.0)
    said = cotenants.finding(list(rows.values()), {"SessionStart": 10, "Stop": 10})
    assert said["status"] == "ok"
    assert said["detail"] == "SessionStart p95 160 ms (Waymark 43%); Stop p95 380 ms (Waymark 14%)"


def test_a_chain_near_the_clients_timeout_is_a_warning(tmp_path):
    transcript(tmp_path, "a", [stop("t1", (OURS, 30), (OTHER, 1200))])
    rows = cotenants.chains(cotenants.instances(str(tmp_path)), is_ours)
    said = cotenants.finding(rows, {"Stop": 2})
    assert said["status"] == "warn"
    assert said["detail"] == "near the client's timeout: Stop p95 1.2 s of 2 s"
    assert cotenants.finding([], {})["status"] == "skip"


def test_no_transcripts_no_rows(tmp_path):
    assert cotenants.instances(str(tmp_path / "missing")) == []
    assert cotenants.chains([], is_ours) == []
