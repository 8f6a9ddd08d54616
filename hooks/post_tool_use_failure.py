"""PostToolUseFailure (Claude Code): a failed tool call, with its exit code and error tail.

python -I -c "from waymark.hooks.post_tool_use_failure import main;main()" claude-code
"""

from __future__ import annotations

from .post_tool_use import handle
from .runtime import run

NAME = "PostToolUseFailure"


def main() -> None:
    run(NAME, handle)


if __name__ == "__main__":
    main()
