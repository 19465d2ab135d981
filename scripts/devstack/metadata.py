"""The metadata providers of the local stack's generated config (scripts/run-local, first start only).

TVMaze needs no key and is on, so the stack confirms shows out of the box. TMDB (films, and shows by
TMDB id) and TVDB (the ids Jellyfin prefers for shows) need keys: they come from the environment
(`JELLYBIT_METADATA_TMDB_API_KEY`, `JELLYBIT_METADATA_TVDB_API_KEY`, `JELLYBIT_METADATA_TVDB_PIN`)
or, when the script runs in a terminal, from a prompt that does not echo; they are written into
the generated config. `JELLYBIT_LOCAL_TVMAZE=0` leaves TVMaze off (an offline machine, tests).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Mapping
from typing import TextIO

KEY_ENV = {"tmdb": "JELLYBIT_METADATA_TMDB_API_KEY", "tvdb": "JELLYBIT_METADATA_TVDB_API_KEY"}
PIN_ENV = "JELLYBIT_METADATA_TVDB_PIN"
TVMAZE_ENV = "JELLYBIT_LOCAL_TVMAZE"
PROMPTS = {
    "tmdb": "TMDB API key or read access token (films, and shows by TMDB id; Enter skips): ",
    "tvdb": "TVDB API key (the ids Jellyfin prefers for shows; Enter skips): ",
    "pin": "TVDB subscriber PIN (Enter if your key needs none): ",
}
MAX_KEY_CHARS = 2000         # a v4 read token is a few hundred characters

Ask = Callable[[str], str]


def _clean(value: str | None) -> str:
    text = "".join(ch for ch in (value or "") if ch.isprintable()).strip()
    return text[:MAX_KEY_CHARS]


def metadata_keys(env: Mapping[str, str], ask: Ask | None = None) -> dict[str, str]:
    """The TMDB and TVDB keys (and the TVDB PIN) for a new config: the environment's, else asked."""
    found: dict[str, str] = {}
    for provider, variable in KEY_ENV.items():
        value = _clean(env.get(variable))
        if not value and ask is not None:
            value = _clean(ask(PROMPTS[provider]))
        if value:
            found[provider] = value
    pin = _clean(env.get(PIN_ENV))
    if "tvdb" in found and not pin and ask is not None and not env.get(KEY_ENV["tvdb"]):
        pin = _clean(ask(PROMPTS["pin"]))
    if "tvdb" in found and pin:
        found["pin"] = pin
    return found


def tvmaze_enabled(env: Mapping[str, str]) -> bool:
    """TVMaze stays on unless `JELLYBIT_LOCAL_TVMAZE` says 0/off/false/no."""
    return env.get(TVMAZE_ENV, "").strip().casefold() not in ("0", "off", "false", "no")


def _toml(value: str) -> str:
    # JSON string escapes are valid TOML basic-string escapes; TOML also wants DEL escaped.
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def metadata_toml(keys: Mapping[str, str], *, tvmaze: bool) -> str:
    """The `[metadata.*]` sections of the generated config."""
    lines = ["[metadata.tvmaze]", "# Shows, no key needed: with it the stack confirms shows by itself.",
             f"enabled = {'true' if tvmaze else 'false'}", ""]
    if "tmdb" in keys:
        lines += ["[metadata.tmdb]", "# Films, and shows by TMDB id.", "enabled = true",
                  f"api_key = {_toml(keys['tmdb'])}", ""]
    if "tvdb" in keys:
        lines += ["[metadata.tvdb]", "# Shows under the ids Jellyfin prefers.", "enabled = true",
                  f"api_key = {_toml(keys['tvdb'])}"]
        lines += [f"pin = {_toml(keys['pin'])}", ""] if "pin" in keys else [""]
    missing = [name.upper() for name in KEY_ENV if name not in keys]
    if missing:
        lines += [f"# Without a key {' and '.join(missing)} stay off: add a [metadata.{missing[0].lower()}] "
                  "section with `enabled = true` and", "# `api_key` (see config.example.toml); TMDB is "
                  "what confirms films.", ""]
    return "\n".join(lines)


def terminal_ask(stdin: TextIO = sys.stdin, stderr: TextIO = sys.stderr) -> Ask | None:
    """A prompt on stderr reading a line from stdin without echo, when stdin is a terminal; else None."""
    if not stdin.isatty():
        return None

    def ask(prompt: str) -> str:
        try:
            import termios
        except ImportError:  # pragma: no cover - not a POSIX terminal
            stderr.write(prompt)
            stderr.flush()
            return stdin.readline()
        fd = stdin.fileno()
        old = termios.tcgetattr(fd)
        new = termios.tcgetattr(fd)
        new[3] &= ~termios.ECHO
        # Echo goes off before the prompt shows, and nothing typed is flushed (TCSADRAIN): a key
        # typed the moment the prompt appears is neither shown nor lost.
        termios.tcsetattr(fd, termios.TCSADRAIN, new)
        try:
            stderr.write(prompt)
            stderr.flush()
            return stdin.readline()
        finally:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(fd, termios.TCSADRAIN, old)
            stderr.write("\n")
            stderr.flush()

    return ask
