"""The `jellybit` command line: local verbs (run, panel, migrate, check-config, parse, recognize,
healthcheck) and remote verbs that reach the worker over MQTT through `jellybit.client`."""

from jellybit.cli.local import main

__all__ = ["main"]
