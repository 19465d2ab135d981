"""Release-name parser: guessit's reading plus Jellybit's corrections where guessit is weak."""

from __future__ import annotations

import functools
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from guessit import guessit

from jellybit.core import release_fixes as fixes
from jellybit.core.editions import with_edition
from jellybit.core.release_input import (
    MAX_PARSE_CHARS,
    NAME_SLASH,
    PACK_CALL_BUDGET,
    BudgetExceeded,
    calls_spent,
    parse_text,
    run_bounded,
)

__all__ = ["MAX_PARSE_CHARS", "MediaKind", "Release", "as_series", "parse_many", "parse_release",
           "parse_release_with", "plain_guessit"]

log = logging.getLogger(__name__)


class MediaKind:
    """The values of `Release.media_type`."""

    MOVIE = "movie"
    EPISODE = "episode"
    SEASON_PACK = "season_pack"


@dataclass(frozen=True)
class Release:
    """What a release name says; every field may be missing."""

    name: str
    media_type: str | None                   # movie | episode | season_pack | None
    title: str | None
    year: int | None = None
    season: int | None = None                # the season; a multi-season pack's first (all in `seasons`)
    episodes: tuple[int, ...] = ()
    absolute_episodes: tuple[int, ...] = ()
    air_date: str | None = None              # ISO date of a daily show
    alternative_titles: tuple[str, ...] = ()
    seasons: tuple[int, ...] = ()            # every season a pack covers
    part: int | None = None
    episode_title: str | None = None
    complete: bool = False                   # "Complete Series" and friends
    special: bool = False                    # SP / OVA / OAD / S00
    screen_size: str | None = None
    source: str | None = None
    release_group: str | None = None
    languages: tuple[str, ...] = ()          # audio language hints (ISO 639-1 where known)
    subtitle_languages: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()        # which of Jellybit's corrections changed guessit's reading
    season_assumed: bool = False             # `season` is the convention's 1 for a season-less episode
    country: str | None = None               # ISO 3166-1 alpha-2 of a country in a series' name (`US`, `GB`)
    edition: str | None = None               # Director's Cut, Extended, IMAX … (core/editions.py)
    # another reading of the name's numbers as episodes of `season` (else 1): `S01E01E03` as 1–3,
    # `Show 01-02-03` as episodes 1–3 rather than a date; the recognizer settles it (path_numbering.py)
    ambiguous_episodes: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready mapping: the `jellybit parse` keys first, then the rest."""
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, tuple):
                data[key] = list(value)
        return data

    @property
    def single_season(self) -> int | None:
        """The season when the name covers at most one (a multi-season pack has none to default to)."""
        return self.season if len(self.seasons) <= 1 else None

    def titles(self) -> tuple[str, ...]:
        """The title followed by every alternative title, without repeats."""
        seen: dict[str, None] = {}
        for title in (self.title, *self.alternative_titles):
            if title and title.casefold() not in {s.casefold() for s in seen}:
                seen[title] = None
        return tuple(seen)


@functools.cache
def _configured() -> None:
    # guessit builds its rules on its first call (~280,000 calls); that is not a name's work
    guessit("Show.S01E01.mkv")


# Memoized: the corrections may ask for the same text twice, and the corpus bench reads each name
# with every correction switched off in turn.
@functools.lru_cache(maxsize=16384)
def _guess_cached(text: str, options: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    try:
        _configured()
        return dict(run_bounded(lambda: guessit(text, dict(options))))
    except BudgetExceeded:
        log.warning("guessit gave up on a release name over its work budget: %.80r", text)
        return {}
    except Exception as exc:  # guessit is third-party code on hostile input: never let it escape
        log.warning("guessit failed on a release name: %s", exc)
        return {}


def _guess(text: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return dict(_guess_cached(text, tuple(sorted((options or {}).items()))))


def _nothing(text: str, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    return {}


def plain_guessit(text: str) -> dict[str, Any]:
    """guessit's own answer for a text, no options (memoized; an exception reads as nothing)."""
    return _guess(text)


def _text(value: str | None) -> str | None:
    """A title as read (a release name's slashes given back), or None for nothing but spaces and dashes."""
    value = value.replace(NAME_SLASH, "/") if value else value
    return value.strip() or None if value and value.strip(" -–_.") else None


