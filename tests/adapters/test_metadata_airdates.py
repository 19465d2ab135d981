"""Air dates and people from each provider, over HTTP against the fakes' real API shapes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from jellybit.adapters.metadata import RetryPolicy, TmdbProvider, TvdbProvider, TvmazeProvider
from tests.support.fake_http import FakeHttpServer
from tests.support.fake_metadata import Catalogue, FakeTitle, FakeTmdb, FakeTvdb, FakeTvmaze

FAST = RetryPolicy(attempts=1, max_wait=1.0, backoff=0.01)
LATE = FakeTitle("series", "Late Report", 2017, seasons={1: 4, 2: 4, 3: 12}, tmdb_id=5601, tvdb_id=5602,
                 tvmaze_id=5603, imdb_id="tt5600001", slug="late-report", network="CBS",
                 aired={(3, 1): "2019-01-07", (3, 10): "2019-03-11",
                        (3, 11): "2019-03-12"}, directors=["Ann Creator"],
                 cast=["Bob Anchor"])
IDS = {"tmdb": "5601", "tvdb": "5602", "tvmaze": "5603"}


@pytest.fixture(params=["tmdb", "tvdb", "tvmaze"])
def fake_any(request: pytest.FixtureRequest, fake_catalogue: Catalogue) -> FakeHttpServer:
    """Each metadata fake in turn, with a daily show in its catalogue."""
    fake_catalogue.add(LATE)
    return request.getfixturevalue(f"fake_{request.param}")


@pytest.fixture
async def make() -> AsyncIterator[Callable[[FakeHttpServer], Any]]:
    """A provider of the fake's kind, closed after the test."""
    made: list[Any] = []

    def build(fake: FakeHttpServer) -> Any:
        cls = {FakeTmdb: TmdbProvider, FakeTvdb: TvdbProvider, FakeTvmaze: TvmazeProvider}[type(fake)]
        provider = cls(fake.config(), None, policy=FAST)  # type: ignore[attr-defined]
        made.append(provider)
        return provider

    yield build
    for provider in made:
        await provider.close()


async def test_every_provider_lists_the_episode_aired_on_a_date(fake_any: FakeHttpServer, make: Any) -> None:
    provider = make(fake_any)
    found = await provider.aired(IDS[provider.name], ["2019-03-11", "2019-03-09"])
    assert found == {"2019-03-11": ((3, 10),), "2019-03-09": ()}


async def test_tmdb_and_tvmaze_name_the_creators_and_the_cast(fake_tmdb: FakeTmdb, fake_tvmaze: FakeTvmaze,
                                                              fake_catalogue: Catalogue, make: Any) -> None:
    fake_catalogue.add(LATE)
    for fake in (fake_tmdb, fake_tvmaze):
        provider = make(fake)
        show = await provider.details("series", IDS[provider.name])
        assert show.details["people"] == ["Ann Creator", "Bob Anchor"], provider.name


async def test_tmdb_names_a_films_director_first(fake_tmdb: FakeTmdb, fake_catalogue: Catalogue,
                                                 make: Any) -> None:
    fake_catalogue.add(FakeTitle("movie", "Pulp Fiction", 1994, tmdb_id=680, directors=["Quentin Tarantino"],
                                 cast=["John Travolta"]))
    film = await make(fake_tmdb).details("movie", "680")
    assert film.details["people"] == ["Quentin Tarantino", "John Travolta"]
    assert "credits" in (fake_tmdb.requests[-1].param("append_to_response") or "")
