"""`python -m waymark` is the `waymark` command."""

import sys

if sys.argv[1:] == ["mcp"]:  # how clients start the server: first answers before the CLI loads
    from waymark.server.front import main

    sys.exit(main())
else:
    from waymark.cli import entry

    entry()
