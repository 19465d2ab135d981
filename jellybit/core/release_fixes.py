"""Jellybit's corrections to guessit's reading of a release name, one small named function each."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from jellybit.core.languages import CODE_BY_WORD

Reading = dict[str, Any]
Guess = Callable[[str, Mapping[str, Any] | None], dict[str, Any]]

_EXTENSION = re.compile(r"(?i)\.(mkv|mp4|m4v|avi|mov|wmv|ts|m2ts|mpg|mpeg|webm|flv|vob|srt|ass|ssa|sub|idx|"
                        r"vtt|sup|mka|ac3|dts|flac|aac|mp3|torrent|nfo)$")
# Markers that number episodes explicitly; without one, a bare number may belong to the title.
_MARKER = re.compile(r"(?i)(?:(?<![a-z])s\d{1,4}(?![a-z])|s\d{1,4}[ ._-]?e\d|(?<!\d)\d{1,2}x\d{2,3}(?!\d)|"
                     r"(?<![a-z])e(?:p|pisode)?[ ._-]?\d|season|сезон|серия|серии|第|\bpart\b|\bchapter\b)")
_LEAD_GROUP = re.compile(r"^\s*[\[【]([^\]】]{1,80})[\]】]")
_ALL_BRACKETS = re.compile(r"^(?:\s*[\[【][^\]】]*[\]】])+\s*$")
_BRACKET = re.compile(r"[\[【]([^\]】]*)[\]】]")
_TAG = re.compile(
    r"(?i)^(?:\d{3,4}[pi]|[248]k|uhd|hdr(?:10)?|x26[45]|h\.?26[45]|hevc|avc|aac|flac|opus|ac3|dts|"
    r"(?:web|bd|dvd|hd|tv)(?:-?(?:dl|rip))?|blu-?ray|mp4|mkv|avi|\d{1,2}bit|big5|gb|chs|cht|batch|fin|end|"
    r"v\d|\d{1,4}(?:v\d)?|\d{1,4}\s*[-~]\s*\d{1,4}|[0-9a-f]{8}|(?!.*[组組社]$).*字幕.*|简.*|繁.*|"
    r".*(?:内封|外挂|内嵌|双语|雙語).*)$"
)
_FANSUB_SEASON = re.compile(
    r"(?i)(?:\bseason\s*(\d{1,2})|(?<![a-z])s(\d{1,2})|\b(\d{1,2})(?:st|nd|rd|th)\s+season)"
    r"\s+-\s+(\d{1,4})(?:v\d)?(?!\d)"
)
_ORDINAL_SEASON = re.compile(r"(?i)\s*\b(\d{1,2})(?:st|nd|rd|th)\s+season\b|\s*\bseason\s*(\d{1,2})\b")
_ABSOLUTE_RANGE = re.compile(r"\s-\s*(\d{1,4})\s*[-~]\s*(\d{1,4})(?!\d)")
_DASH_NUMBER = re.compile(r"\s-\s+(\d{1,4})(?:v\d)?(?:\s|$|\[|\()")
_SPECIAL = re.compile(r"(?:^|[\s\-\[(])(SP|OVA|OAD|Specials?)\s*(\d{1,3})?(?=$|[\s\])\-.])")
_NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
                 "twenty")
_CHAPTER = re.compile(rf"(?i)\bchapter[ ._-]?(\d{{1,3}}|{'|'.join(_NUMBER_WORDS)})\b")
_YEAR = re.compile(r"(?<!\d)(19\d{2}|20\d{2})(?!\d)")
_PART_WORDS = (r"(?i)\b((?:part|pt|vol(?:ume)?)[ ._]?(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|"
               r"ten|i{1,3}|iv|vi{0,3}))\b")
_COMPLETE = re.compile(r"(?i)\bcomplete\b|\bполный сериал\b|\bвсе сезоны\b|全集")
_BATCH = re.compile(r"(?i)\bbatch\b|全集")
_LATIN = re.compile(r"[A-Za-z]")
_NON_LATIN = re.compile(r"[^\W\d_A-Za-z\u00c0-\u024f]")
_PREFIX_WORDS = re.compile(r"(?i)^(?:сериал|мини-сериал|мультсериал|аниме|фильм|мультфильм)\s+")
_ALIAS_SPLIT = re.compile(r"\s+[/|]\s+")


def base_name(text: str) -> str:
    """The last path component without its media extension."""
    if "/" in text and " / " not in text:
        text = text.rstrip("/").rsplit("/", 1)[-1]
    return _EXTENSION.sub("", text)


def _is_latin(text: str) -> bool:
    return bool(_LATIN.search(text)) and not _NON_LATIN.search(text)


def _clean_title(text: str) -> str:
    text = _LEAD_GROUP.sub("", text)
    text = re.split(r"[\[(]|(?<!\d)(?:19|20)\d{2}(?!\d)|\b[Ss]\d{1,2}(?:[Ee]\d|\b)", text)[0]
    text = _PREFIX_WORDS.sub("", text.replace(".", " ").replace("_", " "))
    return " ".join(text.split()).strip(" -–:|,")


def _note(r: Reading, code: str) -> None:
    if code not in r["corrections"]:
        r["corrections"].append(code)


def fix_year_in_title(r: Reading, guess: Guess) -> None:
    """`Blade.Runner.2049.1080p` is a film, not S20E49; `1917.1080p` is titled 1917."""
    base = base_name(r["text"])
    single = len(r["seasons"]) == 1 and len(r["episodes"]) == 1
    if r["type"] == "episode" and single and not _MARKER.search(base):
        number = f"{r['seasons'][0]}{r['episodes'][0]:02d}"
        if re.search(rf"(?<!\d){number}(?!\d)", base) and len(number) == 4:
            if 1900 <= int(number) <= 2099:
                movie = guess(r["text"], {"type": "movie"})
                r.update(type="movie", seasons=[], episodes=[], episode_title=None,
                         title=str(movie.get("title") or r["title"]), year=movie.get("year"))
                _note(r, "year_in_title")
            else:
                r.update(absolute_episodes=[int(number)], seasons=[], episodes=[], episode_title=None)
                _note(r, "absolute_number")
    year = r["year"]
    if year is not None and year in r["seasons"]:
        if not re.search(rf"(?<![Ss\d]){year}(?!\d)", base):
            r["year"] = None   # `Top.Gear.S2024E05`: seasons numbered by year; the show is not from then
        elif not re.search(rf"(?i)(?:s|season\s*){year}(?!\d)", base):
            r["seasons"] = [s for s in r["seasons"] if s != year]   # `Show (2019) - 05`: a year, not a season
        _note(r, "season_year")
    if r["title"] is None and r["year"] is not None and base.lstrip("[( ").startswith(str(r["year"])):
        r.update(title=str(r["year"]), year=None)
        _note(r, "year_as_title")


def fix_leading_group(r: Reading, guess: Guess) -> None:
    """`[SubsPlease] …`: the first bracket names the group, never a CRC or a tag at the end."""
    match = _LEAD_GROUP.match(base_name(r["text"]))
    group = match.group(1).strip() if match else None
    if group and _TAG.match(group):
        group = None
    current = r["release_group"]
    bad = current is not None and (_TAG.match(current) or current == r.get("crc32"))
    if group and current != group:
        r["release_group"] = group
        _note(r, "leading_group")
    elif bad:
        r["release_group"] = None
        _note(r, "leading_group")


def fix_group_prefix(r: Reading, guess: Guess) -> None:
    """`Spider-Man.No.Way.Home.2021`: guessit reads `Spider` as a group and `Man No Way Home` as the title."""
    group, title = r["release_group"], r["title"]
    base = base_name(r["text"])
    if group and title and re.match(rf"{re.escape(group)}-{re.escape(title.split()[0])}", base, re.I):
        r.update(title=f"{group}-{title}", release_group=None)
        _note(r, "group_prefix")


def fix_file_numbering(r: Reading, guess: Guess) -> None:
    """`Show (2010)/Season 01/05.mkv`: the episode number alone in a file name; `CD2`/`Disc 2` parts."""
    if "/" in r["text"] and " / " not in r["text"] and r["seasons"] and not r["episodes"]:
        match = re.search(r"(?i)(?:^|\s-\s|\b(?:e|ep|episode)\s*)(\d{1,3})(?!\d)", base_name(r["text"]))
        if match:
            r.update(episodes=[int(match.group(1))], type="episode")
            _note(r, "file_numbering")
    if r["part"] is None:
        disc = r.get("cd") or next((int(m.group(1)) for a in r["alternative_titles"]
                                    if (m := re.fullmatch(r"(?i)(?:cd|dis[ck])\s*(\d{1,2})", a))), None)
        if disc:
            r["part"] = int(disc)
            r["alternative_titles"] = [a for a in r["alternative_titles"]
                                       if not re.fullmatch(r"(?i)(?:cd|dis[ck])\s*\d{1,2}", a)]
            _note(r, "disc_part")


_CROSS = re.compile(r"(?i)(?<![a-z0-9])(\d{1,2})x(26[2-5])(?![0-9a-z])")


def fix_cross_numbering(r: Reading, guess: Guess) -> None:
    """`Show.1x264`: guessit takes `x262`…`x265` for an encoder's name and drops the episode."""
    if r["episodes"]:
        return
    match = _CROSS.search(base_name(r["text"]))
    if match and r["seasons"] in ([], [int(match.group(1))]):
        r.update(seasons=[int(match.group(1))], episodes=[int(match.group(2))], type="episode")
        _note(r, "cross_numbering")


