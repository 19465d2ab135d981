"""Corrections to how a release name is numbered: seasons, episodes, absolute numbers, years."""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import (
    BESIDE,
    FANSUB_STYLE,
    MARKER,
    YEAR,
    Guess,
    Reading,
    base_name,
    episode_marked,
    note,
)

_ABSOLUTE_RANGE = re.compile(r"\s-\s*(\d{1,4})\s*[-~]\s*(\d{1,4})(?![-\d])")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                 "twenty")
_CHAPTER = re.compile(rf"(?i)\bchapter[ ._-]?(\d{{1,3}}|{'|'.join(_NUMBER_WORDS)})\b")


def _fused_number(r: Reading) -> int | None:
    """`Blade.Runner.2049`: guessit's S20E49 from four bare digits (no S/E marker), as that number."""
    base = base_name(r["text"])
    if r["type"] != "episode" or len(r["seasons"]) != 1 or len(r["episodes"]) != 1 or MARKER.search(base):
        return None
    number = f"{r['seasons'][0]}{r['episodes'][0]:02d}"
    found = len(number) == 4 and re.search(rf"(?<!\d){number}(?!\d)", base)
    return int(number) if found else None


def fix_year_in_title(r: Reading, guess: Guess) -> None:
    """`Blade.Runner.2049.1080p` is a film, not S20E49."""
    number = _fused_number(r)
    if number is not None and 1900 <= number <= 2099:
        movie = guess(r["text"], {"type": "movie"})
        r.update(type="movie", seasons=[], episodes=[], episode_title=None,
                 title=str(movie.get("title") or r["title"]), year=movie.get("year"))
        note(r, "year_in_title")


def fix_absolute_number(r: Reading, guess: Guess) -> None:
    """`One Piece 1071` is absolute episode 1071, not S10E71."""
    number = _fused_number(r)
    if number is not None:
        r.update(absolute_episodes=[number], seasons=[], episodes=[], episode_title=None)
        note(r, "absolute_number")


def fix_season_year(r: Reading, guess: Guess) -> None:
    """`Top.Gear.S2024E05` is not from 2024; `Show (2019) - 05` has no season 2019."""
    year, base = r["year"], base_name(r["text"])
    if year is None or year not in r["seasons"]:
        return
    if not re.search(rf"(?<![Ss\d]){year}(?!\d)", base):
        r["year"] = None
    elif not re.search(rf"(?i)(?:s|season\s*){year}(?!\d)", base):
        r["seasons"] = [s for s in r["seasons"] if s != year]
    note(r, "season_year")


def fix_year_as_title(r: Reading, guess: Guess) -> None:
    """`1917.1080p.BluRay` is titled 1917; a name that is only a year stays a year."""
    rest = base_name(r["text"]).lstrip("[( ")
    if r["title"] is None and r["year"] is not None and rest.startswith(str(r["year"])) \
            and rest[4:].strip(" .)]"):
        r.update(title=str(r["year"]), year=None)
        note(r, "year_as_title")


def fix_file_numbering(r: Reading, guess: Guess) -> None:
    """`Show (2010)/Season 01/05.mkv`: the episode number alone in a file name."""
    if "/" in r["text"] and " / " not in r["text"] and r["seasons"] and not r["episodes"]:
        match = re.search(r"(?i)(?:^|\s-\s|\b(?:e|ep|episode)\s*)(\d{1,3})(?!\d)", base_name(r["text"]))
        if match:
            r.update(episodes=[int(match.group(1))], type="episode")
            note(r, "file_numbering")


def fix_disc_part(r: Reading, guess: Guess) -> None:
    """`Movie.2010.CD2`, `Movie.2010.Disc.2`: the disc is the film's part, not an alternative title."""
    if r["part"] is None:
        disc = r.get("cd") or next((int(m.group(1)) for a in r["alternative_titles"]
                                    if (m := re.fullmatch(r"(?i)(?:cd|dis[ck])\s*(\d{1,2})", a))), None)
        if disc:
            r["part"] = int(disc)
            r["alternative_titles"] = [a for a in r["alternative_titles"]
                                       if not re.fullmatch(r"(?i)(?:cd|dis[ck])\s*\d{1,2}", a)]
            note(r, "disc_part")


