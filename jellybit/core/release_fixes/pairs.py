"""Corrections for season and episode written as one pair of numbers without an S/E marker."""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import MARKER, Guess, Reading, base_name, note

# `[5.01]`, `- 6.01 -`, `11.14 - Title` (at the start), `4-13 Title` (at the start, then a word):
# `N.NN` in brackets or between dashes is how many fan collections write season and episode
# (a one-digit tail `5.1`, `2.0` is audio; `Evangelion 3.33 You` has neither bracket nor dash).
_DOTTED_PAIR = re.compile(
    r"(?:\[(\d{1,2})\.(\d{2,3})\]|(?:^|\s-\s)(\d{1,2})\.(\d{2,3})(?=\s-\s)|^(\d{1,2})-(\d{2})(?=\s+[^\W\d_]))"
)


def fix_dotted_pair(r: Reading, guess: Guess) -> None:
    """`[5.01] Title`, `Show - 6.01 - Title`, `4-13 Title`: season 5 episode 1, not episode 1 alone."""
    base = base_name(r["text"])
    match = _DOTTED_PAIR.search(base)
    if not match or MARKER.search(r["text"]) or r["air_date"]:
        return
    season, episode = (int(g) for g in match.groups() if g is not None)
    if season == 0:
        return
    r.update(seasons=[season], episodes=[episode], absolute_episodes=[], type="episode")
    r["alternative_titles"] = [a for a in r["alternative_titles"] if a != str(season)]
    if r["title"] == str(season):
        r["title"] = None
    note(r, "dotted_pair")


_TRAILING_PAIR = re.compile(r"[-._ ](\d{1,2})[_.](\d{2})(?:[-._][A-Za-z]{1,2})?$")


def fix_trailing_pair(r: Reading, guess: Guess) -> None:
    """`Ozk.02.09.avi`, `office_03_19.avi`, `Pwer-04_05.avi`: a name ending in two short numbers is
    season and episode when nothing else in it is numbered (guessit reads them as two episodes)."""
    if r["seasons"] or r["absolute_episodes"] or r["air_date"]:
        return
    match = _TRAILING_PAIR.search(base_name(r["text"]))
    if not match or int(match.group(1)) == 0:
        return
    if r["episodes"] and sorted(r["episodes"]) != sorted({int(match.group(1)), int(match.group(2))}):
        return          # guessit numbered something else; `office_03_19` it reads as episodes 3 and 19
    r.update(seasons=[int(match.group(1))], episodes=[int(match.group(2))], type="episode")
    if r["title"] and r["title"].endswith(match.group(2)):
        r["title"] = re.sub(r"[\s._-]*\d{1,2}[\s._]+\d{2}$", "", r["title"]) or r["title"]
    note(r, "trailing_pair")
