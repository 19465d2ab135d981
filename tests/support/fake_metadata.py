"""Local fakes of TMDB v3, TVDB v4, TVMaze and Jellyfin, speaking their real JSON shapes over HTTP.

Fixtures (registered in tests/conftest.py), all function-scoped and started on 127.0.0.1:

- `fake_catalogue` -> `Catalogue` (`tests/support/fake_catalogue.py`): the titles every fake serves:
  The Matrix (1999, movie, tmdb 603), The Matrix Reloaded (2003, movie, tmdb 604),
  Fargo (1996, movie, tmdb 275), Fargo (2014, series, tmdb 60622 / tvdb 269613 / tvmaze 1006,
  seasons {1: 10, 2: 10, 3: 10, 4: 11, 5: 10}), "Метод" (2015, Russian series, English title
  and alias "Method", tmdb 65708 / tvdb 300241 / tvmaze 8137, seasons {1: 16, 2: 16}), and the US
  and UK versions of Shameless, The Office and House of Cards (`us_uk_pairs()`).
  Extend it in a test: `fake_catalogue.add(FakeTitle("series", "Dark", 2017, seasons={1: 10}, tmdb_id=1,
  tvdb_id=2, tvmaze_id=3, country="DE"))` - every fake sees it at once.
- `fake_tmdb` -> `FakeTmdb`: `/search/movie`, `/search/tv` (query, year / first_air_date_year,
  language; tv results carry `origin_country`), `/movie/{id}`, `/tv/{id}` (append_to_response=
  alternative_titles,external_ids,translations; tv: `seasons[].season_number/episode_count`,
  `networks`, `origin_country`, `first_air_date`, `last_air_date`, `number_of_seasons/episodes`;
  movies: `production_countries`, `production_companies`), `/configuration`. Auth:
  `api_key=FakeTmdb.API_KEY` or `Authorization: Bearer FakeTmdb.READ_TOKEN`; anything else is TMDB's
  401 body.
- `fake_tvdb` -> `FakeTvdb`: `POST /login` (`{"apikey": API_KEY, "pin": PIN}` when `require_pin`;
  TVDB's 401 `InvalidAPIKey: apikey invalid` for a wrong key, 400 `InvalidValueType: pin required`),
  `/search?query=&type=&year=` (with `country` as alpha-3, `network`, `remote_ids`),
  `/series/{id}/extended` (`originalCountry`, `originalNetwork`, `firstAired`, `lastAired`,
  `remoteIds` with IMDB / TheMovieDB.com / TV Maze), `/series/{id}/episodes/default?page=`,
  `/series/statuses`, in the `{"status", "data", "links"}` envelope. `expire_tokens()` makes every
  issued token answer 401 (as an expired one does). `episode_page_size` drives pagination.
- `fake_tvmaze` -> `FakeTvmaze`: `/search/shows?q=`, `/shows/{id}` (embed[]=seasons, episodes;
  `network.country.code` or a `webChannel`, `premiered`, `ended`, `externals`),
  `/shows/{id}/seasons`, `/shows/{id}/episodes`, `/shows/{id}/akas`. No auth.
- `fake_jellyfin` -> `FakeJellyfin`: `POST /Library/Refresh` (204; `refreshes` counts accepted
  ones; needs `X-Emby-Token` or `Authorization: MediaBrowser Token="API_KEY"`), `GET /System/Info/Public`,
  `GET /System/Info` (the key needed; Jellyfin's bodiless 401 without it).
- `loopback_proxy` -> `LoopbackProxy`: a forward proxy that relays plain HTTP to loopback only.

Every fake has `.requests` / `.calls(path)` (LoggedRequest: decoded path, query, headers, time),
`.script(status, body, headers=, times=, path=)` and `.rate_limit(retry_after="1", times=)`, and
`.config(**overrides)` returning the matching Jellybit config section, enabled and pointed at it:
`MetadataConfig(tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(), tvmaze=fake_tvmaze.config())`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import Any

import pytest

from jellybit.config import TmdbConfig, TvdbConfig, TvmazeConfig
from tests.support.fake_catalogue import (
    COUNTRY_NAME,
    TVDB_COUNTRY,
    Catalogue,
    FakeTitle,
    default_catalogue,
    us_uk_pairs,
)
from tests.support.fake_http import FakeHttpServer, LoggedRequest, LoopbackProxy, Reply, running
from tests.support.fake_jellyfin import FakeJellyfin

__all__ = ["Catalogue", "FakeJellyfin", "FakeTitle", "FakeTmdb", "FakeTvdb", "FakeTvmaze",
           "default_catalogue", "us_uk_pairs"]

TVDB_ART = "https://artworks.thetvdb.com"
_LANG3 = {"en": "eng", "ru": "rus", "de": "deu", "fr": "fra", "ja": "jpn", "es": "spa"}
_LANG_NAME = {"en": "English", "ru": "Russian", "de": "German", "fr": "French", "ja": "Japanese",
              "es": "Spanish"}


class _CatalogueServer(FakeHttpServer):
    def __init__(self, catalogue: Catalogue) -> None:
        super().__init__()
        self.catalogue = catalogue
        # Where TVDB's and TVMaze's image URLs point (their real hosts unless a test serves them).
        self.image_host: str | None = None

    def _image(self, real_host: str, path: str) -> str:
        return f"{self.image_host or real_host}{path}"

    def _poster(self, t: FakeTitle) -> str:
        slug = t.slug or re.sub(r"\W+", "-", t.title.lower())
        return f"/{slug}.jpg"


# ---------------------------------------------------------------- TMDB v3


class FakeTmdb(_CatalogueServer):
    """TMDB v3 (`/3` prefix)."""

    prefix = "/3"
    API_KEY = "0123456789abcdef0123456789abcdef"
    READ_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJqZWxseWJpdC10ZXN0cyJ9.ZmFrZS1zaWduYXR1cmUtMDEyMzQ1Njc4OQ"

    def config(self, **overrides: Any) -> TmdbConfig:
        """An enabled TmdbConfig pointed at this fake (v3 key unless overridden)."""
        return TmdbConfig(**{"enabled": True, "api_key": self.API_KEY, "base_url": self.base_url,
                             "image_base_url": "https://image.tmdb.org/t/p/w342", **overrides})

    def route(self, r: LoggedRequest) -> Reply:
        """TMDB's routes."""
        bearer = r.headers.get("authorization") == f"Bearer {self.READ_TOKEN}"
        if r.param("api_key") != self.API_KEY and not bearer:
            return Reply(401, {"status_code": 7, "status_message": "Invalid API key: You must be granted "
                               "a valid key.", "success": False})
        if r.path == "/configuration":
            return Reply(200, {"images": {"secure_base_url": "https://image.tmdb.org/t/p/",
                                          "poster_sizes": ["w92", "w342", "original"]}})
        if r.path in ("/search/movie", "/search/tv"):
            return self._search(r, "movie" if r.path == "/search/movie" else "series")
        season = re.fullmatch(r"/tv/(\d+)/season/(\d+)", r.path)
        if season:
            t = self.catalogue.by("tmdb", season.group(1))
            number = int(season.group(2))
            if t is None or t.media_type != "series" or number not in t.seasons:
                return Reply(404, {"success": False, "status_code": 34,
                                   "status_message": "The resource you requested could not be found."})
            return Reply(200, {"_id": f"s{number}", "season_number": number, "name": f"Season {number}",
                               "air_date": t.air_date(number, 1), "id": 1000 + number, "episodes": [
                                   {"id": 90000 + e, "season_number": s, "episode_number": e, "air_date": day,
                                    "name": f"Episode {e}", "episode_type": "standard", "show_id": t.tmdb_id}
                                   for s, e, day in t.episodes() if s == number]})
        match = re.fullmatch(r"/(movie|tv)/(\d+)", r.path)
        if match:
            kind = "movie" if match.group(1) == "movie" else "series"
            t = self.catalogue.by("tmdb", match.group(2))
            if t is None or t.media_type != kind:
                return Reply(404, {"success": False, "status_code": 34,
                                   "status_message": "The resource you requested could not be found."})
            return Reply(200, self._details(t, (r.param("append_to_response") or "").split(",")))
        return Reply(404, {"success": False, "status_code": 34, "status_message": "not found"})

    def _search(self, r: LoggedRequest, kind: str) -> Reply:
        query = r.param("query") or ""
        if not query:
            return Reply(422, {"success": False, "errors": ["query must be provided"]})
        year = r.param("year") or r.param("primary_release_year") or r.param("first_air_date_year")
        found = [t for t in self.catalogue.search(query, kind) if t.tmdb_id is not None
                 and (year is None or str(t.year) == year)]
        results = [self._result(t) for t in found]
        return Reply(200, {"page": 1, "results": results, "total_pages": 1, "total_results": len(results)})

    def _result(self, t: FakeTitle) -> dict[str, Any]:
        date = f"{t.year}-04-15"
        common = {"id": t.tmdb_id, "poster_path": self._poster(t), "overview": t.overview, "adult": False,
                  "original_language": t.original_language, "popularity": 50.0, "genre_ids": [18]}
        if t.media_type == "movie":
            return {**common, "title": t.title, "original_title": t.primary_name, "release_date": date}
        return {**common, "name": t.title, "original_name": t.primary_name, "first_air_date": date,
                "origin_country": [t.country]}

    def _details(self, t: FakeTitle, append: list[str]) -> dict[str, Any]:
        body = self._result(t)
        alt = [{"iso_3166_1": "US", "title": a, "type": ""} for a in t.aliases]
        company = {"id": 1000 + (t.tmdb_id or 0), "logo_path": None, "name": t.network,
                   "origin_country": t.country}
        if t.media_type == "movie":
            body["imdb_id"] = t.imdb_id
            body["origin_country"] = [t.country]
            body["production_countries"] = [{"iso_3166_1": t.country, "name": COUNTRY_NAME[t.country]}]
            body["production_companies"] = [company] if t.network else []
            if "alternative_titles" in append:
                body["alternative_titles"] = {"id": t.tmdb_id, "titles": alt}
        else:
            end = t.end_year or t.year + max(len(t.seasons), 1) - 1
            body["last_air_date"] = f"{end}-06-01"
            body["networks"] = [company] if t.network else []
            body["number_of_seasons"] = len(t.seasons)
            body["number_of_episodes"] = sum(t.seasons.values())
            body["status"] = "Ended" if t.end_year else "Returning Series"
            body["seasons"] = [
                {"air_date": t.air_date(n, 1), "episode_count": count, "id": 1000 + n,
                 "name": f"Season {n}", "overview": "", "poster_path": None, "season_number": n}
                for n, count in sorted(t.seasons.items())
            ]
            if "alternative_titles" in append:
                body["alternative_titles"] = {"id": t.tmdb_id, "results": alt}
        if t.media_type == "series":
            body["created_by"] = [{"id": 7000 + i, "name": n, "original_name": n}
                                  for i, n in enumerate(t.directors)]
        if "credits" in append:
            crew = [] if t.media_type == "series" else [
                {"id": 7000 + i, "name": n, "original_name": n, "department": "Directing", "job": "Director"}
                for i, n in enumerate(t.directors)]
            body["credits"] = {"id": t.tmdb_id, "crew": crew, "cast": [
                {"id": 8000 + i, "name": n, "original_name": n, "character": f"Role {i}", "order": i}
                for i, n in enumerate(t.cast)]}
        if "external_ids" in append:
            body["external_ids"] = {"imdb_id": t.imdb_id, "tvdb_id": t.tvdb_id, "wikidata_id": None}
        if "translations" in append:
            key = "title" if t.media_type == "movie" else "name"
            body["translations"] = {"translations": [
                {"iso_3166_1": "US" if lang == "en" else lang.upper(), "iso_639_1": lang,
                 "name": lang, "english_name": lang, "data": {key: name, "overview": "", "homepage": ""}}
                for lang, name in {"en": t.title, **t.translations}.items()
            ]}
        return body


