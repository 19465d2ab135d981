"""Corrections to the title: group prefixes, aliases in two scripts, film parts, stray words."""

from __future__ import annotations

import re

import babelfish

from jellybit.core.release_fixes.common import (
    ALIAS_SPLIT,
    LEAD_GROUP,
    MARKER,
    PREFIX_WORDS,
    TAG,
    YEAR,
    Guess,
    Reading,
    base_name,
    clean_title,
    is_latin,
    note,
    reading_of,
)

_PART_WORDS = (r"(?i)\b((?:part|pt|vol(?:ume)?)[ ._]?(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|"
               r"ten|i{1,3}|iv|vi{0,3}))\b")


# A tracker's or a site's domain leading a torrent name, then a dash: `Crazy4TV.com - Dark Matter S01`,
# `[ Torrent9.io ] - Dune.Part.Two.2024`. guessit knows `www.` names only.
_SITE_PREFIX = re.compile(
    r"(?i)^\s*[\[(]?\s*(?:www\.)?[a-z0-9][a-z0-9-]{1,40}\.(?:com|net|org|io|cc|tv|info|ru|cd|cafe|xyz|ws|se|nu|"
    r"eu|pl|la|li|ch|sx|pw|ag|lol|club|site|online|top|vip|link|lat|fun|tw|bz|st|re|mx|ac|biz|pro|mov)"
    r"\s*[\])]?\s*[-–|]\s*(?=\S)")


def fix_site_prefix(r: Reading, guess: Guess) -> None:
    """`Crazy4TV.com - Dark Matter Season 1`: a site's domain before a dash is read as the title → dropped."""
    text = r["text"]
    match = _SITE_PREFIX.match(text)
    if match is None or "/" in text:
        return
    rest = text[match.end():]
    if not rest.strip(" ._-[]()"):
        return
    flags = {key: r[key] for key in ("batch", "special", "complete") if key in r}
    r.clear()
    r.update(reading_of(rest, guess(rest, None)), **flags)
    note(r, "site_prefix")


def fix_group_prefix(r: Reading, guess: Guess) -> None:
    """`Spider-Man.No.Way.Home.2021`: guessit reads `Spider` as a group and `Man No Way Home` as the title."""
    group, title = r["release_group"], r["title"]
    base = base_name(r["text"])
    if base == base.lower():
        return          # `blow-how.to.be.single.2016.mkv`: an all-lowercase scene file starts with its group
    if group and title and re.match(rf"{re.escape(group)}-{re.escape(title.split()[0])}", base, re.I):
        r.update(title=f"{group}-{title}", release_group=None)
        note(r, "group_prefix")




# A part of `A / B / Сезон 2 / Серии 1-8 из 8` that only numbers (`Сезон 2`, `S2E1-10 of 10`) is no name.
_NUMBERING = re.compile(r"(?i)^(?:(?:сезон|сезоны|серии|серия|season|seasons|episodes?|saison|temporada)"
                        r"\s*[:№#]?\s*\d[\d\s,.–~-]*(?:(?:из|of)\s*\d+)?(?:\s*\(\d+\))?|"
                        r"s\d{1,2}(?:e\d{1,3}(?:-e?\d{1,3})?)?(?:\s*of\s*\d+)?)$")


