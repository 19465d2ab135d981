"""Jellybit's tests."""

import sys
from pathlib import Path

# The local stack's helpers (scripts/devstack, behind scripts/run-local) write the same mosquitto and
# qBittorrent configs the tests run, so the tests import them from there.
SCRIPTS = str(Path(__file__).resolve().parent.parent / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
