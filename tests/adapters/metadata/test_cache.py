"""The store's `metadata_cache` methods against a real SQLite file."""

from __future__ import annotations

import asyncio

from jellybit.adapters.metadata.cache import MemoryCache, StoreCache


async def test_put_then_get_returns_the_body(store) -> None:
    await store.cache_put("tmdb GET /search/movie?query=метод", '{"results": ["Метод"]}', 60)
    assert await store.cache_get("tmdb GET /search/movie?query=метод") == '{"results": ["Метод"]}'
    assert await store.cache_get("tmdb GET /search/movie?query=other") is None


async def test_put_replaces_an_older_entry(store) -> None:
    await store.cache_put("k", "old", 60)
    await store.cache_put("k", "new", 60)
    assert await store.cache_get("k") == "new"
    rows = await store.fetchall("SELECT key FROM metadata_cache")
    assert [r["key"] for r in rows] == ["k"]


async def test_expired_entries_are_misses_and_get_purged(store) -> None:
    await store.cache_put("short", "a", 0.05)
    await store.cache_put("long", "b", 3600)
    await asyncio.sleep(0.1)
    assert await store.cache_get("short") is None
    assert await store.cache_get("long") == "b"
    assert await store.cache_purge_expired() == 1
    rows = await store.fetchall("SELECT key FROM metadata_cache")
    assert [r["key"] for r in rows] == ["long"]
    assert await store.cache_purge_expired() == 0


async def test_non_positive_ttl_stores_nothing(store) -> None:
    await store.cache_put("k", "v", 0)
    await store.cache_put("k2", "v", -5)
    assert await store.fetchall("SELECT key FROM metadata_cache") == []


async def test_store_cache_reads_a_closed_store_as_a_miss(store) -> None:
    cache = StoreCache(store, 60)
    await cache.put("k", "v")
    assert await cache.get("k") == "v"
    await store.close()
    assert await cache.get("k") is None
    await cache.put("k", "w")            # logged, not raised


async def test_memory_cache_stays_bounded() -> None:
    cache = MemoryCache(3600, max_entries=2)
    for key in "abc":
        await cache.put(key, key.upper())
    assert [await cache.get(key) for key in "abc"] == [None, "B", "C"]


async def test_memory_cache_entries_expire() -> None:
    cache = MemoryCache(0.05)
    await cache.put("a", "1")
    await asyncio.sleep(0.1)
    assert await cache.get("a") is None
