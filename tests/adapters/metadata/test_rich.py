"""Rich candidates: country, network, years, counts, ids and names from each provider, over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from jellybit.adapters.metadata import RetryPolicy
from jellybit.core.ports import MetadataQuery
from tests.support.fake_catalogue import numbering_shows
from tests.support.fake_http import FakeHttpServer
from tests.support.fake_metadata import Catalogue, FakeTitle, FakeTmdb, FakeTvdb, FakeTvmaze

FAST = RetryPolicy(attempts=1, max_wait=1.0, backoff=0.01)
SHAMELESS_US = {"tmdb": "34307", "tvdb": "161511", "tvmaze": "150"}
SHAMELESS_EPISODES = 11 * 12


@pytest.fixture
def make(make_provider: Callable[..., Any]) -> Callable[[FakeHttpServer], Any]:
    """A provider of the fake's kind that tries once, closed after the test."""
    return partial(make_provider, policy=FAST)


async def test_every_provider_tells_the_us_show_from_the_uk_one_in_its_search(
    fake_any: FakeHttpServer, make,
) -> None:
    found = await make(fake_any).search(MetadataQuery("Shameless", media_type="series"))
    described = {(c.year, c.details.get("country")) for c in found}
    assert described == {(2011, "US"), (2004, "GB")}


async def test_every_provider_fills_the_details_of_a_show(fake_any: FakeHttpServer, make) -> None:
    provider = make(fake_any)
    show = await provider.details("series", SHAMELESS_US[provider.name])
    details = show.details
    assert (details["country"], details["countries"], details["network"]) == ("US", ["US"], "Showtime")
    assert (details["first_year"], details["last_year"]) == (2011, 2021)
    assert (details["season_count"], details["episode_count"]) == (11, SHAMELESS_EPISODES)
    assert details["seasons"] == {str(n): 12 for n in range(1, 12)}
    assert details["original_language"] == "en"
    assert show.overview
    assert "A Chicago father" in show.overview
    assert "Бесстыжие" in details["aliases"]            # a translation is a name too
    others = {k: v for k, v in {"tmdb": "34307", "tvdb": "161511", "tvmaze": "150"}.items()
              if k != provider.name}
    expected = {"imdb": "tt1586680", **others}
    if provider.name != "tvdb":
        expected.pop("tmdb", None)                   # only TVDB knows every other provider's id
        expected.pop("tvmaze", None)
    assert details["external_ids"] == expected


async def test_tmdb_series_details(fake_tmdb: FakeTmdb, make) -> None:
    office = await make(fake_tmdb).details("series", "2996")
    assert (office.title, office.year) == ("The Office", 2001)
    assert {k: office.details[k] for k in ("country", "network", "first_year", "last_year")} == {
        "country": "GB", "network": "BBC Two", "first_year": 2001, "last_year": 2003}
    (call,) = fake_tmdb.calls("/tv/2996")
    assert "translations" in call.param("append_to_response").split(",")


async def test_tmdb_movie_country_and_studio(fake_tmdb: FakeTmdb, make) -> None:
    matrix = await make(fake_tmdb).details("movie", "603")
    assert (matrix.details["country"], matrix.details["network"]) == ("US", "Warner Bros. Pictures")
    assert matrix.details["first_year"] == 1999
    assert "last_year" not in matrix.details
    assert "seasons" not in matrix.details
    assert matrix.details["aliases"] == ["Матрица"]


async def test_tmdb_movie_without_origin_country_uses_production_countries(
    fake_tmdb: FakeTmdb, make,
) -> None:
    fake_tmdb.script(200, {
        "id": 9, "title": "Festen", "original_title": "Festen", "release_date": "1998-06-19",
        "production_countries": [{"iso_3166_1": "DK", "name": "Denmark"},
                                 {"iso_3166_1": "SE", "name": "Sweden"}],
        "production_companies": [{"id": 1, "name": "Nimbus Film", "origin_country": "DK"}],
    }, path="/movie/9")
    festen = await make(fake_tmdb).details("movie", "9")
    assert (festen.details["country"], festen.details["countries"]) == ("DK", ["DK", "SE"])
    assert festen.details["network"] == "Nimbus Film"


