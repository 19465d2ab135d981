"""The real metadata providers pointed at the fakes (fixtures `make_provider`, `fake_any`).

`make_provider(fake, store=None, *, cache_hours=24, policy=QUICK, **config)` builds the provider
of the fake's kind (TMDB, TVDB or TVMaze) with the fake's config and `config` over it, cached in
`store` when given; every provider made is closed after the test. `fake_any` is each fake in turn.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from jellybit.adapters.metadata import RetryPolicy, TmdbProvider, TvdbProvider, TvmazeProvider, build_cache
from jellybit.config import MetadataConfig
from tests.support.fake_http import FakeHttpServer
from tests.support.fake_metadata import FakeTmdb, FakeTvdb, FakeTvmaze

QUICK = RetryPolicy(attempts=3, max_wait=5.0, backoff=0.01)   # retries, without the waiting
KINDS = {FakeTmdb: TmdbProvider, FakeTvdb: TvdbProvider, FakeTvmaze: TvmazeProvider}


@pytest.fixture
async def make_provider() -> AsyncIterator[Callable[..., Any]]:
    """Build a provider for a fake (closed after the test): make_provider(fake, store=None, **config)."""
    made: list[Any] = []

    def build(fake: FakeHttpServer, store: Any = None, *, cache_hours: float = 24.0,
              policy: RetryPolicy = QUICK, **overrides: Any) -> Any:
        cache = build_cache(MetadataConfig(cache_hours=cache_hours), store) if store is not None else None
        provider = KINDS[type(fake)](fake.config(**overrides), cache, policy=policy)  # type: ignore[attr-defined]
        made.append(provider)
        return provider

    yield build
    for provider in made:
        await provider.close()


@pytest.fixture(params=["tmdb", "tvdb", "tvmaze"])
def fake_any(request: pytest.FixtureRequest) -> FakeHttpServer:
    """Each metadata fake in turn."""
    return request.getfixturevalue(f"fake_{request.param}")
