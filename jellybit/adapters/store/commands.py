"""Stored command responses, so a repeated MQTT `transaction` is answered and not executed twice."""

from __future__ import annotations

from jellybit import clock
from jellybit.adapters.store.base import StoreBase


class CommandResultsMixin(StoreBase):
    """Store methods for `command_result`."""

    async def command_result(self, command: str, transaction_id: str) -> str | None:
        """Return the stored response JSON of (command, transaction), if any."""
        row = await self.fetchone(
            "SELECT response FROM command_result WHERE command = ? AND transaction_id = ?",
            (command, transaction_id),
        )
        return row["response"] if row else None

    async def save_command_result(self, command: str, transaction_id: str, response: str) -> bool:
        """Store a response; False when the transaction was already stored (the first one wins)."""
        async with self.write() as conn:
            cur = await conn.execute(
                "INSERT OR IGNORE INTO command_result (command, transaction_id, response, created_at)"
                " VALUES (?, ?, ?, ?)",
                (command, transaction_id, response, clock.now()),
            )
            return bool(cur.rowcount)

    async def purge_command_results(self, older_than: str) -> int:
        """Forget responses stored before a timestamp; returns how many were removed."""
        async with self.write() as conn:
            cur = await conn.execute("DELETE FROM command_result WHERE created_at < ?", (older_than,))
            return cur.rowcount