async def test_tvdb_search_carries_country_network_and_remote_ids(fake_tvdb: FakeTvdb, make) -> None:
    found = await make(fake_tvdb).search(MetadataQuery("The Office", media_type="series"))
    us = next(c for c in found if c.provider_id == "73244")
    assert (us.title, us.year) == ("The Office (US)", 2005)
    assert (us.details["country"], us.details["network"]) == ("US", "NBC")
    assert us.details["external_ids"] == {"imdb": "tt0386676", "tmdb": "2316", "tvmaze": "526"}


async def test_tvdb_three_letter_countries_become_alpha2(fake_tvdb: FakeTvdb, make) -> None:
    uk = await make(fake_tvdb).details("series", "78107")
    assert (uk.title, uk.details["country"]) == ("The Office (UK)", "GB")
    assert (uk.details["first_year"], uk.details["last_year"]) == (2001, 2003)
    assert (uk.details["season_count"], uk.details["episode_count"]) == (2, 12)


async def test_tvmaze_web_channel_is_the_network_of_a_streaming_show(fake_tvmaze: FakeTvmaze, make) -> None:
    cards = await make(fake_tvmaze).details("series", "175")
    assert cards.details["network"] == "Netflix"
    assert "country" not in cards.details          # Netflix's web channel has no country on TVMaze
    assert (cards.details["first_year"], cards.details["last_year"]) == (2013, 2018)
    assert cards.details["external_ids"] == {"tvdb": "262980", "imdb": "tt1856010"}
    assert "Карточный домик" in cards.details["aliases"]


@pytest.mark.parametrize("country", ["zz", "", "x" * 300, "U\x00S", "XK1", None])
async def test_unknown_or_hostile_countries_are_dropped(fake_tvmaze: FakeTvmaze, make, country: Any) -> None:
    fake_tvmaze.script(200, [{"score": 1, "show": {
        "id": 5, "name": "Show", "premiered": "2020-01-01",
        "network": {"name": "Net\x00work\n" + "x" * 500, "country": {"code": country}},
    }}])
    (found,) = await make(fake_tvmaze).search(MetadataQuery("show"))
    assert "country" not in found.details
    assert found.details["network"].startswith("Net work x")
    assert len(found.details["network"]) <= 100


async def test_tvdb_hostile_remote_ids_are_cleaned(fake_tvdb: FakeTvdb, make) -> None:
    fake_tvdb.script(200, {"status": "success", "data": [{
        "tvdb_id": "7", "name": "Show", "country": "usa", "remote_ids": [
            {"id": "tt123\x00", "sourceName": "IMDB"}, {"id": 99, "sourceName": "TheMovieDB.com"},
            {"id": "x", "sourceName": "Facebook"}]}]}, path="/search")
    (found,) = await make(fake_tvdb).search(MetadataQuery("show"))
    assert found.details["external_ids"] == {"imdb": "tt123", "tmdb": "99"}
    assert found.details["country"] == "US"


# ---------------------------------------------------------------- air dates and people

LATE = next(t for t in numbering_shows() if t.title == "Late Report")
LATE_IDS = {"tmdb": "5601", "tvdb": "5602", "tvmaze": "5603"}


async def test_every_provider_lists_the_episode_aired_on_a_date(fake_any: FakeHttpServer, make: Any,
                                                                fake_catalogue: Catalogue) -> None:
    fake_catalogue.add(LATE)
    provider = make(fake_any)
    found = await provider.aired(LATE_IDS[provider.name], ["2019-03-11", "2019-03-09"])
    assert found == {"2019-03-11": ((3, 10),), "2019-03-09": ()}


async def test_tmdb_and_tvmaze_name_the_creators_and_the_cast(fake_tmdb: FakeTmdb, fake_tvmaze: FakeTvmaze,
                                                              fake_catalogue: Catalogue, make: Any) -> None:
    fake_catalogue.add(LATE)
    for fake in (fake_tmdb, fake_tvmaze):
        provider = make(fake)
        show = await provider.details("series", LATE_IDS[provider.name])
        assert show.details["people"] == ["Ann Creator", "Bob Anchor"], provider.name


async def test_tmdb_names_a_films_director_first(fake_tmdb: FakeTmdb, fake_catalogue: Catalogue,
                                                 make: Any) -> None:
    fake_catalogue.add(FakeTitle("movie", "Pulp Fiction", 1994, tmdb_id=680, directors=["Quentin Tarantino"],
                                 cast=["John Travolta"]))
    film = await make(fake_tmdb).details("movie", "680")
    assert film.details["people"] == ["Quentin Tarantino", "John Travolta"]
    assert "credits" in (fake_tmdb.requests[-1].param("append_to_response") or "")
