"""What every hook process shares: read stdin safely, normalise, fail open, answer.

A hook must never break or stall its client. stdin is read with a size cap and a deadline;
any internal error is logged to `<data home>/hooks.log` (rotated) and the process exits 0
with nothing on stdout. Only the standard library and Waymark's own light modules (and, once
the database is opened, apsw) are imported here.
"""

from __future__ import annotations

import os
import sys
import time

from waymark import home
from waymark.base import hookruns, markers
from waymark.base import jsonlite as json  # `import json` costs a hook ~8 ms
from waymark.base.hookout import context_output

from .event import CLIENTS, Event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from waymark.projects.resolve import Project
    from waymark.storage.connection import Connection
    from waymark.warm import Pending

MAX_STDIN = 4 * 1024 * 1024
STDIN_DEADLINE_S = 3.0
# SessionEnd gets 2 s from the installer (Claude Code shares 1.5 s among all SessionEnd
# hooks unless a hook asks for more): its payload must arrive well within that.
STDIN_DEADLINES = {"SessionEnd": 1.0}
LOG_NAME = "hooks.log"
LOG_MAX_BYTES = 512 * 1024
BUSY_MS = 1500


class Context:
    """The event's database and project, opened only when the handler asks."""

    def __init__(self, event: Event) -> None:
        self.event = event
        self._conn: Connection | None = None
        self._project: Project | None = None
        self.records = False  # may this event be recorded (capture mode on), or only read
        self.key: str | None = None  # the delivery key (`delivery_key`) of this event

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            from waymark.storage import connection as db

            self._conn = db.connect(busy_ms=BUSY_MS, checkpoint_on_close=False)
        return self._conn

    @property
    def project(self) -> Project:
        assert self._project is not None, "call capturing() first"
        return self._project

    def capturing(self) -> bool:
        """True where hooks capture: every git repository by default, or only the projects
        the user enabled (capture.all_git_repos off). Finds the project without writing
        where capture is off, and creates no database outside a git repository."""
        from waymark.projects.capture import all_git_repos, hook_project
        from waymark.projects.locate import locate

        cwd = self.event.cwd or os.getcwd()
        no_store = not os.path.exists(home.db_path())
        if no_store and (not all_git_repos(None) or locate(cwd).how == "directory"):
            return False
        found = hook_project(self.conn, cwd, self.event.session_id)
        if found is None:
            return False
        self._project, chosen = found
        self.records = bool(chosen["records"])
        return bool(chosen["enabled"])

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()


def run(name: str, handler: Callable[[Context], str | None]) -> None:
    """The whole life of a hook process; always exits 0."""
    started = time.perf_counter()
    ctx = None
    client = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in CLIENTS else "claude-code"
    outcome = "empty"
    try:
        raw = read_stdin(STDIN_DEADLINES.get(name, STDIN_DEADLINE_S))
        data = parse_payload(raw)
        if data is not None:
            outcome = "repeat"
        key = delivery_key(name, raw, data, client)
        if data is not None and markers.first_delivery(key):
            outcome = "ok"
            _replay_spool()
            ctx = Context(normalise(client, data, name))
            ctx.key = key
            out = handler(ctx)
            if out:
                sys.stdout.write(out)
                sys.stdout.flush()
    except BaseException as exc:  # fail open: whatever happened, the client goes on
        if not isinstance(exc, SystemExit):
            outcome = "error"
            log(name, describe(exc))
    finally:
        if ctx is not None:
            try:
                ctx.close()
            except BaseException as exc:
                outcome = "error"
                log(name, f"close: {exc!r}")
        took = 1000 * (time.perf_counter() - started)
        hookruns.append(hookruns.SELF_TEST if os.environ.get(hookruns.SELF_TEST_ENV) else client,
                        name, outcome, took)  # fmt: skip
        if os.environ.get("WAYMARK_HOOK_TIMING"):
            log(name, f"took {took:.1f} ms")
    leave()


def leave() -> None:
    """Exit 0 now, without the interpreter's teardown: freeing every module and object a
    hook loaded cost it 1.3-1.5 ms of its ~13 (whole process, warm PreToolUse at 10,000
    memories), and nothing is left to it: the database is closed, logs are written with
    `os.write`, no thread or `atexit` handler is ours, and the output is flushed here."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (contextlib.suppress would cost a hook its import)
            stream.flush()
        except BaseException:  # the client closed the pipe: nothing more to say
            pass
    os._exit(0)


def _replay_spool() -> None:
    """Record the events earlier hooks spooled while the database was locked (see
    `spool`): before this event, so Stop sees every edit. Costs one stat when none wait."""
    if not os.path.isdir(os.path.join(home.data_home(), "spool")):
        return
    from .spool import replay

    try:
        replay(log, Context)
    except Exception as exc:  # the spool must never stop the event itself
        log("spool", describe(exc))


def describe(exc: BaseException) -> str:
    """The log line for a failure: the stable code where it is a storage failure (noting a
    damaged file, so writes stop), else the exception."""
    if "apsw" in sys.modules:  # only once the database was opened
        from waymark.storage.faults import translate

        mapped = translate(exc)
        if mapped is not None:
            return f"[{mapped.code}] {mapped.message}"
    return f"{type(exc).__name__}: {exc}"


def normalise(client: str, data: dict, name: str) -> Event:
    if client == "codex":
        from .codex import normalise as codex

        return codex(data, name)
    from .claude import normalise as claude

    return claude(data, name)


def read_stdin(deadline_s: float = STDIN_DEADLINE_S) -> bytes:
    """At most MAX_STDIN bytes of stdin, within `deadline_s`; never from a terminal."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        return b""
    return _read_capped(stream.buffer, deadline_s)


