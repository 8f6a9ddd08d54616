"""`waymark doctor`: is everything in place, and if not, what exactly to do.

Each finding is {check, status, detail, fix}; status is ok, warn (works, but worth a look),
fail (broken) or skip (not applicable here). Healthy means no fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

from waymark import __version__, home
from waymark.base import hookruns, launch
from waymark.recall import embed

TYPE_CHECKING = False  # typing costs a command's process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


def finding(check: str, status: str, detail: str, fix: str = "") -> dict[str, str]:
    return {"check": check, "status": status, "detail": detail, "fix": fix}


CHECK_FILE = "doctor.json"  # in the data home: the last full check, for the dashboard


def check_and_keep(
    client_checks: Callable[[str], list[dict[str, str]]] | None = None,
) -> dict[str, Any]:
    """Every check (`run_all`), kept as the last one with its time: {at, findings}. The
    dashboard shows it without running it again at each load (a second at 20,000
    memories)."""
    from waymark.base import clock
    from waymark.base.files import new_temp

    found = {"at": clock.now(), "findings": run_all(client_checks)}
    folder = home.data_home()
    temp = None
    try:  # kept where it can be: a read-only home or a full disk still gets its checks
        if os.path.isdir(folder):
            temp = new_temp(folder, CHECK_FILE + ".")
            with open(temp, "w", encoding="utf-8") as f:
                json.dump(found, f)
            os.replace(temp, os.path.join(folder, CHECK_FILE))
    except OSError:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
    return found


def last_check() -> dict[str, Any] | None:
    """The check `check_and_keep` kept last ({at, findings}), or None."""
    try:
        with open(os.path.join(home.data_home(), CHECK_FILE), encoding="utf-8") as f:
            found = json.load(f)
    except (OSError, ValueError):
        return None
    ok = isinstance(found, dict) and isinstance(found.get("findings"), list)
    return found if ok else None


def run_all(
    client_checks: Callable[[str], list[dict[str, str]]] | None = None,
) -> list[dict[str, str]]:
    """Every check, in order; `client_checks(client)` adds each client's registration (the
    installers know what they wrote: `waymark.installers.checks`)."""
    out = [interpreter(), *database(), *project_here()]
    if client_checks is not None:
        for client in ("claude-code", "codex", "opencode"):
            out += client_checks(client)
    out += project_config()
    out += native_memory()
    out += [*model(), warm_server(), server_log(), timed_hook()]
    out += team_store()
    return out


def team_store() -> list[dict[str, str]]:
    """The team store, when one is connected: it answers, its schema fits, this role writes."""
    from waymark.team import link

    found = link.status()
    if not found["connected"]:
        return []
    where = f"{found['store']} (from {found['from']})"
    if not found["reachable"]:
        return [finding("team store", FAIL, f"{where}: {found['why']}",
                        "check the host, the role and its password (~/.pgpass), then "
                        "`waymark team status`")]  # fmt: skip
    schema = found["schema"]
    if schema["server"] > schema["client"]:
        return [finding("team store", FAIL,
                        f"{where}: the server's schema is {schema['server']}, this Waymark's "
                        f"{schema['client']}", "install the Waymark the rest of the team runs")]  # fmt: skip
    role = "writes" if found["writes"] else "reads only (a read-only role)"
    out = [finding("team store", OK,
                   f"{where}: PostgreSQL {found['server']}, schema {schema['server']}, {role}")]  # fmt: skip
    return out + _team_lag()


def _team_lag() -> list[dict[str, str]]:
    """This project's lag behind the team store: events not sent, and the last sync."""
    from waymark.errors import WaymarkError
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db
    from waymark.team import sync

    try:
        conn = db.connect()
    except WaymarkError:
        return []
    try:
        here = sync.status_of(conn, resolve(conn, None, cwd=os.getcwd(), create=False))
    except WaymarkError:
        return []
    finally:
        conn.close()
    if not here.get("shared"):
        return []
    when = (here["last_sync"] or "never")[:16].replace("T", " ")
    status = WARN if here["unsent"] and here["last_sync"] is None else OK
    return [finding("team sync", status,
                    f"{here['project_key']}: last sync {when}, {here['unsent']} memory events "
                    "not sent yet", "waymark sync" if status == WARN else "")]  # fmt: skip


