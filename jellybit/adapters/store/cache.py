"""The `metadata_cache` table: provider answers kept for a while so a refine repeats no calls."""

from __future__ import annotations

from datetime import timedelta

from jellybit import clock
from jellybit.adapters.store.base import StoreBase


class MetadataCacheMixin(StoreBase):
    """Store methods for `metadata_cache` (key -> response body with an expiry time)."""

    async def cache_get(self, key: str) -> str | None:
        """Return the cached body for key, or None when absent or expired."""
        row = await self.fetchone(
            "SELECT body FROM metadata_cache WHERE key = ? AND expires_at > ?", (key, clock.now())
        )
        return row["body"] if row else None

    async def cache_put(self, key: str, body: str, ttl_seconds: float) -> None:
        """Store body under key for ttl_seconds (replacing an older entry); ttl <= 0 stores nothing."""
        if ttl_seconds <= 0:
            return
        moment = clock.utcnow()
        created = clock.format_time(moment)
        expires = clock.format_time(moment + timedelta(seconds=ttl_seconds))
        async with self.write() as conn:
            await conn.execute(
                "INSERT INTO metadata_cache (key, body, created_at, expires_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET body = excluded.body,"
                " created_at = excluded.created_at, expires_at = excluded.expires_at",
                (key, body, created, expires),
            )

    async def cache_purge_expired(self) -> int:
        """Delete expired entries and return how many went."""
        async with self.write() as conn:
            cursor = await conn.execute(
                "DELETE FROM metadata_cache WHERE expires_at <= ?", (clock.now(),)
            )
            return cursor.rowcount
