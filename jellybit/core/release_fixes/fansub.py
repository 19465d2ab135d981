"""Corrections for fansub and anime names: `[Group]` first, bracketed fields, fansub seasons, specials."""

from __future__ import annotations

import re

from jellybit.core.languages import CODE_BY_WORD
from jellybit.core.release_fixes.common import (
    ALIAS_SPLIT,
    ALL_BRACKETS,
    BRACKET,
    FANSUB_STYLE,
    LEAD_GROUP,
    MARKER,
    TAG,
    YEAR,
    Guess,
    Reading,
    base_name,
    note,
)

_FANSUB_SEASON = re.compile(
    r"(?i)(?:\bseason\s*(\d{1,2})|(?<![a-z])s(\d{1,2})|\b(\d{1,2})(?:st|nd|rd|th)\s+season)"
    r"\s+(?:-\s+(\d{1,4})(?:v\d)?(?!\d)|(\d{1,4})(?:v\d)?(?=\s*[\[(]|\s*$))"   # `2nd Season 24 (BD)`: no dash
)
_ORDINAL_SEASON = re.compile(r"(?i)\s*\b(\d{1,2})(?:st|nd|rd|th)\s+season\b|\s*\bseason\s*(\d{1,2})\b")
_DASH_NUMBER = re.compile(r"\s-\s+(\d{1,4})(?:v\d)?(?:\s|$|\[|\()")
# not right after a number (`- 14 OAD`, `02.5.(Special)`), nor starting a title (`Special A`)
_SPECIAL = re.compile(r"(?<!\d[.\s])(?:^|[\s\[(]|\s-)(?<!\d\s)(SP|OVA|OAD|Specials?)\s*(\d{1,3})?"
                      r"(?=$|[\s\])\-.])"
                      r"(?!\s*[A-Z][a-z])")


def fix_leading_group(r: Reading, guess: Guess) -> None:
    """`[SubsPlease] …`: the first bracket names the group, never a CRC or a tag at the end."""
    match = LEAD_GROUP.match(base_name(r["text"]))
    group = match.group(1).strip() if match else None
    if group and TAG.match(group):
        group = None
    current = r["release_group"]
    bad = current is not None and (TAG.match(current) or current == r.get("crc32"))
    if group and current != group:
        r["release_group"] = group
        note(r, "leading_group")
    elif bad:
        r["release_group"] = None
        note(r, "leading_group")




# `★01月新番★` between the brackets (the season of the year it aired) and bracketed words that file a
# release in a catalogue (`[国漫]` Chinese animation, `[新番]` new series) are not names.
_STARRED = re.compile(r"★[^★\[\]【】]{0,20}★|★")
_CATEGORY_WORDS = frozenset({"国漫", "國漫", "新番", "日漫", "动画", "動畫", "番剧", "剧场版", "劇場版"})
_RESOLUTION = re.compile(r"\d{3,4}[x×]\d{3,4}")
_END = re.compile(r"\s*[（(](?:END|完)[）)]$", re.IGNORECASE)


def fix_bracketed_fansub(r: Reading, guess: Guess) -> None:
    """`[字幕组][进击的巨人][01][1080p][简体]`: every field sits in its own bracket."""
    base = re.sub(r"\][ ._]+\[", "][", _STARRED.sub("", base_name(r["text"])))
    if not ALL_BRACKETS.match(base):
        return
    parts = [_END.sub("", p.strip()) for p in BRACKET.findall(base)][1:]
    titles = [p for p in parts if p and not all(TAG.match(w) for w in re.split(r"[_\s]+", p))
              and p.casefold() not in CODE_BY_WORD
              and p not in _CATEGORY_WORDS and not _RESOLUTION.fullmatch(p)]
    numbers = [p for p in parts if re.fullmatch(r"\d{1,4}(?:v\d)?|\d{1,4}\s*[-~]\s*\d{1,4}", p)
               and not (YEAR.fullmatch(p) and len(parts) > 1)]
    years = [int(p) for p in parts if YEAR.fullmatch(p)]
    if years and r["year"] is None:
        r["year"] = years[0]
    if titles:
        # Every bracket that is not a tag is a name of the show (`[漆黑的子彈][Black Bullet]`); the
        # first leads and `alias` puts a Latin one first.
        names = [n for t in titles for n in (ALIAS_SPLIT.split(t) if ALIAS_SPLIT.search(t) else [t])]
        r["title"], r["alternative_titles"] = names[0], names[1:]
    if numbers and not r["episodes"]:
        low, _, high = re.sub(r"v\d$", "", numbers[0]).replace("~", "-").partition("-")
        first, last = int(low), int(high or low)
        r["episodes"] = list(range(first, last + 1)) if 0 <= last - first <= 2000 else [first]
        r["type"] = "episode"
    if r["release_group"] in parts:
        r["release_group"] = None
    fix_leading_group(r, guess)
    note(r, "bracketed_fansub")