SERVER_LINES = 3


def server_log() -> dict[str, str]:
    """How the MCP server's last runs ended (`server.log`): a crash is a warning."""
    from waymark.base import logfile

    lines = [
        line for line in logfile.tail("server.log", 200) if " exit " in line or " crash: " in line
    ]
    if not lines:
        return finding("server log", SKIP, "no MCP server has run with this data folder yet")
    last = lines[-SERVER_LINES:]
    detail = "; ".join(line[:300] for line in last)
    if any(" crash: " in line for line in last):
        path = os.path.join(home.data_home(), "server.log")
        return finding("server log", WARN, detail, f"the traceback is in {path}")
    return finding("server log", OK, detail)


def interpreter() -> dict[str, str]:
    from waymark.storage.connection import engine_version

    version = ".".join(map(str, sys.version_info[:3]))
    venv = sys.prefix != sys.base_prefix
    detail = (
        f"Python {version} at {sys.executable}; Waymark {__version__}; SQLite {engine_version()}"
    )
    if not venv:
        return finding(
            "interpreter",
            WARN,
            detail + "; not in a virtual environment",
            "run install.sh, which gives Waymark an environment of its own",
        )
    return finding("interpreter", OK, detail)


def database() -> list[dict[str, str]]:
    from waymark.storage import connection as db
    from waymark.storage import faults

    path = home.db_path()
    if not os.path.exists(path):
        return [
            finding(
                "database",
                WARN,
                f"{path} does not exist yet",
                "it is created by the first `waymark remember` or `waymark enable`",
            )
        ]
    from waymark.errors import ReadOnlyStore, SchemaTooNew, WaymarkError

    restore = (
        "restore the newest backup: `waymark restore FILE` (see `ls "
        f"{os.path.join(home.data_home(), 'backups')}`)"
    )
    try:
        conn = db.connect(path)
    except ReadOnlyStore as exc:  # cannot write is not damage: never advise discarding it
        return [
            finding("database", WARN, exc.message, "run Waymark where its data folder is writable")
        ]
    except SchemaTooNew as exc:
        return [finding("database", FAIL, exc.message, "upgrade Waymark (install.sh)")]
    except WaymarkError as exc:
        return [finding("database", FAIL, f"{exc.message} [{exc.code}]", restore)]
    except Exception as exc:  # report, never raise: that is the doctor's job
        return [finding("database", FAIL, str(exc), restore)]
    try:
        version = db.schema_version(conn)
        checks, fk = db.problems(conn)  # the full check: every page, every index
        read_only = db.read_only(conn)
    except Exception as exc:
        mapped = faults.translate(exc, path)
        detail = f"{mapped.message} [{mapped.code}]" if mapped else str(exc)
        return [finding("database", FAIL, detail, restore)]
    finally:
        conn.close()
    return [_state(path, "; ".join(checks[:3]), fk, read_only, version, restore),
            *_permissions(path)]  # fmt: skip


def _state(
    path: str, integrity: str, fk: int, read_only: bool, version: int, restore: str
) -> dict[str, str]:
    """The database's finding: damaged, full disk, read-only, or ok (damage noted before and
    now gone is cleared, so writes go on)."""
    from waymark.storage import connection as db
    from waymark.storage import faults
    from waymark.storage.migrations import SCHEMA_VERSION

    if integrity != "ok" or fk:
        if integrity != "ok":
            faults.translate(db.Corrupt(integrity), path)  # writes stop until it is restored
        return finding(
            "database", FAIL,
            f"{path} is damaged (integrity: {integrity}; foreign keys: {fk} violations); "
            "writes are stopped [database_corrupt]",
            restore,
        )  # fmt: skip
    if faults.disk_full(path):  # whether or not the open itself needed room
        return finding(
            "database", FAIL,
            f"{path}: integrity ok, but the disk holding it is full: reading works, every "
            "write is refused [disk_full]",
            f"free some space on the disk holding {home.data_home()}",
        )  # fmt: skip
    if read_only:
        return finding(
            "database", WARN,
            f"{path}: integrity ok, schema {version} of {SCHEMA_VERSION}; read-only here: "
            "reading works, every write is refused [read_only]",
            "run Waymark where its data folder is writable to record anything",
        )  # fmt: skip
    cleared = faults.clear_damaged(path)
    note = "; damage noted earlier is gone, writes are allowed again" if cleared else ""
    return finding(
        "database", OK, f"{path}: integrity ok, schema {version} of {SCHEMA_VERSION}{note}"
    )


