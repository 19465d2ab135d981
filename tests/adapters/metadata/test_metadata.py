"""The real TMDB/TVDB/TVMaze providers against local fakes speaking the real API shapes."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest

from jellybit import clock
from jellybit.adapters.metadata import (
    MetadataAuthError,
    MetadataNotFound,
    build_providers,
    close_providers,
    status,
)
from jellybit.adapters.metadata.base import retry_after_seconds
from jellybit.config import MetadataConfig, TmdbConfig, TvmazeConfig
from jellybit.core.ports import MetadataQuery
from jellybit.core.records import MediaType
from jellybit.errors import AdapterError, ConfigError, InvalidArgument
from tests.support.fake_http import FakeHttpServer
from tests.support.fake_metadata import FakeTitle, FakeTmdb, FakeTvdb, FakeTvmaze
from tests.support.providers import QUICK
from tests.support.services import free_port

METHOD_IDS = {"tmdb": "65708", "tvdb": "300241", "tvmaze": "8137"}
FARGO_IDS = {"tmdb": "60622", "tvdb": "269613", "tvmaze": "1006"}
FARGO_SEASONS = {"1": 10, "2": 10, "3": 10, "4": 11, "5": 10}


@pytest.fixture
def make(make_provider: Callable[..., Any]) -> Callable[..., Any]:
    """A provider for a fake, closed after the test: make(fake, store=None, **config)."""
    return make_provider


# ---------------------------------------------------------------- shapes


async def test_tmdb_movie_search_has_page_and_poster_urls(fake_tmdb: FakeTmdb, make) -> None:
    found = await make(fake_tmdb).search(MetadataQuery("The Matrix", media_type="movie", year=1999))
    assert [c.provider_id for c in found] == ["603"]
    matrix = found[0]
    assert (matrix.provider, matrix.media_type, matrix.title, matrix.year) == (
        "tmdb", MediaType.MOVIE, "The Matrix", 1999)
    assert matrix.url == "https://www.themoviedb.org/movie/603"
    assert matrix.poster_url == "https://image.tmdb.org/t/p/w342/the-matrix.jpg"
    (call,) = fake_tmdb.calls("/search/movie")
    assert call.param("year") == "1999"
    assert call.param("language") == "en-US"
    assert call.param("api_key") == FakeTmdb.API_KEY


async def test_tmdb_unknown_type_searches_movies_and_tv(fake_tmdb: FakeTmdb, make) -> None:
    found = await make(fake_tmdb).search(MetadataQuery("Fargo"))
    assert {(c.media_type, c.provider_id, c.year) for c in found} == {
        (MediaType.MOVIE, "275", 1996), (MediaType.SERIES, "60622", 2014)}
    tv = next(c for c in found if c.media_type is MediaType.SERIES)
    assert tv.url == "https://www.themoviedb.org/tv/60622"


async def test_tmdb_year_filter_falls_back_to_no_year(fake_tmdb: FakeTmdb, make) -> None:
    found = await make(fake_tmdb).search(MetadataQuery("The Matrix", media_type="movie", year=1998))
    assert [c.provider_id for c in found] == ["603", "604"]
    years = [c.param("year") for c in fake_tmdb.calls("/search/movie")]
    assert years == ["1998", None]


async def test_tmdb_series_details_have_seasons_and_ids(fake_tmdb: FakeTmdb, make) -> None:
    fargo = await make(fake_tmdb).details("series", "60622")
    assert fargo.details["seasons"] == FARGO_SEASONS
    assert fargo.details["external_ids"] == {"imdb": "tt2802850", "tvdb": "269613"}
    assert fargo.details["original_language"] == "en"
    assert fargo.url == "https://www.themoviedb.org/tv/60622"
    (call,) = fake_tmdb.calls("/tv/60622")
    assert set(call.param("append_to_response").split(",")) == {
        "alternative_titles", "external_ids", "translations", "credits"}


async def test_tmdb_movie_details_have_aliases_and_no_seasons(
    fake_tmdb: FakeTmdb, fake_catalogue, make,
) -> None:
    fake_catalogue.by("tmdb", "603").aliases.append("Matrix")
    matrix = await make(fake_tmdb).details("movie", "603")
    assert matrix.details["aliases"] == ["Matrix", "Матрица"]        # alternative titles, translations
    assert matrix.details["external_ids"] == {"imdb": "tt0133093"}
    assert "seasons" not in matrix.details


async def test_tmdb_read_token_goes_in_the_bearer_header(fake_tmdb: FakeTmdb, make) -> None:
    provider = make(fake_tmdb, api_key=FakeTmdb.READ_TOKEN)
    assert [c.provider_id for c in await provider.search(MetadataQuery("Fargo", "movie"))] == ["275"]
    (call,) = fake_tmdb.calls("/search/movie")
    assert call.headers["authorization"] == f"Bearer {FakeTmdb.READ_TOKEN}"
    assert call.param("api_key") is None
    assert call.headers["user-agent"].startswith("Jellybit/")


async def test_tvdb_search_and_details(fake_tvdb: FakeTvdb, make) -> None:
    provider = make(fake_tvdb)
    (fargo,) = await provider.search(MetadataQuery("Fargo", media_type="series", year=2014))
    assert (fargo.provider_id, fargo.title, fargo.year) == ("269613", "Fargo", 2014)
    assert fargo.url == "https://thetvdb.com/series/fargo"
    assert fargo.poster_url == "https://artworks.thetvdb.com/banners/posters/269613-1.jpg"
    (call,) = fake_tvdb.calls("/search")
    assert (call.param("type"), call.param("year")) == ("series", "2014")
    details = await provider.details("series", "269613")
    assert details.details["seasons"] == FARGO_SEASONS
    assert details.details["external_ids"] == {"imdb": "tt2802850", "tmdb": "60622", "tvmaze": "1006"}


async def test_tvdb_movies_are_not_searched(fake_tvdb: FakeTvdb, make) -> None:
    assert await make(fake_tvdb).search(MetadataQuery("The Matrix", media_type="movie")) == []
    assert fake_tvdb.requests == []


async def test_tvdb_cyrillic_show_has_english_title_and_original(fake_tvdb: FakeTvdb, make) -> None:
    details = await make(fake_tvdb).details("series", "series-300241")
    assert (details.title, details.original_title) == ("Method", "Метод")
    assert details.details["original_language"] == "ru"
    assert "The Method" in details.details["aliases"]
    assert details.url == "https://thetvdb.com/series/metod"
    assert details.details["seasons"] == {"1": 16, "2": 16}


async def test_tvdb_counts_episodes_across_pages(fake_tvdb: FakeTvdb, make) -> None:
    fake_tvdb.episode_page_size = 7
    details = await make(fake_tvdb).details("series", "269613")
    assert details.details["seasons"] == FARGO_SEASONS
    assert len(fake_tvdb.calls("/series/269613/episodes/default")) == 8    # 51 episodes / 7


async def test_tvdb_without_slug_uses_the_dereferrer_url(fake_tvdb: FakeTvdb, fake_catalogue, make) -> None:
    fake_catalogue.add(FakeTitle("series", "Slugless", 2020, seasons={1: 3}, tvdb_id=424242))
    (found,) = await make(fake_tvdb).search(MetadataQuery("Slugless"))
    assert found.url == "https://thetvdb.com/dereferrer/series/424242"


async def test_tvmaze_search_and_details(fake_tvmaze: FakeTvmaze, make) -> None:
    provider = make(fake_tvmaze)
    (fargo,) = await provider.search(MetadataQuery("Fargo", media_type="series", year=2014))
    assert (fargo.provider_id, fargo.title, fargo.year) == ("1006", "Fargo", 2014)
    assert fargo.url == "https://www.tvmaze.com/shows/1006/fargo"
    assert fargo.poster_url == "https://static.tvmaze.com/uploads/images/medium_portrait/1/1006.jpg"
    assert fargo.overview == "Fargo An anthology of crime stories in the Midwest."
    method = await provider.details("series", "8137")
    assert method.details["seasons"] == {"1": 16, "2": 16}
    assert method.details["aliases"] == ["Метод", "The Method"]
    assert method.details["original_language"] == "ru"
    assert method.details["external_ids"] == {"tvdb": "300241", "imdb": "tt4733812"}
    (call,) = fake_tvmaze.calls("/shows/8137")
    assert call.query["embed[]"] == ["seasons", "episodes", "cast", "crew"]
    assert await provider.search(MetadataQuery("Fargo", media_type="movie")) == []


async def test_every_provider_gives_series_details_with_urls(fake_any: FakeHttpServer, make) -> None:
    provider = make(fake_any)
    fargo = await provider.details("series", FARGO_IDS[provider.name])
    assert fargo.details["seasons"] == FARGO_SEASONS
    assert fargo.url
    assert fargo.url.startswith("https://")
    assert fargo.poster_url
    assert fargo.poster_url.startswith("https://")


# ---------------------------------------------------------------- titles and encoding


async def test_original_title_fallback_with_cyrillic(fake_any: FakeHttpServer, make) -> None:
    provider = make(fake_any)
    found = await provider.search(MetadataQuery("Detective Method Translated", media_type="series",
                                                original_title="Метод"))
    assert [c.provider_id for c in found] == [METHOD_IDS[provider.name]]
    sent = [r for r in fake_any.requests if r.path.startswith("/search")]
    texts = [r.param("query") or r.param("q") for r in sent]
    assert texts == ["Detective Method Translated", "Метод"]
    assert "%D0%9C%D0%B5%D1%82%D0%BE%D0%B4" in sent[-1].target      # UTF-8, percent-encoded


async def test_same_original_title_is_not_searched_twice(fake_tvmaze: FakeTvmaze, make) -> None:
    await make(fake_tvmaze).search(MetadataQuery("Fargo", original_title="FARGO"))
    assert len(fake_tvmaze.calls("/search/shows")) == 1


async def test_empty_title_searches_nothing(fake_tmdb: FakeTmdb, make) -> None:
    assert await make(fake_tmdb).search(MetadataQuery("  \x00 ")) == []
    assert fake_tmdb.requests == []


async def test_hostile_provider_text_is_cleaned(fake_tvmaze: FakeTvmaze, make) -> None:
    fake_tvmaze.script(200, [{"score": 1, "show": {
        "id": 5, "name": "Evil\x00Name\n\u202e", "url": "javascript:alert(1)", "premiered": "20xx",
        "image": {"medium": "javascript:alert(2)", "original": "ftp://x/y.jpg"},
        "summary": "<script>x</script>",
    }}])
    (found,) = await make(fake_tvmaze).search(MetadataQuery("evil"))
    assert found.title == "Evil Name"
    assert found.url == "https://www.tvmaze.com/shows/5"
    assert found.poster_url is None
    assert found.year is None
    assert found.overview == "x"


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(("media_type", "provider_id"), [
    ("movie", "../../account"), ("series", "1/../2"), ("series", ""), ("film", "603"),
])
async def test_bad_details_arguments_are_refused_before_any_call(
    fake_any: FakeHttpServer, make, media_type: str, provider_id: str,
) -> None:
    with pytest.raises(InvalidArgument):
        await make(fake_any).details(media_type, provider_id)
    assert fake_any.requests == []


async def test_bad_media_type_in_a_query_is_refused(fake_tmdb: FakeTmdb, make) -> None:
    with pytest.raises(InvalidArgument):
        await make(fake_tmdb).search(MetadataQuery("Fargo", media_type="film"))
    assert fake_tmdb.requests == []


async def test_unknown_id_is_not_found(fake_any: FakeHttpServer, make) -> None:
    with pytest.raises(MetadataNotFound) as caught:
        await make(fake_any).details("series", "999999")
    assert isinstance(caught.value, AdapterError)


# ---------------------------------------------------------------- cache


async def test_second_identical_search_is_served_from_the_store(
    fake_any: FakeHttpServer, store, make,
) -> None:
    query = MetadataQuery("Fargo", media_type="series", year=2014)
    first = await make(fake_any, store).search(query)
    sent = len(fake_any.requests)
    assert sent >= 1
    # A new provider on the same store (a refine, or after a restart) repeats no call.
    again = await make(fake_any, store).search(MetadataQuery(" fargo ", media_type="series", year=2014))
    assert again == first
    assert len(fake_any.requests) == sent


async def test_details_are_cached_too(fake_tvdb: FakeTvdb, store, make) -> None:
    provider = make(fake_tvdb, store)
    first = await provider.details("series", "269613")
    sent = len(fake_tvdb.requests)
    assert await provider.details("series", "269613") == first
    assert len(fake_tvdb.requests) == sent


async def test_without_a_store_a_memory_cache_is_used(fake_tmdb: FakeTmdb) -> None:
    config = MetadataConfig(tmdb=fake_tmdb.config(), tvmaze=TvmazeConfig(enabled=False))
    (provider,) = build_providers(config, None, policy=QUICK)
    try:
        await provider.search(MetadataQuery("Fargo", "movie"))
        await provider.search(MetadataQuery("Fargo", "movie"))
    finally:
        await provider.close()
    assert len(fake_tmdb.calls("/search/movie")) == 1


async def test_cache_entries_expire(fake_tmdb: FakeTmdb, store, make) -> None:
    provider = make(fake_tmdb, store, cache_hours=2)
    query = MetadataQuery("The Matrix", media_type="movie", year=1999)
    await provider.search(query)
    await provider.search(query)
    assert len(fake_tmdb.calls("/search/movie")) == 1
    (row,) = await store.fetchall("SELECT created_at, expires_at FROM metadata_cache")
    lifetime = clock.parse_time(row["expires_at"]) - clock.parse_time(row["created_at"])
    assert lifetime == timedelta(hours=2)
    # Two hours pass:
    await store.conn.execute("UPDATE metadata_cache SET expires_at = ?", (row["created_at"],))
    await provider.search(query)
    assert len(fake_tmdb.calls("/search/movie")) == 2


async def test_zero_cache_hours_caches_nothing(fake_tmdb: FakeTmdb, store, make) -> None:
    provider = make(fake_tmdb, store, cache_hours=0)
    for _ in range(2):
        await provider.search(MetadataQuery("Fargo", "movie"))
    assert len(fake_tmdb.calls("/search/movie")) == 2
    assert await store.fetchall("SELECT key FROM metadata_cache") == []


async def test_errors_are_not_cached(fake_tmdb: FakeTmdb, store, make) -> None:
    provider = make(fake_tmdb, store)
    fake_tmdb.script(500, times=3)
    with pytest.raises(AdapterError):
        await provider.search(MetadataQuery("Fargo", "movie"))
    assert [c.provider_id for c in await provider.search(MetadataQuery("Fargo", "movie"))] == ["275"]


# ---------------------------------------------------------------- rate limits and failures


async def test_429_with_retry_after_seconds_is_honoured(fake_tmdb: FakeTmdb, make) -> None:
    fake_tmdb.rate_limit("1")
    found = await make(fake_tmdb).search(MetadataQuery("Fargo", "movie"))
    assert [c.provider_id for c in found] == ["275"]
    first, second = fake_tmdb.calls("/search/movie")
    assert second.at - first.at >= 0.9


async def test_429_with_an_http_date_is_honoured(fake_tvmaze: FakeTvmaze, make) -> None:
    fake_tvmaze.rate_limit(format_datetime(datetime.now(UTC) - timedelta(seconds=30), usegmt=True))
    assert len(await make(fake_tvmaze).search(MetadataQuery("Fargo"))) == 1
    assert len(fake_tvmaze.calls("/search/shows")) == 2


async def test_429_without_retry_after_backs_off(fake_tvmaze: FakeTvmaze, make) -> None:
    fake_tvmaze.rate_limit(None, times=2)
    assert len(await make(fake_tvmaze).search(MetadataQuery("Fargo"))) == 1
    assert len(fake_tvmaze.calls("/search/shows")) == 3


async def test_retry_after_beyond_the_maximum_wait_fails_at_once(fake_tmdb: FakeTmdb, make) -> None:
    fake_tmdb.rate_limit("3600")
    with pytest.raises(AdapterError, match="3600 s") as caught:
        await make(fake_tmdb).search(MetadataQuery("Fargo", "movie"))
    assert caught.value.system == "tmdb"
    assert len(fake_tmdb.requests) == 1


async def test_persistent_429_gives_up_after_bounded_attempts(fake_tvdb: FakeTvdb, make) -> None:
    fake_tvdb.rate_limit("0", times=10, path="/search")
    with pytest.raises(AdapterError, match="429"):
        await make(fake_tvdb).search(MetadataQuery("Fargo"))
    assert len(fake_tvdb.calls("/search")) == QUICK.attempts


async def test_transient_5xx_is_retried(fake_tvmaze: FakeTvmaze, make) -> None:
    fake_tvmaze.script(502)
    assert len(await make(fake_tvmaze).search(MetadataQuery("Fargo"))) == 1
    assert len(fake_tvmaze.calls("/search/shows")) == 2


async def test_persistent_5xx_is_an_adapter_error(fake_any: FakeHttpServer, make) -> None:
    provider = make(fake_any)
    fake_any.script(500, {"error": "boom"}, times=50)
    with pytest.raises(AdapterError, match="HTTP 500") as caught:
        await provider.search(MetadataQuery("Fargo", media_type="series"))
    assert caught.value.system == provider.name
    assert len(fake_any.requests) == QUICK.attempts


async def test_bad_json_is_an_adapter_error(fake_any: FakeHttpServer, make) -> None:
    provider = make(fake_any)
    fake_any.script(200, "<html>not json</html>", times=50, path="/search")
    with pytest.raises(AdapterError, match="cannot read"):
        await provider.search(MetadataQuery("Fargo", media_type="series"))


async def test_unreachable_provider_is_an_adapter_error(make, fake_tmdb: FakeTmdb) -> None:
    provider = make(fake_tmdb, base_url=f"http://127.0.0.1:{free_port()}/3")
    with pytest.raises(AdapterError, match="could not be reached"):
        await provider.search(MetadataQuery("Fargo", "movie"))


def test_retry_after_parsing() -> None:
    now = datetime(2015, 10, 21, 7, 27, 50, tzinfo=UTC)
    assert retry_after_seconds("5") == 5.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT", now) == 10.0
    assert retry_after_seconds("Wed, 21 Oct 2015 07:00:00 GMT", now) == 0.0
    assert retry_after_seconds("-3") == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


# ---------------------------------------------------------------- TVDB tokens


async def test_tvdb_logs_in_once_and_again_after_a_401(fake_tvdb: FakeTvdb, make) -> None:
    provider = make(fake_tvdb)
    await provider.search(MetadataQuery("Fargo"))
    await provider.search(MetadataQuery("Метод"))
    assert fake_tvdb.logins == 1
    fake_tvdb.expire_tokens()
    details = await provider.details("series", "269613")
    assert details.details["seasons"] == FARGO_SEASONS
    assert fake_tvdb.logins == 2
    rejected, *_ = fake_tvdb.calls("/series/269613/extended")
    assert rejected.headers["authorization"] == "Bearer tvdb-token-1"
    assert fake_tvdb.calls("/series/269613/extended")[-1].headers["authorization"] == "Bearer tvdb-token-2"


async def test_tvdb_sends_the_pin(fake_tvdb: FakeTvdb, make) -> None:
    fake_tvdb.require_pin = True
    assert await make(fake_tvdb).search(MetadataQuery("Fargo"))
    (login,) = fake_tvdb.calls("/login")
    assert login.json() == {"apikey": FakeTvdb.API_KEY, "pin": FakeTvdb.PIN}


async def test_tvdb_bad_key_is_an_auth_error(fake_tvdb: FakeTvdb, make) -> None:
    with pytest.raises(MetadataAuthError):
        await make(fake_tvdb, api_key="wrong").search(MetadataQuery("Fargo"))
    assert fake_tvdb.logins == 1
    assert fake_tvdb.calls("/search") == []


# ---------------------------------------------------------------- proxy, secrets


async def test_proxy_setting_routes_requests_through_the_proxy(
    fake_any: FakeHttpServer, loopback_proxy, make,
) -> None:
    provider = make(fake_any, proxy=loopback_proxy.origin)
    assert await provider.search(MetadataQuery("Fargo", media_type="series"))
    relayed = loopback_proxy.relayed
    assert relayed
    assert all(url.startswith(fake_any.origin) for url in relayed)
    assert len(relayed) == len(fake_any.requests)


async def test_keys_never_reach_logs_errors_or_the_cache(
    fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb, store, make, caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    fake_tvdb.require_pin = True
    tmdb, tvdb = make(fake_tmdb, store), make(fake_tvdb, store)
    await tmdb.search(MetadataQuery("Fargo"))
    await tvdb.details("series", "269613")
    fake_tmdb.rate_limit("0")
    await tmdb.details("movie", "603")
    errors = []
    wrong = (make(fake_tmdb, api_key="badbadbadbadbadbadbadbadbadbad00"),
             make(fake_tvdb, pin="wrong-pin-q9z"))
    for provider in wrong:
        with pytest.raises(AdapterError) as caught:
            await provider.search(MetadataQuery("Fargo", media_type="series"))
        errors.append(str(caught.value))
    rows = await store.fetchall("SELECT key, body FROM metadata_cache")
    assert rows
    text = caplog.text + "\n".join(errors) + "".join(r["key"] + r["body"] for r in rows)
    assert "HTTP Request" in caplog.text                     # httpx did log the URLs
    for secret in (FakeTmdb.API_KEY, FakeTvdb.API_KEY, FakeTvdb.PIN, "tvdb-token-1",
                   "badbadbadbadbadbadbadbadbadbad00", "wrong-pin-q9z"):
        assert secret not in text


# ---------------------------------------------------------------- wiring and status


async def test_build_providers_keeps_only_enabled_ones(fake_tmdb: FakeTmdb, fake_tvmaze: FakeTvmaze) -> None:
    config = MetadataConfig(tmdb=fake_tmdb.config(), tvmaze=fake_tvmaze.config())
    providers = build_providers(config, None, policy=QUICK)
    try:
        assert [p.name for p in providers] == ["tmdb", "tvmaze"]
        found = {s.name: s for s in await status(providers, config)}
    finally:
        for provider in providers:
            await provider.close()
    assert found["tmdb"].ok
    assert found["tvmaze"].ok
    assert not found["tvdb"].enabled
    assert fake_tmdb.calls("/configuration")


async def test_tvmaze_alone_is_the_default() -> None:
    providers = build_providers(MetadataConfig(), None)
    try:
        assert [p.name for p in providers] == ["tvmaze"]
    finally:
        await close_providers(providers)


def test_enabled_provider_without_a_key_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="JELLYBIT_METADATA_TMDB_API_KEY"):
        build_providers(MetadataConfig(tmdb=TmdbConfig(enabled=True)), None)


async def test_status_reports_failures_without_raising(fake_tvdb: FakeTvdb, make) -> None:
    down = make(fake_tvdb, base_url=f"http://127.0.0.1:{free_port()}/v4")
    bad_key = make(fake_tvdb, api_key="wrong")
    good = make(fake_tvdb)
    result = [*await status([down]), *await status([bad_key]), *await status([good])]
    assert [s.ok for s in result] == [False, False, True]
    assert "could not be reached" in result[0].message
    assert "rejected" in result[1].message