_CROSS = re.compile(r"(?i)(?<![a-z0-9])(\d{1,2})x(26[2-5])(?![0-9a-z])")


def fix_cross_numbering(r: Reading, guess: Guess) -> None:
    """`Show.1x264`: guessit takes `x262`…`x265` for an encoder's name and drops the episode."""
    if r["episodes"]:
        return
    match = _CROSS.search(base_name(r["text"]))
    if match and r["seasons"] in ([], [int(match.group(1))]):
        r.update(seasons=[int(match.group(1))], episodes=[int(match.group(2))], type="episode")
        note(r, "cross_numbering")




def fix_absolute_range(r: Reading, guess: Guess) -> None:
    """`Naruto Shippuden - 001-500 [Batch]`: an absolute range, not S00E01."""
    base = base_name(r["text"])
    match = _ABSOLUTE_RANGE.search(base)
    if not match or MARKER.search(r["text"]):
        return          # the name or a folder numbers by season (`Season 2/Show - 03-04 - Title`)
    first, last = int(match.group(1)), int(match.group(2))
    if 0 <= last - first <= 2000 and not (1900 <= first <= 2099):
        r.update(absolute_episodes=list(range(first, last + 1)), episodes=[], seasons=[], episode_title=None,
                 type="episode")
        note(r, "absolute_range")




def fix_chapter(r: Reading, guess: Guess) -> None:
    """`The.Mandalorian.Chapter.3` is episode 3; `John Wick Chapter 4 (2023)` stays a film title."""
    base = base_name(r["text"])
    match = _CHAPTER.search(base)
    if not match or YEAR.search(base[match.end():]) or r["episodes"]:
        return
    number = match.group(1).casefold()
    r.update(episodes=[int(number) if number.isdigit() else _NUMBER_WORDS.index(number) + 1], type="episode",
             seasons=r["seasons"] or [1], season_assumed=not r["seasons"])
    if r["title"]:
        r["title"] = _CHAPTER.sub("", r["title"]).strip(" -") or None
    note(r, "chapter")





def fix_seasonless_episode(r: Reading, guess: Guess) -> None:
    """An episode with no season: season 1 after an episode marker (`E07`, `Part 3`), else absolute.

    In fansub style (a leading `[Group]`, a CRC32, underscores for spaces) every season-less number
    is absolute, marker or not: `[Grp] Show Ep 12`, `Kemono_Tales_e23`.
    """
    if r["seasons"] or not r["episodes"] or r["absolute_episodes"] or r["air_date"] or r["special"]:
        return
    base = base_name(r["text"])
    if episode_marked(base, r["episodes"][0]) and not FANSUB_STYLE.search(base):
        r.update(seasons=[1], season_assumed=True)
    else:
        r.update(absolute_episodes=r["episodes"], episodes=[])
        year = r["year"]
        if year in r["absolute_episodes"] and len(re.findall(rf"(?<!\d){year}(?!\d)", r["text"])) == 1:
            r["year"] = None          # `[Grp] Show - 2000`: episode 2000, not a show from 2000
    note(r, "seasonless_episode")




_PART_EPISODE = re.compile(r"(?i)(?<![a-z])(?:part|pt)[ ._-]?(\d{1,2}|one|two|three|four|five|six|seven|"
                           r"eight|"
                           r"nine|ten|i{1,3}|iv|vi{0,3}|ix|x)(?![a-z\d])")
_PART_VALUES = {w: i + 1 for i, w in enumerate(("one", "two", "three", "four", "five", "six", "seven",
                                                "eight", "nine", "ten"))} | \
    {w: i + 1 for i, w in enumerate(("i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x"))}


_TV_SOURCE = re.compile(r"(?i)(?<![a-z])(?:hdtv|pdtv|sdtv|dsr|dvb|tvrip|hdtvrip)(?![a-z])")