def fix_fansub_season(r: Reading, guess: Guess) -> None:
    """`Show S2 - 05`, `Show Season 2 - 05`, `Show 2nd Season - 03`: season N, episode E."""
    base = base_name(r["text"])
    match = _FANSUB_SEASON.search(base)
    if match and len(r["seasons"]) > 1 and re.search(r"(?i)\bcomplete\b", base):
        match = None                    # `Season 1 - 4 Complete`: a range of seasons
    if match:
        season = int(next(g for g in match.groups()[:3] if g))
        r.update(seasons=[season], episodes=[int(match.group(4) or match.group(5))])
        if r["title"]:
            r["title"] = re.sub(r"(?i)\s+\d{1,2}(?:st|nd|rd|th)$", "", r["title"]) or r["title"]
        r["type"] = "episode"
        note(r, "fansub_season")
    if r["title"]:
        found = _ORDINAL_SEASON.search(r["title"])
        if found:
            if not r["seasons"]:
                r["seasons"] = [int(found.group(1) or found.group(2))]
            r["title"] = (r["title"][: found.start()] + r["title"][found.end():]).strip(" -") or None
            note(r, "fansub_season")




def fix_special(r: Reading, guess: Guess) -> None:
    """`SP1`, `OVA`, `OAD`, `Specials` in fansub names: season 0."""
    base = base_name(r["text"])
    match = _SPECIAL.search(base)
    lead = LEAD_GROUP.match(base)
    if match and lead and not base[lead.end():match.start()].strip():
        match = None                    # `[Grp] Special A 01`: the title starts with the word
    word = match.group(1) if match else None
    if word and word.lower().startswith("special") and not LEAD_GROUP.match(base):
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
    note(r, "special")




def fix_dash_number(r: Reading, guess: Guess) -> None:
    """`[Group] Show - 1 (1080p)`: guessit reads a one-digit episode after a dash as an episode title."""
    base = base_name(r["text"])
    dash = _DASH_NUMBER.search(base)
    unnumbered = not (r["episodes"] or r["absolute_episodes"] or r["seasons"])
    if unnumbered and dash and LEAD_GROUP.match(base):
        r.update(episodes=[int(dash.group(1))], type="episode")
        if r["episode_title"] == dash.group(1):
            r["episode_title"] = None
        note(r, "dash_number")


# The episode as the name marks it: `episode 18`, `ep.05`, or the number after the last ` - `.
_MARKED_EPISODE = re.compile(r"(?i)(?:\bep(?:isode)?[ ._]*|(?:\s|_)-(?:\s|_)+)(\d{1,4})(?:v\d)?"
                             r"(?=$|[\s_\[(.])")
_YEAR_PAREN = re.compile(r"\s*\((?:19|20)\d{2}\).*$")


def fix_title_number(r: Reading, guess: Guess) -> None:
    """`Space Battleship Yamato 2199 (2012) episode 18`, `[Erai-raws] 22-7 - 11`: a number of the title
    read as one more absolute episode → the marked episode alone, the number back in the title."""
    numbers = r["absolute_episodes"]
    if len(numbers) < 2 or r["seasons"]:
        return
    base = base_name(r["text"])
    marked = list(_MARKED_EPISODE.finditer(base))
    if not marked:
        return
    match = marked[-1]
    episode, head = int(match.group(1)), base[: match.start()]
    others = [n for n in numbers if n != episode]
    if episode not in numbers or not all(re.search(rf"(?<!\d)0*{n}(?!\d)", head) for n in others):
        return
    head = _YEAR_PAREN.sub("", LEAD_GROUP.sub("", head).replace("_", " "))
    title = " ".join(re.split(r"\s[\[(]", head)[0].split()).strip(" -")
    if not title or not any(re.search(rf"(?<!\d)0*{n}(?!\d)", title) for n in others):
        return
    r.update(absolute_episodes=[episode], title=title)
    note(r, "title_number")


