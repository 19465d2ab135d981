"""Editions of a film (Director's Cut, Extended, IMAX …): read from names, normalized, labelled."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from jellybit.core.sanitize import clean_text

if TYPE_CHECKING:
    from jellybit.core.release import Release

MAX_EDITION = 40            # characters of an edition a label keeps (an LLM's free text is cut)
_SEP = r"[\s._\-]*"
_ORDINAL = r"(\d{1,3})(?:st|nd|rd|th|-?(?:я|й|летие|jähriges|e|ème|º|°))?"

# canonical name, pattern (separators between words are `_SEP`); the first match in the text wins.
_EDITIONS: tuple[tuple[str, str], ...] = (
    ("Director's Cut", r"directors?['’`]?s?_cut|director_edition|режисс[её]рск(?:ая|ий)(?:_(?:версия|"
                       r"редакция|cut|вариант))?|version_du_r[ée]alisateur|versi[óo]n_del_director"),
    ("Final Cut", r"final_cut"),
    ("Theatrical", r"theatrical(?:_(?:cut|version|edition|release))?|театральная_версия|прокатная_версия|"
                   r"kinofassung|kinoversion|version_cin[ée]ma"),
    ("Extended", r"extended(?:_(?:cut|edition|version|director'?s_cut))?|расширенная(?:_(?:версия|"
                 r"редакция))?|langfassung|version_longue|versi[óo]n_extendida|versione_estesa"),
    ("Unrated", r"unrated(?:_(?:cut|edition|version))?|без_рейтинга"),
    ("Uncut", r"uncut|ungeschnitten|без_купюр|version_int[ée]grale"),
    ("Uncensored", r"uncensored|без_цензуры"),
    ("Ultimate", r"ultimate_(?:cut|edition|collector'?s?_edition)"),
    ("IMAX", r"imax(?:_(?:edition|version|enhanced))?"),
    ("Open Matte", r"open_matte"),
    ("Redux", r"redux"),
    ("Remastered", r"(?:digitally_)?remaster(?:ed)?(?:_(?:edition|version))?"
                   r"|ремастер(?:ированная)?(?:_версия)?|restaur[ée]e?|restored"),
    ("Criterion", r"criterion(?:_collection)?"),
    ("Collector's Edition", r"collector'?s?_edition|коллекционное_издание"),
    ("Special Edition", r"special_edition|специальное_издание|édition_spéciale|edition_speciale"),
    ("Anniversary Edition", rf"(?:{_ORDINAL}_)?anniversary(?:_edition)?|юбилейное_издание"),
    ("Alternate Cut", r"alternat(?:e|ive)_(?:cut|version|ending)"),
    ("3D", r"3d"),
)

_COMPILED = tuple(
    (name, re.compile(r"(?<![^\W_])(?:" + pattern.replace("_", _SEP) + r")(?![^\W_])", re.IGNORECASE))
    for name, pattern in _EDITIONS
)
_NAMES = {name.casefold(): name for name, _ in _EDITIONS}
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
# Jellyfin's docs: "periods, commas and other characters are not supported" in a version label
_LABEL_DROP = re.compile(r"[^\w\s&+-]")


def _words(text: str) -> str:
    return " ".join(re.split(r"[\s._\-]+", text.casefold())).strip()


def _found(text: str) -> tuple[str, int, int] | None:
    best: tuple[str, int, int] | None = None
    for name, pattern in _COMPILED:
        hit = pattern.search(text)
        if hit and (best is None or hit.start() < best[1]):
            ordinal = hit.group(1) if name == "Anniversary Edition" and hit.lastindex else None
            shown = f"{int(ordinal)}{_suffix(int(ordinal))} Anniversary Edition" if ordinal else name
            best = (shown, hit.start(), hit.end())
    return best


def _editions_in(text: str) -> set[str]:
    found = {name for name, pattern in _COMPILED if pattern.search(text)}
    return {"Extended"} if found == {"Extended", "Director's Cut"} and re.search(
        r"(?i)extended[\s._-]*director", text) else found


def _suffix(number: int) -> str:
    if 10 <= number % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")


def find_edition(name: str, title: str | None = None, year: int | None = None) -> str | None:
    """The edition a release or file name states, normalized; never one that is part of the title.

    Only the text after the year counts when the name has one (`The.Final.Cut.2004` is a film
    called "The Final Cut"); without a year, words inside the title read are the title's.
    """
    text = name
    if year is not None:
        years = [m for m in _YEAR.finditer(text) if int(m.group()) == year]
        if years:
            text = text[years[-1].end():]
    hit = _found(text)
    if hit is None:
        return None
    edition, start, end = hit
    if year is None and title and _words(text[start:end]) in _words(title):
        return None
    return edition


def normalize_edition(value: object) -> str | None:
    """An edition as someone wrote it (guessit, an LLM, a human) → its canonical name, or tidy text."""
    if not isinstance(value, str):
        return None
    text = clean_text(" ".join(value.split()))[:200]
    if not text.strip(" -–_.'’"):
        return None
    hit = _found(text)
    if hit is not None:
        return hit[0]
    known = _NAMES.get(text.casefold().strip())
    if known:
        return known
    tidy = " ".join(_LABEL_DROP.sub(" ", text).split())[:MAX_EDITION].strip(" -&+")
    return tidy or None


def edition_label(edition: str | None) -> str | None:
    """The edition as a Jellyfin version label: `Director's Cut` → `Directors Cut` (docs: no punctuation)."""
    if not edition:
        return None
    text = re.sub(r"['’`]", "", edition)
    return " ".join(_LABEL_DROP.sub(" ", text).split()).strip(" -&+") or None


def is_edition_text(text: str | None) -> bool:
    """True when the whole of `text` names an edition (guessit's `episode_title` "The Final Cut")."""
    if not text:
        return False
    words = _words(re.sub(r"(?i)^the[\s._-]+", "", text.strip()))
    hit = _found(words)
    return hit is not None and hit[1] == 0 and hit[2] >= len(words)


def with_edition(release: Release, text: str) -> Release:
    """The release with its edition; an unnumbered name whose "episode title" is an edition is a film."""
    numbered = bool(release.episodes or release.absolute_episodes or release.air_date or release.seasons)
    last = text.replace("\\", "/").rstrip("/").rsplit("/", 1)
    edition = find_edition(last[-1], release.title, release.year)
    if edition is None and len(last) == 2:
        # a folder may name the cut of the one file inside (`Film.2001.Directors.Cut/film.mkv`)
        folders = [p for p in last[0].split("/") if p]
        for folder in reversed(folders):
            edition = find_edition(folder, release.title, release.year)
            if edition is not None:
                # `Film.Theatrical.and.Directors.Cut/` names both cuts: it says nothing of one file
                edition = edition if len(_editions_in(folder)) == 1 else None
                break
    if edition is None:
        return release
    if numbered:
        title = release.episode_title or ""
        return release if _words(edition) in _words(title) else replace(release, edition=edition)
    changes: dict[str, object] = {"edition": edition}
    if is_edition_text(release.episode_title):
        changes["episode_title"] = None
        if release.media_type is None and release.title:
            changes["media_type"] = "movie"
    return replace(release, **changes)
