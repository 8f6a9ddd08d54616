"""`python -m waymark` is the `waymark` command."""

import sys

from waymark.cli import main

sys.exit(main())
