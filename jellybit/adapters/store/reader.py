"""A second, read-only connection on its own thread: a whole request's reads in one hop.

aiosqlite sends every `execute`, `fetchall` and cursor close to its thread and back (tens to
hundreds of microseconds each); a `get` made twenty-one such trips and a `list` of fifty one
per row. Here a plain function gets the `sqlite3.Connection` and runs all of a request's
queries synchronously on the reader's thread, inside one read transaction, so the request
costs one trip and sees one consistent snapshot. The connection is `query_only`; WAL lets it
read while the writer writes, and it sees every committed write (the engine publishes only
after committing).
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


class Reader:
    """One `query_only` SQLite connection used by one thread."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._executor: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None
        self.trips = 0            # calls of run() so far (what a request costs, for tests and benchmarks)

    async def open(self) -> None:
        """Open the connection on the reader's thread (the writer has made the file WAL already)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jellybit-reader")
        try:
            self._conn = await self._submit(self._connect)
        except BaseException:
            self._executor.shutdown(wait=True)
            self._executor = None
            raise

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA query_only = ON")
        return conn

    async def _submit(self, call: Callable[[], T]) -> T:
        if self._executor is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, call)

    async def run(self, read: Callable[[sqlite3.Connection], T]) -> T:
        """Run `read(conn)` on the reader's thread inside one read transaction; return its result."""
        conn = self._conn
        if conn is None:
            raise RuntimeError("store is not open")
        self.trips += 1

        def call() -> T:
            conn.execute("BEGIN")
            try:
                return read(conn)
            finally:
                conn.execute("COMMIT")

        return await self._submit(call)

    async def close(self) -> None:
        """Close the connection and end the thread (idempotent)."""
        executor, conn = self._executor, self._conn
        self._executor = self._conn = None
        if executor is None:
            return
        if conn is not None:
            executor.submit(conn.close)
        await asyncio.get_running_loop().run_in_executor(None, executor.shutdown, True)