# ---------------------------------------------------------------- TVDB v4


class FakeTvdb(_CatalogueServer):
    """TVDB v4 (`/v4` prefix) with bearer tokens from `POST /login`."""

    prefix = "/v4"
    API_KEY = "tvdb-project-key-7f3a"
    PIN = "tvdb-pin-4321-zx"

    def __init__(self, catalogue: Catalogue) -> None:
        super().__init__(catalogue)
        self.require_pin = False
        self.episode_page_size = 500
        self.tokens: set[str] = set()
        self._counter = itertools.count(1)

    def config(self, **overrides: Any) -> TvdbConfig:
        """An enabled TvdbConfig pointed at this fake."""
        values = {"enabled": True, "api_key": self.API_KEY, "base_url": self.base_url}
        if self.require_pin:
            values["pin"] = self.PIN
        return TvdbConfig(**{**values, **overrides})

    def expire_tokens(self) -> None:
        """Every token issued so far now answers 401."""
        self.tokens.clear()

    @property
    def logins(self) -> int:
        """How many `POST /login` calls arrived."""
        return len(self.calls("/login", "POST"))

    def route(self, r: LoggedRequest) -> Reply:
        """TVDB's routes."""
        unauthorized = Reply(401, {"status": "failure", "message": "Unauthorized", "data": None})
        if r.path == "/login" and r.method == "POST":
            body = r.json() or {}
            # TVDB's own answers: a wrong key is 401, a subscriber key sent without its PIN is 400.
            if body.get("apikey") != self.API_KEY:
                return Reply(401, {"status": "failure", "message": "InvalidAPIKey: apikey invalid",
                                   "data": None})
            if self.require_pin and not body.get("pin"):
                return Reply(400, {"status": "failure", "message": "InvalidValueType: pin required",
                                   "data": None})
            if self.require_pin and body.get("pin") != self.PIN:
                return unauthorized
            token = f"tvdb-token-{next(self._counter)}"
            self.tokens.add(token)
            return Reply(200, {"status": "success", "data": {"token": token}})
        auth = r.headers.get("authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in self.tokens:
            return unauthorized
        if r.path == "/series/statuses":
            return self._ok([{"id": 1, "name": "Continuing", "recordType": "series", "keepUpdated": True},
                             {"id": 2, "name": "Ended", "recordType": "series", "keepUpdated": False}])
        if r.path == "/search":
            return self._search(r)
        match = re.fullmatch(r"/series/(\d+)/(extended|episodes/default)", r.path)
        if match:
            t = self.catalogue.by("tvdb", match.group(1))
            if t is None or t.media_type != "series":
                return Reply(404, {"status": "failure", "message": "NotFoundException", "data": None})
            if match.group(2) == "extended":
                return self._ok(self._series(t, extended=True))
            return self._episodes(t, int(r.param("page") or 0))
        return Reply(404, {"status": "failure", "message": "route not found", "data": None})

    def _ok(self, data: Any, links: dict[str, Any] | None = None) -> Reply:
        body = {"status": "success", "data": data}
        if links is not None:
            body["links"] = links
        return Reply(200, body)

    def _lang(self, t: FakeTitle) -> str:
        return _LANG3.get(t.original_language, t.original_language)

    def _search(self, r: LoggedRequest) -> Reply:
        kind, year = r.param("type"), r.param("year")
        found = [t for t in self.catalogue.search(r.param("query") or "", kind) if t.tvdb_id is not None
                 and (year is None or str(t.year) == year)]
        data = []
        for t in found:
            translations = {"eng": t.tvdb_english, self._lang(t): t.tvdb_primary}
            data.append({
                "objectID": f"{t.media_type}-{t.tvdb_id}", "id": f"{t.media_type}-{t.tvdb_id}",
                "tvdb_id": str(t.tvdb_id), "name": t.tvdb_primary, "slug": t.slug, "type": t.media_type,
                "image_url": self._image(TVDB_ART, f"/banners/posters/{t.tvdb_id}-1.jpg"),
                "thumbnail": self._image(TVDB_ART, f"/banners/posters/{t.tvdb_id}-1_t.jpg"),
                "year": str(t.year), "first_air_time": f"{t.year}-04-15",
                "primary_language": self._lang(t),
                "aliases": list(t.aliases) + ([t.title] if t.original_title else []),
                "translations": translations, "overviews": {"eng": t.overview}, "overview": t.overview,
                "country": TVDB_COUNTRY[t.country], "network": t.network or None,
                "status": "Ended" if t.end_year else "Continuing", "remote_ids": self._remote_ids(t),
            })
        return self._ok(data, {"prev": None, "self": r.target, "next": None, "total_items": len(data),
                               "page_size": 50})

    def _remote_ids(self, t: FakeTitle) -> list[dict[str, Any]]:
        ids = [(t.imdb_id, 2, "IMDB"), (t.tmdb_id, 12, "TheMovieDB.com"), (t.tvmaze_id, 18, "TV Maze")]
        return [{"id": str(value), "type": kind, "sourceName": source} for value, kind, source in ids
                if value is not None]

    def _series(self, t: FakeTitle, extended: bool) -> dict[str, Any]:
        network = {"id": 900 + len(t.network), "name": t.network, "slug": t.network.lower(),
                   "country": TVDB_COUNTRY[t.country], "primaryCompanyType": 1} if t.network else None
        body: dict[str, Any] = {
            "id": t.tvdb_id, "name": t.tvdb_primary, "slug": t.slug,
            "image": self._image(TVDB_ART, f"/banners/posters/{t.tvdb_id}-1.jpg"),
            "year": str(t.year), "firstAired": f"{t.year}-04-15",
            "lastAired": f"{t.end_year}-06-01" if t.end_year else None,
            "originalLanguage": self._lang(t), "originalCountry": TVDB_COUNTRY[t.country],
            "country": TVDB_COUNTRY[t.country], "overview": t.overview,
            "nameTranslations": ["eng", self._lang(t)],
            "aliases": [{"language": "eng", "name": a} for a in t.aliases],
            "status": {"id": 2, "name": "Ended", "recordType": "series", "keepUpdated": False},
        }
        if extended:
            body["originalNetwork"] = network
            body["latestNetwork"] = network
            body["seasons"] = [{"id": 5000 + n, "seriesId": t.tvdb_id, "number": n,
                                "type": {"id": 1, "name": "Aired Order", "type": "official"}}
                               for n in sorted(t.seasons)]
            names = [{"name": t.tvdb_english, "language": "eng"},
                     {"name": t.tvdb_primary, "language": self._lang(t), "isPrimary": True}]
            names += [{"name": name, "language": _LANG3.get(lang, lang)}
                      for lang, name in t.translations.items()]
            body["translations"] = {"nameTranslations": names}
            body["remoteIds"] = self._remote_ids(t)
        return body

    def _episodes(self, t: FakeTitle, page: int) -> Reply:
        episodes = [{"id": t.tvdb_id * 1000 + s * 100 + e, "seriesId": t.tvdb_id, "seasonNumber": s,
                     "number": e, "name": f"Episode {e}", "aired": day}
                    for s, e, day in t.episodes()]
        size = self.episode_page_size
        chunk = episodes[page * size:(page + 1) * size]
        more = (page + 1) * size < len(episodes)
        return self._ok({"series": self._series(t, extended=False), "episodes": chunk},
                        {"prev": None, "self": f"page={page}", "next": f"page={page + 1}" if more else None,
                         "total_items": len(episodes), "page_size": size})


# ---------------------------------------------------------------- TVMaze


class FakeTvmaze(_CatalogueServer):
    """TVMaze (no prefix, no key)."""

    def config(self, **overrides: Any) -> TvmazeConfig:
        """An enabled TvmazeConfig pointed at this fake."""
        return TvmazeConfig(**{"enabled": True, "base_url": self.base_url, **overrides})

    def route(self, r: LoggedRequest) -> Reply:
        """TVMaze's routes."""
        not_found = Reply(404, {"name": "Not Found", "message": "", "code": 0, "status": 404})
        if r.path == "/search/shows":
            found = [t for t in self.catalogue.search(r.param("q") or "", "series") if t.tvmaze_id]
            return Reply(200, [{"score": round(0.9 - i * 0.1, 2), "show": self._show(t)}
                               for i, t in enumerate(found)])
        match = re.fullmatch(r"/shows/(\d+)(/seasons|/episodes|/akas)?", r.path)
        if not match:
            return not_found
        t = self.catalogue.by("tvmaze", match.group(1))
        if t is None:
            return not_found
        sub = match.group(2)
        if sub == "/seasons":
            return Reply(200, self._seasons(t))
        if sub == "/episodes":
            return Reply(200, self._episodes(t))
        if sub == "/akas":
            return Reply(200, self._akas(t))
        people = [{"id": 600 + i, "name": n, "url": f"https://www.tvmaze.com/people/{600 + i}"}
                  for i, n in enumerate([*t.directors, *t.cast])]
        show = self._show(t)
        embeds = r.query.get("embed[]", []) + r.query.get("embed", [])
        embedded = {}
        if "seasons" in embeds:
            embedded["seasons"] = self._seasons(t)
        if "episodes" in embeds:
            embedded["episodes"] = self._episodes(t)
        if "cast" in embeds:
            embedded["cast"] = [{"person": p, "character": {"id": 900 + i, "name": f"Role {i}"},
                                 "self": False, "voice": False}
                                for i, p in enumerate(people[len(t.directors):])]
        if "crew" in embeds:
            embedded["crew"] = [{"type": "Creator", "person": p} for p in people[:len(t.directors)]]
        if embedded:
            show["_embedded"] = embedded
        return Reply(200, show)

    def _show(self, t: FakeTitle) -> dict[str, Any]:
        slug = t.slug or re.sub(r"\W+", "-", t.title.lower())
        country = {"name": COUNTRY_NAME[t.country], "code": t.country, "timezone": "America/New_York"}
        channel = {"id": 10 + len(t.network), "name": t.network, "officialSite": None}
        # A streaming service is a `webChannel`, usually without a country; a broadcaster a `network`.
        network = {**channel, "country": country} if t.network and not t.web else None
        web = {**channel, "country": None} if t.network and t.web else None
        return {
            "id": t.tvmaze_id, "url": f"https://www.tvmaze.com/shows/{t.tvmaze_id}/{slug}", "name": t.title,
            "type": "Scripted", "language": _LANG_NAME.get(t.original_language, t.original_language),
            "genres": ["Drama", "Crime"], "status": "Ended" if t.end_year else "Running",
            "premiered": f"{t.year}-04-15", "ended": f"{t.end_year}-06-01" if t.end_year else None,
            "network": network, "webChannel": web,
            "externals": {"tvrage": None, "thetvdb": t.tvdb_id, "imdb": t.imdb_id},
            "image": {"medium": self._image("https://static.tvmaze.com",
                                            f"/uploads/images/medium_portrait/1/{t.tvmaze_id}.jpg"),
                      "original": self._image("https://static.tvmaze.com",
                                              f"/uploads/images/original_untouched/1/{t.tvmaze_id}.jpg")},
            "summary": f"<p><b>{t.title}</b> {t.overview}</p>",
            "_links": {"self": {"href": f"https://api.tvmaze.com/shows/{t.tvmaze_id}"}},
        }

    def _akas(self, t: FakeTitle) -> list[dict[str, Any]]:
        def country(code: str) -> dict[str, str] | None:
            known = code in COUNTRY_NAME
            return {"name": COUNTRY_NAME[code], "code": code, "timezone": "UTC"} if known else None

        own = [{"name": t.original_title, "country": country(t.country)}] if t.original_title else []
        translated = [{"name": name, "country": country(lang.upper())}
                      for lang, name in t.translations.items()]
        return own + translated + [{"name": a, "country": None} for a in t.aliases]

    def _seasons(self, t: FakeTitle) -> list[dict[str, Any]]:
        return [{"id": t.tvmaze_id * 100 + n, "number": n, "name": "", "episodeOrder": count,
                 "premiereDate": f"{t.year + n - 1}-04-15", "url": f"https://www.tvmaze.com/seasons/{n}"}
                for n, count in sorted(t.seasons.items())]

    def _episodes(self, t: FakeTitle) -> list[dict[str, Any]]:
        return [{"id": t.tvmaze_id * 10000 + s * 100 + e, "season": s, "number": e, "type": "regular",
                 "name": f"Episode {e}", "airdate": day}
                for s, e, day in t.episodes()]


# ---------------------------------------------------------------- fixtures


@pytest.fixture
def fake_catalogue() -> Catalogue:
    """The catalogue every metadata fake of this test serves."""
    return default_catalogue()


@pytest.fixture
def fake_tmdb(fake_catalogue: Catalogue) -> Iterator[FakeTmdb]:
    """A running fake TMDB v3."""
    with running(FakeTmdb(fake_catalogue)) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def fake_tvdb(fake_catalogue: Catalogue) -> Iterator[FakeTvdb]:
    """A running fake TVDB v4."""
    with running(FakeTvdb(fake_catalogue)) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def fake_tvmaze(fake_catalogue: Catalogue) -> Iterator[FakeTvmaze]:
    """A running fake TVMaze."""
    with running(FakeTvmaze(fake_catalogue)) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def fake_jellyfin() -> Iterator[FakeJellyfin]:
    """A running fake Jellyfin."""
    with running(FakeJellyfin()) as server:
        yield server  # type: ignore[misc]


@pytest.fixture
def loopback_proxy() -> Iterator[LoopbackProxy]:
    """A running forward proxy that relays only to loopback."""
    with running(LoopbackProxy()) as server:
        yield server  # type: ignore[misc]