def _media_type(r: dict[str, Any]) -> str | None:
    numbered = r["episodes"] or r["absolute_episodes"] or r["air_date"]
    if r["type"] == "movie":
        return MediaKind.MOVIE if _text(r["title"]) else None
    if numbered:
        batch = len(r["episodes"]) + len(r["absolute_episodes"]) > 1 and (r["complete"] or r["batch"])
        return MediaKind.SEASON_PACK if batch else MediaKind.EPISODE
    if r.get("one_special") and not (r["complete"] or r["batch"]):
        return MediaKind.EPISODE
    if r["seasons"] or r["complete"] or r["special"]:
        return MediaKind.SEASON_PACK
    return None


@functools.lru_cache(maxsize=8192)
def parse_release(name: str, path: bool | None = None) -> Release:
    """Parse one release name (a torrent name or a file path); never raises, always the same answer.

    `path=False`: a torrent's name, whose slashes are its title's (`Fate/stay night`); `True`: a file's
    path; None: told by its shape (`release_input.is_path`)."""
    return parse_release_with(name, frozenset(), path=path)


def parse_release_with(name: str, disabled: frozenset[str] = frozenset(), guess: fixes.Guess = _guess,
                       path: bool | None = None) -> Release:
    """Parse with the named corrections switched off (uncached; the bench measures each correction), or
    with another `guess` (`parse_many` past its budget reads by the corrections alone)."""
    text = parse_text(name, path)
    if not text.strip(" ./\\-_[]()"):
        return Release(name=name, media_type=None, title=None)
    reading = fixes.reading_of(text, guess(text, None))
    reading = fixes.apply_all(reading, guess, disabled)
    seasons = sorted(set(reading["seasons"]))
    return with_edition(Release(
        name=name,
        media_type=_media_type(reading),
        title=_text(reading["title"]),
        year=reading["year"],
        season=seasons[0] if seasons else None,
        episodes=tuple(sorted(set(reading["episodes"]))),
        absolute_episodes=tuple(sorted(set(reading["absolute_episodes"]))),
        air_date=reading["air_date"],
        alternative_titles=tuple(dict.fromkeys(
            t for a in reading["alternative_titles"] if (t := _text(a)) and t != _text(reading["title"])
        )),
        seasons=tuple(seasons),
        part=reading["part"],
        episode_title=_text(reading["episode_title"]),
        complete=reading["complete"],
        special=reading["special"],
        screen_size=reading["screen_size"],
        source=reading["source"],
        release_group=reading["release_group"],
        languages=tuple(dict.fromkeys(reading["languages"])),
        subtitle_languages=tuple(dict.fromkeys(reading["subtitle_languages"])),
        corrections=tuple(reading["corrections"]),
        season_assumed=bool(reading.get("season_assumed")) and bool(seasons),
        country=reading["country"],
        ambiguous_episodes=tuple(reading["ambiguous_episodes"]),
    ), text)


def as_series(release: Release, path: bool | None = None) -> Release:
    """A name read as a film's `Part Two` (`Show.Name.Part.Two.2024.WEB-DL`, the part in its title) read
    again for a download the user says is a series: the title without the part, the part its episode."""
    if release.media_type != MediaKind.MOVIE or "part_in_title" not in release.corrections:
        return release
    again = parse_release_with(release.name, frozenset({"part_in_title"}), path=path)
    return again if again.part is not None and again.title else release


# ------------------------------------------------------------------------------------------- many names

_DIGITS = re.compile(r"\d+")
# A fansub CRC32 (`[A1B2C3D4]`) differs in every file; it names no number, so it is left out.
_CRC = re.compile(r"[\[(][0-9A-Fa-f]{8}[\])]")
_NUMBER_FIELDS = ("seasons", "episodes", "absolute_episodes")
Mapping_ = dict[tuple[str, int], frozenset[int]]


def _digits(name: str) -> list[str]:
    return _DIGITS.findall(_CRC.sub("", name))


def _positions(digits: list[str], value: int) -> set[int]:
    return {i for i, d in enumerate(digits) if int(d) == value}


