"""The memory proxy as a user runs it: `waymark proxy` a real process in the repository, a
scripted upstream on loopback (tests/upstream.py: Anthropic Messages, OpenAI Responses, Chat
Completions, streaming and not), requests from httpx as an agent sends them. The packet
reaches the upstream, the answer reaches the agent byte for byte, later requests carry the
same packets in the same places, tool calls are recorded (redacted), a secret in a prompt is
never written, and a broken store or a foreign folder never stops a request.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest

from conftest import remember_fillers
from upstream import TEXT, Upstream
from waymark.handoff import checkpoints
from waymark.memories import store
from waymark.memories.draft import make_draft

SECRET = "ghp_" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0Fe9Dc8"
PROMPT = "How should the webhook retries run?"


@pytest.fixture
def upstream():
    server = Upstream()
    yield server
    server.stop()


class Proxy:
    def __init__(self, cwd, upstream_url: str, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "waymark", "proxy", "--port", "0", "--upstream", upstream_url,
             "--json", *extra],
            cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        lines = []
        while not lines or lines[-1].rstrip() != "}":
            line = self.proc.stdout.readline()
            assert line, f"the proxy exited: {''.join(lines)} {self.proc.stderr.read()}"
            lines.append(line)
        self.url = json.loads("".join(lines))["url"]

    def post(self, path: str, body: dict, **headers: str) -> httpx.Response:
        return httpx.post(self.url + path, content=json.dumps(body).encode(), timeout=30,
                          headers={"content-type": "application/json", **headers})  # fmt: skip

    def get(self, path: str, **headers: str) -> httpx.Response:
        return httpx.get(self.url + path, timeout=30, headers=headers)

    def stop(self) -> str:
        if self.proc.stderr.closed:
            return ""  # stopped already
        self.proc.terminate()
        self.proc.wait(timeout=20)
        err = self.proc.stderr.read()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err


@pytest.fixture
def remembered(conn, enabled):
    store.remember(conn, enabled, make_draft(
        enabled, type="fact",
        content="Webhook retries run through the Celery retry queue with exponential backoff.",
    ))  # fmt: skip
    remember_fillers(conn, enabled)
    checkpoints.create(
        conn,
        enabled,
        {
            "objective": "Harden webhook retries",
            "next_action": "add a dead-letter queue for retries",
        },
    )
    return enabled


@pytest.fixture
def proxy(repo, upstream, remembered):
    running = Proxy(repo, upstream.url)
    yield running
    running.stop()


def first_request(api: str, stream: bool, prompt: str = PROMPT) -> tuple[str, dict]:
    if api == "anthropic":
        return "/v1/messages", {"model": "m", "max_tokens": 100, "stream": stream,
                                "system": "You are a coding agent.",
                                "messages": [{"role": "user", "content": prompt}]}  # fmt: skip
    if api == "responses":
        return "/v1/responses", {"model": "m", "stream": stream,
                                 "instructions": "You are a coding agent.",
                                 "input": [{"role": "user", "content": [
                                     {"type": "input_text", "text": prompt}]}]}  # fmt: skip
    return "/v1/chat/completions", {"model": "m", "stream": stream, "messages": [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": prompt}]}  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_the_packet_reaches_the_upstream_and_the_answer_comes_back_unchanged(
    proxy, upstream, api, stream
):
    path, body = first_request(api, stream)
    answer = proxy.post(path, body, authorization="Bearer sk-test-key")
    assert answer.status_code == 200
    assert answer.content == upstream.sent[-1]  # byte for byte, streamed or not
    assert answer.headers["x-request-id"] == f"req_{len(upstream.sent)}"
    if stream:
        assert TEXT in answer.text and answer.headers["content-type"] == "text/event-stream"
    got = upstream.requests[-1]
    assert got["path"] == path and got["headers"]["authorization"] == "Bearer sk-test-key"
    assert not any(k.lower().startswith("x-waymark") for k in got["headers"])
    sent = json.loads(got["raw"])
    text = json.dumps(sent)
    assert text.count('<waymark-memory kind=\\"session-start\\"') == 1
    assert "add a dead-letter queue for retries" in text  # the checkpoint's next action
    assert text.count('<waymark-memory kind=\\"prompt\\"') == 1
    assert "Celery retry queue" in text
    assert sent["model"] == "m" and sent["stream"] is stream
    if api == "anthropic":
        assert sent["system"][0] == {"type": "text", "text": "You are a coding agent."}
        assert sent["system"][1]["text"].startswith('<waymark-memory kind="session-start"')
        user = sent["messages"][0]["content"]
        assert user[0] == {"type": "text", "text": PROMPT}
        assert user[1]["text"].startswith('<waymark-memory kind="prompt"')
    elif api == "responses":
        assert sent["instructions"] == "You are a coding agent."
        assert [i["role"] for i in sent["input"]] == ["developer", "user", "developer"]
    else:
        assert [m["role"] for m in sent["messages"]] == ["system", "system", "user", "system"]
        assert sent["messages"][0]["content"] == "You are a coding agent."


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_later_requests_carry_the_same_packets_in_the_same_places(proxy, upstream, api):
    path, body = first_request(api, False)
    proxy.post(path, body)
    first = json.loads(upstream.requests[-1]["raw"])
    key = "messages" if api != "responses" else "input"
    answer = {"role": "assistant", "content": TEXT}
    follow = "And where do failed webhooks go after the last retry?"
    later = {**body, key: [*body[key], answer, {"role": "user", "content": follow}]}
    proxy.post(path, later)
    second = json.loads(upstream.requests[-1]["raw"])
    shared = len(first[key])
    assert second[key][:shared] == first[key]  # the cached prefix, unchanged
    if api == "anthropic":
        assert second["system"] == first["system"]
    assert second[key][shared] == answer
    # The new turn's packet, if anything new was relevant, sits after the new prompt only.
    assert json.dumps(second).count('kind=\\"session-start\\"') == 1
    # A retry of the same request sends the same bytes again.
    proxy.post(path, later)
    assert upstream.requests[-1]["raw"] == upstream.requests[-2]["raw"]


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_a_conversation_resumed_after_the_proxy_restarted_keeps_its_prefix(
    repo, upstream, remembered, conn, api
):
    """The proxy stops (a reboot, an upgrade) and the agent's session is resumed later: its
    next request carries what the earlier ones were sent, in the same places, so the
    provider's prompt cache keeps the prefix; a new prompt gets its own packet after it."""
    path, body = first_request(api, False)
    key = "messages" if api != "responses" else "input"
    answer = {"role": "assistant", "content": TEXT}
    later = {**body, key: [*body[key], answer,
                           {"role": "user", "content": "Where do failed webhooks go?"}]}  # fmt: skip
    first = Proxy(repo, upstream.url)
    try:
        first.post(path, body)
        first.post(path, later)
        deadline = time.monotonic() + 10  # kept once the answer has gone back
        while time.monotonic() < deadline and conn.execute(
            "SELECT count(*) FROM proxy_conversations WHERE answered = 1"
        ).fetchall() != [(1,)]:
            time.sleep(0.05)
    finally:
        first.stop()
    before = json.loads(upstream.requests[-1]["raw"])
    resumed = {**later, key: [*later[key], answer,
                              {"role": "user", "content": "And the dead-letter queue?"}]}  # fmt: skip
    second = Proxy(repo, upstream.url)
    try:
        second.post(path, resumed)
    finally:
        second.stop()
    after = json.loads(upstream.requests[-1]["raw"])
    assert after[key][: len(before[key])] == before[key]  # the cached prefix, unchanged
    if api == "anthropic":
        assert after["system"] == before["system"]
    assert json.dumps(after).count("session-start") == 1
    # kept redacted, and only for a while
    rows = conn.execute("SELECT count(*) FROM proxy_conversations").fetchall()
    assert rows == [(1,)]


