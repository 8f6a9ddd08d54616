"""Every test gets its own data home: a real SQLite file under tmp_path."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import uuid

import pytest

from waymark.projects.resolve import Project, resolve
from waymark.storage import connection as db


def _real_model_missing() -> str | None:
    folder = os.environ.get("WAYMARK_EMBED_MODEL_DIR", "")
    from waymark.recall import embed

    if folder and all(os.path.isfile(os.path.join(folder, f)) for f in embed.ENGLISH.files):
        return None
    return (
        "needs the real all-MiniLM-L6-v2 ONNX model: set WAYMARK_EMBED_MODEL_DIR to its folder "
        "(.ci/run points it at ../shared/models); the tests never download a model"
    )


REAL_MODEL_MISSING = _real_model_missing()
needs_real_model = pytest.mark.skipif(
    REAL_MODEL_MISSING is not None, reason=REAL_MODEL_MISSING or ""
)


@pytest.fixture(scope="session", autouse=True)
def embedding_model(tmp_path_factory):
    """The model every semantic test loads through WAYMARK_EMBED_MODEL_DIR: the real one
    where it points (CI), else a small one built here (tiny_model.py)."""
    if REAL_MODEL_MISSING is None:
        yield os.environ["WAYMARK_EMBED_MODEL_DIR"]
        return
    import tiny_model

    folder = tiny_model.build(tmp_path_factory.mktemp("tiny-model"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WAYMARK_EMBED_MODEL_DIR", str(folder))
        yield str(folder)


@pytest.fixture(autouse=True)
def no_model_downloads(monkeypatch):
    """No test waits on a download: without a model folder, loading is local-only, so a
    missing model fails at once (ModelUnavailable) instead of retrying a network."""
    from waymark.recall import embed

    real = embed.load_backend
    monkeypatch.setattr(
        embed,
        "load_backend",
        lambda folder, *, local_only, threads=1, spec=embed.ENGLISH: real(
            folder, local_only=True, threads=threads, spec=spec
        ),
    )


@pytest.fixture(autouse=True)
def waymark_home(tmp_path, monkeypatch):
    home = tmp_path / "waymark-home"
    monkeypatch.setenv("WAYMARK_HOME", str(home))
    return home


@pytest.fixture
def repo(tmp_path):
    """A real git repository with one commit and a few files."""
    root = tmp_path / "repo"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "core.py").write_text("def run():\n    pass\n", encoding="utf-8")
    (root / "README.md").write_text("# demo\n", encoding="utf-8")
    env = git_env(tmp_path)
    subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "init", "-q", str(root)], check=True, env=env
    )
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True, env=env)
    return root


def git_env(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(tmp_path),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="t",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="t",
        GIT_COMMITTER_EMAIL="t@example.com",
    )
    return env


@pytest.fixture
def conn():
    connection = db.connect()
    yield connection
    connection.close()


@pytest.fixture
def project(conn, repo) -> Project:
    return resolve(conn, str(repo))


@pytest.fixture
def enabled(conn, repo) -> Project:
    """The repository's project, with capture on."""
    from waymark.projects import capture

    found = resolve(conn, str(repo))
    capture.set_enabled(conn, found, True)
    return found


def isolated(code: str) -> str:
    """What `code` prints in a fresh `python -I` process, as a hook process starts."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True
    )
    return done.stdout


def call_tool(cwd, name: str, args: dict):
    """One call of the real MCP server's tool `name`, as a client in `cwd` makes it."""
    import asyncio

    from mcp import Client

    from waymark.server.app import build_server
    from waymark.server.state import State

    server, state = build_server(State(cwd=str(cwd)))

    async def go():
        async with Client(server) as client:
            return await client.call_tool(name, args)

    try:
        return asyncio.run(go())
    finally:
        state.close()


# --- a private PostgreSQL with pgvector for the team tests (pgserver) -----------------

PASSWORD = "Tr0ub4dor-" + "x9Q2"  # the role `alice` signs in with it (scram)


@pytest.fixture(scope="session")
def postgres(tmp_path_factory):
    """One private PostgreSQL for the session: a socket in a temporary folder, `trust` for
    the superuser, a password for `alice`, and `reader`, who may only read."""
    psycopg = pytest.importorskip("psycopg", reason="the team store needs psycopg (dev extra)")
    pgserver = pytest.importorskip("pgserver", reason="the tests' PostgreSQL is pgserver's")
    runtime = tmp_path_factory.mktemp("runtime")
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))  # pgserver's platformdirs asks
    folder = tmp_path_factory.mktemp("pg")
    server = pgserver.get_server(str(folder), cleanup_mode="stop")
    hba = pathlib.Path(folder) / "pg_hba.conf"
    hba.write_text("local all alice scram-sha-256\n" + hba.read_text(), encoding="utf-8")
    with psycopg.connect(server.get_uri(), autocommit=True) as c:
        c.execute(f"CREATE ROLE alice LOGIN SUPERUSER PASSWORD '{PASSWORD}'")
        c.execute("CREATE ROLE reader LOGIN")
        c.execute("SELECT pg_reload_conf()")
    yield server
    server.cleanup()


@pytest.fixture
def store(postgres):
    """A fresh database of that server: (conninfo as the superuser, its name)."""
    import psycopg

    name = "team_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres.get_uri(), autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    socket = psycopg.conninfo.conninfo_to_dict(postgres.get_uri())["host"]
    return f"postgresql://postgres@/{name}?host={socket}", name, socket


FILLERS = ("Lunch orders go in the kitchen channel", "The office plants need water",
           "Parking permits renew in March", "Run ruff format before committing")  # fmt: skip


def remember_fillers(conn, project) -> None:
    """Four unrelated facts: a corpus in which lexical relevance means something."""
    from waymark.memories import store
    from waymark.memories.draft import make_draft

    for text in FILLERS:
        store.remember(conn, project, make_draft(project, type="fact", content=text))
