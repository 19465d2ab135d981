"""The storage watch and the store's edge with real SQLite errors and real folders: a full database
(`max_page_count`), a lock held by another connection, a read-only connection, a moved file, a
missing library folder. Each fault is logged and told once when it starts and once when it ends.
The same faults on real full, read-only and unmounted filesystems: tests/faults/test_storage_faults.py."""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
from pathlib import Path

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.storage_watch import StorageWatch, database_fault, library_fault, place_for, snapshot
from jellybit.adapters.store import Store, StoreBusy
from jellybit.config import PathsConfig
from jellybit.core.storage import DATABASE, StorageCode, library_component
from jellybit.errors import StorageFault
from tests.support.storage import tmpfs


class Told:
    """What the watch told: (component, code or None) in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str | None]] = []

    def __call__(self, component: str, fault: StorageFault | None) -> None:
        self.calls.append((component, fault.code if fault else None))


@pytest.fixture
async def watched(tmp_path: Path):
    """A migrated store on a tmpfs of its own (its free space moves only with its writes), with a
    watch over it and two library folders."""
    roots = {"movies": tmp_path / "movies", "series": tmp_path / "series"}
    for root in roots.values():
        root.mkdir()
    told = Told()
    with tmpfs(tmp_path / "db", 8192) as folder:
        store = Store(folder / "jellybit.db")
        watch = StorageWatch(store.path, roots, notify=told)
        store.watch = watch
        watch.try_write = store.try_write
        await store.open()
        try:
            yield store, watch, told
        finally:
            await store.close()


async def _insert(store: Store, rows: int) -> None:
    async with store.write() as conn:
        for n in range(rows):
            await conn.execute("INSERT INTO metadata_cache (key, body, created_at, expires_at) "
                               "VALUES (?, ?, ?, ?)",
                               (f"k{n}-{os.urandom(4).hex()}", "x" * 4000, "2026-01-01T00:00:00Z",
                                "2999-01-01T00:00:00Z"))


async def test_a_full_database_is_one_fault_until_it_has_room(watched,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    store, watch, told = watched
    pages = (await store.fetchone("PRAGMA page_count"))[0]
    await store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    caplog.set_level(logging.INFO, logger="jellybit.adapters.storage_watch")
    for _ in range(3):
        with pytest.raises(StorageFault) as caught:
            await _insert(store, 20)
        assert caught.value.code == "storage_full"
        assert caught.value.message.startswith(f"the database disk is full ({store.path}); free space on ")
    assert await store.fetchone("SELECT count(*) FROM metadata_cache") is not None     # reads keep working
    assert told.calls == [(DATABASE, "storage_full")]
    assert [r.message for r in caplog.records].count(f"storage fault: {caught.value.message}") == 1
    await store.conn.execute("PRAGMA max_page_count = 1073741823")
    watch.reserve = 1 << 50                         # the disk never gained that much room: still on
    assert watch.check_database() is not None
    watch.reserve = 0
    assert watch.check_database() is None
    assert told.calls == [(DATABASE, "storage_full"), (DATABASE, None)]
    assert sum("storage fault over" in r.message for r in caplog.records) == 1


async def test_a_lock_past_the_timeout_is_storage_locked_and_ends_with_a_write(watched) -> None:
    store, watch, told = watched
    await store.conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(store.path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreBusy) as caught:
            await _insert(store, 1)
        assert caught.value.code == "storage_locked"
        assert "the database is locked by another process" in caught.value.message
        await watch.probe()                          # the probe's own write is refused too: no news
        assert told.calls == [(DATABASE, "storage_locked")]
    finally:
        other.execute("ROLLBACK")
        other.close()
    await watch.probe()
    assert told.calls == [(DATABASE, "storage_locked"), (DATABASE, None)]


async def test_a_moved_database_file_refuses_writes_until_it_is_back(watched, tmp_path: Path) -> None:
    store, _watch, told = watched
    away = store.path.with_name("moved.db")
    os.rename(store.path, away)
    try:
        with pytest.raises(StorageFault) as caught:
            await _insert(store, 1)
        assert caught.value.code == "storage_missing"
        assert f"the database file is gone ({store.path} was moved or deleted" in caught.value.message
    finally:
        os.rename(away, store.path)
    await _insert(store, 1)
    assert told.calls == [(DATABASE, "storage_missing"), (DATABASE, None)]


async def test_a_read_only_database_ends_with_a_write_that_gets_through(watched) -> None:
    store, watch, told = watched
    refused = StorageFault("storage_read_only", DATABASE, "the database is read-only (…)")
    watch.failed(refused)
    assert watch.check_database() is not None       # the mount is writable, but that proves nothing
    await watch.probe()                             # its write goes through: over
    assert told.calls == [(DATABASE, "storage_read_only"), (DATABASE, None)]
    assert (await store.fetchone("PRAGMA user_version"))[0] == 0       # the probe changed nothing


def test_sqlite_s_own_errors_are_named(tmp_path: Path) -> None:
    path = tmp_path / "ro.db"
    sqlite3.connect(path).execute("CREATE TABLE t (x)").connection.commit()
    place = place_for(DATABASE, path)
    readonly = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as caught:
        readonly.execute("INSERT INTO t VALUES (1)")
    fault = database_fault(caught.value, place)
    assert fault is not None
    assert fault.code == "storage_read_only"
    assert fault.message.startswith(f"the database is read-only ({path}")
    with pytest.raises(sqlite3.OperationalError) as caught:
        readonly.execute("SELECT * FROM missing_table")
    assert database_fault(caught.value, place) is None       # a mistake in SQL is not a storage fault


@pytest.mark.parametrize(("number", "code"), [(errno.ENOSPC, "library_full"), (errno.EDQUOT, "library_full"),
                                              (errno.EROFS, "library_read_only"), (errno.EACCES, None)])
def test_library_errors_are_named(tmp_path: Path, number: int, code: str | None) -> None:
    place = place_for(library_component("movies"), tmp_path)
    fault = library_fault(OSError(number, os.strerror(number)), place)
    assert (fault.code if fault else None) == code


async def test_a_missing_library_folder_is_unmounted_until_it_is_back(watched, tmp_path: Path) -> None:
    _store, watch, told = watched
    series = tmp_path / "series"
    series.rmdir()
    fault = watch.check_library("series")
    assert fault is not None
    assert fault.code == StorageCode.LIBRARY_UNMOUNTED
    assert fault.message == (f"the series library is not mounted ({series}, the folder is missing); "
                             "mount it again")
    assert watch.check_library("series") is not None
    series.mkdir()
    assert watch.check_library("series") is None
    assert told.calls == [("library.series", "library_unmounted"), ("library.series", None)]
    assert watch.status() == {DATABASE: None, "library.movies": None, "library.series": None}


def test_healthcheck_s_snapshot_sees_a_missing_library(tmp_path: Path) -> None:
    (tmp_path / "movies").mkdir()
    found = snapshot(tmp_path / "jellybit.db", {"movies": tmp_path / "movies", "series": tmp_path / "series"})
    assert found[DATABASE][0] is None
    assert found["library.movies"][0] is None
    fault, _free = found["library.series"]
    assert fault is not None
    assert fault.code == "library_unmounted"


async def test_reconciliation_does_not_believe_a_library_that_is_not_there(watched, tmp_path: Path) -> None:
    """Files under a library that is not mounted only look gone: the check raises instead of saying so."""
    store, watch, _told = watched
    paths = PathsConfig(downloads=tmp_path, movies=tmp_path / "movies", series=tmp_path / "series")
    layouter = LayoutEngine(store, paths, watch=watch)
    assert await layouter.targets_present_many([]) == {}
    (tmp_path / "series").rmdir()
    with pytest.raises(StorageFault) as caught:
        await layouter.targets_present_many([])
    assert caught.value.code == "library_unmounted"