def fix_part_episode(r: Reading, guess: Guess) -> None:
    """`Show.Name.Part.3.HDTV` with no year is a mini-series' episode 3, not a film's part 3."""
    base = base_name(r["text"])
    if r["episodes"] or r["absolute_episodes"] or r["air_date"] or r["year"] is not None:
        return
    parts = [m.group(1).casefold() for m in _PART_EPISODE.finditer(base)]
    if not _TV_SOURCE.search(base):
        return          # `The Godfather Part 3.mkv`: without a TV source a part is a film's
    if not parts or r["type"] not in ("movie", "episode", None) or (r["type"] == "episode" and r["seasons"]):
        return
    numbers = [int(p) if p.isdigit() else _PART_VALUES[p] for p in parts]
    r.update(episodes=sorted(set(numbers)), type="episode", part=None)
    if r["title"]:
        r["title"] = _PART_EPISODE.split(r["title"])[0].strip(" -") or r["title"]
    note(r, "part_episode")




_RANGE_GAP = r"\s*(?:-|~|to|ao|al|a|&)\s*(?:e|ep\.?\s*)?0*"
# An E-marked episode, then ` - ` and a bare number: a field of its own (an absolute number, a title),
# not the end of a range, which is written `E15-20` or `E15 - E20`.
_FIELD_AFTER_EPISODE = re.compile(r"(?i)(?<![a-z])e(?:p|pisode)?[ ._]?\d{1,4}\s+-\s+\d{1,4}$")


def fix_episode_range(r: Reading, guess: Guess) -> None:
    """`E10 - E17`, `01 ~ 12`, `Серии: 1-5 (12)`: guessit keeps one end of a range, or a count; fill it in."""
    base = base_name(r["text"])
    for key in ("episodes", "absolute_episodes"):
        numbers = r[key]
        if len(numbers) not in (1, 2):
            continue
        low = numbers[0]
        if len(numbers) == 1 and BESIDE.search(base):
            continue            # `S06E01-720p`, `S07E22 - 2000 Light Years`: one episode and a tag or title
        match = re.search(rf"(?i)(?<!\d)0*{low}{_RANGE_GAP}(\d{{1,4}})(?=$|[\s\])(\[])", base)
        if match and _FIELD_AFTER_EPISODE.search(base[: match.end(1)]):
            continue            # `S01 E15 - 459 - Title`: Sonarr's absolute number after the episode
        high = int(match.group(1)) if match else 0
        if match and 1 < high - low <= 2000 and (len(numbers) == 1 or numbers[1] in (high, high - low + 1)
                                                 or numbers[1] > high):
            r[key] = list(range(low, high + 1))
            note(r, "episode_range")


_GLUED = re.compile(r"(?i)(?:s(\d{1,2})e(\d{2,3})[a-d]?(?![0-9])|(?<![0-9])(\d{1,2})x(\d{2,3})(?![0-9]))")


def fix_glued_numbering(r: Reading, guess: Guess) -> None:
    """`Castle1x01`, `DieS01E06`, `S01E23a`: a season/episode marker glued to a word guessit skips."""
    if r["episodes"] or r["absolute_episodes"] or r["air_date"]:
        return
    match = _GLUED.search(base_name(r["text"]))
    if not match:
        return
    season = int(match.group(1) or match.group(3))
    episode = int(match.group(2) or match.group(4))
    if r["seasons"] not in ([], [season]):
        return
    r.update(seasons=[season], episodes=[episode], type="episode")
    if r["title"] and match.group(0) in r["title"]:
        r["title"] = r["title"].split(match.group(0))[0].strip(" -") or None
    note(r, "glued_numbering")




_ABSOLUTE_AFTER = re.compile(r"(?i)^[ ._-]*\((\d{2,4})(?:-(\d{2,4}))?\)|^[ ._-]+(\d{2,4})(?:-(\d{2,4}))?"
                             r"(?=$|-\w+$|[ ._]*[\[(]|[ ._]+(?:\d{3,4}[pi]|"
                             r"hdtv|web|bluray|bdrip|dvdrip|x26[45]|h\.?26[45]|xvid|vostfr)\b)")
# before the marker only a range: a single number there ends many titles (`The.100.S01E13`)
_ABSOLUTE_BEFORE = re.compile(r"(?:^|(?<=[ ._]))(\d{2,4})-(\d{2,4})[ ._-]+$")


# `[Grp] Show S2 - 05 (17)`: a fansub's season and episode, the absolute number after them
_FANSUB_SEASON_EPISODE = re.compile(r"(?i)(?<![a-z])s\d{1,2}\s+-\s+\d{1,4}(?:v\d)?(?=\s*\()")


