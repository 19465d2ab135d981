"""Storage faults against a real worker, mosquitto and qBittorrent: the database's disk full, its file
moved away, locked past the busy timeout; a library read-only, full or not mounted. Each is answered
with its own code and words, published as one `fault` event (and one more when it ends), shown in
`info.components`, logged once each way without a traceback per request, and loses nothing.

The faults are real: small tmpfs mounts filled up, remounted read-only and unmounted (root is needed;
in CI a failure to mount fails the test)."""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from jellybit.client import JellybitClient
from jellybit.protocol import Command
from tests.support.fault_scenarios import LOCKER, connect, release
from tests.support.fault_stack import FaultStack, RestartableBroker, until, worker_config
from tests.support.qbittorrent import QbittorrentInstance, magnet, seeded_torrent
from tests.support.storage import BusWatch, fill, mount_tmpfs, remount, tmpfs, unmount
from tests.support.worker_process import WorkerProcess, run_cli

DB_KIB = 4096


@dataclass
class Running:
    """The worker with its broker, a client, and a watch on its events and info."""

    stack: FaultStack
    client: JellybitClient
    bus: BusWatch
    qbittorrent: QbittorrentInstance

    def log(self) -> str:
        return self.stack.worker.output()


@pytest.fixture
async def running(tmp_path: Path, qbittorrent: QbittorrentInstance) -> AsyncIterator[Running]:
    """A worker whose database is on a tmpfs of its own (DB_KIB), its libraries on tmpfs too."""
    with tmpfs(tmp_path / "db", DB_KIB) as db_dir:
        broker = RestartableBroker(tmp_path)
        broker.start()
        config = worker_config(tmp_path, broker, qbittorrent, database=db_dir / "jellybit.db")
        for name in ("movies", "series"):
            mount_tmpfs(tmp_path / name, 2048)
        worker = WorkerProcess(config, tmp_path / "worker.log")
        try:
            worker.start()
            stack = FaultStack(config, worker, broker)
            await stack.online()
            client = await connect(stack)
            try:
                async with BusWatch(stack.mqtt) as bus:
                    yield Running(stack, client, bus, qbittorrent)
            finally:
                await client.__aexit__(None, None, None)
        finally:
            worker.close()
            broker.close()
            for name in ("movies", "series"):
                unmount(tmp_path / name)


async def _fault_starts(run: Running, component: str, code: str) -> dict:
    await until(lambda: run.bus.component(component).get("code") == code, within=30,
                what=f"info.components[{component}] to show {code}")
    return run.bus.component(component)


async def _fault_ends(run: Running, component: str) -> None:
    """Wait for the recovery on `info` and `events`; print how long it took (the report's figure)."""
    started = time.monotonic()
    await until(lambda: run.bus.component(component) and run.bus.component(component).get("code") is None
                and run.bus.faults(component) and run.bus.faults(component)[-1]["reason"] == "recovered",
                within=30, what=f"{component} to recover")
    print(f"[storage] {component} {run.bus.faults(component)[0].get('code')}: recovered "
          f"{time.monotonic() - started:.2f} s after the cause was gone")


def _one_fault_each_way(run: Running, component: str, code: str) -> None:
    events = run.bus.faults(component)
    assert [e.get("code") for e in events] == [code, None], events
    assert events[0]["message"] == events[0]["reason"]
    assert events[1]["reason"] == "recovered"
    log = run.log()
    assert log.count(f'"code": "{code}"') == 1, "the fault's start is logged once"
    assert log.count("storage fault over") == 1


async def _add(run: Running, name: str, transaction: str):
    return await run.client.request(Command.ADD, {"source": magnet(name=name), "transaction": transaction},
                                    timeout=30)


