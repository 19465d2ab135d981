"""TVMaze (no key): show search, details with seasons, episode counts and AKAs."""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from pydantic import BaseModel, Field, RootModel

from jellybit.adapters.metadata.base import (
    MetadataNotFound,
    country_codes,
    country_details,
    language_code,
    media_type_of,
    numeric_id,
    provider_text,
    safe_url,
    unique_texts,
    year_of,
)
from jellybit.adapters.metadata.provider import SeriesProvider
from jellybit.adapters.status import ServiceStatus
from jellybit.config import TvmazeConfig
from jellybit.core.providers import Provider
from jellybit.core.records import Candidate, MediaType
from jellybit.errors import InvalidArgument

PAGE_URL = "https://www.tvmaze.com"
CREW_TYPES = ("Creator", "Developer", "Director", "Executive Producer", "Writer")
MAX_PEOPLE = 30


class _Image(BaseModel):
    medium: str | None = None
    original: str | None = None


class _Externals(BaseModel):
    thetvdb: int | None = None
    imdb: str | None = None


class _Country(BaseModel):
    code: str | None = None              # ISO 3166-1 alpha-2


class _Channel(BaseModel):
    name: str | None = None              # `network` (broadcast) or `webChannel` (streaming)
    country: _Country | None = None


class _Season(BaseModel):
    number: int | None = None
    episodeOrder: int | None = None      # TVMaze's camelCase field name


class _Episode(BaseModel):
    season: int | None = None
    number: int | None = None
    airdate: str | None = None


class _Person(BaseModel):
    name: str | None = None


class _Credit(BaseModel):
    person: _Person | None = None
    type: str | None = None              # crew only: Creator, Director, ...


class _Embedded(BaseModel):
    seasons: list[_Season] = Field(default_factory=list)
    episodes: list[_Episode] = Field(default_factory=list)
    cast: list[_Credit] = Field(default_factory=list)
    crew: list[_Credit] = Field(default_factory=list)


class _Show(BaseModel):
    id: int
    url: str | None = None
    name: str | None = None
    language: str | None = None
    premiered: str | None = None
    ended: str | None = None
    network: _Channel | None = None
    webChannel: _Channel | None = None
    image: _Image | None = None
    summary: str | None = None
    externals: _Externals | None = None
    embedded: _Embedded = Field(default_factory=_Embedded, alias="_embedded")


class _Hit(BaseModel):
    score: float | None = None
    show: _Show


class _Hits(RootModel[list[_Hit]]):
    pass


class _Aka(BaseModel):
    name: str


class _Akas(RootModel[list[_Aka]]):
    pass


def people_of(crew: list[_Credit], cast: list[_Credit]) -> list[str]:
    """Creators and directors first, then the cast: the names a user may call a show by."""
    ranked = [c for c in crew if (c.type or "") in CREW_TYPES] + cast
    return unique_texts(c.person.name for c in ranked if c.person and c.person.name)[:MAX_PEOPLE]


def _plain(html: str | None) -> str | None:
    # Summaries are HTML fragments ("<p><b>Title</b> is ...</p>").
    return provider_text(re.sub(r"<[^>]*>", " ", html or ""), 2000)


class TvmazeProvider(SeriesProvider[TvmazeConfig]):
    """MetadataProvider for TVMaze (shows only; no year or type filter in its search)."""

    name = Provider.TVMAZE

    async def _search(self, text: str, year: int | None) -> list[Candidate]:
        # TVMaze's search has no year filter: the year only ranks the candidates later.
        hits = await self._api.get_json("/search/shows", {"q": text}, model=_Hits)
        return [self._candidate(hit.show) for hit in hits.root[: self.max_results]]

    async def details(self, media_type: str, provider_id: str) -> Candidate:
        """One show: AKAs, ids, country, network, years, seasons -> episode counts."""
        if media_type_of(media_type) is not MediaType.SERIES:
            raise InvalidArgument("tvmaze has shows only; movies come from TMDB")
        ident = numeric_id(self.name, provider_id)
        show = await self._show(ident)
        akas = await self._api.get_json(f"/shows/{ident}/akas", model=_Akas)
        counted = Counter(e.season for e in show.embedded.episodes if e.season is not None and e.number)
        seasons: dict[str, int] = {}
        for season in sorted(show.embedded.seasons, key=lambda s: s.number or 0):
            if season.number is None:
                continue
            # episodeOrder is the announced length; the episode list may run ahead of it or lag.
            count = max(season.episodeOrder or 0, counted.get(season.number, 0))
            if count:
                seasons[str(season.number)] = count
        base = self._candidate(show)
        regular = {int(n): c for n, c in seasons.items() if int(n) > 0}
        return replace(base, details={
            **base.details,
            "aliases": unique_texts(a.name for a in akas.root if a.name != base.title),
            "season_count": len(regular) or None,
            "episode_count": sum(regular.values()) or None,
            "seasons": seasons,
            "people": people_of(show.embedded.crew, show.embedded.cast),
        })

    async def _show(self, ident: str) -> _Show:
        return await self._api.get_json(
            f"/shows/{ident}", {"embed[]": ["seasons", "episodes", "cast", "crew"]}, model=_Show)

    async def aired(self, provider_id: str, dates: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """The (season, episode) pairs aired on each date, from the show's embedded episode list."""
        show = await self._show(numeric_id(self.name, provider_id))
        wanted = set(dates)
        by_date: dict[str, list[tuple[int, int]]] = {d: [] for d in wanted}
        for e in show.embedded.episodes:
            if e.airdate in wanted and e.season is not None and e.number is not None:
                by_date[e.airdate].append((e.season, e.number))
        return {d: tuple(pairs) for d, pairs in by_date.items()}

    def _candidate(self, show: _Show) -> Candidate:
        image = show.image or _Image()
        url = safe_url(show.url)
        if not url or not url.startswith(("https://www.tvmaze.com/", "http://www.tvmaze.com/")):
            url = f"{PAGE_URL}/shows/{show.id}"
        externals = show.externals or _Externals()
        # A streaming original has a web channel instead of a network (and often no country).
        channels = [c for c in (show.network, show.webChannel) if c is not None]
        countries = country_codes(c.country.code for c in channels if c.country is not None)
        details = {
            "original_language": language_code(show.language),
            "external_ids": {k: v for k, v in {
                "tvdb": str(externals.thetvdb) if externals.thetvdb else None,
                "imdb": provider_text(externals.imdb, 20),
            }.items() if v},
            **country_details(countries),
            "network": next((n for n in (provider_text(c.name, 100) for c in channels) if n), None),
            "first_year": year_of(show.premiered),
            "last_year": year_of(show.ended),
        }
        return Candidate(
            provider=self.name,
            provider_id=str(show.id),
            media_type=MediaType.SERIES,
            title=provider_text(show.name) or "",
            year=year_of(show.premiered),
            url=url.replace("http://", "https://", 1),
            poster_url=safe_url(image.medium) or safe_url(image.original),
            overview=_plain(show.summary),
            details={k: v for k, v in details.items() if v is not None},
        )

    async def ping(self) -> ServiceStatus:
        """Read one show (never cached); never raises."""
        return await self._status(self._any_show(), "reachable")

    async def _any_show(self) -> None:
        with contextlib.suppress(MetadataNotFound):          # it answered: reachable
            await self._api.get_json("/shows/1", model=_Show, cached=False)
