"""Corrections to the title: group prefixes, aliases in two scripts, film parts, stray words."""

from __future__ import annotations

import re

from jellybit.core.release_fixes.common import (
    ALIAS_SPLIT,
    PREFIX_WORDS,
    TAG,
    YEAR,
    Guess,
    Reading,
    base_name,
    clean_title,
    is_latin,
    note,
)

_PART_WORDS = (r"(?i)\b((?:part|pt|vol(?:ume)?)[ ._]?(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|"
               r"ten|i{1,3}|iv|vi{0,3}))\b")


def fix_group_prefix(r: Reading, guess: Guess) -> None:
    """`Spider-Man.No.Way.Home.2021`: guessit reads `Spider` as a group and `Man No Way Home` as the title."""
    group, title = r["release_group"], r["title"]
    base = base_name(r["text"])
    if base == base.lower():
        return          # `blow-how.to.be.single.2016.mkv`: an all-lowercase scene file starts with its group
    if group and title and re.match(rf"{re.escape(group)}-{re.escape(title.split()[0])}", base, re.I):
        r.update(title=f"{group}-{title}", release_group=None)
        note(r, "group_prefix")




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
    pool = [n for n in (*names, r["title"], *r["alternative_titles"]) if n]
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




def fix_title_words(r: Reading, guess: Guess) -> None:
    """Drop `Сериал` and friends, stray dashes and empty alternatives."""
    for key in ("title",):
        if r[key]:
            cleaned = PREFIX_WORDS.sub("", r[key]).strip(" -–:|")
            r[key] = cleaned or None
    r["alternative_titles"] = [a for a in (PREFIX_WORDS.sub("", a).strip(" -–:|")
                                           for a in r["alternative_titles"]) if a]


