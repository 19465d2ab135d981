"""TVDB v4: bearer-token login, series search, details with aired-order episode counts."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from jellybit.adapters.metadata.base import (
    M,
    MetadataAuthError,
    country_codes,
    country_details,
    language_code,
    media_type_of,
    numeric_id,
    provider_text,
    required_secret,
    safe_url,
    unique_texts,
    year_of,
)
from jellybit.adapters.metadata.provider import SeriesProvider
from jellybit.adapters.status import ServiceStatus
from jellybit.config import TvdbConfig
from jellybit.core.providers import Provider
from jellybit.core.records import Candidate, MediaType
from jellybit.errors import AdapterError, InvalidArgument

PAGE_URL = "https://thetvdb.com"
ARTWORK_URL = "https://artworks.thetvdb.com"
MAX_EPISODE_PAGES = 20       # 500 episodes a page: 10,000 episodes is beyond any real show
T = TypeVar("T")


class _Envelope(BaseModel, Generic[T]):
    status: str | None = None
    data: T | None = None
    links: dict[str, Any] | None = None


class _Token(BaseModel):
    token: str


class _RemoteId(BaseModel):
    id: str | int
    sourceName: str | None = None


class _SearchItem(BaseModel):
    tvdb_id: str | int | None = None
    id: str | int | None = None
    name: str | None = None
    slug: str | None = None
    image_url: str | None = None
    thumbnail: str | None = None
    year: str | int | None = None
    first_air_time: str | None = None
    primary_language: str | None = None
    type: str | None = None
    aliases: list[str] | None = None
    translations: dict[str, str] | None = None
    overviews: dict[str, str] | None = None
    overview: str | None = None
    country: str | None = None              # ISO 3166-1 alpha-3, lowercase ("usa")
    network: str | None = None
    remote_ids: list[_RemoteId] | None = None


class _Alias(BaseModel):
    name: str
    language: str | None = None


class _NameTranslation(BaseModel):
    name: str | None = None
    language: str | None = None
    isAlias: bool | None = None      # TVDB's camelCase field names, kept as they come


class _Translations(BaseModel):
    nameTranslations: list[_NameTranslation] | None = None
    overviewTranslations: list[dict[str, Any]] | None = None


class _Company(BaseModel):
    name: str | None = None
    country: str | None = None


class _Series(BaseModel):
    id: int
    name: str | None = None
    slug: str | None = None
    image: str | None = None
    year: str | int | None = None
    firstAired: str | None = None
    lastAired: str | None = None
    originalLanguage: str | None = None
    originalCountry: str | None = None      # ISO 3166-1 alpha-3, lowercase
    country: str | None = None
    originalNetwork: _Company | None = None
    latestNetwork: _Company | None = None
    overview: str | None = None
    aliases: list[_Alias] | None = None
    translations: _Translations | None = None
    remoteIds: list[_RemoteId] | None = None


class _Episode(BaseModel):
    seasonNumber: int | None = None
    number: int | None = None
    aired: str | None = None


class _EpisodePage(BaseModel):
    episodes: list[_Episode] = Field(default_factory=list)


def _image(value: str | None) -> str | None:
    if value and value.startswith("/"):
        value = ARTWORK_URL + value
    return safe_url(value)


# TVDB's `sourceName` of the ids it keeps for other sites -> Jellybit's id keys.
_REMOTE_SOURCES = {"imdb": "imdb", "themoviedb.com": "tmdb", "tv maze": "tvmaze", "tvmaze": "tvmaze"}


def _external_ids(remote: list[_RemoteId] | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in remote or []:
        key = _REMOTE_SOURCES.get((provider_text(item.sourceName, 40) or "").casefold())
        value = provider_text(item.id, 40)
        if key and value:
            found.setdefault(key, value)
    return found


def _page_url(slug: str | None, ident: str) -> str:
    slug = provider_text(slug, 200)
    if slug and all(ch.isalnum() or ch in "-_" for ch in slug):
        return f"{PAGE_URL}/series/{slug}"
    return f"{PAGE_URL}/dereferrer/series/{ident}"


class TvdbProvider(SeriesProvider[TvdbConfig]):
    """MetadataProvider for TVDB v4 (series only: Jellyfin uses TVDB ids for shows)."""

    name = Provider.TVDB

    def _credentials(self, config: TvdbConfig) -> dict[str, Any]:
        """No key on the client: it is exchanged for a bearer token at `/login` (see `_get`)."""
        key = required_secret(config.api_key, self.name)
        self._login_body = {"apikey": key}
        if config.pin and config.pin.get_secret_value():
            self._login_body["pin"] = config.pin.get_secret_value()
        self._token: str | None = None
        self._login_lock = asyncio.Lock()
        return {}

    async def _login(self, stale: str | None) -> str:
        async with self._login_lock:
            if self._token is None or self._token == stale:
                answer = await self._api.post_json("/login", self._login_body, model=_Envelope[_Token],
                                                   login=True)
                if answer.data is None or not answer.data.token:
                    raise AdapterError(self.name, "login answered without a token")
                self._token = answer.data.token
            return self._token

    async def _get(
        self, path: str, params: Mapping[str, Any] | None, model: type[M], *, cached: bool = True,
    ) -> M:
        if cached:
            hit = await self._api.cached(path, params, model)
            if hit is not None:
                return hit
        token = self._token or await self._login(None)
        try:
            return await self._call(path, params, model, token, cached)
        except MetadataAuthError:
            # Tokens expire (about a month); log in once more, then give up.
            token = await self._login(token)
            return await self._call(path, params, model, token, cached)

    async def _call(
        self, path: str, params: Mapping[str, Any] | None, model: type[M], token: str, cached: bool,
    ) -> M:
        return await self._api.get_json(
            path, params, model=model, headers={"Authorization": f"Bearer {token}"},
            cached=cached, lookup=False,
        )

    async def _search(self, text: str, year: int | None) -> list[Candidate]:
        params: dict[str, Any] = {"query": text, "type": "series", "limit": self.max_results}
        answer = await self._get("/search", {**params, "year": year}, _Envelope[list[_SearchItem]])
        if not answer.data and year is not None:
            answer = await self._get("/search", params, _Envelope[list[_SearchItem]])
        result = []
        for item in (answer.data or [])[: self.max_results]:
            candidate = self._from_search(item)
            if candidate is not None:
                result.append(candidate)
        return result

    def _from_search(self, item: _SearchItem) -> Candidate | None:
        raw_id = item.tvdb_id if item.tvdb_id is not None else item.id
        try:
            ident = numeric_id(self.name, raw_id, prefix="series-")
        except InvalidArgument:
            return None
        translations = item.translations or {}
        name = provider_text(item.name)
        title = provider_text(translations.get("eng")) or name
        if not title:
            return None
        overviews = item.overviews or {}
        year = year_of(item.year) or year_of(item.first_air_time)
        details = {
            "original_language": language_code(item.primary_language),
            "aliases": unique_texts(item.aliases or []),
            "external_ids": _external_ids(item.remote_ids),
            **country_details(country_codes([item.country])),
            "network": provider_text(item.network, 100),
            "first_year": year,
        }
        poster = _image(item.image_url) or _image(item.thumbnail)
        return self._series(ident, (title, name), year, item.slug, poster,
                            overviews.get("eng") or item.overview, details)

    async def details(self, media_type: str, provider_id: str) -> Candidate:
        """One series: aliases and translations, ids, country, network, years, aired-order seasons."""
        if media_type_of(media_type) is not MediaType.SERIES:
            raise InvalidArgument("tvdb is used for series only; movies come from TMDB")
        ident = numeric_id(self.name, provider_id, prefix="series-")
        answer = await self._get(
            f"/series/{ident}/extended", {"meta": "translations", "short": "true"}, _Envelope[_Series]
        )
        if answer.data is None:
            raise AdapterError(self.name, f"answered without data for series {ident}")
        series = answer.data
        counts = Counter(e.seasonNumber for e in await self._episodes(ident))
        names = (series.translations.nameTranslations or []) if series.translations else []
        english = next((provider_text(t.name) for t in names if t.language == "eng" and not t.isAlias), None)
        name = provider_text(series.name)
        title = english or name or ""
        aliases = unique_texts(
            [a.name for a in series.aliases or []]
            + [t.name for t in names if t.name and t.name not in (title, name)]
        )
        year = year_of(series.year) or year_of(series.firstAired)
        network = series.originalNetwork or series.latestNetwork or _Company()
        regular = {n: c for n, c in counts.items() if n > 0}
        details = {
            "original_language": language_code(series.originalLanguage),
            "aliases": aliases,
            "external_ids": _external_ids(series.remoteIds),
            **country_details(country_codes([series.originalCountry or series.country])),
            "network": provider_text(network.name, 100),
            "first_year": year_of(series.firstAired) or year,
            "last_year": year_of(series.lastAired),
            "season_count": len(regular) or None,
            "episode_count": sum(regular.values()) or None,
            "seasons": {str(n): counts[n] for n in sorted(counts)},
        }
        return self._series(ident, (title, name), year, series.slug, _image(series.image),
                            series.overview, details)

    def _series(
        self, ident: str, names: tuple[str, str | None], year: int | None, slug: str | None,
        poster: str | None, overview: str | None, details: dict[str, Any],
    ) -> Candidate:
        """A series as a Candidate: the original name only where it differs, no empty details."""
        title, name = names
        return Candidate(
            provider=self.name,
            provider_id=ident,
            media_type=MediaType.SERIES,
            title=title,
            year=year,
            original_title=name if name and name != title else None,
            url=_page_url(slug, ident),
            poster_url=poster,
            overview=provider_text(overview, 2000),
            details={k: v for k, v in details.items() if v is not None},
        )

    async def _episodes(self, ident: str) -> list[_Episode]:
        """Every numbered episode in aired order (paged; the details' pages, so cached alike)."""
        found: list[_Episode] = []
        for page in range(MAX_EPISODE_PAGES):
            episodes = await self._get(f"/series/{ident}/episodes/default", {"page": page},
                                       _Envelope[_EpisodePage])
            found += [e for e in (episodes.data.episodes if episodes.data else [])
                      if e.seasonNumber is not None and e.number is not None]
            if not (episodes.links or {}).get("next"):
                break
        return found

    async def aired(self, provider_id: str, dates: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """The aired-order (season, episode) pairs of each date, from the series' episode list."""
        ident = numeric_id(self.name, provider_id, prefix="series-")
        wanted = set(dates)
        by_date: dict[str, list[tuple[int, int]]] = {d: [] for d in wanted}
        for e in await self._episodes(ident):
            if e.aired in wanted and e.seasonNumber is not None and e.number is not None:
                by_date[e.aired].append((e.seasonNumber, e.number))
        return {d: tuple(pairs) for d, pairs in by_date.items()}

    async def ping(self) -> ServiceStatus:
        """Log in if needed and read a tiny list (`/series/statuses`); never raises."""
        probe = self._get("/series/statuses", None, _Envelope[list[dict[str, Any]]], cached=False)
        return await self._status(probe, "reachable, key accepted")
