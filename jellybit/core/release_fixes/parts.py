"""A part that numbers an episode of a season: `Sea.Monsters.Series.2.Part.11` (British `Series 2`)."""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import Guess, Reading, base_name, note

_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_SERIES_PART = re.compile(r"(?i)(?<![a-z])series[ ._-]*(\d{1,2})[ ._-]+(?:part|pt)[ ._-]*(\d{1,3}|"
                          + "|".join(_WORDS) + r")(?![a-z\d])")


def fix_series_part(r: Reading, guess: Guess) -> None:
    """`Sea.Monsters.Series.2.Part.11.HDTV` (title `Sea Monsters Series 2`, season 1 assumed), `Show Series 1
    Part Two` (a film's part 2): a British broadcaster's season and its part → S02E11, S01E02."""
    match = _SERIES_PART.search(base_name(r["text"]))
    if not match or r["air_date"] or r["absolute_episodes"] or "part_in_title" in r["corrections"] or (
            r["seasons"] and not r.get("season_assumed")):
        return
    word = match.group(2).casefold()
    episode = int(word) if word.isdigit() else _WORDS.index(word) + 1
    r.update(seasons=[int(match.group(1))], episodes=[episode], season_assumed=False, type="episode",
             part=None)
    if r["title"]:
        r["title"] = re.split(r"(?i)[ ._-]+series[ ._-]*\d", r["title"])[0].strip(" -") or r["title"]
    note(r, "series_part")