def fix_bracketed_fansub(r: Reading, guess: Guess) -> None:
    """`[字幕组][进击的巨人][01][1080p][简体]`: every field sits in its own bracket."""
    base = base_name(r["text"])
    if not _ALL_BRACKETS.match(base):
        return
    parts = [p.strip() for p in _BRACKET.findall(base)][1:]
    title = next((p for p in parts if p and not _TAG.match(p) and p.casefold() not in CODE_BY_WORD), None)
    numbers = [p for p in parts if re.fullmatch(r"\d{1,4}(?:v\d)?|\d{1,4}\s*[-~]\s*\d{1,4}", p)]
    if title:
        names = _ALIAS_SPLIT.split(title) if _ALIAS_SPLIT.search(title) else [title]
        r["title"], r["alternative_titles"] = names[0], [*names[1:], *r["alternative_titles"]]
    if numbers and not r["episodes"]:
        low, _, high = re.sub(r"v\d$", "", numbers[0]).replace("~", "-").partition("-")
        first, last = int(low), int(high or low)
        r["episodes"] = list(range(first, last + 1)) if 0 <= last - first <= 2000 else [first]
        r["type"] = "episode"
    if r["release_group"] in parts:
        r["release_group"] = None
    fix_leading_group(r, guess)
    _note(r, "bracketed_fansub")