async def test_the_database_disk_full_then_freed(running: Running, tmp_path: Path) -> None:
    run = running
    before = await _add(run, "Before.Full", "before")
    assert before.status == "ok", before.error
    tracebacks = run.log().count("Traceback")
    filler = fill(tmp_path / "db")
    try:
        # Commands keep coming while the disk is full: each answered in words, none logged at length.
        answers = [await _add(run, f"While.Full.{n}", f"full-{n}") for n in range(5)]
        # A torrent completes meanwhile: added by hand to qBittorrent, adopted once there is room.
        seeded = seeded_torrent(run.qbittorrent.data_dir, "Adopted.While.Full", {"a.mkv": 20_000})
        with run.qbittorrent.process.admin() as admin:
            reply = admin.post("torrents/add", files={"torrents": ("a.torrent", seeded.torrent)},
                               data={"savepath": str(run.qbittorrent.data_dir), "category": "jellybit"})
            assert reply.text == "Ok."
        await asyncio.sleep(2.0)                         # ten polls meet the full disk
        reads = await run.client.request(Command.LIST, {"limit": 5})
    finally:
        filler_size = filler.stat().st_size
        state_during = await _fault_starts(run, "database", "storage_full")
        filler.unlink()
    for answer in answers:
        assert answer.status == "error"
        assert answer.error.code == "storage_full", answer.error
        assert "the database disk is full" in answer.error.message
        assert str(run.stack.database) in answer.error.message
        assert f"free space on {tmp_path / 'db'}" in answer.error.message
    assert reads.status == "ok"                          # reads keep working
    assert state_during["error"].startswith("the database disk is full")
    assert filler_size > 0
    await _fault_ends(run, "database")
    _one_fault_each_way(run, "database", "storage_full")
    assert run.log().count("Traceback") == tracebacks, "no traceback for a full disk"
    # Nothing was remembered: the same transaction runs now; the torrent that completed is recorded.
    again = await _add(run, "While.Full.0", "full-0")
    assert again.status == "ok", again.error
    hashes = {h.lower() for h in seeded.hashes()}

    def adopted() -> bool:
        import sqlite3
        with sqlite3.connect(run.stack.database) as conn:
            rows = conn.execute("SELECT infohash FROM download_infohash").fetchall()
        return bool(hashes & {r[0] for r in rows})

    await until(adopted, within=30, what="the torrent completed meanwhile to be recorded")
    assert "failed" not in run.stack.states().values()


async def test_the_database_file_moved_away_then_back(running: Running) -> None:
    run = running
    database = run.stack.database
    tracebacks = run.log().count("Traceback")
    away = database.with_name("jellybit.db.away")
    os.rename(database, away)
    try:
        during = await _fault_starts(run, "database", "storage_missing")
        answer = await _add(run, "While.Gone", "gone-1")
    finally:
        os.rename(away, database)
    assert answer.status == "error"
    assert answer.error.code == "storage_missing", answer.error
    assert f"the database file is gone ({database} was moved or deleted" in answer.error.message
    assert during["error"] == answer.error.message
    await _fault_ends(run, "database")
    _one_fault_each_way(run, "database", "storage_missing")
    assert run.log().count("Traceback") == tracebacks
    again = await _add(run, "While.Gone", "gone-1")      # nothing went into the unlinked file
    assert again.status == "ok", again.error
    assert again.data.id in run.stack.states()


async def test_the_database_locked_past_its_timeout(running: Running) -> None:
    run = running
    tracebacks = run.log().count("Traceback")
    locker = await asyncio.create_subprocess_exec(sys.executable, "-c", LOCKER, str(run.stack.database), "30",
                                                  stdin=asyncio.subprocess.PIPE,
                                                  stdout=asyncio.subprocess.PIPE)
    try:
        assert locker.stdout is not None
        assert await locker.stdout.readline() == b"locked\n"
        answer = await _add(run, "While.Locked", "locked-1")
        during = await _fault_starts(run, "database", "storage_locked")
    finally:
        await release(locker)
    assert answer.status == "error"
    assert answer.error.code == "storage_locked", answer.error
    assert "the database is locked by another process" in answer.error.message
    assert "close the other program" in answer.error.message
    assert during["error"] == answer.error.message
    await _fault_ends(run, "database")
    _one_fault_each_way(run, "database", "storage_locked")
    assert run.log().count("Traceback") == tracebacks
    again = await _add(run, "While.Locked", "locked-1")
    assert again.status == "ok", again.error


