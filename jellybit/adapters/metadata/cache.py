"""Response caches for the providers: the store's `metadata_cache` table, or memory without a store."""

from __future__ import annotations

import logging
import sqlite3
from datetime import timedelta
from typing import Protocol

from jellybit import clock

log = logging.getLogger(__name__)


class ResponseCache(Protocol):
    """Raw response bodies by cache key; a cache never raises into the provider."""

    async def get(self, key: str) -> str | None:
        """Return the fresh body for key, or None."""

    async def put(self, key: str, body: str) -> None:
        """Keep body under key for the cache's lifetime."""


class CacheStore(Protocol):
    """The part of the Store the cache needs (MetadataCacheMixin)."""

    async def cache_get(self, key: str) -> str | None:
        """Return the fresh body for key, or None."""

    async def cache_put(self, key: str, body: str, ttl_seconds: float) -> None:
        """Keep body under key for ttl_seconds."""


class StoreCache:
    """Cache in the SQLite store, shared by every provider and surviving restarts."""

    def __init__(self, store: CacheStore, ttl_seconds: float) -> None:
        self.store = store
        self.ttl_seconds = ttl_seconds
        self._broken = False

    async def get(self, key: str) -> str | None:
        """Return the fresh body for key; a database problem reads as a miss."""
        try:
            body = await self.store.cache_get(key)
        except (sqlite3.Error, RuntimeError) as exc:
            self._trouble(exc)
            return None
        self._fine()
        return body

    async def put(self, key: str, body: str) -> None:
        """Store body; a database problem is logged once and otherwise ignored."""
        try:
            await self.store.cache_put(key, body, self.ttl_seconds)
        except (sqlite3.Error, RuntimeError) as exc:
            self._trouble(exc)
            return
        self._fine()

    def _trouble(self, exc: Exception) -> None:
        if not self._broken:
            log.warning("metadata cache unavailable, calling providers directly: %s", exc)
            self._broken = True

    def _fine(self) -> None:
        if self._broken:
            log.info("metadata cache available again")
            self._broken = False


class MemoryCache:
    """In-process cache for runs without a store (e.g. a dry-run `jellybit recognize`)."""

    def __init__(self, ttl_seconds: float, max_entries: int = 2000) -> None:
        self.ttl_seconds = ttl_seconds
        self.max_entries = max_entries
        self._entries: dict[str, tuple[str, str]] = {}

    async def get(self, key: str) -> str | None:
        """Return the fresh body for key, or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires_at, body = entry
        if expires_at <= clock.now():
            del self._entries[key]
            return None
        return body

    async def put(self, key: str, body: str) -> None:
        """Keep body for the cache's lifetime; the oldest entry goes when full."""
        if self.ttl_seconds <= 0:
            return
        if len(self._entries) >= self.max_entries and key not in self._entries:
            del self._entries[next(iter(self._entries))]
        expires = clock.format_time(clock.utcnow() + timedelta(seconds=self.ttl_seconds))
        self._entries[key] = (expires, body)