def _permissions(path: str) -> list[dict[str, str]]:
    """On POSIX: whether the data folder and the database are owner-only."""
    if os.name != "posix":
        return []
    loose = [p for p, want in ((home.data_home(), 0o700), (path, 0o600))
             if os.stat(p).st_mode & 0o077]  # fmt: skip
    if loose:
        return [finding("permissions", FAIL, f"readable by others: {', '.join(loose)}",
                        f"chmod 700 {home.data_home()} && chmod 600 {path}")]  # fmt: skip
    return [finding("permissions", OK, "data folder 0700, database 0600")]


def project_config(cwd: str | None = None) -> list[dict[str, str]]:
    """The `.waymark.toml` tables the hooks read here ([capture], [guard], [output]), read as
    the hooks read them: a hook fails open on a bad one (a line in its log), so say it here."""
    from waymark.errors import WaymarkError
    from waymark.handoff import outputs
    from waymark.projects import guard, ignore
    from waymark.projects.locate import config_files, load_config, locate, unknown_keys

    where = cwd or os.getcwd()
    try:
        found = locate(where)
    except WaymarkError as exc:  # the file that would name the project does not parse
        return [finding("project config", FAIL, exc.message, "fix the file; hooks skip it")]
    files = config_files(where, found.root)
    if not files:
        return []
    try:
        for path in files:
            load_config(path)  # TOML itself, naming the line
        rules = ignore.rules_for(where, found.root)
        protect = guard.guard_for(where, found.root)
        trim = outputs.rules_for(where, found.root)
    except WaymarkError as exc:
        return [finding("project config", FAIL, exc.message, "fix the file; hooks skip it")]
    said = [f"capture ignores {len(rules.paths)} path and {len(rules.commands)} command patterns"]
    if protect.paths or protect.commands:
        said.append(f"guard asks for {len(protect.paths)} paths, {len(protect.commands)} commands")
    if trim:
        said.append(f"shell output over {trim[0]:,} characters trimmed, kept {trim[1]} days")
    out = [finding("project config", OK, f"{', '.join(files)}: " + "; ".join(said))]
    for sentence in (s for path in files for s in unknown_keys(path)):
        out.append(
            finding("project config", WARN, sentence + "; Waymark ignores it", "fix the name")
        )
    return out


def native_memory(cwd: str | None = None) -> list[dict[str, str]]:
    """Whether Claude Code's and Codex's own memory is on (Waymark never writes into it;
    `waymark import --from` reads it)."""
    from waymark.data import client_memory
    from waymark.projects.locate import locate

    state = client_memory.native_state(locate(cwd or os.getcwd()).root)
    out = []
    for client, source in (("claude-code", "claude-memory"), ("codex", "codex-memories")):
        s = state[client]
        said = "on" if s["on"] else "off"
        files = f"; {s['files']} file(s) in {s['folder']}" if s["folder"] else ""
        fix = f"waymark import --from {source}  (read-only)" if s["files"] else ""
        out.append(finding(f"{client} native memory", OK, f"{said}{files}", fix))
    return out