def test_what_the_proxy_keeps_of_a_conversation_is_redacted_and_goes_in_time(conn, enabled):
    """A packet can carry a line read from the repository (a branch's or a file's name),
    which no store redacted: what is kept of the conversation is redacted again; a
    conversation unseen for 30 days goes when the next one is kept."""
    from waymark.packets import conversation as library

    library.keep(conn, "k1", enabled, "proxy-1", f"on branch feat/{SECRET}",
                 {1: f"see {SECRET}", 2: ""}, True)  # fmt: skip
    session, opening, packets, answered = library.kept(conn, "k1")
    assert (session, answered) == ("proxy-1", True) and sorted(packets) == [1, 2]
    assert SECRET not in (opening or "") and SECRET not in packets[1] and packets[2] == ""
    assert opening.startswith("on branch feat/")
    conn.execute("UPDATE proxy_conversations SET updated_at = '2020-01-01T00:00:00.000Z'")
    library.keep(conn, "k2", enabled, "proxy-2", None, {}, False)
    assert library.kept(conn, "k1") is None and library.kept(conn, "k2") is not None


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_a_prompt_that_says_no_recall_gets_nothing_through_the_proxy(proxy, upstream, api):
    """`#no-recall` in a prompt: nothing is injected for it (a first one: the conversation
    goes without its session packet); a later prompt without it gets its own packet."""
    path, body = first_request(api, False, prompt=f"{PROMPT} #no-recall")
    proxy.post(path, body)
    assert b"waymark-memory" not in upstream.requests[-1]["raw"]
    key = "messages" if api != "responses" else "input"
    later = {**body, key: [*body[key], {"role": "assistant", "content": TEXT},
                           {"role": "user", "content": PROMPT}]}  # fmt: skip
    proxy.post(path, later)
    sent = upstream.requests[-1]["raw"].decode()
    assert sent.count('kind=\\"prompt\\"') == 1 and "session-start" not in sent


