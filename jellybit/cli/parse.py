"""`jellybit parse`: release names in (arguments or stdin lines), one JSON object per line out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TextIO

from jellybit.core.release import Release, parse_release

# The documented keys, in this order; extra keys follow them.
KEYS = ("name", "media_type", "title", "year", "season", "episodes", "absolute_episodes", "air_date")


def to_json(release: Release) -> str:
    """One line of output for one release."""
    data = release.to_dict()
    ordered = {key: data.pop(key) for key in KEYS}
    ordered.update(data)
    return json.dumps(ordered, ensure_ascii=False)


def _names(argv: list[str], stdin: TextIO) -> Iterator[str]:
    if argv:
        yield from argv
        return
    for line in stdin:
        name = line.rstrip("\r\n")
        if name.strip():
            yield name


def run(argv: list[str], stdin: TextIO, stdout: TextIO, path: bool | None = None) -> int:
    """Parse every name and print its JSON line; offline and deterministic. Returns the exit code.

    `path`: True reads every name as a file's path, False as a torrent's name (its slashes are its
    title's: `Fate/stay night`), None tells each by its shape."""
    for name in _names(argv, stdin):
        stdout.write(to_json(parse_release(name, path=path)) + "\n")
        stdout.flush()
    return 0
