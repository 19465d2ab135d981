"""TMDB v3: search movies and TV, details with seasons and episode counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from itertools import chain, zip_longest
from typing import Any

from pydantic import BaseModel, Field

from jellybit.adapters.metadata.base import (
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
from jellybit.adapters.metadata.provider import ProviderClient
from jellybit.adapters.status import ServiceStatus
from jellybit.config import TmdbConfig
from jellybit.core.ports import MetadataQuery
from jellybit.core.providers import Provider
from jellybit.core.records import Candidate, MediaType

PAGE_URL = "https://www.themoviedb.org"


class _Result(BaseModel):
    id: int
    title: str | None = None              # movies
    original_title: str | None = None
    release_date: str | None = None
    name: str | None = None               # tv
    original_name: str | None = None
    first_air_date: str | None = None
    poster_path: str | None = None
    overview: str | None = None
    original_language: str | None = None
    origin_country: list[str] = Field(default_factory=list)    # tv (search and details); newer movies


class _Page(BaseModel):
    results: list[_Result] = Field(default_factory=list)


class _Season(BaseModel):
    season_number: int
    episode_count: int | None = None
    air_date: str | None = None


class _Episode(BaseModel):
    season_number: int | None = None
    episode_number: int | None = None
    air_date: str | None = None


class _SeasonEpisodes(BaseModel):
    episodes: list[_Episode] = Field(default_factory=list)


class _Person(BaseModel):
    name: str | None = None
    job: str | None = None               # crew only


class _Credits(BaseModel):
    cast: list[_Person] = Field(default_factory=list)
    crew: list[_Person] = Field(default_factory=list)


class _AltTitle(BaseModel):
    title: str
    iso_3166_1: str | None = None


class _AltTitles(BaseModel):
    titles: list[_AltTitle] = Field(default_factory=list)     # movies
    results: list[_AltTitle] = Field(default_factory=list)    # tv


class _ExternalIds(BaseModel):
    imdb_id: str | None = None
    tvdb_id: int | None = None


class _Company(BaseModel):
    name: str | None = None              # networks (tv), production_companies (movies)


class _Country(BaseModel):
    iso_3166_1: str | None = None


class _TranslationData(BaseModel):
    name: str | None = None              # tv
    title: str | None = None             # movies


class _Translation(BaseModel):
    iso_639_1: str | None = None
    data: _TranslationData = Field(default_factory=_TranslationData)


class _Translations(BaseModel):
    translations: list[_Translation] = Field(default_factory=list)


class _Details(_Result):
    imdb_id: str | None = None
    seasons: list[_Season] = Field(default_factory=list)
    alternative_titles: _AltTitles = Field(default_factory=_AltTitles)
    external_ids: _ExternalIds = Field(default_factory=_ExternalIds)
    translations: _Translations = Field(default_factory=_Translations)
    networks: list[_Company] = Field(default_factory=list)
    production_companies: list[_Company] = Field(default_factory=list)
    production_countries: list[_Country] = Field(default_factory=list)
    last_air_date: str | None = None
    credits: _Credits = Field(default_factory=_Credits)
    created_by: list[_Person] = Field(default_factory=list)
    number_of_seasons: int | None = None
    number_of_episodes: int | None = None


class _Configuration(BaseModel):
    images: dict = Field(default_factory=dict)


CREW_JOBS = ("Director", "Screenplay", "Writer", "Creator", "Novel", "Story")
MAX_PEOPLE = 30


def _people(data: _Details) -> list[str]:
    """Creators, directors and writers first, then the billed cast: the names a user may call a work by."""
    crew = [p for p in data.credits.crew if (p.job or "") in CREW_JOBS]
    return unique_texts(p.name for p in [*data.created_by, *crew, *data.credits.cast[:15]])[:MAX_PEOPLE]


def _is_read_token(key: str) -> bool:
    # v4 read access tokens are JWTs (header.payload.signature); v3 keys are 32 hex digits.
    return key.count(".") == 2 and len(key) > 40


class TmdbProvider(ProviderClient[TmdbConfig]):
    """MetadataProvider for TMDB v3 (api_key query parameter or v4 read token as Bearer)."""

    name = Provider.TMDB

    def _credentials(self, config: TmdbConfig) -> dict[str, Any]:
        """The key as a v4 read token (Bearer header) or a v3 `api_key` query parameter."""
        key = required_secret(config.api_key, self.name)
        if _is_read_token(key):
            return {"headers": {"Authorization": f"Bearer {key}"}}
        return {"secret_params": {"api_key": key}}

    async def search(self, query: MetadataQuery) -> list[Candidate]:
        """Search by title, then by original title if different; movies, TV or both."""
        kinds = [media_type_of(query.media_type)] if query.media_type else [MediaType.MOVIE, MediaType.SERIES]
        texts = self._texts(query)
        per_kind: list[list[Candidate]] = []
        for kind in kinds:
            found: list[Candidate] = []
            for text in texts:
                found.extend(await self._search(kind, text, query.year))
            per_kind.append(found)
        merged: list[Candidate] = []
        seen: set[tuple[str, str]] = set()
        # Interleave movie and TV results so neither kind buries the other when the type is unknown.
        for candidate in chain.from_iterable(zip_longest(*per_kind)):
            if candidate is None or (candidate.media_type, candidate.provider_id) in seen:
                continue
            seen.add((candidate.media_type, candidate.provider_id))
            merged.append(candidate)
        return merged

    async def _search(self, kind: MediaType, text: str, year: int | None) -> list[Candidate]:
        path = "/search/movie" if kind is MediaType.MOVIE else "/search/tv"
        year_param = "year" if kind is MediaType.MOVIE else "first_air_date_year"
        params = {"query": text, "language": self.config.language, "include_adult": "false", "page": 1}
        page = await self._api.get_json(path, {**params, year_param: year}, model=_Page)
        if not page.results and year is not None:
            # Release years are often a year off the provider's (festival vs theatrical release).
            page = await self._api.get_json(path, params, model=_Page)
        return [self._candidate(kind, r) for r in page.results[: self.max_results]]

    async def details(self, media_type: str, provider_id: str) -> Candidate:
        """One movie or show: aliases and translations, ids, country, network or studio, years, seasons."""
        kind = media_type_of(media_type)
        ident = numeric_id(self.name, provider_id)
        path = f"/movie/{ident}" if kind is MediaType.MOVIE else f"/tv/{ident}"
        params = {"language": self.config.language,
                  "append_to_response": "alternative_titles,external_ids,translations,credits"}
        data = await self._api.get_json(path, params, model=_Details)
        base = self._candidate(kind, data)
        alt = data.alternative_titles.titles or data.alternative_titles.results
        translated = (t.data.title if kind is MediaType.MOVIE else t.data.name
                      for t in data.translations.translations)
        own = {(base.title or "").casefold(), (base.original_title or "").casefold()}
        movie = kind is MediaType.MOVIE
        countries = base.details.get("countries") or (
            country_codes(c.iso_3166_1 for c in data.production_countries) if movie else [])
        companies = data.production_companies if movie else data.networks
        details = {
            **base.details,
            "aliases": [n for n in unique_texts([*(t.title for t in alt), *translated])
                        if n.casefold() not in own],
            "external_ids": {
                k: v for k, v in {
                    "imdb": provider_text(data.imdb_id or data.external_ids.imdb_id, 20),
                    "tvdb": str(data.external_ids.tvdb_id) if data.external_ids.tvdb_id else None,
                }.items() if v
            },
            **country_details(countries),
            "network": next((n for n in (provider_text(c.name, 100) for c in companies) if n), None),
            "people": _people(data),
        }
        if not movie:
            details["seasons"] = {
                str(s.season_number): s.episode_count or 0
                for s in sorted(data.seasons, key=lambda s: s.season_number)
                if s.season_number >= 0
            }
            details["last_year"] = year_of(data.last_air_date)
            details["season_count"] = data.number_of_seasons
            details["episode_count"] = data.number_of_episodes
        return replace(base, details={k: v for k, v in details.items() if v is not None})

    async def aired(self, provider_id: str, dates: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """The (season, episode) pairs aired on each date, from the seasons that began by then."""
        ident = numeric_id(self.name, provider_id)
        show = await self._api.get_json(f"/tv/{ident}", {"language": self.config.language}, model=_Details)
        found: dict[str, tuple[tuple[int, int], ...]] = {}
        for date in dates:
            begun = sorted((s for s in show.seasons
                            if s.season_number > 0 and s.air_date and s.air_date <= date),
                           key=lambda s: s.air_date or "")[-2:]
            pairs: list[tuple[int, int]] = []
            for season in begun:
                listed = await self._api.get_json(f"/tv/{ident}/season/{season.season_number}",
                                                  {"language": self.config.language}, model=_SeasonEpisodes)
                pairs += [(e.season_number, e.episode_number) for e in listed.episodes if e.air_date == date
                          and e.season_number is not None and e.episode_number is not None]
            found[date] = tuple(dict.fromkeys(pairs))
        return found

    def _candidate(self, kind: MediaType, r: _Result) -> Candidate:
        movie = kind is MediaType.MOVIE
        title = (provider_text(r.title if movie else r.name)
                 or provider_text(r.original_title or r.original_name))
        original = provider_text(r.original_title if movie else r.original_name)
        poster = None
        if r.poster_path and r.poster_path.startswith("/"):
            poster = safe_url(self.config.image_base_url.rstrip("/") + r.poster_path)
        return Candidate(
            provider=self.name,
            provider_id=str(r.id),
            media_type=kind,
            title=title or "",
            year=year_of(r.release_date if movie else r.first_air_date),
            original_title=original if original and original != title else None,
            url=f"{PAGE_URL}/{'movie' if movie else 'tv'}/{r.id}",
            poster_url=poster,
            overview=provider_text(r.overview, 2000),
            details={k: v for k, v in {
                "original_language": language_code(r.original_language),
                **country_details(country_codes(r.origin_country)),
                "first_year": year_of(r.release_date if movie else r.first_air_date),
            }.items() if v is not None},
        )

    async def ping(self) -> ServiceStatus:
        """Check the key and reachability with `/configuration` (never cached, never raises)."""
        probe = self._api.get_json("/configuration", model=_Configuration, cached=False)
        return await self._status(probe, "reachable, key accepted")
