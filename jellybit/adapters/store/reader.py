"""A second, read-only connection on its own thread: a whole request's reads in one hop.

aiosqlite sends every `execute`, `fetchall` and cursor close to its thread and back (tens to
hundreds of microseconds each); a `get` made twenty-one such trips and a `list` of fifty one
per row. Here a plain function gets the `sqlite3.Connection` and runs all of a request's
queries synchronously on the reader's thread, inside one read transaction, so the request
costs one trip and sees one consistent snapshot. The connection is `query_only`; WAL lets it
read while the writer writes, and it sees every committed write (the engine publishes only
after committing).

A read its caller knows to be small (a `get` of a download with a small plan, a `list` page
without a text search) may run on the event loop's own thread instead, on a second `query_only`
connection that never waits for a lock: the two hops to the reader's thread and back cost about
as much as the read itself (0.3-0.5 ms of a round trip). A read that finds itself too big
(`TooBig`) or SQLite busy goes to the reader's thread as before.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

BUSY_TIMEOUT_MS = 5000


class TooBig(Exception):
    """An inline read found more than it may read on the event loop; it runs on the reader's thread."""


class Reader:
    """One `query_only` SQLite connection used by one thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self._inline: sqlite3.Connection | None = None      # the event loop's own, never waits for a lock
        self.trips = 0            # calls of run() so far (what a request costs, for tests and benchmarks)
        self.inline = 0           # of those, the ones answered on the event loop's thread

    async def open(self) -> None:
        """Open the connection on the reader's thread (the writer has made the file WAL already)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jellybit-reader")
        try:
            self._conn = await self._submit(self._connect)
            self._inline = self._connect(busy_timeout_ms=0, same_thread=True)
        except BaseException:
            if self._conn is not None:
                await self._submit(self._conn.close)
                self._conn = None
            self._executor.shutdown(wait=True)
            self._executor = None
            raise

    def _connect(self, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
                 same_thread: bool = False) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=same_thread)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
        conn.execute("PRAGMA query_only = ON")
        return conn

    async def _submit(self, call: Callable[[], T]) -> T:
        if self._executor is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def run(self, read: Callable[[sqlite3.Connection], T],
                  inline: Callable[[sqlite3.Connection], T] | None = None) -> T:
        """Run `read(conn)` on the reader's thread inside one read transaction; return its result.

        With `inline`, that read is tried first on the event loop's thread (it raises `TooBig` past
        what it may read there); a busy database or `TooBig` sends `read` to the reader's thread.
        """
        conn = self._conn
        if conn is None:
            raise RuntimeError("store is not open")
        self.trips += 1
        if inline is not None and self._inline is not None:
            try:
                result = _in_transaction(self._inline, inline)
            except TooBig:
                pass
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode & 0xFF not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise
            else:
                self.inline += 1
                return result
        return await self._submit(lambda: _in_transaction(conn, read))

    async def close(self) -> None:
        """Close the connections and end the thread (idempotent)."""
        executor, conn, inline = self._executor, self._conn, self._inline
        self._executor = self._conn = self._inline = None
        if inline is not None:
            inline.close()
        if executor is None:
            return
        if conn is not None:
            executor.submit(conn.close)
        await asyncio.get_running_loop().run_in_executor(None, executor.shutdown, True)


def _in_transaction(conn: sqlite3.Connection, read: Callable[[sqlite3.Connection], T]) -> T:
    """`read(conn)` inside one read transaction (one consistent snapshot)."""
    conn.execute("BEGIN")
    try:
        return read(conn)
    finally:
        conn.execute("COMMIT")
