"""The `jellybit` command line: the parser, the local verbs (run, panel, migrate, check-config, parse,
recognize, healthcheck) and `main`; the remote verbs are in `remote.py`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from jellybit import __version__
from jellybit.config import CONFIG_ENV, Config, load_config
from jellybit.core.providers import searched
from jellybit.errors import ConfigError, JellybitError
from jellybit.logs import setup_logging

log = logging.getLogger(__name__)

DESCRIPTION = ("Jellybit: torrents into a Jellyfin library. Run the worker, migrate, check the config, "
               "parse release names, and send any command to the worker over MQTT.")

EXIT_OK = 0
EXIT_ERROR = 1           # the command failed (an error response, a domain error)
EXIT_USAGE = 2           # bad arguments (argparse uses 2 as well)
EXIT_CONFIG = 3          # the configuration is invalid
EXIT_NO_ANSWER = 4       # no answer from the worker (reserved for commands over MQTT)
LOCAL_DIR_ENV = "JELLYBIT_LOCAL_DIR"                  # scripts/run-local's folder (scripts/devstack)
LOCAL_CONFIG = Path("var") / "local" / "jellybit.toml"   # where scripts/run-local writes its config


def find_config(explicit: str | None, env: Mapping[str, str] | None = None,
                cwd: Path | None = None) -> tuple[str | None, str]:
    """The config file and where it came from: --config, JELLYBIT_CONFIG, else the local stack's own."""
    env = os.environ if env is None else env
    if explicit:
        return explicit, f"--config {explicit}"
    if env.get(CONFIG_ENV):
        return env[CONFIG_ENV], f"{CONFIG_ENV}={env[CONFIG_ENV]}"
    found = [Path(env[LOCAL_DIR_ENV]) / "jellybit.toml"] if env.get(LOCAL_DIR_ENV) else []
    found.append((cwd or Path.cwd()) / LOCAL_CONFIG)
    for path in found:
        if path.is_file():
            return str(path), f"{path} (the local stack of scripts/run-local)"
    return None, "the built-in defaults (no --config, no JELLYBIT_CONFIG, no var/local/jellybit.toml here)"


def config_hint(source: str, config: Config) -> str:
    """What to tell a user whose command reached no worker: which config was used and how to point it."""
    told = f"the configuration used is {source}, with the broker at {config.mqtt.url}."
    if source.startswith("the built-in defaults"):
        return (told + " For the local stack run it from the repository folder (scripts/run-local keeps "
                f"its config in {LOCAL_CONFIG}), or give --config FILE or {CONFIG_ENV}=FILE.")
    return told + " Is the worker running (jellybit run, or scripts/run-local)?"


def _load(args: argparse.Namespace) -> Config:
    config = load_config(args.config)
    setup_logging(config.log.level, config.log.format, stream=sys.stderr)
    return config


def cmd_check_config(args: argparse.Namespace) -> int:
    """Validate the configuration file and print a short summary."""
    config = load_config(args.config)
    summary = {
        "file": getattr(args, "config_source", args.config),
        "qbittorrent": config.qbittorrent.url,
        "mqtt": config.mqtt.url,
        "database": str(config.storage.database),
        "movies": str(config.paths.movies),
        "series": str(config.paths.series),
        "llm": config.llm.base_url if config.llm.enabled else None,
        "metadata": [n for n in searched() if getattr(config.metadata, n).enabled],
    }
    if args.json:
        print(json.dumps({"ok": True, **summary}, ensure_ascii=False))
    else:
        print("configuration is valid")
        for key, value in summary.items():
            print(f"  {key}: {value}")
    return EXIT_OK


def cmd_migrate(args: argparse.Namespace) -> int:
    """Apply pending database migrations."""
    from jellybit.adapters.store import Store

    config = _load(args)

    async def migrate() -> list[int]:
        store = Store(config.storage.database)
        await store.open(migrate=False)
        try:
            return await store.migrate()
        finally:
            await store.close()

    applied = asyncio.run(migrate())
    if args.json:
        print(json.dumps({"applied": applied, "database": str(config.storage.database)}))
    elif applied:
        print(f"applied migrations {', '.join(map(str, applied))} to {config.storage.database}")
    else:
        print(f"database {config.storage.database} is up to date")
    return EXIT_OK


def cmd_parse(args: argparse.Namespace) -> int:
    """Parse release names (arguments, or one per line on stdin) into JSON lines."""
    from jellybit.cli.parse import run

    return run(list(args.names), sys.stdin, sys.stdout, path=args.path)


def cmd_recognize(args: argparse.Namespace) -> int:
    """Dry-run recognition with the configured providers; nothing is stored or laid out."""
    from jellybit.cli.recognize import run_recognize

    config = load_config(args.config)
    setup_logging("WARNING", "text", stream=sys.stderr)
    return run_recognize(args, config)