# ---------------------------------------------------------------- the libraries

async def _in_review(run: Running, name: str) -> str:
    """A complete movie torrent, added and waiting in review (no metadata provider is configured)."""
    seeded = seeded_torrent(run.qbittorrent.data_dir, name, {f"{name}.mkv": 40_000})
    added = await run.client.request(Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()})
    assert added.status == "ok", added.error
    download_id = added.data.id
    await until(lambda: run.stack.states().get(download_id) == "review", within=60,
                what="the complete download to wait in review")
    return download_id


AS_A_MOVIE = {"media_type": "movie", "title": "Storage Test", "year": 2001, "provider": "tmdb",
              "provider_id": "2001"}


async def _apply(run: Running, download_id: str) -> str:
    """Apply as a movie; the state it settles in (review or done)."""
    answer = await run.client.request(Command.APPLY, {"id": download_id, "overrides": AS_A_MOVIE},
                                      timeout=30)
    assert answer.status == "ok", answer.error
    assert answer.data.state == "applying"
    settled = ("review", "done", "failed")
    return await until(lambda: (s := run.stack.states().get(download_id)) in settled and s,
                       within=60, what="the layout to settle")


async def _apply_refused(run: Running, download_id: str, during: dict) -> None:
    """Apply into a library with a current fault: answered with its code and words up front, and the
    download stays in review as it was (no override or reason recorded, nothing laid out)."""
    before = await run.client.request(Command.GET, {"id": download_id})
    answer = await run.client.request(Command.APPLY, {"id": download_id, "overrides": AS_A_MOVIE},
                                      timeout=30)
    after = await run.client.request(Command.GET, {"id": download_id})
    assert answer.status == "error"
    assert answer.error.code == during["code"], answer.error
    assert answer.error.message == during["error"]
    assert after.data.download.state == "review"
    assert after.data.model_dump(exclude={"download"}) == before.data.model_dump(exclude={"download"})
    assert after.data.download.updated_at == before.data.download.updated_at


async def _review_reason(run: Running, download_id: str) -> dict:
    got = await run.client.request(Command.GET, {"id": download_id})
    assert got.status == "ok", got.error
    return {r.code: r.message for r in got.data.recognition.reasons}


async def test_a_library_remounted_read_only(running: Running, tmp_path: Path) -> None:
    run = running
    movies = tmp_path / "movies"
    download_id = await _in_review(run, "Read.Only")
    tracebacks = run.log().count("Traceback")
    remount(movies, "ro")
    try:
        during = await _fault_starts(run, "library.movies", "library_read_only")
        await _apply_refused(run, download_id, during)
        health = await asyncio.to_thread(run_cli, run.stack.config, "healthcheck")
    finally:
        remount(movies, "rw")
    assert health.returncode == 1
    assert f"FAIL  storage library.movies: library_read_only: {during['error']}" in health.stdout
    assert f"FAIL  worker storage library.movies: library_read_only: {during['error']}" in health.stdout
    assert "ok    storage database: " in health.stdout
    assert during["error"] == f"the movies library is read-only ({movies}); remount {movies} read-write"
    await _fault_ends(run, "library.movies")
    _one_fault_each_way(run, "library.movies", "library_read_only")
    assert run.log().count("Traceback") == tracebacks
    assert await _apply(run, download_id) == "done"
    assert "failed" not in run.stack.states().values()