def fix_aliases(r: Reading, guess: Guess) -> None:
    """`Фарго / Fargo (2014)`, `Шерлок (Sherlock)`: keep both names; the Latin one leads the search."""
    base = base_name(r["text"])
    names: list[str] = []
    if _ALIAS_SPLIT.search(base):
        names = [_clean_title(s) for s in _ALIAS_SPLIT.split(base)[:-1]]
    paren = re.match(r"^\s*(?:[\[【][^\]】]*[\]】]\s*)?([^\[\]()/|]+?)\s*\(([^()]+)\)", base)
    if paren and not _is_latin(paren.group(1)) and _is_latin(paren.group(2)) and not _TAG.match(paren[2]):
        alias = _clean_title(paren.group(2))
        if alias and not _YEAR.fullmatch(alias):
            names = [_clean_title(paren.group(1)), alias]
            if r["release_group"] == paren.group(2).strip():
                r["release_group"] = None
    pool = [n for n in (*names, r["title"], *r["alternative_titles"]) if n]
    if not pool:
        return
    pool = list(dict.fromkeys(pool))
    latin = next((n for n in pool if _is_latin(n)), None)
    if latin and r["title"] != latin and not (r["title"] and _is_latin(r["title"])):
        r["title"] = latin
        _note(r, "alias")
    before = list(r["alternative_titles"])
    r["alternative_titles"] = [n for n in pool if n != r["title"]]
    if r["alternative_titles"] != before and names:
        _note(r, "alias")


def fix_fansub_season(r: Reading, guess: Guess) -> None:
    """`Show S2 - 05`, `Show Season 2 - 05`, `Show 2nd Season - 03`: season N, episode E."""
    base = base_name(r["text"])
    match = _FANSUB_SEASON.search(base)
    if match:
        season = int(next(g for g in match.groups()[:3] if g))
        r.update(seasons=[season], episodes=[int(match.group(4))])
        r["type"] = "episode"
        _note(r, "fansub_season")
    if r["title"]:
        found = _ORDINAL_SEASON.search(r["title"])
        if found:
            if not r["seasons"]:
                r["seasons"] = [int(found.group(1) or found.group(2))]
            r["title"] = (r["title"][: found.start()] + r["title"][found.end():]).strip(" -")
            _note(r, "fansub_season")


def fix_absolute_range(r: Reading, guess: Guess) -> None:
    """`Naruto Shippuden - 001-500 [Batch]`: an absolute range, not S00E01."""
    base = base_name(r["text"])
    match = _ABSOLUTE_RANGE.search(base)
    if not match or _MARKER.search(base[: match.start()]):
        return
    first, last = int(match.group(1)), int(match.group(2))
    if 0 <= last - first <= 2000 and not (1900 <= first <= 2099):
        r.update(absolute_episodes=list(range(first, last + 1)), episodes=[], seasons=[], episode_title=None,
                 type="episode")
        _note(r, "absolute_range")


