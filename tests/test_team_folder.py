"""`waymark sync --to DIR --from DIR`: one person's machines (data homes of their own, a
checkout each) converge through a folder, no server: every shared memory and checkpoint
arrives once, personal and flagged ones never leave, two revisions of one thing settle on
the same one everywhere with the other in review, and kill -9 mid-sync loses nothing."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from conftest import git_env

TOML = 'name = "shop"\n\n[team]\nshare = true\n'


class Laptop:
    def __init__(self, root, name: str, folder):
        self.home = root / f"{name}-home"
        self.repo = root / f"{name}-repo"
        self.folder = folder
        self.repo.mkdir()
        (self.repo / ".waymark.toml").write_text(TOML, encoding="utf-8")
        self.env = {**git_env(root), "WAYMARK_HOME": str(self.home)}
        self.env.pop("WAYMARK_TEAM_URL", None)
        subprocess.run(["git", "-C", str(self.repo), "init", "-q"], check=True, env=self.env)

    def run(self, *args):
        return subprocess.run([sys.executable, "-m", "waymark", *args], cwd=self.repo,
                              env=self.env, capture_output=True, text=True, timeout=60)  # fmt: skip

    def json(self, *args):
        done = self.run(*args, "--json")
        assert done.returncode == 0, done.stdout + done.stderr
        return json.loads(done.stdout)

    def remember(self, text, *extra):
        return self.json("remember", "--type", "decision", "--content", text, *extra)["memory"]

    def sync(self):
        return self.json("sync", "--to", str(self.folder), "--from", str(self.folder))

    def active(self):
        return sorted(m["content"] for m in self.json("list", "--limit", "100")["results"])


@pytest.fixture
def laptops(tmp_path):
    folder = tmp_path / "Dropbox"
    folder.mkdir()
    return Laptop(tmp_path, "home", folder), Laptop(tmp_path, "work", folder)


def _folder_text(folder) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in folder.rglob("*") if p.is_file())


def test_two_laptops_converge_through_a_folder_and_nothing_arrives_twice(laptops):
    home, work = laptops
    home.remember("Money is integer cents")
    home.remember("Refunds go through the ledger")
    home.remember("my own scratch note", "--personal")
    home.json("checkpoint", "create", "--objective", "Add retry", "--next-action", "wire backoff")
    sent = home.sync()
    assert sent["pushed"] == 3 and sent["personal"] == 1 and sent["machines"] == []
    work.remember("The API listens on 8080")
    got = work.sync()
    assert got["applied"] == 3 and got["pushed"] == 1
    assert work.active() == ["Money is integer cents", "Refunds go through the ledger",
                             "The API listens on 8080"]  # fmt: skip
    assert work.json("checkpoint")["revision"]["body"]["next_action"] == "wire backoff"
    assert home.sync()["applied"] == 1
    assert home.active() == ["Money is integer cents", "Refunds go through the ledger",
                             "The API listens on 8080", "my own scratch note"]  # fmt: skip
    again = [home.sync(), work.sync()]
    assert [(d["pushed"], d["pulled"]) for d in again] == [(0, 0), (0, 0)]
    assert "scratch note" not in _folder_text(home.folder)  # personal never left
    (theirs,) = [m for m in work.json("list")["results"] if m["content"].startswith("Money")]
    shown = work.json("show", theirs["id"])
    assert shown["team"]["author"]  # who wrote it, as the folder says
    text = work.run("sync", "--to", str(work.folder), "--from", str(work.folder)).stdout
    assert "wrote 0 events to" in text and "from 1 other machine in" in text


def test_what_the_redactor_flagged_never_reaches_the_folder(laptops):
    home, work = laptops
    secret = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8"
    (home.repo / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    home.remember(f"written before sharing: {secret}")  # stored redacted, locally
    (home.repo / ".waymark.toml").write_text(TOML, encoding="utf-8")
    home.remember("Staging resets nightly")
    done = home.sync()
    assert done["blocked"] == 1 and done["pushed"] == 1
    text = _folder_text(home.folder)
    assert "REDACTED" not in text and secret not in text and "Staging resets" in text
    assert work.sync()["applied"] == 1 and work.active() == ["Staging resets nightly"]


def test_two_revisions_of_one_memory_settle_alike_on_both_laptops(laptops):
    home, work = laptops
    base = home.remember("Deploys need the VPN")
    home.sync(), work.sync()
    first = home.json("supersede", base["id"], "--content", "Deploys need the VPN and a reviewer")
    work.json("supersede", base["id"], "--content", "Deploys need the VPN and a second key")
    for _ in range(2):
        home.sync(), work.sync()
    assert home.active() == work.active() == [first["memory"]["content"]]  # made first
    for laptop in (home, work):
        (waiting,) = laptop.json("candidates", "--kind", "conflict")["results"]
        assert waiting["fields"]["content"] == "Deploys need the VPN and a second key"


def test_two_revisions_of_one_checkpoint_settle_alike_and_approving_moves_both(laptops):
    home, work = laptops
    home.json("checkpoint", "create", "--objective", "Add retry", "--next-action", "start")
    home.sync(), work.sync()
    home.json("checkpoint", "revise", "--next-action", "home: add jitter")  # made first
    work.json("checkpoint", "revise", "--next-action", "work: cap the retries")
    for _ in range(2):
        home.sync(), work.sync()
    for laptop in (home, work):
        assert laptop.json("checkpoint")["revision"]["body"]["next_action"] == "home: add jitter"
    (waiting,) = work.json("candidates", "--kind", "conflict")["results"]
    assert waiting["action"] == "checkpoint"
    work.json("review", waiting["id"], "--approve")
    for _ in range(2):
        work.sync(), home.sync()
    for laptop in (home, work):
        body = laptop.json("checkpoint")["revision"]["body"]
        assert body["next_action"] == "work: cap the retries"
        assert laptop.json("candidates", "--kind", "conflict")["results"] == []  # settled


def test_kill_9_during_a_folder_sync_loses_nothing(laptops):
    home, work = laptops
    rng = random.Random(3)
    written = []
    started = time.monotonic()
    for round_ in range(10):
        if time.monotonic() - started > 45:
            break
        for laptop in (home, work):
            text = f"{laptop.home.name} fact {round_}"
            laptop.remember(text)
            written.append(text)
            process = subprocess.Popen(
                [sys.executable, "-m", "waymark", "sync", "--to", str(laptop.folder), "--from",
                 str(laptop.folder)], cwd=laptop.repo, env=laptop.env,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )  # fmt: skip
            time.sleep(rng.uniform(0.05, 0.5))
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
            process.wait()
    for _ in range(2):
        home.sync(), work.sync()
    assert home.active() == work.active() == sorted(written)  # all there, none twice


def test_a_stray_file_in_the_folder_is_a_clear_error_and_nothing_of_it_is_applied(laptops):
    home, work = laptops
    home.remember("Money is integer cents")
    home.sync()
    (machine,) = [p for p in (home.folder / "waymark").glob("*/*") if p.is_dir()]
    (machine / "999999999999.jsonl").write_text("not json\n", encoding="utf-8")
    failed = work.run("sync", "--from", str(work.folder), "--json")
    error = json.loads(failed.stdout)
    assert failed.returncode == 1 and error["code"] == "invalid_argument"
    assert "line 1 is not a Waymark sync event" in error["message"]
    assert work.active() == ["Money is integer cents"]  # the good file before it applied
    missing = work.run("sync", "--to", str(work.folder / "nope"), "--json")
    assert missing.returncode == 1 and "is not a folder" in json.loads(missing.stdout)["message"]


def test_a_project_that_is_not_shared_stays_on_the_machine(laptops):
    home, _ = laptops
    (home.repo / ".waymark.toml").write_text('name = "shop"\n', encoding="utf-8")
    home.remember("Money is integer cents")
    done = home.run("sync", "--to", str(home.folder), "--json")
    assert done.returncode == 1 and "not shared" in json.loads(done.stdout)["message"]
    assert _folder_text(home.folder) == ""