def fix_alias(r: Reading, guess: Guess) -> None:
    """`Фарго / Fargo (2014)`, `Шерлок (Sherlock)`: keep both names; the Latin one leads the search."""
    base = base_name(r["text"])
    names: list[str] = []
    if ALIAS_SPLIT.search(base):
        names = [clean_title(s) for s in ALIAS_SPLIT.split(base)[:-1]]
    paren = re.match(r"^\s*(?:[\[【][^\]】]*[\]】]\s*)?([^\[\]()/|]+?)\s*\(([^()]+)\)", base)
    if paren and not is_latin(paren.group(1)) and is_latin(paren.group(2)) and not TAG.match(paren[2]):
        alias = clean_title(paren.group(2))
        if alias and not YEAR.fullmatch(alias):
            names = [clean_title(paren.group(1)), alias]
            if r["release_group"] == paren.group(2).strip():
                r["release_group"] = None
    pool = [n for n in (*names, r["title"], *r["alternative_titles"]) if n and not _NUMBERING.match(n)]
    if not pool:
        return
    pool = list(dict.fromkeys(pool))
    latin = next((n for n in pool if is_latin(n)), None)
    if latin and r["title"] != latin and not (r["title"] and is_latin(r["title"])):
        r["title"] = latin
        note(r, "alias")
    before = list(r["alternative_titles"])
    r["alternative_titles"] = [n for n in pool if n != r["title"]]
    if r["alternative_titles"] != before and names:
        note(r, "alias")




def fix_part_in_title(r: Reading, guess: Guess) -> None:
    """`Dune.Part.Two.2024`, `Kill.Bill.Vol.1.2003`: the part before the year belongs to the title."""
    base = base_name(r["text"])
    year = YEAR.search(base)
    if r["type"] != "movie" or not r["title"] or not year or r["year"] is None:
        return
    match = re.search(_PART_WORDS, base[: year.start()])
    if not match or match.group(1).casefold().replace(".", " ") in r["title"].casefold():
        return
    words = re.sub(r"[._]", " ", match.group(1))
    words = re.sub(r"(?i)^(vol)(?:ume)?\s*", lambda m: m.group(1) + " ", words)
    r.update(title=f"{r['title']} {' '.join(words.split())}", part=None)
    note(r, "part_in_title")




# The word right before a year, the year maybe bracketed: `The Good German (2006)`, `Dutch.1991`.
_WORD_BEFORE_YEAR = re.compile(r"([^\W\d_]+)[ ._]*[(\[]?[ ._]*$")


def _language_of(word: str) -> str | None:
    """The ISO 639-1 code of a language's English name (`German` -> `de`), else None."""
    try:
        language = babelfish.Language.fromname(word.capitalize())
    except (babelfish.Error, ValueError):
        return None
    try:
        return language.alpha2
    except babelfish.Error:
        return language.alpha3


def fix_language_in_title(r: Reading, guess: Guess) -> None:
    """`The Good German (2006)`, `Dutch.1991`: guessit reads the title's last word as a language.

    The word belongs to the title when the year is bracketed (a name written by a person, where
    everything before the year is the title) or when it is all there is before the year (a work
    has a title). A scene name's `Immersion.French.2011` keeps its language tag.
    """
    if r["year"] is None or not r["languages"]:
        return
    base = base_name(r["text"])
    year = re.search(rf"(?<!\d){r['year']}(?!\d)", base)
    if year is None:
        return
    before = base[: year.start()]
    word = _WORD_BEFORE_YEAR.search(before)
    if word is None:
        return
    code = _language_of(word.group(1))
    if code is None or code not in r["languages"]:
        return
    title = r["title"] or ""
    bracketed = before.rstrip(" ._").endswith(("(", "["))
    if title and not bracketed:
        return
    if clean_title(before).casefold() != f"{title} {word.group(1)}".strip().casefold():
        return          # the word is not where the title ends
    r["title"] = f"{title} {word.group(1)}".strip()
    r["languages"].remove(code)
    note(r, "language_in_title")




def fix_title_words(r: Reading, guess: Guess) -> None:
    """Drop `Сериал` and friends, stray dashes and empty alternatives."""
    for key in ("title",):
        if r[key]:
            cleaned = PREFIX_WORDS.sub("", r[key]).strip(" -–:|")
            r[key] = cleaned or None
    r["alternative_titles"] = [a for a in (PREFIX_WORDS.sub("", a).strip(" -–:|")
                                           for a in r["alternative_titles"]) if a]