def parse_payload(raw: bytes) -> dict | None:
    if not raw.strip():
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        data = _salvage(raw)
    if b"\\ud" in raw or b"\\uD" in raw:  # maybe a lone surrogate, which SQLite refuses
        from waymark.base.text import mend_all

        data = mend_all(data)
    return data if isinstance(data, dict) else None


def _read_capped(buffer, deadline_s: float) -> bytes:  # type: ignore[no-untyped-def]
    """Read without blocking, napping while nothing has come: the client writes the event as
    it starts the process, so it is all there by the first read (`select` cost a hook
    0.2 ms to load)."""
    deadline = time.monotonic() + deadline_s
    chunks: list[bytes] = []
    size = 0
    fd = buffer.fileno()
    if os.name != "nt":  # Windows pipes block, bounded by size
        os.set_blocking(fd, False)
    nap = 0.0005
    while size < MAX_STDIN:
        try:
            chunk = os.read(fd, min(1 << 16, MAX_STDIN - size))
        except BlockingIOError:
            if time.monotonic() >= deadline:
                break
            time.sleep(nap)
            nap = min(2 * nap, 0.01)
            continue
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _salvage(raw: bytes) -> dict | None:
    """A payload cut at the size cap: keep everything before the (huge) tool response."""
    text = raw.decode("utf-8", "replace")
    cut = text.find('"tool_response"')
    if cut <= 0:
        return None
    head = text[:cut].rstrip().rstrip(",") + "}"
    try:
        data = json.loads(head)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def delivery_key(name: str, raw: bytes, data: dict | None, client: str) -> str:
    """The key that runs this event once (`markers.first_delivery`): a Claude Code prompt's
    is its session and prompt (`markers.prompt_key`), shared with the MCP `hook` tool that
    may answer it first."""
    if name == "UserPromptSubmit" and client == "claude-code" and data is not None:
        session, prompt_id, prompt = (
            data.get("session_id"),
            data.get("prompt_id"),
            data.get("prompt"),
        )
        if isinstance(session, str) and isinstance(prompt, str):
            return markers.prompt_key(
                session, prompt_id if isinstance(prompt_id, str) else "", prompt
            )
    return markers.delivery_key(name, raw)


WARM_S = 0.3  # a warm answer's deadline; past it the hook does the work itself


def ask_warm(ctx: Context, op: str, **fields: object) -> tuple[bool, dict | None]:
    """Send this event to the warm MCP server (`op` with the event's cwd, session, client,
    name and agent, and `fields`): (whether a server took the request, its reply when it
    came by WARM_S with `ok` true). A refusal is logged; the caller then does the work."""
    pending = send_warm(ctx, op, **fields)
    if pending is None:
        return False, None
    return True, warm_reply(ctx, op, pending.reply())


def send_warm(ctx: Context, op: str, **fields: object) -> Pending | None:
    """`ask_warm`'s request on its way (None when no server took it): `.reply(keep=True)`
    keeps the connection for a caller that may learn the server took the work."""
    from waymark import warm

    event = ctx.event
    about = {"cwd": event.cwd or os.getcwd(), "session_id": event.session_id,
             "client": event.client, "name": event.name, "agent_id": event.agent_id}  # fmt: skip
    return warm.send(op, {**fields, "event": about}, WARM_S)


def warm_reply(ctx: Context, op: str, reply: dict | None) -> dict | None:
    """`reply` when it is a good one; a refusal is logged."""
    if reply is not None and not reply.get("ok"):
        log(ctx.event.name, f"warm {op} request refused: {reply.get('error')}")
        return None
    return reply


def warm_output(name: str, reply: dict) -> str | None:
    """The hook's output for a warm reply's `text`."""
    text = reply.get("text")
    return context_output(name, text) if isinstance(text, str) and text else None


def block_output(reason: str) -> str:
    return json.dumps({"decision": "block", "reason": reason})


def log(name: str, message: str) -> None:
    """One redacted line in the hooks log, rotated at LOG_MAX_BYTES; never raises."""
    from waymark.base import logfile

    logfile.append(LOG_NAME, name, message, max_bytes=LOG_MAX_BYTES)