def project_here(cwd: str | None = None) -> list[dict[str, str]]:
    """Which project this directory is; a warning when it is none but the same repository
    has memories under another path (a clone, or a copy)."""
    from waymark.errors import NotFound, WaymarkError
    from waymark.projects import manage
    from waymark.projects.resolve import resolve
    from waymark.storage import connection as db

    if not os.path.exists(home.db_path()):
        return []
    try:
        conn = db.connect()
    except WaymarkError:
        return []  # the database check said why
    try:
        try:
            project = resolve(conn, None, cwd=cwd, create=False, bind=False)
        except NotFound:
            found = manage.unbound(conn, cwd or os.getcwd())
            if not found["same_repository"]:
                return [finding("project", SKIP, f"{found['root']} is not a Waymark project")]
            same = found["same_repository"][0]
            return [
                finding(
                    "project",
                    WARN,
                    f"{found['root']} is not a Waymark project, but the same repository is "
                    f"project {same['id']} at {same['root']} with {same['memories']} memories",
                    f"waymark project rebind --to {same['id']}  (to use them here)",
                )
            ]
        return [finding("project", OK, f"{project.name or project.root}: {project.how}")]
    except WaymarkError as exc:
        return [finding("project", WARN, f"{exc.message} [{exc.code}]")]
    finally:
        conn.close()


def model() -> list[dict[str, str]]:
    from waymark.recall.embed import semantic_available

    int8, spec = _model_settings()
    available, note = semantic_available(spec)
    if not available:
        return [
            finding(
                "embedding model",
                WARN,
                f"semantic recall off: {note}",
                "`waymark index` fetches the model once; recall stays lexical until then",
            )
        ]
    return [finding("embedding model", OK, note), query_model(int8, spec)]


def _model_settings() -> tuple[bool, embed.Model]:
    """(`recall.int8_queries`, the `recall.model` chosen): the defaults where the database
    cannot say (its own check reports what is wrong with it)."""
    from waymark.recall import quantize
    from waymark.storage import connection as db

    if os.path.exists(home.db_path()):
        try:
            conn = db.connect()
            try:
                return quantize.enabled(conn), embed.chosen(conn)
            finally:
                conn.close()
        except Exception:
            pass
    return True, embed.ENGLISH


def query_model(enabled: bool, spec: embed.Model) -> dict[str, str]:
    """Whether queries go through the int8 copy of the model (twice as fast) and, if not, why."""
    from waymark.recall import quantize

    note = quantize.note(enabled, spec)
    if not enabled or embed.int8_built(spec) is not None:
        return finding("query model", OK, note)
    return finding(
        "query model",
        WARN,
        note,
        "run `waymark index` (it builds the int8 copy once; the onnx package must be installed:"
        " install.sh installs it)",
    )


def warm_server() -> dict[str, str]:
    from waymark import warm

    reply = warm.ask("ping", {}, 0.2)
    if reply is None:
        return finding(
            "warm recall",
            OK,
            "no MCP server running now: hooks use lexical recall (each client session starts one)",
        )
    return finding("warm recall", OK, "an MCP server answers on the warm socket")


def timed_hook() -> dict[str, str]:
    payload = json.dumps(
        {
            "session_id": "doctor",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": tempfile.gettempdir(),
        }
    ).encode()
    started = time.perf_counter()
    try:
        done = subprocess.run(
            launch.argv(sys.executable, "session_start", "claude-code"),
            input=payload,
            capture_output=True,
            timeout=20,
            env={**os.environ, hookruns.SELF_TEST_ENV: "1"},  # not proof that Claude Code runs it
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return finding("hook run", FAIL, f"could not run a hook: {exc}", "run install.sh again")
    ms = 1000 * (time.perf_counter() - started)
    if done.returncode != 0 or done.stderr:
        return finding(
            "hook run",
            FAIL,
            f"SessionStart exited {done.returncode}: "
            f"{done.stderr.decode('utf-8', 'replace')[-300:]}",
            "run install.sh again",
        )
    status = OK if ms < 500 else WARN
    return finding(
        "hook run",
        status,
        f"SessionStart ran in {ms:.0f} ms",
        "" if status == OK else "a slow disk or interpreter; see `waymark status`",
    )
