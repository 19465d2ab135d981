"""The metadata providers, written once: what each is called, which ids it gives, where its pages are,
which media types it is searched for, whether it needs a key, and how Jellyfin names it.

Every face (the panel, the CLI, Telegram, Home Assistant, the worker's health) and every core rule
(folder tags, id shapes, pasted ids, which listing names the work) reads these facts from `PROVIDERS`;
adding a provider is a row here, its config section and its adapter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from jellybit.core.records import MediaType


class Provider(StrEnum):
    """A metadata provider (IMDb ids come as links and overrides; it is not searched)."""

    TMDB = "tmdb"
    TVDB = "tvdb"
    TVMAZE = "tvmaze"
    IMDB = "imdb"


TMDB_KEY_PAGE = "https://www.themoviedb.org/settings/api"
# Said wherever a film meets a configuration without TMDB (the review, `recognize`, the health check).
FILMS_NEED_TMDB = (f"films need a TMDB key: get one at {TMDB_KEY_PAGE} and set "
                   "JELLYBIT_METADATA_TMDB_API_KEY (or metadata.tmdb.api_key)")
_NUMERIC = r"\d{1,12}"
_LAST = 99                       # rank of a provider Jellyfin's folder id should name only when alone


@dataclass(frozen=True)
class ProviderFacts:
    """One provider's facts, as every part of Jellybit needs them."""

    provider: Provider
    label: str                                   # as humans write it: "TMDB", "TVMaze", "IMDb"
    searched: frozenset[MediaType]               # searched for these (empty: ids only, never searched)
    pages: Mapping[MediaType | None, str]        # public page per media type, "{id}" in it
    folder_tags: Mapping[MediaType, str]         # the bracket tag Jellyfin reads from a folder name
    rank: Mapping[MediaType, int] = field(default_factory=dict)   # lower: preferred for the folder id
    needs_key: bool = False                      # searched only with a key (config says where)
    key_setting: str = ""                        # where the key goes, for the health hints
    off_hint: str = ""                           # what to do while it is off (the health check says it)
    words: tuple[str, ...] = ()                  # how free text names it before a numeric id ("thetvdb")
    id_shape: str = _NUMERIC                     # a valid id, as a regex
    jellyfin_key: str = ""                       # its key in Jellyfin's ProviderIds

    @property
    def numeric(self) -> bool:
        """Whether its ids are plain numbers (leading zeros mean nothing)."""
        return self.id_shape == _NUMERIC

    def page(self, ident: str, media_type: MediaType | None) -> str | None:
        """The public page of `ident` here, for a link a human can follow."""
        template = self.pages.get(media_type, self.pages.get(None))
        return template.format(id=ident) if template else None

    def folder_tag(self, media_type: MediaType | None) -> str | None:
        """Jellyfin's bracket tag name for this provider's id on a folder of `media_type`."""
        return self.folder_tags.get(MediaType.MOVIE if media_type == MediaType.MOVIE else MediaType.SERIES)


