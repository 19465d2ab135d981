"""`python -m devstack prepare|wait --dir DIR` (with scripts/ on PYTHONPATH), as scripts/run-local runs it."""

import sys

from devstack.stack import main

sys.exit(main())
