"""`python -m waymark` is the `waymark` command."""

import sys

from .cli import main

sys.exit(main())