# `003. Title`, `611-612 - Title` (first), `- 103, 104 -`, `- 107a -` (between dashes): the episode field
_DASH_FIELD = re.compile(r"^(\d{2,4})(?:-(\d{2,4}))?(?:\.\s|\s-\s)|"
                         r"\s-\s(\d{2,4})[a-d]?((?:,\s*\d{2,4})*)(?=\s-\s)")


def fix_dash_field(r: Reading, guess: Guess) -> None:
    """`003. Show - Title`, `611-612 - Title`, `Show - 103, 104 - Title`, `Show - 107a - Title`: a number
    field with no season anywhere is the absolute episode (guessit: S00E03, 612 alone, S01E04, nothing)."""
    base = base_name(r["text"])
    match = _DASH_FIELD.search(base)
    if not match or MARKER.search(r["text"]) or r["air_date"]:
        return
    if match.group(1):
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        numbers = list(range(low, high + 1)) if 0 <= high - low <= 20 else []
    else:
        numbers = [int(match.group(3)), *map(int, re.findall(r"\d+", match.group(4)))]
    if not numbers or any(1900 <= n <= 2099 for n in numbers) or r["absolute_episodes"] == numbers:
        return
    r.update(absolute_episodes=numbers, episodes=[], seasons=[], type="episode")
    r["alternative_titles"] = [a for a in r["alternative_titles"] if not re.match(r"\d", a)]
    note(r, "dash_field")



# `[Grp] Title 2 [CRC]`, `[Grp]_Title_1-13_(BD)`, `[Title].148.[Xvid]`: the number (or range) that ends
# the name's text before its tags
_TAIL_NUMBER = re.compile(r"^(?:[\[【][^\]】]*[\]】][ ._]*)?([^\[\]()【】]*?)[ ._]*(?<![\dvV])(?<!\d\.)"
                          r"(\d{1,4})(?:-(\d{1,4}))?(?:v\d)?[ ._]*(?=[\[(]|$)")
# `Vol.1&2`, `No.6`, `CD2`, `#3`: numbered, but not as an episode; `Show - Sub - 04` is `dash_absolute`'s
_NOT_EPISODE_BEFORE = re.compile(r"(?i)(?:\bvol\.?|\bno\.?|\bcd|\bdisc|\bpart|&|#)\s*$|"
                                 r"\s-(?:\s|$)|_-(?:_|$)|\.-(?:\.|$)")
_VOLUMES = re.compile(r"(?i)\s+vol\.?\s*\d+(?:v\d)?(?:\s*(?:&|and)\s*(?:vol\.?\s*)?\d+(?:v\d)?)*$")


def fix_fansub_tail(r: Reading, guess: Guess) -> None:
    """`Eve no Jikan 2 [88F4F7F0]`, `[Coalgirls]_White_Album_1-13_(BD)`, `[Keroro].148.[Xvid]`: in
    fansub style, the number that ends the name before its tags is the absolute episode (or range)."""
    base = base_name(r["text"])
    if not FANSUB_STYLE.search(base) or MARKER.search(r["text"]) or r["seasons"] or r["air_date"]:
        return
    match = _TAIL_NUMBER.match(base)
    if not match or _NOT_EPISODE_BEFORE.search(match.group(1)):
        return
    low, high = int(match.group(2)), int(match.group(3) or match.group(2))
    read = r["absolute_episodes"] or r["episodes"]
    if 1900 <= low <= 2099 or not 0 <= high - low <= 2000 or read not in ([], [low], [high]):
        return
    lead = LEAD_GROUP.match(base)
    title = " ".join(match.group(1).replace("_", " ").replace(".", " ").split()).strip(" -")
    if not title and lead and not r["title"]:
        title = lead.group(1).strip()
        r["release_group"] = None
    known = (r["title"] or "").casefold().rstrip(" 0123456789-")
    if not title or not title.casefold().startswith(known):
        return
    r.update(title=title, absolute_episodes=list(range(low, high + 1)), episodes=[], type="episode")
    note(r, "fansub_tail")


def fix_volumes(r: Reading, guess: Guess) -> None:
    """`[GS] Classroom Crisis Vol.1&2 (BD)`: the volumes of a disc release are not the title's."""
    if r["title"] and LEAD_GROUP.match(base_name(r["text"])):
        title = _VOLUMES.sub("", r["title"])
        if title and title != r["title"]:
            r["title"] = title
            note(r, "volumes")
