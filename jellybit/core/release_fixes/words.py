"""Corrections for words and fields guessit does not know: `08.seriya`, `3iz6`, `8.sez`, `Sn4`,
`10º Temporada`, `10 th season`, `Stagioni 01-03`, `시즌2`, Korean broadcast dates, recording stamps
(`_20200116_1930`), `16-Feb-17`, a tracker's `[2017, …]`.
"""

from __future__ import annotations

import re
from datetime import date

from jellybit.core.release_fixes.common import BESIDE, Guess, Reading, base_name, note

# Transliterated Russian: `08.seriya` / `01.serya` (episode 8), `3iz6` (3 of 6), `8.sez` (season 8).
# (guessit reads the Cyrillic words, `серия`, `из`, `сезон`, itself.)
_EPISODE_WORD = re.compile(r"(?i)(?<![\d])(\d{1,3})[ ._-]*(?:seriya|serya|serija|ser)(?![a-z])|"
                           r"(?<![\d])(\d{1,3})[ ._-]?iz[ ._-]?\d{1,3}(?!\d)")
_SEASON_BEFORE_WORD = re.compile(r"(?i)(?<![\d])(\d{1,2})[ ._-]*sez(?![a-z])")
# `Sn4`, `10º Temporada`, `3ª temporada`, `10 th season`, `2 stagione`, `Stagioni 01-03`
_SEASON_WORD = re.compile(
    r"(?i)(?<![a-z])sn[ ._]?(\d{1,2})(?!\d)|"
    r"(?<!\d)(\d{1,2})\s*(?:º|ª|°|Âº|th|st|nd|rd)\s*(?:temporada|season|stagione)\b|"
    r"\bstagion[ei]\s*(\d{1,2})(?:\s*-\s*(\d{1,2}))?(?!\d)|"
    r"시즌\s*(\d{1,2})(?!\d)"
)


def _is_year(number: int) -> bool:
    return 1900 <= number <= 2099


def fix_episode_word(r: Reading, guess: Guess) -> None:
    """`MosGaz.(08.seriya)`, `Prehistoric park.3iz6`, `(8.sez.21.ser.iz.23)`: the episode (and season) by a
    Russian word after the number."""
    base = base_name(r["text"])
    match = _EPISODE_WORD.search(base)
    if not match or BESIDE.search(base):
        return
    episode = int(match.group(1) or match.group(2))
    season = _SEASON_BEFORE_WORD.search(base)
    r.update(episodes=[episode], absolute_episodes=[], type="episode", part=None, episode_title=None)
    if season:
        r["seasons"] = [int(season.group(1))]
    elif r["seasons"] and not BESIDE.search(base):
        r["seasons"] = []
    title = r["title"]
    if title:
        cut = re.split(rf"\s+0*{episode}[ ._-]?iz", title)[0].strip(" -")
        r["title"] = cut or title
    note(r, "episode_word")


def fix_season_word(r: Reading, guess: Guess) -> None:
    """`Sons of Anarchy Sn4 Ep14`, `3º Temporada Bob esponja`, `Adventure Time 10 th season`, `Red Oaks -
    Stagioni 01-03 (2014-2017)`: a season word guessit misses (or a range of years read as seasons)."""
    base = base_name(r["text"])
    match = _SEASON_WORD.search(base)
    if not match or (r["seasons"] and not all(map(_is_year, r["seasons"]))):
        return
    low = int(match.group(1) or match.group(2) or match.group(3) or match.group(5))
    high = int(match.group(4) or low)
    if not 0 < low <= high <= low + 50:
        return
    seasons = list(range(low, high + 1))
    r.update(seasons=seasons, type="episode")
    if r["episodes"] in ([low], seasons) and not re.search(r"(?i)\bep", base):
        r.update(episodes=[], episode_title=None)
    if r["title"] and match.group(0) in r["title"]:
        r["title"] = " ".join(r["title"].replace(match.group(0), " ").split()).strip(" -") or r["title"]
    note(r, "season_word")


# Korean broadcast rips: `나의 해방일지.E01.220409.1080p-NEXT`, the episode then the air date as YYMMDD.
_BROADCAST = re.compile(r"(?i)(?<![a-z])E(\d{1,4})[ ._](\d{2})(\d{2})(\d{2})(?!\d)")
_TRACKER_YEAR = re.compile(r"\[((?:19|20)\d{2})(?:\s*-\s*(?:19|20)\d{2})?\s*,")


def fix_broadcast_date(r: Reading, guess: Guess) -> None:
    """`나의 해방일지.E01.220409.1080p-NEXT`: episode 1 aired 2022-04-09 (guessit reads 2009-04-22), season 1;
    `응답하라 1988.E01.151106`: the number before the episode is the title's."""
    base = base_name(r["text"])
    match = _BROADCAST.search(base)
    if not match or re.search(r"(?i)(?<![a-z])s\d{1,2}[ ._-]?e\d", base):
        return
    try:
        aired = date(2000 + int(match.group(2)), int(match.group(3)), int(match.group(4)))
    except ValueError:
        return
    episode = int(match.group(1))
    r.update(episodes=[episode], air_date=aired.isoformat(), type="episode", absolute_episodes=[])
    year = r["year"]
    if year is not None and r["title"] and re.search(rf"\S[ ._]{year}[ ._]E0*{episode}\b", base, re.I):
        r.update(title=f"{r['title']} {year}", year=None, seasons=[s for s in r["seasons"] if s != year])
    if not r["seasons"]:
        r.update(seasons=[1], season_assumed=True)
    note(r, "broadcast_date")


def fix_tracker_year(r: Reading, guess: Guess) -> None:
    """`Черное зеркало / Black Mirror / Сезон 4 [2017, США, WEBRip]`: a tracker's bracket starts with its
    year."""
    match = _TRACKER_YEAR.search(r["text"])
    if match and r["year"] is None:
        r["year"] = int(match.group(1))
        note(r, "tracker_year")


# A recorder's stamp (`EastEnders_20200116_19302000`: date, then start and end time) and `16-Feb-17`.
_RECORDED = re.compile(r"_((?:19|20)\d{2})(\d{2})(\d{2})_\d{4}(?:\d{4})?(?!\d)")
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAY_MONTH_YEAR = re.compile(rf"(?i)(?<![\d\w])(\d{{1,2}})-({'|'.join(_MONTHS)})-(\d{{2}}|\d{{4}})(?![\d\w])")


def fix_date_forms(r: Reading, guess: Guess) -> None:
    """`EastEnders_20200116_19302000`, `… ][ 16-Feb-17`: air dates guessit does not read."""
    if r["air_date"]:
        return
    base = base_name(r["text"])
    recorded, spoken = _RECORDED.search(base), _DAY_MONTH_YEAR.search(base)
    try:
        if recorded:
            aired = date(*(int(g) for g in recorded.groups()))
        elif spoken:
            year = int(spoken.group(3))
            aired = date(year + 2000 if year < 100 else year, _MONTHS.index(spoken.group(2).lower()) + 1,
                         int(spoken.group(1)))
        else:
            return
    except ValueError:
        return
    r.update(air_date=aired.isoformat(), type="episode")
    note(r, "date_forms")
