"""`python -m jellybit.cli`: the same as the `jellybit` command."""

import sys

from jellybit.cli import main

sys.exit(main())
