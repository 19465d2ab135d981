"""SQLite connection, pragmas, the migration runner and the one-writer transaction helper."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import aiosqlite

from jellybit import clock
from jellybit.adapters.storage_watch import StorageWatch, database_fault
from jellybit.adapters.store.reader import Reader
from jellybit.core.storage import DATABASE, Place, StorageCode
from jellybit.errors import StorageFault

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 5000


@dataclass(frozen=True)
class Migration:
    """One SQL migration file (`migrations/NNNN_name.sql`)."""

    version: int
    name: str
    sql: str


def shipped_migrations() -> Traversable:
    """Where the migrations are: inside an installed wheel (`jellybit/migrations`, put there by hatch's
    force-include), else the source checkout's top-level `migrations/` (an editable install)."""
    inside = resources.files("jellybit").joinpath("migrations")
    if inside.is_dir():
        return inside
    return Path(__file__).resolve().parents[3] / "migrations"


def load_migrations(package: str | None = None) -> list[Migration]:
    """Return the migrations (`NNNN_name.sql`) in version order: the shipped ones, or a package's."""
    folder = shipped_migrations() if package is None else resources.files(package)
    found: list[Migration] = []
    for entry in folder.iterdir():
        filename = entry.name
        if not filename.endswith(".sql"):
            continue
        number, _, rest = filename.partition("_")
        if not number.isdigit() or not rest:
            raise RuntimeError(f"migration file {filename!r} is not named NNNN_name.sql")
        found.append(Migration(int(number), rest[:-4], entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError(f"duplicate migration numbers: {versions}")
    return found


def split_statements(sql: str) -> list[str]:
    """Split a migration into complete statements (so each runs inside our own transaction)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            text = buffer.strip()
            if text and not all(part.strip().startswith("--") for part in text.splitlines()):
                statements.append(text)
            buffer = ""
    if buffer.strip() and not all(
        not part.strip() or part.strip().startswith("--") for part in buffer.splitlines()
    ):
        raise RuntimeError("migration ends with an incomplete statement")
    return statements


async def _enable_wal(conn: aiosqlite.Connection) -> None:
    """Switch a fresh file to WAL, retrying while another connection is doing the same.

    Changing the journal mode of a rollback-journal file needs an exclusive lock, and two
    connections that both hold the shared lock while asking for it would deadlock, so SQLite
    answers one of them `SQLITE_BUSY` at once without consulting the busy timeout (two
    processes starting together, or the CLI migrating while the worker starts). Once the file
    is in WAL the pragma is a read and never conflicts.
    """
    deadline = asyncio.get_running_loop().time() + BUSY_TIMEOUT_MS / 1000
    delay = 0.005
    while True:
        try:
            await conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if asyncio.get_running_loop().time() >= deadline:
                raise
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.2)


class StoreBusy(StorageFault):
    """Another process holds the database (locked past the busy timeout); try again later."""

    def __init__(self, detail: str, message: str | None = None) -> None:
        super().__init__(StorageCode.STORAGE_LOCKED.value, DATABASE, message or (
            f"the database is locked by another process ({detail}); the change was not made"))


class StoreBase:
    """Owns the single aiosqlite connection; every write goes through `write()`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()
        self.reader = Reader(self.path)       # a request's reads in one trip (views.py)
        self.watch: StorageWatch | None = None   # told about storage faults and writes that got through

    @property
    def conn(self) -> aiosqlite.Connection:
        """The open connection (raises if the store is closed)."""
        if self._conn is None:
            raise RuntimeError("store is not open")
        return self._conn

    async def open(self, *, migrate: bool = True) -> None:
        """Open the database file with WAL, foreign keys and a busy timeout; migrate by default."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN IMMEDIATE / COMMIT ourselves.
        conn = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            conn.row_factory = aiosqlite.Row
            await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await _enable_wal(conn)
            await conn.execute("PRAGMA foreign_keys = ON")
            await conn.execute("PRAGMA synchronous = NORMAL")
            self._conn = conn
            if self.watch is not None:
                self.watch.opened()
            if migrate:
                await self.migrate()
            await self.reader.open()
        except BaseException as exc:
            # Never leave the connection's worker thread behind a failed open.
            self._conn = None
            await conn.close()
            fault = self._fault(exc, tell=False) if isinstance(exc, sqlite3.Error) else None
            if fault is not None:
                raise fault from exc      # a read-only or full disk at start, in words (the caller logs it)
            raise

    async def close(self) -> None:
        """Close the connections (idempotent)."""
        await self.reader.close()
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> StoreBase:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @asynccontextmanager
    async def write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One write transaction (`BEGIN IMMEDIATE`), serialized across the process.

        A write the disk refuses is a `StorageFault` with its own code (`storage_full`,
        `storage_locked` — another process held the database past the busy timeout —,
        `storage_read_only`, `storage_missing`), told to the watch once, not a raw sqlite3 error.
        A database file that was moved or deleted is refused before writing: SQLite would write
        on into the unlinked file, and a restart would lose it all.
        """
        async with self._write_lock:
            conn = self.conn
            gone = self.watch.moved() if self.watch is not None else None
            if gone is not None:
                raise gone
            try:
                await conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                except BaseException:
                    await self._roll_back(conn)
                    raise
                await conn.execute("COMMIT")
            except sqlite3.Error as exc:
                fault = self._fault(exc)
                if fault is None:
                    raise
                await self._roll_back(conn)
                raise fault from exc
            if self.watch is not None:
                self.watch.wrote()

    async def _roll_back(self, conn: aiosqlite.Connection) -> None:
        # SQLite rolls back by itself after SQLITE_FULL; a second ROLLBACK would hide the cause.
        if conn.in_transaction:
            try:
                await conn.execute("ROLLBACK")
            except sqlite3.Error:
                log.debug("rollback failed", exc_info=True)

    def _fault(self, exc: sqlite3.Error, *, tell: bool = True) -> StorageFault | None:
        """The storage fault an sqlite3 error is (told to the watch unless `tell` is False), or None."""
        place = (self.watch.database_place() if self.watch is not None
                 else Place(DATABASE, str(self.path), str(self.path.parent)))
        fault = database_fault(exc, place)
        if fault is None:
            return None
        if fault.code == StorageCode.STORAGE_LOCKED:
            fault = StoreBusy(str(exc), fault.message)
        if tell and self.watch is not None:
            self.watch.failed(fault)
        return fault

    async def try_write(self) -> None:
        """A real write that changes nothing (the watch's probe of a locked or read-only database).

        `user_version` is unused by Jellybit (migrations keep their own table); writing it again
        dirties the header page, so a read-only file refuses it where an empty transaction would not.
        """
        async with self.write() as conn:
            async with conn.execute("PRAGMA user_version") as cursor:
                row = await cursor.fetchone()
            await conn.execute(f"PRAGMA user_version = {int(row[0]) if row else 0}")

    async def fetchall(self, sql: str, params: tuple | dict = ()) -> list[aiosqlite.Row]:
        """Run a read query and return every row."""
        async with self.conn.execute(sql, params) as cursor:
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: tuple | dict = ()) -> aiosqlite.Row | None:
        """Run a read query and return the first row, if any."""
        async with self.conn.execute(sql, params) as cursor:
            return await cursor.fetchone()

    async def applied_migrations(self) -> list[int]:
        """Return the versions recorded as applied."""
        row = await self.fetchone(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_migration'"
        )
        if row is None:
            return []
        rows = await self.fetchall("SELECT version FROM schema_migration ORDER BY version")
        return [r["version"] for r in rows]

    async def migrate(self, migrations: Sequence[Migration] | None = None) -> list[int]:
        """Apply pending migrations in order, each with its bookkeeping row in one transaction."""
        pending = sorted(load_migrations() if migrations is None else migrations, key=lambda m: m.version)
        async with self.write() as conn:
            await conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migration ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
        applied: list[int] = []
        for migration in pending:
            async with self.write() as conn:
                # Checked inside the write transaction: another process (the CLI, a second
                # worker) may have applied it since we looked.
                async with conn.execute(
                    "SELECT 1 FROM schema_migration WHERE version = ?", (migration.version,)
                ) as cursor:
                    if await cursor.fetchone() is not None:
                        continue
                for statement in split_statements(migration.sql):
                    await conn.execute(statement)
                await conn.execute(
                    "INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)",
                    (migration.version, migration.name, clock.now()),
                )
            log.info("migration applied", extra={"version": migration.version, "migration": migration.name})
            applied.append(migration.version)
        return applied
