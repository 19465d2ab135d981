"""Fixtures of the recognizer tests: the real LLM client and providers against the local fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from jellybit.adapters.llm import OpenAiLlm
from jellybit.adapters.metadata import MemoryCache, RetryPolicy, TmdbProvider, TvdbProvider, TvmazeProvider
from jellybit.config import LlmConfig
from tests.support.fake_metadata import FakeTmdb, FakeTvdb, FakeTvmaze
from tests.support.fake_openai import FakeOpenAI

FAST = RetryPolicy(attempts=1, max_wait=1.0, backoff=0.01)


@pytest.fixture
async def providers(
    fake_tmdb: FakeTmdb, fake_tvdb: FakeTvdb, fake_tvmaze: FakeTvmaze
) -> AsyncIterator[list[Any]]:
    """The three real providers, each pointed at its fake, sharing one in-memory cache."""
    cache = MemoryCache(3600)
    made = [
        TmdbProvider(fake_tmdb.config(), cache, policy=FAST),
        TvdbProvider(fake_tvdb.config(), cache, policy=FAST),
        TvmazeProvider(fake_tvmaze.config(), cache, policy=FAST),
    ]
    yield made
    for provider in made:
        await provider.close()


@pytest.fixture
async def llm(fake_openai: FakeOpenAI) -> AsyncIterator[OpenAiLlm]:
    """The real OpenAI-compatible client against the fake server (no retries)."""
    client = OpenAiLlm(
        LlmConfig(enabled=True, base_url=fake_openai.base_url, model="test-model", timeout=5), max_retries=0
    )
    yield client
    await client.close()