def cmd_run(args: argparse.Namespace) -> int:
    """Run the worker until SIGTERM/SIGINT."""
    from jellybit import app

    config = _load(args)
    return EXIT_OK if asyncio.run(app.run(config)) == 0 else EXIT_ERROR


def cmd_panel(args: argparse.Namespace) -> int:
    """Run the web panel (a separate MQTT client of the worker) until stopped."""
    from ui.app import run_panel

    config = _load(args)
    run_panel(config)
    return EXIT_OK


def cmd_remote(args: argparse.Namespace) -> int:
    """Send a command to the worker over MQTT."""
    from jellybit.cli.remote import run_remote

    config = load_config(args.config)
    setup_logging("WARNING", "text", stream=sys.stderr)
    args.config_hint = config_hint(getattr(args, "config_source", ""), config)
    if args.remote == "add" and bool(args.source) == bool(args.torrent):
        print("jellybit: give a SOURCE or --torrent FILE (exactly one)", file=sys.stderr)
        return EXIT_USAGE
    source = args.source if args.remote == "add" else None
    if source and ":" not in source and (source.lower().endswith(".torrent") or Path(source).is_file()):
        print(f"jellybit: {source} is a file: add a .torrent file with `jellybit add --torrent "
              f"{source}` (SOURCE is a magnet link, an http(s) URL or an infohash)", file=sys.stderr)
        return EXIT_USAGE
    return asyncio.run(run_remote(args, config))


def cmd_healthcheck(args: argparse.Namespace) -> int:
    """Check the database, the broker and that the worker answers."""
    from jellybit.cli.health import run_healthcheck

    config = load_config(args.config)
    setup_logging("WARNING", "text", stream=sys.stderr)
    return run_healthcheck(config, database=not args.no_database, bus=not args.no_bus,
                           timeout=args.timeout, as_json=args.json, panel=args.panel,
                           panel_url=args.panel_url, services=not args.no_services,
                           jellyfin_libraries=args.jellyfin_libraries)


def build_parser() -> argparse.ArgumentParser:
    """Build the argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="jellybit", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"jellybit {__version__}")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: $JELLYBIT_CONFIG, "
                        "else var/local/jellybit.toml of the local stack)")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, func: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(func=func)
        return p

    p = add("check-config", cmd_check_config, "validate the configuration file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = add("migrate", cmd_migrate, "apply pending database migrations")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p = add("parse", cmd_parse, "parse release names offline (arguments or stdin), JSON lines out")
    p.add_argument("names", nargs="*", help="release names; none = read one per line from stdin")
    kind = p.add_mutually_exclusive_group()
    kind.add_argument("--name", dest="path", action="store_false", default=None,
                      help="read each as a torrent's name: a slash is the title's (Fate/stay night)")
    kind.add_argument("--path", dest="path", action="store_true", default=None,
                      help="read each as a file's path: a slash separates folders")
    p = add("recognize", cmd_recognize, "dry-run recognition of a release (nothing stored or laid out)")
    p.add_argument("name", nargs="?", help="the torrent/release name; alone it stands for one file "
                   "(NAME, or NAME.mkv when it has no media extension)")
    p.add_argument("--torrent", metavar="FILE", help="read the name and file list from a .torrent")
    p.add_argument("--files", metavar="FILE",
                   help="file list, one per line (PATH or SIZE<TAB>PATH; - = stdin)")
    p.add_argument("--context", default="", help="what it is, in a sentence")
    p.add_argument("--hint", action="append", help="a hint (repeatable)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add("run", cmd_run, "run the worker")
    add("panel", cmd_panel, "run the web panel")
    p = add("healthcheck", cmd_healthcheck, "check the database, broker and worker, and the services the "
            "worker uses (exit 0 = healthy)")
    p.add_argument("--no-database", action="store_true", help="skip the database check (e.g. in the panel)")
    p.add_argument("--no-bus", action="store_true", help="skip the broker and worker checks")
    p.add_argument("--panel", action="store_true", help="also check that the panel answers HTTP")
    p.add_argument("--panel-url", metavar="URL", help="check the panel at this URL (in compose: the "
                   "service's name, the address its published port forwards to)")
    p.add_argument("--no-services", action="store_true", help="skip qBittorrent, the metadata providers, "
                   "the LLM, Jellyfin and Telegram (a container's own health check)")
    p.add_argument("--jellyfin-libraries", action="store_true",
                   help="also check that Jellyfin's libraries cover the movies and series roots")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds to wait for the worker")
    p.add_argument("--json", action="store_true", help="machine-readable output")

    from jellybit.cli.remote import add_remote_commands

    add_remote_commands(sub, cmd_remote)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `jellybit` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.config, args.config_source = find_config(args.config)
    try:
        return args.func(args)
    except ConfigError as exc:
        print(f"jellybit: {exc.message}", file=sys.stderr)
        return EXIT_CONFIG
    except JellybitError as exc:
        print(f"jellybit: {exc.message}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
