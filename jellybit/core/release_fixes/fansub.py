"""Corrections for fansub and anime names: `[Group]` first, bracketed fields, fansub seasons, specials."""

from __future__ import annotations

import re

from jellybit.core.languages import CODE_BY_WORD
from jellybit.core.release_fixes.common import (
    ALIAS_SPLIT,
    ALL_BRACKETS,
    BRACKET,
    LEAD_GROUP,
    TAG,
    Guess,
    Reading,
    base_name,
    note,
)

_FANSUB_SEASON = re.compile(
    r"(?i)(?:\bseason\s*(\d{1,2})|(?<![a-z])s(\d{1,2})|\b(\d{1,2})(?:st|nd|rd|th)\s+season)"
    r"\s+-\s+(\d{1,4})(?:v\d)?(?!\d)"
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




def fix_bracketed_fansub(r: Reading, guess: Guess) -> None:
    """`[字幕组][进击的巨人][01][1080p][简体]`: every field sits in its own bracket."""
    base = base_name(r["text"])
    if not ALL_BRACKETS.match(base):
        return
    parts = [p.strip() for p in BRACKET.findall(base)][1:]
    title = next((p for p in parts if p and not TAG.match(p) and p.casefold() not in CODE_BY_WORD), None)
    numbers = [p for p in parts if re.fullmatch(r"\d{1,4}(?:v\d)?|\d{1,4}\s*[-~]\s*\d{1,4}", p)]
    if title:
        names = ALIAS_SPLIT.split(title) if ALIAS_SPLIT.search(title) else [title]
        r["title"], r["alternative_titles"] = names[0], [*names[1:], *r["alternative_titles"]]
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
        r.update(seasons=[season], episodes=[int(match.group(4))])
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
