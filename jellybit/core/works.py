"""One candidate per work: the listings of one show or film by several providers, joined by their ids.

TMDB, TVDB and TVMaze list the same show under their own ids and say which ids the others use
(TMDB's `external_ids`, TVDB's `remoteIds`, TVMaze's `externals`). Listings that share an id are one
work; listings whose ids contradict each other never are; only when no id says either way do a
shared name (country tags aside), a year at most one apart and compatible countries join them.
The merged candidate speaks for the provider Jellyfin's folder id should name and carries every
provider's id and page, and the union of their names, so title comparison sees them all.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from jellybit.core.confidence import candidate_countries, candidate_names, untagged
from jellybit.core.plan import Candidate, MediaType
from jellybit.core.titles import titles_distance

ID_KEYS = ("tmdb", "tvdb", "tvmaze", "imdb")
SAME_NAME = 0.05             # title distance at which two listings carry one name
_ID_SHAPE = {"imdb": re.compile(r"tt\d{5,12}")}
_DIGITS = re.compile(r"\d{1,12}")
# Details a merged candidate takes from the first listing that has them (the preferred one first).
_UNION_KEYS = ("aliases", "external_ids", "ids", "links")


def _valid_id(key: str, value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    if key == "imdb":
        return text if _ID_SHAPE["imdb"].fullmatch(text) else None
    if not _DIGITS.fullmatch(text):
        return None
    return text.lstrip("0") or None


def listing_ids(candidate: Candidate) -> dict[str, str]:
    """Every id a listing gives its work: its own, its external ids, and a merged candidate's."""
    found: dict[str, str] = {}
    for source in (candidate.details.get("ids"), candidate.details.get("external_ids")):
        if isinstance(source, Mapping):
            for key, value in source.items():
                text = _valid_id(str(key), value)
                if text is not None:
                    found.setdefault(str(key), text)
    found[candidate.provider] = candidate.provider_id
    order = [k for k in ID_KEYS if k in found] + sorted(k for k in found if k not in ID_KEYS)
    return {k: found[k] for k in order}


def page_url(key: str, ident: str, media_type: MediaType | None) -> str | None:
    """The public page of an id at a provider (IMDb included), for links a human can follow."""
    if key == "tmdb":
        return f"https://www.themoviedb.org/{'movie' if media_type is MediaType.MOVIE else 'tv'}/{ident}"
    if key == "tvdb":
        return f"https://thetvdb.com/dereferrer/series/{ident}"
    if key == "tvmaze":
        return f"https://www.tvmaze.com/shows/{ident}"
    if key == "imdb":
        return f"https://www.imdb.com/title/{ident}/"
    return None


def with_ids(candidate: Candidate) -> Candidate:
    """The candidate with `details["ids"]` (every id of its work) and `details["links"]` (their pages)."""
    ids = listing_ids(candidate)
    known = candidate.details.get("links")
    links = {str(k): v for k, v in known.items() if isinstance(v, str)} if isinstance(known, Mapping) else {}
    if candidate.url:
        links[candidate.provider] = candidate.url
    for key, ident in ids.items():
        url = page_url(key, ident, candidate.media_type)
        if url and key not in links:
            links[key] = url
    ordered = {k: links[k] for k in ids if k in links}
    return replace(candidate, details={**candidate.details, "ids": ids, "links": ordered})


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def combine(base: Candidate, extra: Candidate) -> Candidate:
    """`base` with what only `extra` knows filled in; names, ids and links are the union of both."""
    base, extra = with_ids(base), with_ids(extra)
    details = dict(base.details)
    for key, value in extra.details.items():
        if key not in _UNION_KEYS and _empty(details.get(key)) and not _empty(value):
            details[key] = value
    own = {base.title.casefold(), (base.original_title or "").casefold()}
    names = [*(base.details.get("aliases") or []), *(extra.details.get("aliases") or []),
             extra.title, extra.original_title]
    aliases = [n for n in dict.fromkeys(n for n in names if isinstance(n, str) and n)
               if n.casefold() not in own]
    if aliases:
        details["aliases"] = aliases
    for key in ("external_ids", "ids", "links"):
        merged: dict[str, Any] = {}
        for source in (base.details.get(key), extra.details.get(key)):
            if isinstance(source, Mapping):
                for name, value in source.items():
                    merged.setdefault(str(name), value)
        if merged:
            details[key] = merged
    # A listing's own page (with its slug) beats a page built from an id another provider gave.
    own_pages = {extra.provider: extra.url, base.provider: base.url}
    details["links"] = {**details.get("links", {}), **{k: v for k, v in own_pages.items() if v}}
    original = base.original_title or extra.original_title
    return replace(
        base,
        year=base.year or extra.year,
        original_title=original if original != base.title else None,
        poster_url=base.poster_url or extra.poster_url,
        overview=base.overview or extra.overview,
        details=details,
    )


class _Group:
    """Listings believed to be one work, with the union of their ids."""

    def __init__(self, listing: Candidate) -> None:
        self.listings = [listing]
        self.ids = listing_ids(listing)

    def absorb(self, other: _Group) -> None:
        self.listings.extend(other.listings)
        for key, value in other.ids.items():
            self.ids.setdefault(key, value)

    def conflicts(self, other: _Group) -> bool:
        return any(other.ids.get(key, value) != value for key, value in self.ids.items())

    def shares_an_id(self, other: _Group) -> bool:
        return any(other.ids.get(key) == value for key, value in self.ids.items())

    def media_type(self) -> MediaType | None:
        return next((c.media_type for c in self.listings if c.media_type is not None), None)

    def same_name(self, other: _Group) -> bool:
        if self.media_type() != other.media_type():
            return False
        ours = set().union(*(candidate_countries(c) for c in self.listings))
        theirs = set().union(*(candidate_countries(c) for c in other.listings))
        if ours and theirs and not ours & theirs:
            return False
        for a in self.listings:
            for b in other.listings:
                if a.year and b.year and abs(a.year - b.year) > 1:
                    continue
                names_a, names_b = untagged(candidate_names(a)), untagged(candidate_names(b))
                if titles_distance(names_a, names_b)[0] <= SAME_NAME:
                    return True
        return False


def _join(groups: list[_Group], by_name: bool) -> None:
    joined = True
    while joined:
        joined = False
        for i, first in enumerate(groups):
            for second in groups[i + 1:]:
                if first.conflicts(second):
                    continue
                if second.shares_an_id(first) if not by_name else second.same_name(first):
                    first.absorb(second)
                    groups.remove(second)
                    joined = True
                    break
            if joined:
                break


def group_works(listings: Iterable[Candidate]) -> list[list[Candidate]]:
    """The listings grouped into works: by shared ids first, then by name where no id contradicts."""
    groups = [_Group(c) for c in listings]
    _join(groups, by_name=False)
    _join(groups, by_name=True)
    return [g.listings for g in groups]


def merge(listings: Sequence[Candidate], preference: Sequence[str]) -> Candidate:
    """One candidate for one work: the preferred provider's listing, completed by the others'."""
    rank = {name: i for i, name in enumerate(preference)}
    ordered = sorted(listings, key=lambda c: rank.get(c.provider, len(rank)))
    result = with_ids(ordered[0])
    for other in ordered[1:]:
        result = combine(result, other)
    return with_ids(result)


def same_work(a: Candidate, b: Candidate) -> bool:
    """Whether two listings are one work by the rules above (ids first, then the name)."""
    first, second = _Group(a), _Group(b)
    if first.conflicts(second):
        return False
    return first.shares_an_id(second) or first.same_name(second)