def fix_absolute_beside(r: Reading, guess: Guess) -> None:
    """`Bleach.s16e03-04.313-314`, `Show 313-315 s16e03-05`, `[Grp] Show S2 - 05 (17)`: the absolute numbers
    beside S/E."""
    if not (r["seasons"] and r["episodes"]) or r["absolute_episodes"]:
        return
    base = base_name(r["text"])
    marker = BESIDE.search(base) or _FANSUB_SEASON_EPISODE.search(base)
    if not marker:
        return
    match = _ABSOLUTE_AFTER.search(base[marker.end():]) or _ABSOLUTE_BEFORE.search(base[:marker.start()])
    if not match:
        return
    groups = match.groups()
    first, last = groups[:2] if groups[0] else groups[2:4]
    low = int(first)
    high = int(last or low)
    # an absolute number is never below the season's episode (`S01E05.05` is both: reported both)
    if 1900 <= low <= 2099 or low < max(r["episodes"]) or not 0 <= high - low <= 2000:
        return
    r["absolute_episodes"] = list(range(low, high + 1))
    if r["title"] and re.search(rf"(?<!\d){low}(?:-{high})?$", r["title"]):
        r["title"] = re.sub(rf"\W*(?<!\d){low}(?:-{high})?$", "", r["title"]) or r["title"]
    if r["episode_title"] and r["episode_title"].startswith(first):
        r["episode_title"] = None
    note(r, "absolute_beside")




_SEASON_WORD = re.compile(r"(?i)(?<![a-z])(?:s\d{1,2}(?!\d)|season|saison|temporada)")


def fix_number_in_title(r: Reading, guess: Guess) -> None:
    """`12.Monkeys.Season.1`, `The.100.Season.1`: a number before the season marker is the title's."""
    if not (r["seasons"] and r["episodes"]) or len(r["episodes"]) != 1:
        return
    base = base_name(r["text"])
    marker = _SEASON_WORD.search(base)
    number = r["episodes"][0]
    if not marker or BESIDE.search(base) or episode_marked(base, number):
        return
    head, tail = base[: marker.start()], base[marker.end():]
    fused = [(season, f"{season}{number:02d}") for season in r["seasons"]]      # `The.100` → S01E00
    found = [(season, digits) for season, digits in fused if re.search(rf"(?<!\d){digits}(?!\d)", head)]
    alone = rf"(?<!\d)0*{number}(?!\d)"
    plain = re.search(alone, head) and not re.search(alone, tail)
    if not (plain or found):
        return
    title = " ".join(re.sub(r"[._]", " ", head).split()).strip(" -")
    if title:
        seasons = [s for s in r["seasons"] if not found or s != found[0][0] or r["seasons"].count(s) > 1]
        r.update(title=title, episodes=[], episode_title=None, seasons=seasons or r["seasons"])
        note(r, "number_in_title")


# the far end repeats the S (`S01 - S13`) or the gap is `:`/`--`: `S2 - 09` is a fansub episode
_SEASON_RANGE = re.compile(r"(?i)(?:(?<![a-z])s|seasons?\s*)0*(\d{1,2})\s*"
                           r"(?:(?:-{1,2}|~|to)\s*(?:s|seasons?\s*)|--\s*|:\s*)0*(\d{1,2})(?!\d)")


def fix_season_range(r: Reading, guess: Guess) -> None:
    """`S01 - S13`, `S01--S07`, `Season 1:11`: guessit keeps the ends (or reads an episode) → every season."""
    match = _SEASON_RANGE.search(base_name(r["text"]))
    if not match or re.search(r"(?i)s\d{1,2}[ ._-]?e\d", r["text"]):
        return
    low, high = int(match.group(1)), int(match.group(2))
    if not 1 <= high - low <= 50 or r["seasons"][:1] not in ([], [low]):
        return
    if r["seasons"] in ([low], [low, high]) and r["episodes"] in ([], [high]):
        r.update(seasons=list(range(low, high + 1)), episodes=[], episode_title=None)
        note(r, "season_range")


_DASH_ABSOLUTE = re.compile(r"^(\d{2,4})(?:v\d)?(?=\s+-\s)|(?:\s-\s|[._]-[._])(\d{2,4})(?:v\d)?"
                            r"(?=$|\s+-\s|[._]-[._]|\s*[\[(]|\s*$)")


