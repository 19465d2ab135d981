"""Corrections that read a path as folders plus a file: what the file name says of itself wins."""

from __future__ import annotations

from jellybit.core.release_fixes.common import Guess, Reading, note
from jellybit.core.release_input import PATH_SLASH


def _numbers(value: object) -> list[int]:
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, int) and not isinstance(v, bool)]


def fix_file_episodes(r: Reading, guess: Guess) -> None:
    """`Метод / Сезон 1 / Серии 1-16 из 16 [2015]/Metod.S01E05.mkv`: the file is episode 5, not 1–16.

    guessit merges a folder's episode range into every file below it; a file name that numbers
    itself says which one of them it is.
    """
    parts = PATH_SLASH.split(r["text"])
    if len(parts) < 2 or len(r["episodes"]) < 2:
        return
    own = guess(parts[-1].strip(), None)
    episodes = sorted(set(_numbers(own.get("episode"))))
    if not episodes or not set(episodes) < set(r["episodes"]):
        return
    r["episodes"] = episodes
    seasons = _numbers(own.get("season"))
    if len(seasons) == 1 and seasons[0] in r["seasons"]:
        r["seasons"] = seasons
    r["type"] = "episode"
    note(r, "file_episodes")