def fix_specials(r: Reading, guess: Guess) -> None:
    """`SP1`, `OVA`, `OAD`, `Specials` in fansub names: season 0."""
    base = base_name(r["text"])
    match = _SPECIAL.search(base)
    word = match.group(1) if match else None
    if word and word.lower().startswith("special") and not _LEAD_GROUP.match(base):
        match = None
    if match is None and "Original Animated Video" not in r["other"]:
        return
    r.update(special=True, seasons=[0], type="episode")
    r["one_special"] = bool(word) and not word.lower().startswith("special")
    if match and match.group(2):
        r["episodes"] = [int(match.group(2))]
        r["absolute_episodes"] = []
    token = match.group(0).strip(" -[(") if match else ""
    r["alternative_titles"] = [a for a in r["alternative_titles"] if a.strip() != token]
    _note(r, "special")


def fix_chapter(r: Reading, guess: Guess) -> None:
    """`The.Mandalorian.Chapter.3` is episode 3; `John Wick Chapter 4 (2023)` stays a film title."""
    base = base_name(r["text"])
    match = _CHAPTER.search(base)
    if not match or _YEAR.search(base[match.end():]) or r["episodes"]:
        return
    number = match.group(1).casefold()
    r.update(episodes=[int(number) if number.isdigit() else _NUMBER_WORDS.index(number) + 1], type="episode")
    if r["title"]:
        r["title"] = _CHAPTER.sub("", r["title"]).strip(" -") or None
    _note(r, "chapter")


def fix_part_in_title(r: Reading, guess: Guess) -> None:
    """`Dune.Part.Two.2024`, `Kill.Bill.Vol.1.2003`: the part before the year belongs to the title."""
    base = base_name(r["text"])
    year = _YEAR.search(base)
    if r["type"] != "movie" or not r["title"] or not year or r["year"] is None:
        return
    match = re.search(_PART_WORDS, base[: year.start()])
    if not match or match.group(1).casefold().replace(".", " ") in r["title"].casefold():
        return
    words = re.sub(r"[._]", " ", match.group(1))
    words = re.sub(r"(?i)^(vol)(?:ume)?\s*", lambda m: m.group(1) + " ", words)
    r.update(title=f"{r['title']} {' '.join(words.split())}", part=None)
    _note(r, "part_in_title")


def fix_absolute(r: Reading, guess: Guess) -> None:
    """Fansub numbering without a season (`[Group] Show - 1071`) is absolute."""
    base = base_name(r["text"])
    dash = _DASH_NUMBER.search(base)
    unnumbered = not (r["episodes"] or r["absolute_episodes"] or r["seasons"])
    if unnumbered and dash and _LEAD_GROUP.match(base):
        # guessit reads `[Group] Show - 1 (1080p)` (one digit) as an episode title
        r.update(episodes=[int(dash.group(1))], type="episode")
        if r["episode_title"] == dash.group(1):
            r["episode_title"] = None
    if r["seasons"] or not r["episodes"] or r["air_date"] or r["special"]:
        return
    if _LEAD_GROUP.match(base) or dash or "第" in base:
        r.update(absolute_episodes=r["episodes"], episodes=[])
        year = r["year"]
        if year in r["absolute_episodes"] and len(re.findall(rf"(?<!\d){year}(?!\d)", base)) == 1:
            r["year"] = None          # `[Grp] Show - 2000`: episode 2000, not a show from 2000
        _note(r, "absolute")


def fix_title_words(r: Reading, guess: Guess) -> None:
    """Drop `Сериал` and friends, stray dashes and empty alternatives."""
    for key in ("title",):
        if r[key]:
            cleaned = _PREFIX_WORDS.sub("", r[key]).strip(" -–:|")
            r[key] = cleaned or None
    r["alternative_titles"] = [a for a in (_PREFIX_WORDS.sub("", a).strip(" -–:|")
                                           for a in r["alternative_titles"]) if a]


def fix_flags(r: Reading, guess: Guess) -> None:
    """Set the complete/batch/special flags the media type is decided from."""
    text = r["text"]
    r["complete"] = "Complete" in r["other"] or bool(_COMPLETE.search(text))
    r["batch"] = r.get("batch", False) or bool(_BATCH.search(text))
    r["special"] = r.get("special", False) or r["seasons"] == [0]


FIXES: tuple[Callable[[Reading, Guess], None], ...] = (
    fix_year_in_title,
    fix_group_prefix,
    fix_file_numbering,
    fix_cross_numbering,
    fix_leading_group,
    fix_bracketed_fansub,
    fix_aliases,
    fix_fansub_season,
    fix_absolute_range,
    fix_specials,
    fix_chapter,
    fix_part_in_title,
    fix_absolute,
    fix_title_words,
    fix_flags,
)


def apply_all(reading: Reading, guess: Guess) -> Reading:
    """Apply every correction in order to a copy of guessit's reading."""
    r = {k: list(v) if isinstance(v, list) else v for k, v in reading.items()}
    r.setdefault("batch", False)
    r.setdefault("special", False)
    r.setdefault("complete", False)
    for fix in FIXES:
        fix(r, guess)
    return r