def fix_dash_absolute(r: Reading, guess: Guess) -> None:
    """`Show - 102`, `Kemono Tales - 047 - Title`, `Mob Psycho 100 - 09`: the number after a dash is the
    episode, absolute (guessit reads 102 as S01E02, 047 as S00E47, and the title's 100 as one more)."""
    base = base_name(r["text"])
    if MARKER.search(r["text"]) or r["air_date"]:
        return          # the name or a folder numbers by season (`Mad Men - 3x05/305 - The Fog.avi`)
    matches = list(_DASH_ABSOLUTE.finditer(base))
    if not matches:
        return
    match = matches[-1]
    digits = match.group(1) or match.group(2)
    if re.search(r"\d\s*$", base[: match.start()]):
        return          # `Title - 01 - 12`: a range, not one number
    number = int(digits)
    fused = [f"{s}{e:02d}" for s in r["seasons"] for e in r["episodes"]]
    pool = r["absolute_episodes"] or ([] if r["seasons"] else r["episodes"])
    others = [n for n in pool if n != number]
    if 1900 <= number <= 2099 or not (digits.lstrip("0") in fused or digits in fused
                                      or (number in pool and others)):
        return
    head = base[: match.start()] if match.start() > 0 else ""
    r.update(absolute_episodes=[number], episodes=[], seasons=[], episode_title=None, type="episode")
    title = " ".join(re.sub(r"^\s*[\[(][^\])]*[\])]|[._]", " ", head).split()).strip(" -")
    if title and others and any(re.search(rf"(?<!\d){n}(?!\d)", title) for n in others):
        r["title"] = title
    note(r, "dash_absolute")


_SCENE_PAIR = re.compile(r"(?<![\d])(\d)(\d\d)[. ](\d)(\d\d)(?=[. ]|$)")


def fix_scene_pair(r: Reading, guess: Guess) -> None:
    """`Mad.Men.305.306.720p`: two bare numbers of one season are two episodes, 3x05 and 3x06."""
    base = base_name(r["text"])
    match = _SCENE_PAIR.search(base)
    if not match or MARKER.search(base) or match.group(1) != match.group(3) or r["air_date"]:
        return
    season, first, second = int(match.group(1)), int(match.group(2)), int(match.group(4))
    if not first < second <= first + 3:
        return
    r.update(seasons=[season], episodes=[first, second], absolute_episodes=[], type="episode")
    if r["title"]:
        r["title"] = re.sub(rf"\s*{match.group(1)}{match.group(2)}$", "", r["title"]) or r["title"]
    note(r, "scene_pair")


_EXTRAS_NUMBER = re.compile(r"(?i)(?<![a-z])(?:extras?|bonus|featurettes?|ncop|nced|sample)[ ._-]*"
                            r"(\d{1,3})(?!\d)")


def fix_extras_number(r: Reading, guess: Guess) -> None:
    """`Show.S02.Extras.05`: the number of an extra, an NCOP or a sample is not an episode."""
    base = base_name(r["text"])
    match = _EXTRAS_NUMBER.search(base)
    if not match or r["episodes"] != [int(match.group(1))] or re.search(r"(?i)s\d{1,4}[ ._-]?e\d", base):
        return
    r.update(episodes=[], episode_title=None)
    if r["title"] == match.group(1):
        r["title"] = None
    note(r, "extras_number")


_CAP = re.compile(r"(?i)\bcap[ ._]?(\d{1,2})(\d{2})(?:_(\d{1,2})(\d{2}))?\b")


def fix_spanish_cap(r: Reading, guess: Guess) -> None:
    """`Temporada 15 [Cap.1503]`: Spanish releases number episodes as season and episode digits."""
    match = _CAP.search(base_name(r["text"]))
    if not match or r["episodes"]:
        return
    season, first = int(match.group(1)), int(match.group(2))
    last = int(match.group(4)) if match.group(4) else first
    if r["seasons"] not in ([], [season]) or last < first:
        return
    r.update(seasons=[season], episodes=list(range(first, last + 1)), type="episode")
    note(r, "spanish_cap")