def _numbers(release: Release, field_name: str) -> tuple[int | None, ...]:
    value = getattr(release, field_name)
    return (value,) if isinstance(value, int) or value is None else tuple(value)


def _derive_map(a: Release, b: Release) -> Mapping_ | None:
    """Which digit runs of the name each number of `a` came from, confirmed by `b`; None if unclear."""
    blank = {f: () for f in _NUMBER_FIELDS}
    if replace(a, name="", season=None, part=None, **blank) != replace(b, name="", season=None, part=None,
                                                                        **blank):
        return None
    da, db = _digits(a.name), _digits(b.name)
    if len(da) != len(db):
        return None
    varying = {i for i, (x, y) in enumerate(zip(da, db, strict=True)) if x != y}
    if a.year is not None and _positions(da, a.year) & varying:
        return None
    mapping: Mapping_ = {}
    for field_name in (*_NUMBER_FIELDS, "part"):
        va, vb = _numbers(a, field_name), _numbers(b, field_name)
        if len(va) != len(vb):
            return None
        for k, (x, y) in enumerate(zip(va, vb, strict=True)):
            if x is None or y is None:
                if x != y:
                    return None
                continue
            common = _positions(da, x) & _positions(db, y)
            if common & varying:
                # Several runs may carry the number (`Season 01/Show.S01E05`); they must agree later.
                mapping[(field_name, k)] = frozenset(common & varying)
            elif x != y:
                return None
    return mapping


def _derive(a: Release, mapping: Mapping_, name: str) -> Release | None:
    digits = _digits(name)
    values: dict[str, Any] = {}
    for field_name in (*_NUMBER_FIELDS, "part"):
        items = list(_numbers(a, field_name))
        for (f, k), positions in mapping.items():
            if f != field_name:
                continue
            found = {int(digits[p]) for p in positions}
            if len(found) != 1:
                return None
            items[k] = found.pop()
        values[field_name] = items[0] if field_name == "part" else tuple(sorted(set(items)))
    seasons = values["seasons"]
    return replace(a, name=name, season=seasons[0] if seasons else None, **values)


Reader = Callable[[str], Release]


def _parse_group(names: Sequence[str], members: list[int], out: list[Release | None], read: Reader) -> None:
    """Derive a template's members from three real parses; where they disagree, split and retry."""
    if len(members) < 8:
        for index in members:
            out[index] = read(names[index])
        return
    first, middle, last = members[0], members[len(members) // 2], members[-1]
    a, m, b = (read(names[i]) for i in (first, middle, last))
    mapping = _derive_map(a, b)
    if mapping is None or _derive(a, mapping, names[middle]) != m:
        half = len(members) // 2
        _parse_group(names, members[:half], out, read)
        _parse_group(names, members[half:], out, read)
        return
    for index in members:
        out[index] = _derive(a, mapping, names[index]) or read(names[index])


def parse_many(names: Sequence[str], budget: int = PACK_CALL_BUDGET) -> list[Release]:
    """Parse many names; names that differ only in their digits share one checked guessit reading.

    A 2,000-episode pack would take guessit half a minute name by name. For each template (the name
    with its digits blanked and any CRC32 masked) three members are parsed for real; when the
    numbers of the last follow from the first by its digit runs alone, and the middle one agrees,
    the rest are derived that way (a name whose runs disagree is parsed for real); a template whose
    samples disagree (guessit reads `- 2000` differently from `- 1999`) is split in halves and retried.
    Once guessit has made `budget` calls for the pack (thousands of differently built hostile names),
    the names still to read are read by the corrections alone.
    """
    start = calls_spent()

    def read(name: str) -> Release:
        if calls_spent() - start <= budget:
            return parse_release(name)
        return parse_release_with(name, guess=_nothing)

    out: list[Release | None] = [None] * len(names)
    groups: dict[str, list[int]] = defaultdict(list)
    for index, name in enumerate(names):
        # digit counts are kept in the template: guessit reads four digits as a year, two as not
        groups[re.sub(r"\d", "#", _CRC.sub("[crc]", name))].append(index)
    for members in groups.values():
        _parse_group(names, members, out, read)
    return [r for r in out if r is not None]
