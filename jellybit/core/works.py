"""One candidate per work: the listings of one show or film by several providers, joined by their ids.

TMDB, TVDB and TVMaze list the same show under their own ids and say which ids the others use
(TMDB's `external_ids`, TVDB's `remoteIds`, TVMaze's `externals`). Listings that share an id are one
work; listings whose ids contradict each other never are; only when no id says either way do a
shared title or original title (country tags aside), a year at most one apart and compatible
countries join them. The merged candidate speaks for the provider Jellyfin's folder id should name
and carries every provider's id and page, and the union of their names (aliases, translations), so
title comparison sees them all.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from jellybit.core.confidence import candidate_countries, untagged
from jellybit.core.providers import facts, page_url, provider_order, valid_id
from jellybit.core.records import Candidate
from jellybit.core.title_match import normalize_title, titles_distance

SAME_NAME = 0.05             # title distance at which two listings carry one name
_DIGITS = re.compile(r"\d{1,12}")
# Details that a merged candidate unites from all its listings; every other key comes from the
# first listing that has it, the preferred provider's first.
_UNION_KEYS = ("aliases", "external_ids", "ids", "links")


def _valid_id(key: str, value: object) -> str | None:
    text = str(value).strip() if value is not None else ""
    known = facts(key)
    if known is not None and not known.numeric:      # IMDb's `tt…`: kept as written
        return text if valid_id(key, text) else None
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
    return {k: found[k] for k in provider_order(sorted(found))}


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


@dataclass(frozen=True)
class _Listing:
    """What joining needs of one listing, computed once."""

    candidate: Candidate
    ids: dict[str, str]
    countries: frozenset[str]
    names: tuple[str, ...]          # title and original title, also without a country tag
    normalized: frozenset[str]

    @classmethod
    def of(cls, candidate: Candidate) -> _Listing:
        names = untagged(n for n in (candidate.title, candidate.original_title) if n)
        return cls(candidate, listing_ids(candidate), frozenset(candidate_countries(candidate)), names,
                   frozenset(normalize_title(n) for n in names))


@functools.lru_cache(maxsize=4096)
def _one_name(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    return titles_distance(a, b)[0] <= SAME_NAME


def _same_name(a: _Listing, b: _Listing) -> bool:
    """Two listings that carry one name (title or original title, country tags aside) a year apart at most."""
    x, y = a.candidate, b.candidate
    if x.year and y.year and abs(x.year - y.year) > 1:
        return False
    # Aliases are left out on purpose: translations of different works collide, and comparing them
    # all would cost seconds; the ids join what the titles cannot.
    return bool(a.normalized & b.normalized) or _one_name(a.names, b.names)


class _Group:
    """Listings believed to be one work, with the union of their ids and countries."""

    def __init__(self, listing: _Listing) -> None:
        self.listings = [listing]
        self.ids = dict(listing.ids)
        self.countries = set(listing.countries)
        self.media_type = listing.candidate.media_type

    def absorb(self, other: _Group) -> None:
        self.listings.extend(other.listings)
        for key, value in other.ids.items():
            self.ids.setdefault(key, value)
        self.countries |= other.countries

    def conflicts(self, other: _Group) -> bool:
        if self.media_type != other.media_type:
            return True                 # a film and a show are never one work
        return any(other.ids.get(key, value) != value for key, value in self.ids.items())

    def shares_an_id(self, other: _Group) -> bool:
        return any(other.ids.get(key) == value for key, value in self.ids.items())

    def same_name(self, other: _Group) -> bool:
        if self.countries and other.countries and not self.countries & other.countries:
            return False
        return any(_same_name(a, b) for a in self.listings for b in other.listings)


def _join(groups: list[_Group], by_name: bool) -> None:
    joined = True
    while joined:
        joined = False
        for i, first in enumerate(groups):
            for second in groups[i + 1:]:
                if first.conflicts(second):
                    continue
                if second.same_name(first) if by_name else second.shares_an_id(first):
                    first.absorb(second)
                    groups.remove(second)
                    joined = True
                    break
            if joined:
                break


def group_works(listings: Iterable[Candidate]) -> list[list[Candidate]]:
    """The listings grouped into works: by shared ids first, then by name where no id contradicts."""
    groups = [_Group(_Listing.of(c)) for c in listings]
    _join(groups, by_name=False)
    _join(groups, by_name=True)
    return [[listing.candidate for listing in g.listings] for g in groups]


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
    first, second = _Group(_Listing.of(a)), _Group(_Listing.of(b))
    if first.conflicts(second):
        return False
    return first.shares_an_id(second) or first.same_name(second)
