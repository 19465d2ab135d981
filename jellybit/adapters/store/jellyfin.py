"""Whether Jellyfin lists a done download, and the item it became (`download.jellyfin_*`, migration 0007)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from jellybit import clock
from jellybit.adapters.store.base import StoreBase
from jellybit.core.jellyfin import Confirmation
from jellybit.core.models import Download
from jellybit.core.states import State
from jellybit.errors import NotFound

_OPEN = (Confirmation.PENDING.value, Confirmation.MISSING.value, Confirmation.UNREACHABLE.value)


class JellyfinMixin(StoreBase):
    """The Jellyfin confirmation of done downloads."""

    # Loads a download row inside a transaction: DownloadsMixin's, beside this one in `Store`.
    _load: Callable[[aiosqlite.Connection, str], Awaitable[Download | None]]

    async def jellyfin_track(self, download_id: str) -> Download | None:
        """Start confirming a done download (again): pending, item and note cleared; None unless done."""
        async with self.write() as conn:
            cursor = await conn.execute(
                "UPDATE download SET jellyfin_status = ?, jellyfin_item_id = NULL, jellyfin_url = NULL,"
                " jellyfin_note = NULL, jellyfin_checked_at = NULL, updated_at = ?"
                " WHERE id = ? AND state = ?",
                (Confirmation.PENDING.value, clock.now(), download_id, State.DONE.value))
            if cursor.rowcount == 0:
                return None
            return await self._load(conn, download_id)

    async def jellyfin_unconfirmed(self, settled_since: str, limit: int = 200) -> list[Download]:
        """Done downloads Jellyfin has not confirmed yet that settled at or after `settled_since`."""
        marks = ",".join("?" for _ in _OPEN)
        async with self.conn.execute(
            f"SELECT id FROM download WHERE state = ? AND jellyfin_status IN ({marks}) AND settled_at >= ?"
            " ORDER BY settled_at, id LIMIT ?", (State.DONE.value, *_OPEN, settled_since, limit),
        ) as cursor:
            ids = [row[0] for row in await cursor.fetchall()]
        found = [await self._load(self.conn, i) for i in ids]
        return [d for d in found if d is not None]

    async def jellyfin_record(self, download_id: str, status: Confirmation, *, item_id: str | None = None,
                              url: str | None = None, note: str | None = None) -> tuple[Download, bool]:
        """Record a look-up's outcome on a done download; True when what it shows changed (then
        `updated_at` moves). A download that left done meanwhile is left alone (and comes back unchanged)."""
        async with self.write() as conn:
            current = await self._load(conn, download_id)
            if current is None:
                raise NotFound(f"unknown download id {download_id!r}")
            if current.state is not State.DONE or current.jellyfin_status is None:
                return current, False
            values = {"jellyfin_status": status.value, "jellyfin_item_id": item_id, "jellyfin_url": url,
                      "jellyfin_note": note}
            changed = any(getattr(current, k) != v for k, v in values.items())
            now = clock.now()
            fields = {**values, "jellyfin_checked_at": now, **({"updated_at": now} if changed else {})}
            sets = ", ".join(f"{k} = ?" for k in fields)
            await conn.execute(f"UPDATE download SET {sets} WHERE id = ?", (*fields.values(), download_id))
            download = await self._load(conn, download_id)
            assert download is not None
            return download, changed
