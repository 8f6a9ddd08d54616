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
