"""Metadata providers (TMDB v3, TVDB v4, TVMaze) behind the MetadataProvider port, with a shared cache."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from jellybit.adapters.metadata.base import MetadataAuthError, MetadataNotFound, RetryPolicy
from jellybit.adapters.metadata.cache import CacheStore, MemoryCache, ResponseCache, StoreCache
from jellybit.adapters.metadata.tmdb import TmdbProvider
from jellybit.adapters.metadata.tvdb import TvdbProvider
from jellybit.adapters.metadata.tvmaze import TvmazeProvider
from jellybit.adapters.status import ServiceStatus
from jellybit.config import MetadataConfig
from jellybit.core.providers import Provider, searched

Adapter = TmdbProvider | TvdbProvider | TvmazeProvider
# The adapter of each searched provider (the provider table, core/providers.py, says the rest).
ADAPTERS: dict[str, type[Adapter]] = {Provider.TMDB: TmdbProvider, Provider.TVDB: TvdbProvider,
                                      Provider.TVMAZE: TvmazeProvider}


def build_cache(config: MetadataConfig, store: CacheStore | None) -> ResponseCache | None:
    """The store-backed cache (memory without a store); None when `cache_hours` is 0."""
    ttl = config.cache_hours * 3600
    if ttl <= 0:
        return None
    return StoreCache(store, ttl) if store is not None else MemoryCache(ttl)


def build_providers(
    config: MetadataConfig, store: CacheStore | None, *, policy: RetryPolicy | None = None,
) -> list[Adapter]:
    """The enabled providers in the table's order (tmdb, tvdb, tvmaze); enabled without a key: ConfigError."""
    cache = build_cache(config, store)
    providers: list[Adapter] = []
    for name in searched():
        section = getattr(config, name)
        if section.enabled:
            providers.append(ADAPTERS[name](section, cache, policy=policy))
    return providers


async def status(
    providers: Sequence[Adapter], config: MetadataConfig | None = None,
) -> list[ServiceStatus]:
    """Ping every provider concurrently (uncached) for the status page; never raises.

    With `config`, disabled providers are listed too (enabled=False).
    """
    found = {s.name: s for s in await asyncio.gather(*(p.ping() for p in providers))}
    if config is not None:
        for name in searched():
            found.setdefault(name, ServiceStatus(name, False, "disabled", enabled=False))
    return list(found.values())


async def close_providers(providers: Sequence[Adapter]) -> None:
    """Release every provider's HTTP client."""
    for provider in providers:
        await provider.close()


__all__ = [
    "ADAPTERS",
    "Adapter",
    "MetadataAuthError",
    "MetadataNotFound",
    "RetryPolicy",
    "TmdbProvider",
    "TvdbProvider",
    "TvmazeProvider",
    "build_cache",
    "build_providers",
    "close_providers",
    "status",
]