def test_two_conversations_that_open_alike_keep_their_own_packets(proxy, upstream):
    """Codex sends its environment first, the same for a lead and each subagent it spawns,
    then the prompt: each conversation is told its own, and every later request of each
    carries what that conversation was sent first (found with Codex through the proxy)."""
    env = {"role": "user", "content": [{"type": "input_text", "text": "<environment_context>"
                                        "<cwd>/repo</cwd></environment_context>"}]}  # fmt: skip

    def ask(prompt: str, answered: bool) -> list:
        said = [{"role": "user", "content": [{"type": "input_text", "text": prompt}]}]
        more = [{"role": "assistant", "content": "Done."}, said[0]] if answered else []
        body = {"model": "m", "stream": False, "instructions": "You are a coding agent.",
                "input": [env, *said, *more]}  # fmt: skip
        proxy.post("/v1/responses", body)
        return json.loads(upstream.requests[-1]["raw"])["input"]

    review = "Which conventions apply to the payments module?"
    lead = ask(PROMPT, False)
    lead_again = ask(PROMPT, True)  # the lead has its answer when its subagent starts
    sub = ask(review, False)
    sub_again = ask(review, True)
    assert lead[0]["role"] == sub[0]["role"] == "developer"
    assert lead_again[: len(lead)] == lead  # each one's prefix, unchanged
    assert sub_again[: len(sub)] == sub
    assert ask(PROMPT, True)[: len(lead)] == lead