async def test_a_library_full(running: Running, tmp_path: Path) -> None:
    run = running
    movies = tmp_path / "movies"
    download_id = await _in_review(run, "Full.Library")
    tracebacks = run.log().count("Traceback")
    filler = fill(movies)
    try:
        assert await _apply(run, download_id) == "review"     # a copy across devices meets the full disk
        during = await _fault_starts(run, "library.movies", "library_full")
        reasons = await _review_reason(run, download_id)
        await _apply_refused(run, download_id, during)        # the fault is known now: refused up front
    finally:
        filler.unlink()
    assert during["error"] == f"the movies library is full ({movies}); free space on {movies}"
    assert reasons["library_full"] == during["error"]
    assert [p for p in movies.rglob("*") if not p.is_dir()] == [], "the rolled-back layout left no file"
    await _fault_ends(run, "library.movies")
    _one_fault_each_way(run, "library.movies", "library_full")
    assert run.log().count("Traceback") == tracebacks
    assert await _apply(run, download_id) == "done"


async def test_a_library_unmounted(running: Running, tmp_path: Path) -> None:
    run = running
    movies = tmp_path / "movies"
    download_id = await _in_review(run, "Unmounted")
    tracebacks = run.log().count("Traceback")
    unmount(movies)
    try:
        during = await _fault_starts(run, "library.movies", "library_unmounted")
        await _apply_refused(run, download_id, during)
        assert list(movies.iterdir()) == [], "nothing was written to the folder under the mount point"
    finally:
        mount_tmpfs(movies, 2048)
    assert during["error"].startswith(f"the movies library is not mounted ({movies}")
    assert during["error"].endswith("mount it again")
    await _fault_ends(run, "library.movies")
    _one_fault_each_way(run, "library.movies", "library_unmounted")
    assert run.log().count("Traceback") == tracebacks
    assert await _apply(run, download_id) == "done"

    # Unmounted again: an undo is refused in words, and no link is recorded as removed because its
    # file only looked gone.
    unmount(movies)
    try:
        await _fault_starts(run, "library.movies", "library_unmounted")
        undone = await run.client.request(Command.UNDO, {"id": download_id}, timeout=30)
        deleted = await run.client.request(Command.DELETE_TITLE, {"provider": "tmdb", "provider_id": "2001"},
                                           timeout=30)
        detail = await run.client.request(Command.GET, {"id": download_id})
    finally:
        mount_tmpfs(movies, 2048)
    for refused in (undone, deleted):
        assert refused.status == "error"
        assert refused.error.code == "library_unmounted", refused.error
        assert refused.error.message.startswith(f"the movies library is not mounted ({movies}")
    assert detail.data.download.state == "done"
    assert {link.status for link in detail.data.links} == {"copied"}


async def test_a_read_only_database_at_start(tmp_path: Path, qbittorrent: QbittorrentInstance) -> None:
    """The worker cannot run on a database it cannot write: it says so in one line and exits 1."""
    with tmpfs(tmp_path / "db", DB_KIB) as db_dir:
        broker = RestartableBroker(tmp_path)
        config = worker_config(tmp_path, broker, qbittorrent, database=db_dir / "jellybit.db")
        migrated = await asyncio.to_thread(run_cli, config, "migrate")
        assert migrated.returncode == 0, migrated.stderr
        remount(db_dir, "ro")
        worker = WorkerProcess(config, tmp_path / "worker.log")
        worker.start()
        try:
            assert worker.proc is not None
            assert await asyncio.to_thread(worker.proc.wait, 60) == 1
            health = await asyncio.to_thread(run_cli, config, "healthcheck", "--no-bus")
        finally:
            worker.close()
    log = worker.output()
    assert "Traceback" not in log
    assert log.count('"code": "storage_read_only"') == 1
    assert f"cannot start: the database is read-only ({db_dir / 'jellybit.db'}" in log
    assert health.returncode == 1
    assert f"FAIL  storage database: storage_read_only: the database is read-only ({db_dir / 'jellybit.db'}" \
        in health.stdout
