"""How a client starts a hook: `"<python>" -I -c "<program>" <client>`.

Not `python -m waymark.hooks.<module>`: `-m` goes through runpy, which imports importlib.util,
contextlib and functools before the hook's first line, about a tenth of a PreToolUse run.
Installers write this form into the clients' settings, the plugins' launchers spell the same
line, doctor and the benches time it.
"""

from __future__ import annotations


def program(module: str) -> str:
    """The `-c` program that runs one hook module, e.g. `pre_tool_use`."""
    return f"from waymark.hooks.{module} import main;main()"


def argv(python: str, module: str, client: str) -> list[str]:
    """The hook's process, as the client starts it."""
    return [python, "-I", "-c", program(module), client]


def behind_the_hooks(step: int = 10) -> None:
    """Lower this thread's CPU priority (on Linux the threads it starts inherit it), for work
    that must not slow a hook down: a sync with the team store, run by the CLI or by the MCP
    server's background thread. Where the OS has no `nice`, nothing changes."""
    import contextlib
    import os

    with contextlib.suppress(AttributeError, OSError):
        os.nice(step)


def detached(argv: list[str]) -> None:
    """Start `argv` as a process of its own that nothing waits for: no pipe of the caller's
    held open, and it outlives the caller. On POSIX it is posix_spawn in a session of its
    own (importing subprocess cost the SessionStart hook 7 ms); elsewhere subprocess.Popen.
    Raises OSError when no process can be had."""
    import os

    if hasattr(os, "posix_spawn"):
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        try:
            os.posix_spawn(argv[0], argv, os.environ, file_actions=devnull, setsid=True)
            return
        except NotImplementedError:  # no POSIX_SPAWN_SETSID here: subprocess does it
            pass
    import subprocess

    subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True, close_fds=True,
    )  # fmt: skip
