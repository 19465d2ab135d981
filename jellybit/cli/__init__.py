"""The `jellybit` command line: local verbs (run, panel, migrate, check-config, parse, recognize,
healthcheck) and remote verbs that reach the worker over MQTT through `jellybit.client`."""

from __future__ import annotations

import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `jellybit` console script (a plain `notify` skips the full CLI's imports)."""
    from jellybit.cli import notify

    code = notify.run(sys.argv[1:] if argv is None else argv)
    if code is not None:
        return code
    from jellybit.cli.local import main as full

    return full(argv)
