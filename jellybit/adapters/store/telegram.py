"""The Telegram transport's own rows: the ping queue, handled update ids and named values.

The transport reads downloads only through the command API; these methods keep what the
transport itself must not lose: pings still to send (and which message a sent one became,
for replies and edits), the updates it has already handled, and its event cursor.
"""

from __future__ import annotations

import aiosqlite

from jellybit import clock, ident
from jellybit.adapters.store.base import StoreBase
from jellybit.core.pings import PingStatus, TelegramPing


def _ping(row: aiosqlite.Row) -> TelegramPing:
    return TelegramPing(
        id=row["id"], download_id=row["download_id"], chat_id=row["chat_id"], kind=row["kind"],
        dedupe_key=row["dedupe_key"], status=PingStatus(row["status"]), attempts=row["attempts"],
        next_attempt_at=row["next_attempt_at"], last_error=row["last_error"],
        message_id=row["message_id"], has_photo=bool(row["has_photo"]), created_at=row["created_at"],
    )


class TelegramMixin(StoreBase):
    """Store methods for `telegram_ping`, `telegram_update` and `telegram_value`."""

    # ------------------------------------------------------------ pings

    async def telegram_enqueue(self, download_id: str, chat_id: int, kind: str, dedupe_key: str,
                               due_at: str | None = None) -> bool:
        """Queue a ping; False when this (download, chat, key) was queued before (nothing changes)."""
        now = clock.now()
        async with self.write() as conn:
            cur = await conn.execute(
                "INSERT OR IGNORE INTO telegram_ping (id, download_id, chat_id, kind, dedupe_key, status,"
                " attempts, next_attempt_at, has_photo, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, 'pending', 0, ?, 0, ?, ?)",
                (ident.new_id(), download_id, chat_id, kind, dedupe_key, due_at or now, now, now),
            )
            return bool(cur.rowcount)

    async def telegram_due_pings(self, now: str, limit: int = 50) -> list[TelegramPing]:
        """Pending pings whose time has come, oldest first."""
        rows = await self.fetchall(
            "SELECT * FROM telegram_ping WHERE status = 'pending' AND next_attempt_at <= ?"
            " ORDER BY next_attempt_at, id LIMIT ?", (now, limit),
        )
        return [_ping(r) for r in rows]

    async def telegram_next_due(self) -> str | None:
        """When the earliest pending ping is due (None when nothing is pending)."""
        row = await self.fetchone(
            "SELECT MIN(next_attempt_at) AS due FROM telegram_ping WHERE status = 'pending'"
        )
        return row["due"] if row else None

    async def telegram_pings(self, download_id: str) -> list[TelegramPing]:
        """Every ping about one download, oldest first."""
        rows = await self.fetchall(
            "SELECT * FROM telegram_ping WHERE download_id = ? ORDER BY created_at, id", (download_id,)
        )
        return [_ping(r) for r in rows]

    async def telegram_mark_sent(self, ping_id: str, message_id: int, *, has_photo: bool) -> None:
        """Record that a ping became a message (its id is what replies and edits refer to)."""
        now = clock.now()
        async with self.write() as conn:
            await conn.execute(
                "UPDATE telegram_ping SET status = 'sent', message_id = ?, has_photo = ?,"
                " attempts = attempts + 1, last_error = NULL, updated_at = ? WHERE id = ?",
                (message_id, int(has_photo), now, ping_id),
            )

    async def telegram_reschedule(self, ping_id: str, due_at: str, *, error: str | None = None,
                                  attempted: bool = True) -> None:
        """Keep a ping pending until `due_at` (after a failed attempt, or to wait out a defer)."""
        async with self.write() as conn:
            await conn.execute(
                "UPDATE telegram_ping SET next_attempt_at = ?, attempts = attempts + ?,"
                " last_error = COALESCE(?, last_error), updated_at = ? WHERE id = ? AND status = 'pending'",
                (due_at, int(attempted), error, clock.now(), ping_id),
            )

    async def telegram_close_ping(self, ping_id: str, status: PingStatus, error: str | None = None) -> None:
        """Settle a pending ping as superseded or dropped."""
        if status not in (PingStatus.SUPERSEDED, PingStatus.DROPPED):
            raise ValueError(f"a ping is closed as superseded or dropped, not {status}")
        async with self.write() as conn:
            await conn.execute(
                "UPDATE telegram_ping SET status = ?, last_error = COALESCE(?, last_error), updated_at = ?"
                " WHERE id = ? AND status = 'pending'",
                (status.value, error, clock.now(), ping_id),
            )

    async def telegram_supersede(self, download_id: str, chat_id: int, kind: str, *, keep: str) -> int:
        """Supersede the other pending pings of one kind for a download and chat; returns how many."""
        async with self.write() as conn:
            cur = await conn.execute(
                "UPDATE telegram_ping SET status = 'superseded', updated_at = ?"
                " WHERE download_id = ? AND chat_id = ? AND kind = ? AND status = 'pending' AND id <> ?",
                (clock.now(), download_id, chat_id, kind, keep),
            )
            return cur.rowcount

    async def telegram_message_ping(self, chat_id: int, message_id: int) -> TelegramPing | None:
        """The sent ping that became this message (a reply to it is about its download)."""
        row = await self.fetchone(
            "SELECT * FROM telegram_ping WHERE chat_id = ? AND message_id = ? AND status = 'sent'",
            (chat_id, message_id),
        )
        return _ping(row) if row else None

    # ------------------------------------------------------------ updates

    async def telegram_update_seen(self, update_id: int) -> bool:
        """Tell whether an update was handled before (Telegram re-delivers unconfirmed ones)."""
        row = await self.fetchone(
            "SELECT 1 FROM telegram_update WHERE update_id = ?", (update_id,)
        )
        return row is not None

    async def telegram_mark_update(self, update_id: int) -> bool:
        """Remember a handled update; False when it was remembered already."""
        async with self.write() as conn:
            cur = await conn.execute(
                "INSERT OR IGNORE INTO telegram_update (update_id, created_at) VALUES (?, ?)",
                (update_id, clock.now()),
            )
            return bool(cur.rowcount)

    async def telegram_forget_updates(self, older_than: str) -> int:
        """Forget handled update ids older than a time (Telegram keeps updates 24 hours)."""
        async with self.write() as conn:
            cur = await conn.execute("DELETE FROM telegram_update WHERE created_at < ?", (older_than,))
            return cur.rowcount

    # ------------------------------------------------------------ values

    async def telegram_value(self, key: str) -> str | None:
        """A named value of the transport (e.g. `event_cursor`)."""
        row = await self.fetchone(
            "SELECT value FROM telegram_value WHERE key = ?", (key,)
        )
        return row["value"] if row else None

    async def telegram_set_value(self, key: str, value: str) -> None:
        """Set a named value."""
        now = clock.now()
        async with self.write() as conn:
            await conn.execute(
                "INSERT INTO telegram_value (key, value, updated_at) VALUES (?, ?, ?)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (key, value, now),
            )