def _frozen(mapping: Mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


_BOTH = frozenset({MediaType.MOVIE, MediaType.SERIES})
_SERIES = frozenset({MediaType.SERIES})

# Folder tags: Emby.Server.Implementations MovieResolver.SetProviderIdsFromPath reads tmdbid, imdbid;
# SeriesResolver.SetProviderIdFromPath reads imdbid, tvdbid, tvmazeid, tmdbid (TVDB is "Shows Only").
_TABLE: dict[str, ProviderFacts] = {facts.provider: facts for facts in (
    ProviderFacts(
        Provider.TMDB, "TMDB", _BOTH,
        pages=_frozen({MediaType.MOVIE: "https://www.themoviedb.org/movie/{id}",
                       None: "https://www.themoviedb.org/tv/{id}"}),
        folder_tags=_frozen({MediaType.MOVIE: "tmdbid", MediaType.SERIES: "tmdbid"}),
        rank=_frozen({MediaType.MOVIE: 0, MediaType.SERIES: 1}),
        needs_key=True, key_setting="metadata.tmdb.api_key (JELLYBIT_METADATA_TMDB_API_KEY)",
        off_hint=FILMS_NEED_TMDB, words=("tmdb", "themoviedb"), jellyfin_key="tmdb"),
    ProviderFacts(
        Provider.TVDB, "TVDB", _SERIES,
        pages=_frozen({None: "https://thetvdb.com/dereferrer/series/{id}"}),
        folder_tags=_frozen({MediaType.SERIES: "tvdbid"}),
        rank=_frozen({MediaType.MOVIE: 1, MediaType.SERIES: 0}),
        needs_key=True, key_setting="metadata.tvdb.api_key and pin (JELLYBIT_METADATA_TVDB_API_KEY, "
                                    "JELLYBIT_METADATA_TVDB_PIN)",
        off_hint="optional: a TVDB key (JELLYBIT_METADATA_TVDB_API_KEY) gives shows the ids Jellyfin prefers",
        words=("tvdb", "thetvdb"), jellyfin_key="tvdb"),
    ProviderFacts(
        Provider.TVMAZE, "TVMaze", _SERIES,
        pages=_frozen({None: "https://www.tvmaze.com/shows/{id}"}),
        folder_tags=_frozen({MediaType.SERIES: "tvmazeid"}),
        rank=_frozen({MediaType.MOVIE: 2, MediaType.SERIES: 2}),
        off_hint="set metadata.tvmaze.enabled = true: it needs no key and confirms shows",
        words=("tvmaze",), jellyfin_key="tvmaze"),
    ProviderFacts(
        Provider.IMDB, "IMDb", frozenset(),
        pages=_frozen({None: "https://www.imdb.com/title/{id}/"}),
        folder_tags=_frozen({MediaType.MOVIE: "imdbid", MediaType.SERIES: "imdbid"}),
        id_shape=r"tt\d{5,12}", jellyfin_key="imdb"),
)}
# Read-only, in the order the faces list them; everything below reads it at call time, so a row is all
# a new provider needs here (tests add one to `_TABLE` and see every face name it).
PROVIDERS: Mapping[str, ProviderFacts] = MappingProxyType(_TABLE)


def searched() -> tuple[str, ...]:
    """The providers searched for works (IMDb only gives ids): tmdb, tvdb, tvmaze."""
    return tuple(key for key, found in PROVIDERS.items() if found.searched)


def words() -> Mapping[str, str]:
    """Each word free text names a provider by ('thetvdb') → its key."""
    return {word: key for key, found in PROVIDERS.items() for word in found.words}


def facts(provider: str | None) -> ProviderFacts | None:
    """The facts of a provider by its key (any case), or None for a name Jellybit does not know."""
    key = (provider or "").strip().lower()
    return PROVIDERS.get(key)


def provider_name(provider: str | None) -> str:
    """TMDB, TVDB, TVMaze, IMDb as humans write them (an unknown name as it came)."""
    found = facts(provider)
    return found.label if found else (provider or "")


def page_url(provider: str, ident: str, media_type: MediaType | None) -> str | None:
    """The public page of an id at a provider (IMDb included), for links a human can follow."""
    found = facts(provider)
    return found.page(ident, media_type) if found and ident else None


def valid_id(provider: str, value: object) -> bool:
    """Whether `value` has the shape of an id at `provider` (digits; IMDb's `tt…`)."""
    found = facts(provider)
    return found is not None and re.fullmatch(found.id_shape, str(value)) is not None


def serves(provider: str, media_type: MediaType | str | None) -> bool:
    """Whether to search the provider for this media type (an unknown type or provider: yes)."""
    found = facts(provider)
    if found is None or media_type not in set(MediaType):
        return True
    return MediaType(media_type) in found.searched


def preferred(media_type: MediaType | None) -> tuple[str, ...]:
    """Searched providers in the order Jellyfin's folder id should name one for `media_type`."""
    kind = media_type or MediaType.MOVIE
    return tuple(sorted(searched(), key=lambda p: PROVIDERS[p].rank.get(kind, _LAST)))


def provider_order(keys: list[str]) -> list[str]:
    """`keys` in the faces' order (TMDB, TVDB, TVMaze, IMDb), unknown ones last."""
    order = {key: i for i, key in enumerate(PROVIDERS)}
    return sorted(keys, key=lambda k: order.get(k, len(order)))