# `1.11`, `3.33`, `1.0`; not `02.10` (season and episode: `Ozk.02.10.F`), nor the audio layouts 2.0, 5.1, 7.1
_DECIMAL = re.compile(r"(?<!\d)(?<!\d\.)(?![257]\.[01](?!\d))([1-9]\d?|0)\.(\d{1,3})(?=[ ._]+[^\W\d_]{2})")
# where a title that goes on after its decimal ends: an S/E marker, a year, or a bracket of tags
_TITLE_END = re.compile(r"(?i)[ ._]*(?:[\[(](?:(?:19|20)\d{2}|[^\])]*\b(?:\d{3,4}p|bd|blu-?ray|x26[45]|dvd)\b"
                        r"[^\])]*)[\])]|(?<![a-z])s\d{1,2}(?:[ ._]?e\d|(?!\w))|$)")


def _spaced(text: str) -> str:
    return " ".join(re.sub(r"[._]", " ", text).split())


def fix_decimal_title(r: Reading, guess: Guess) -> None:
    """`Evangelion_1.11_You_Are_(Not)_Alone_(2009)`, `Show.1.0.Name.S01.E03`: guessit ends the title at a
    decimal number's point → the whole title, decimal and all."""
    title = r["title"]
    base = base_name(r["text"])
    lead = LEAD_GROUP.match(base)
    body = base[lead.end():] if lead else base
    match = _DECIMAL.search(body)
    if not title or not match:
        return
    before = _spaced(body[: match.start()])
    if _spaced(title) not in (before, f"{before} {match.group(1)}".strip()):
        return
    rest = body[match.end():]
    end = _TITLE_END.search(rest)
    tail = _spaced(rest[: end.start()] if end else rest)
    if not before or not tail:
        return
    r["title"] = f"{before} {match.group(0)} {tail}"
    if not MARKER.search(base):
        # guessit's numbers came from the decimal (`1.11` → episode 11): a title's, not an episode's
        whole, part = int(match.group(1)), int(match.group(2))
        r["episodes"] = [e for e in r["episodes"] if e != part]
        r["seasons"] = [s for s in r["seasons"] if s != whole]
        if not (r["episodes"] or r["seasons"] or r["absolute_episodes"]):
            r["type"] = "movie"
    note(r, "decimal_title")


# `进击的巨人／Attack on Titan`, `传颂之物/Utawarerumono/うたわれるもの` (a release name's slash, `∕` here),
# `Пацаны | The Boys`: names joined into one title
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
_TITLE_JOIN = re.compile(r"\s*[\u2215／|｜]\s*|\s+_\s+|"
                         rf"(?<=[{_CJK}])_(?=[A-Za-z])|(?<=[A-Za-z])_(?=[{_CJK}])")
_SPACED_JOIN = re.compile(r"\s+[\u2215／|｜_]\s+")    # `Fate／Zero ／ フェイト／ゼロ`: two names, not four


def fix_script_titles(r: Reading, guess: Guess) -> None:
    """`[组名][进击的巨人／Attack on Titan][07]`, `[xyx98]传颂之物/Utawarerumono/うたわれるもの[BDrip]`: names
    in several scripts read as one title → the Latin one leads, the others are alternatives; names of one
    script (`Fate／Zero`, `Fate/stay night`, `Ranma 1/2`, `22/7`) are one title and stay whole."""
    title = r["title"]
    if not title or not _TITLE_JOIN.search(title):
        return
    parts = _SPACED_JOIN.split(title)
    parts = [p.strip(" -_·") for p in (parts if len(parts) > 1 else _TITLE_JOIN.split(title))]
    parts = [p for p in parts if p]
    latin = [p for p in parts if is_latin(p)]
    others = [p for p in parts if p not in latin]
    # `Ranma 1/2`: a part without letters is no name of its own
    if len(parts) < 2 or not latin or not others or not all(re.search(r"[^\W\d_]", p) for p in others):
        return
    r.update(title=latin[0], alternative_titles=list(dict.fromkeys(
        [*latin[1:], *others, *(a for a in r["alternative_titles"] if a != title)])))
    note(r, "script_titles")