def test_tool_calls_are_recorded_redacted_and_the_prompt_never_is(
    proxy, upstream, conn, repo, waymark_home
):
    prompt = f"Use the token {SECRET} to run the tests"
    calls = [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "Bash",
             "input": {"command": f"GITHUB_TOKEN={SECRET} pytest -x tests/test_api.py"}},
            {"type": "tool_use", "id": "toolu_2", "name": "Edit",
             "input": {"file_path": str(repo / "src" / "pkg" / "core.py"), "old_string": "a",
                       "new_string": "b"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": "Exit code 1\nE   ModuleNotFoundError: No module named 'requests_mock'"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "edited"}]},
    ]  # fmt: skip
    body = {"model": "m", "max_tokens": 50, "messages": calls}
    headers = {"x-waymark-session": "proxy-tools-1"}
    assert proxy.post("/v1/messages", body, **headers).status_code == 200
    assert proxy.post("/v1/messages", body, **headers).status_code == 200  # twice: once recorded

    def recorded() -> tuple:
        failures = conn.execute(
            "SELECT command, error_tail FROM command_failures WHERE session_id = 'proxy-tools-1'"
        ).fetchall()
        edits = conn.execute("SELECT path FROM session_ledger WHERE session_id = 'proxy-tools-1'"
                             " AND kind = 'edit'").fetchall()  # fmt: skip
        return failures, edits

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not all(recorded()):
        time.sleep(0.05)
    failures, edits = recorded()
    assert edits == [("src/pkg/core.py",)]
    ((command, tail),) = failures
    assert "pytest -x tests/test_api.py" in command and SECRET not in command
    assert "requests_mock" in tail
    (client,) = conn.execute("SELECT client FROM sessions WHERE id = 'proxy-tools-1'").fetchone()
    assert client == "proxy"
    proxy.stop()
    for path in waymark_home.glob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path.name
    for path in (waymark_home / "logs").glob("*") if (waymark_home / "logs").is_dir() else ():
        assert SECRET.encode() not in path.read_bytes(), path.name


def test_a_turn_that_says_no_capture_is_not_recorded_through_the_proxy(proxy, upstream, conn):
    """The calls made in a turn whose prompt said `#no-capture` are never recorded; the
    next turn's are."""

    def call(n: int) -> list[dict]:
        return [
            {"role": "assistant", "content": [{"type": "tool_use", "id": f"toolu_{n}",
                                               "name": "Bash",
                                               "input": {"command": f"echo step-{n}"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                          "content": "ok"}]},
        ]  # fmt: skip

    quiet = [{"role": "user", "content": f"{PROMPT} #no-capture"}, *call(1)]
    body = {"model": "m", "max_tokens": 50, "messages": quiet}
    headers = {"x-waymark-session": "proxy-quiet-1"}
    assert proxy.post("/v1/messages", body, **headers).status_code == 200
    loud = [*quiet, {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Next step."}, *call(2)]  # fmt: skip
    assert proxy.post("/v1/messages", {**body, "messages": loud}, **headers).status_code == 200

    def steps() -> list:
        return conn.execute("SELECT target FROM session_steps WHERE session_id ="
                            " 'proxy-quiet-1' ORDER BY seq").fetchall()  # fmt: skip

    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not steps():
        time.sleep(0.05)
    time.sleep(0.3)  # the first request's record, had there been one, came before
    assert [t for (t,) in steps()] == ["echo"], steps()


def test_receipts_show_what_the_proxy_injected(proxy, repo):
    proxy.post(*first_request("anthropic", False), **{"x-waymark-session": "proxy-receipts"})
    done = subprocess.run(
        [sys.executable, "-m", "waymark", "log", "--injected", "--session", "proxy-receipts"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "SessionStart" in done.stdout and "UserPromptSubmit" in done.stdout


def test_other_paths_and_upstream_errors_pass_through_as_sent(proxy, upstream):
    models = httpx.get(proxy.url + "/v1/models", headers={"x-api-key": "k"}, timeout=10)
    assert models.status_code == 200 and models.content == upstream.sent[-1]
    counted = proxy.post("/v1/messages/count_tokens", {"model": "m", "messages": []})
    assert counted.json() == {"input_tokens": 42}
    assert upstream.requests[-1]["raw"] == json.dumps({"model": "m", "messages": []}).encode()
    _, body = first_request("anthropic", True)
    limited = proxy.post("/v1/messages", {**body, "model": "rate-limited"})
    assert limited.status_code == 429 and limited.content == upstream.sent[-1]


def test_a_folder_outside_any_project_passes_through_untouched(tmp_path, upstream, waymark_home):
    plain = tmp_path / "plain"
    plain.mkdir()
    running = Proxy(plain, upstream.url)
    try:
        path, body = first_request("chat", False)
        raw = json.dumps(body).encode()
        answer = httpx.post(running.url + path, content=raw, timeout=30)
        assert answer.status_code == 200
        assert upstream.requests[-1]["raw"] == raw
    finally:
        running.stop()
    log = (waymark_home / "server.log").read_text(encoding="utf-8")
    assert "passed through untouched: no Waymark project there" in log


def test_with_the_store_broken_every_request_still_goes_through(
    repo, upstream, waymark_home, remembered, conn
):
    conn.close()
    database = waymark_home / "waymark.db"
    for extra in ("-wal", "-shm"):
        (waymark_home / f"waymark.db{extra}").unlink(missing_ok=True)
    database.write_bytes(b"this is not a database " * 100)
    running = Proxy(repo, upstream.url)
    try:
        for api in ("anthropic", "responses", "chat"):
            path, body = first_request(api, True)
            answer = running.post(path, body)
            assert answer.status_code == 200 and answer.content == upstream.sent[-1]
            assert upstream.requests[-1]["raw"] == json.dumps(body).encode()
    finally:
        running.stop()
    log = (waymark_home / "server.log").read_text(encoding="utf-8")
    assert "sent without memory" in log


LOOKALIKES = (
    "http://localhost.evil.example",
    "http://127.0.0.1.nip.io",
    "http://localhostevil.example",
    "https://127.0.0.1.evil.example",
    "http://localhost@evil.example",
    "null",
)


def test_only_this_machine_and_the_token_get_in(repo, upstream, remembered):
    running = Proxy(repo, upstream.url, "--require-token")
    try:
        path, body = first_request("anthropic", False)
        assert running.post(path, body).status_code == 401
        token = subprocess.run(
            [sys.executable, "-m", "waymark", "proxy", "--print-token"], cwd=repo,
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        assert running.post(path, body, **{"x-waymark-token": token}).status_code == 200
        headers = {"x-waymark-token": token}
        assert running.post(path, body, host="evil.example", **headers).status_code == 403
        assert running.post(path, body, origin="https://evil.example", **headers).status_code == 403
        # Origins that begin like loopback and are other machines' names (#44).
        for origin in LOOKALIKES:
            assert running.post(path, body, origin=origin, **headers).status_code == 403, origin
            assert running.get("/v1/models", origin=origin, **headers).status_code == 403, origin
        assert len(upstream.requests) == 1
        assert (
            running.post(path, body, origin="http://localhost:3000", **headers).status_code == 200
        )
    finally:
        running.stop()


def test_a_named_project_header_binds_the_conversation(tmp_path, upstream, conn, remembered):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    running = Proxy(elsewhere, upstream.url)
    try:
        path, body = first_request("responses", False)
        headers = {"x-waymark-project": remembered.files, "x-waymark-session": "bound-1"}
        running.post(path, body, **headers)
        assert "Celery retry queue" in upstream.requests[-1]["raw"].decode()
        (project_id,) = conn.execute(
            "SELECT project_id FROM sessions WHERE id = 'bound-1'"
        ).fetchone()
        assert project_id == remembered.id
    finally:
        running.stop()


def test_the_server_log_says_start_and_exit(repo, upstream, waymark_home, remembered):
    running = Proxy(repo, upstream.url)
    running.stop()
    lines = (waymark_home / "server.log").read_text(encoding="utf-8").splitlines()
    assert any(" proxy " in line and "start pid=" in line for line in lines)
    assert any(" proxy " in line and "exit pid=" in line for line in lines)
    assert os.environ.get("WAYMARK_HOME")  # the fixture's home, never the user's


def test_the_proxy_answers_hooks_when_no_other_process_holds_the_warm_socket(
    repo, upstream, waymark_home, remembered
):
    """`waymark proxy` hosts the long-lived process's work (`daemon.host`) when no MCP
    server runs: a hook's warm request is answered by the proxy."""
    from test_server_process import wait_for
    from waymark import warm

    request = {"event": {"cwd": str(repo), "session_id": "s-proxy",
               "client": "codex", "name": "SessionStart", "source": "startup"}}  # fmt: skip
    running = Proxy(repo, upstream.url)
    try:
        assert wait_for(lambda: warm.ask("session_start", request, 0.5) is not None), (
            "no warm answer"
        )
    finally:
        running.stop()
    log = (waymark_home / "server.log").read_text(encoding="utf-8")
    assert "proxy" in log and "holds the warm socket" in log
    assert warm.ask("session_start", request, 0.2) is None


def test_an_agent_header_reads_that_agents_memories_too(proxy, upstream, conn, remembered):
    store.remember(conn, remembered, make_draft(
        remembered, type="convention", agent="reviewer",
        content="Reviewers check webhook retries for idempotency keys before approving.",
    ))  # fmt: skip
    path, body = first_request("chat", False, "How do reviewers check the webhook retries?")
    proxy.post(path, body, **{"x-waymark-session": "plain-1"})
    assert "idempotency keys" not in upstream.requests[-1]["raw"].decode()
    proxy.post(path, body, **{"x-waymark-session": "agent-1", "x-waymark-agent": "reviewer"})
    assert "idempotency keys" in upstream.requests[-1]["raw"].decode()


@pytest.mark.parametrize("api", ["anthropic", "chat"])
def test_an_answer_ends_the_turn_and_stopping_the_proxy_ends_the_session(
    repo, upstream, conn, remembered, api
):
    from waymark.curation import candidates

    (repo / ".waymark.toml").write_text("[summary]\nenabled = true\n", encoding="utf-8")
    running = Proxy(repo, upstream.url)
    target = str(repo / "src" / "pkg" / "core.py")
    if api == "anthropic":
        history = [
            {"role": "user", "content": "Make core.run return 1"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write",
                                               "input": {"file_path": target, "content": "x"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                          "content": "written"}]},
        ]  # fmt: skip
        path, body = "/v1/messages", {"model": "m", "max_tokens": 50, "stream": True,
                                      "messages": history}  # fmt: skip
    else:
        history = [
            {"role": "user", "content": "Make core.run return 1"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
             "function": {"name": "write_file",
                          "arguments": json.dumps({"path": target, "content": "x"})}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "written"},
        ]  # fmt: skip
        path, body = "/v1/chat/completions", {"model": "m", "stream": True, "messages": history}
    try:
        answer = running.post(path, body, **{"x-waymark-session": f"ending-{api}"})
        assert answer.status_code == 200
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not candidates.pending(conn, remembered):
            time.sleep(0.05)
        (note,) = candidates.pending(conn, remembered)
        assert note["kind"] == "summary"
        assert "Files changed: src/pkg/core.py." in note["fields"]["content"]
        assert f"Last message: {TEXT}" in note["fields"]["content"]
    finally:
        running.stop()
    ended, reason = conn.execute(
        "SELECT ended_at, end_reason FROM sessions WHERE id = ?", (f"ending-{api}",)
    ).fetchone()
    assert ended and reason == "proxy stopped"
    marked = conn.execute("SELECT count(*) FROM handoff_markers WHERE session_id = ?"
                          " AND cleared_at IS NULL", (f"ending-{api}",)).fetchone()[0]  # fmt: skip
    assert marked == 1  # files changed and no checkpoint saved: the next session is told


def test_the_answer_is_read_from_every_protocol_streamed_or_not(upstream):
    from upstream import ANSWERS
    from waymark.proxy import wire

    for path, api in (("/v1/messages", "anthropic"), ("/v1/responses", "responses"),
                      ("/v1/chat/completions", "chat")):  # fmt: skip
        for stream in (False, True):
            _, data = ANSWERS[path]({"model": "m", "stream": stream})
            assert wire.answer_of(api, data, stream) == (TEXT, False), (api, stream)
    assert wire.answer_of("anthropic", b'{"type": "error"}', False) == ("", False)
    assert wire.answer_of("chat", b"not json", False) is None


@pytest.mark.parametrize("stream", [False, True])
def test_a_responses_chain_by_previous_response_id_stays_one_conversation(
    proxy, upstream, conn, stream
):
    path, body = first_request("responses", stream)
    proxy.post(path, body)
    follow = "How should the webhook retries run when the queue is down?"
    later = {"model": "m", "stream": stream, "previous_response_id": "resp_1",
             "input": [{"role": "user", "content": follow}]}  # fmt: skip
    proxy.post(path, later)
    sent = json.loads(upstream.requests[-1]["raw"])
    assert sent["previous_response_id"] == "resp_1"
    text = json.dumps(sent)
    assert "session-start" not in text  # the upstream holds it from the first request
    assert sent["input"][0] == {"role": "user", "content": follow}
    sessions = conn.execute("SELECT count(*) FROM sessions WHERE client = 'proxy'").fetchone()[0]
    assert sessions == 1


def test_settings_choose_the_upstream_and_a_named_project_is_the_default_binding(
    tmp_path, upstream, conn, remembered, repo
):
    from waymark import settings
    from waymark.projects.manage import rename

    settings.set_value(conn, "proxy.openai_upstream", upstream.url)
    rename(conn, remembered.id, "shop")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "waymark", "proxy", "--port", "0", "--project", "shop", "--json"],
        cwd=elsewhere, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    running = Proxy.__new__(Proxy)
    running.proc = proc
    lines = []
    while not lines or lines[-1].rstrip() != "}":
        lines.append(proc.stdout.readline())
    started = json.loads("".join(lines))
    running.url = started["url"]
    try:
        assert started["openai"] == upstream.url
        path, body = first_request("chat", False)
        assert running.post(path, body).status_code == 200
        assert "Celery retry queue" in upstream.requests[-1]["raw"].decode()
    finally:
        running.stop()
    with pytest.raises(Exception, match="http"):
        settings.set_value(conn, "proxy.anthropic_upstream", "api.example.com")
