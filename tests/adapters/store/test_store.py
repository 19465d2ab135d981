"""The SQLite store: migrations, pragmas, conventions and the guarded download methods."""

from __future__ import annotations

import asyncio
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import threading
import uuid
import zipfile
from importlib.util import find_spec
from pathlib import Path

import pytest

from jellybit import ident
from jellybit.adapters.store import Store, load_migrations
from jellybit.adapters.store.base import BUSY_TIMEOUT_MS, shipped_migrations, split_statements
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.states import ACTIVE_STATES, Actor, State
from jellybit.errors import Conflict, InvalidState, NotFound

ROOT = Path(__file__).resolve().parents[3]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
ULID = re.compile(r"^[0-9a-hjkmnp-tv-z]{26}$")


def h1(n: int) -> Infohash:
    """A deterministic v1 hash."""
    return Infohash(f"{n:040x}", "v1")


def h2(n: int) -> Infohash:
    """A deterministic v2 hash."""
    return Infohash(f"{n:064x}", "v2")


def new(*hashes: Infohash, torrent: bytes | None = None, name: str = "x") -> NewDownload:
    """A NewDownload with these hashes."""
    kind = "torrent" if torrent is not None else "magnet"
    return NewDownload(kind, f"ref-{name}", name, "", tuple(hashes), torrent_bytes=torrent)


async def tables(store: Store) -> set[str]:
    """Every user table of the database."""
    rows = await store.fetchall("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {r["name"] for r in rows if not r["name"].startswith("sqlite_")}


async def count(store: Store, table: str) -> int:
    """Rows in a table (name from our own list, never from input)."""
    row = await store.fetchone(f"SELECT COUNT(*) AS n FROM {table}")
    assert row is not None
    return row["n"]


async def snapshot(store: Store) -> dict[str, list[tuple]]:
    """Every row of every table, to prove that nothing changed."""
    result = {}
    for table in sorted(await tables(store)):
        rows = await store.fetchall(f"SELECT * FROM {table} ORDER BY 1")
        result[table] = [tuple(r) for r in rows]
    return result


async def active_owners(store: Store) -> dict[str, set[str]]:
    """infohash -> ids of the active downloads that own it."""
    marks = ",".join("?" for _ in ACTIVE_STATES)
    rows = await store.fetchall(
        "SELECT h.infohash, d.id FROM download_infohash h JOIN download d ON d.id = h.download_id"
        f" WHERE d.state IN ({marks})", tuple(s.value for s in ACTIVE_STATES),
    )
    owners: dict[str, set[str]] = {}
    for row in rows:
        owners.setdefault(row["infohash"], set()).add(row["id"])
    return owners


# ---------------------------------------------------------------- migrations


async def test_fresh_file_gets_the_schema_and_bookkeeping_rows(tmp_path: Path) -> None:
    """An empty file gets every migration, one bookkeeping row each."""
    store = Store(tmp_path / "new" / "jellybit.db")
    await store.open()
    try:
        shipped = load_migrations()
        assert shipped[0].version == 1
        rows = await store.fetchall("SELECT version, name, applied_at FROM schema_migration ORDER BY version")
        assert [(r["version"], r["name"]) for r in rows] == [(m.version, m.name) for m in shipped]
        assert all(TIMESTAMP.match(r["applied_at"]) for r in rows)
        expected = {"download", "download_infohash", "download_torrent", "recognition", "metadata_candidate",
                    "hint", "override", "file_link", "state_transition", "schema_migration"}
        assert expected <= await tables(store)
    finally:
        await store.close()


async def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    """Opening again (or migrating again) is a no-op: same rows, same schema."""
    path = tmp_path / "jellybit.db"
    store = Store(path)
    await store.open()
    before = await snapshot(store)
    schema = await store.fetchall("SELECT type, name, sql FROM sqlite_master ORDER BY name")
    await store.close()
    store = Store(path)
    await store.open(migrate=False)
    try:
        assert await store.migrate() == []
        assert await store.migrate() == []
        assert await snapshot(store) == before
        assert await store.fetchall("SELECT type, name, sql FROM sqlite_master ORDER BY name") == schema
    finally:
        await store.close()


async def test_pragmas(store: Store) -> None:
    """WAL, foreign keys and a busy timeout are on for the connection."""
    assert (await store.fetchone("PRAGMA journal_mode"))[0] == "wal"
    assert (await store.fetchone("PRAGMA foreign_keys"))[0] == 1
    assert (await store.fetchone("PRAGMA busy_timeout"))[0] == BUSY_TIMEOUT_MS > 0


def migration_package(root: Path, files: dict[str, str]) -> str:
    """A throwaway importable package holding migration files; returns its name."""
    name = f"migrations_{uuid.uuid4().hex[:12]}"
    package = root / name
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""Test migrations."""\n')
    for filename, sql in files.items():
        (package / filename).write_text(sql, encoding="utf-8")
    return name


async def test_failing_migration_rolls_back_with_its_bookkeeping_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A migration failing halfway leaves neither its tables nor its bookkeeping row behind."""
    monkeypatch.syspath_prepend(str(tmp_path / "pkgs"))
    init = shipped_migrations().joinpath("0001_init.sql").read_text(encoding="utf-8")
    broken = (
        "CREATE TABLE extra (a TEXT NOT NULL);\n"
        "INSERT INTO extra (a) VALUES ('half');\n"
        "INSERT INTO no_such_table VALUES (1);\n"
    )
    package = migration_package(tmp_path / "pkgs", {"0001_init.sql": init, "0002_extra.sql": broken})
    store = Store(tmp_path / "jellybit.db")
    await store.open(migrate=False)
    try:
        with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
            await store.migrate(load_migrations(package))
        assert await store.applied_migrations() == [1]
        assert "extra" not in await tables(store)
        assert not store.conn.in_transaction
        (tmp_path / "pkgs" / package / "0002_extra.sql").write_text(broken.splitlines()[0] + "\n")
        assert await store.migrate(load_migrations(package)) == [2]
        assert "extra" in await tables(store)
        assert await count(store, "extra") == 0
    finally:
        await store.close()


def test_load_migrations_orders_and_validates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files sort by number, other files are ignored, bad names and duplicates are refused."""
    monkeypatch.syspath_prepend(str(tmp_path))
    good = migration_package(tmp_path, {"0010_later.sql": "SELECT 1;", "0002_b.sql": "SELECT 2;",
                                        "README.txt": "not a migration"})
    assert [(m.version, m.name) for m in load_migrations(good)] == [(2, "b"), (10, "later")]
    with pytest.raises(RuntimeError, match=r"not named NNNN_name\.sql"):
        load_migrations(migration_package(tmp_path, {"init.sql": "SELECT 1;"}))
    with pytest.raises(RuntimeError, match="duplicate migration numbers"):
        load_migrations(migration_package(tmp_path, {"0001_a.sql": "SELECT 1;", "0001_b.sql": "SELECT 1;"}))


def test_split_statements_keeps_triggers_strings_and_drops_comments() -> None:
    """Statements are split where SQLite says they end, not at every semicolon."""
    sql = textwrap.dedent("""\
        -- a comment; with a semicolon
        CREATE TABLE t (a TEXT DEFAULT 'x;y');
        CREATE TRIGGER tr AFTER INSERT ON t BEGIN
            UPDATE t SET a = 'z;'; -- inside
        END;
        -- trailing comment
    """)
    statements = split_statements(sql)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER")
    assert statements[1].endswith("END;")
    with pytest.raises(RuntimeError, match="incomplete statement"):
        split_statements("CREATE TABLE t (a TEXT")


def test_wheel_ships_the_migrations_and_migrates_when_installed(tmp_path: Path) -> None:
    """The built wheel contains every migration, and an installed copy migrates a new file."""
    if find_spec("hatchling") is None:
        pytest.fail("hatchling (the build backend) must be installed to build the wheel offline")
    dist, site = tmp_path / "dist", tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
                   check=True, timeout=180, cwd=tmp_path)
    [wheel] = dist.glob("jellybit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"jellybit/migrations/{p.name}" for p in (ROOT / "migrations").glob("*.sql")}
    assert "jellybit/migrations/0001_init.sql" in shipped
    assert shipped <= names
    subprocess.run([*pip, "install", "--no-deps", "--no-compile", "--target", str(site), str(wheel)],
                   check=True, timeout=180, cwd=tmp_path)
    script = textwrap.dedent(f"""\
        import asyncio, sys
        sys.path.insert(0, {str(site)!r})
        import jellybit
        assert jellybit.__file__.startswith({str(site)!r}), jellybit.__file__
        from jellybit.adapters.store import Store

        async def main():
            store = Store({str(tmp_path / "wheel.db")!r})
            await store.open()
            print(await store.applied_migrations())
            await store.close()

        asyncio.run(main())
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str([m.version for m in load_migrations()])
    shutil.rmtree(site)


# ---------------------------------------------------------------- conventions


async def test_ids_timestamps_and_schema_conventions(store: Store) -> None:
    """Lowercase ULID keys, fixed-width RFC 3339 Z times, no DEFAULT times, cascading children.

    The layout journal's own numbers are the exception (migration 0004): `file_link` rows and
    `link_folder` entries are numbered, and a folder, shared by every link under it, is never
    deleted while a link names it (its references do not cascade: deleting it is refused).
    """
    created = await store.create_download_if_no_active(new(h1(1), h2(1), torrent=b"d4:infode"))
    await store.transition(created.download.id, State.DOWNLOADING, reason="in qBittorrent",
                           actor=Actor.WORKER)
    download = await store.get_download(created.download.id)
    assert ULID.match(download.id)
    assert ident.is_id(download.id)
    assert download.qbt_tag == f"jellybit-{download.id}"
    for table in await tables(store):
        columns = await store.fetchall(f"PRAGMA table_info({table})")
        for column in columns:
            if column["name"].endswith("_at"):
                assert column["dflt_value"] is None, f"{table}.{column['name']} has a DEFAULT"
        for fk in await store.fetchall(f"PRAGMA foreign_key_list({table})"):
            expected = "NO ACTION" if fk["table"] == "link_folder" else "CASCADE"
            assert fk["on_delete"] == expected, f"{table}.{fk['from']} on delete {fk['on_delete']}"
        time_columns = [c["name"] for c in columns if c["name"].endswith("_at")]
        for row in await store.fetchall(f"SELECT * FROM {table}"):
            for name in time_columns:
                assert row[name] is None or TIMESTAMP.match(row[name]), (table, name, row[name])
            if "id" in row.keys() and table not in ("schema_migration", "file_link", "link_folder"):
                assert ULID.match(row["id"]), (table, row["id"])
    assert download.created_at < download.updated_at


async def test_deleting_a_download_cascades_to_every_child(store: Store) -> None:
    """Deleting the download row removes its hashes, torrent, history, recognitions and links."""
    download = (await store.create_download_if_no_active(new(h1(2), torrent=b"d4:infode"))).download
    now = "2026-01-01T00:00:00.000000Z"
    rec, batch = ident.new_id(), ident.new_id()
    statements = [
        ("INSERT INTO recognition (id, download_id, attempt_no, is_current, reasons, created_at)"
         " VALUES (?, ?, 1, 1, '[]', ?)", (rec, download.id, now)),
        ("INSERT INTO metadata_candidate (id, recognition_id, provider, provider_id, chosen, created_at)"
         " VALUES (?, ?, 'tmdb', '1', 0, ?)", (ident.new_id(), rec, now)),
        ("INSERT INTO hint (id, download_id, text, created_at) VALUES (?, ?, 'дубляж', ?)",
         (ident.new_id(), download.id, now)),
        ("INSERT INTO override (id, download_id, field, value, created_at) VALUES (?, ?, 'year', '1', ?)",
         (ident.new_id(), download.id, now)),
        ("INSERT INTO apply_batch (id, download_id, status, created_at) VALUES (?, ?, 'open', ?)",
         (batch, download.id, now)),
        ("INSERT INTO link_folder (id, path) VALUES (1, '/media/Фарго')", ()),
        ("INSERT INTO file_link (batch, src_folder, src_name, dst_folder, dst_name, kind, status, size)"
         " VALUES ((SELECT seq FROM apply_batch WHERE id = ?), 1, 's', 1, 'd', 'video', 'linked', 1)",
         (batch,)),
    ]
    async with store.write() as conn:
        for sql, params in statements:
            await conn.execute(sql, params)
    # link_folder is a dictionary of folder names shared by every download's links: not a child.
    children = [t for t in await tables(store)
                if t not in ("download", "schema_migration", "link_folder") and await count(store, t)]
    assert {"download_infohash", "download_torrent", "state_transition", "recognition",
            "metadata_candidate", "hint", "override", "apply_batch", "file_link"} <= set(children)
    async with store.write() as conn:
        await conn.execute("DELETE FROM download WHERE id = ?", (download.id,))
    for table in children:
        assert await count(store, table) == 0, table


# ---------------------------------------------------------------- create / join


async def test_create_then_join_merges_hashes(store: Store) -> None:
    """A new hash set creates a queued download with its history row; an overlapping one joins it."""
    first = await store.create_download_if_no_active(new(h1(10), torrent=b"d4:infode"), reason="added",
                                                     actor=Actor.HUMAN, qbt_tag_prefix="jb-")
    assert first.created
    download = first.download
    assert download.state is State.QUEUED
    assert download.qbt_tag == f"jb-{download.id}"
    assert await store.torrent_bytes(download.id) == b"d4:infode"
    [row] = await store.transitions(download.id)
    assert (row.from_state, row.to_state, row.reason, row.actor) == (None, State.QUEUED, "added", Actor.HUMAN)

    joined = await store.create_download_if_no_active(new(h1(10), h2(10)))
    assert not joined.created
    assert joined.download.id == download.id
    assert joined.added_hashes == (h2(10).value,)
    assert joined.download.hashes() == {h1(10).value, h2(10).value}
    assert joined.download.updated_at > download.updated_at
    again = await store.create_download_if_no_active(new(h2(10)))
    assert (again.created, again.added_hashes) == (False, ())
    assert again.download.updated_at == joined.download.updated_at
    assert len(await store.transitions(download.id)) == 1
    assert await count(store, "download") == 1


async def test_join_never_gives_a_hash_two_active_owners(store: Store) -> None:
    """A source matching two active downloads joins one and leaves the other's hash alone."""
    a = (await store.create_download_if_no_active(new(h1(20)))).download
    b = (await store.create_download_if_no_active(new(h2(20)))).download
    joined = await store.create_download_if_no_active(new(h1(20), h2(20), h1(21)))
    assert joined.download.id == min(a.id, b.id)
    assert set(joined.added_hashes) == {h1(21).value}
    assert all(len(ids) == 1 for ids in (await active_owners(store)).values())


async def test_settled_download_does_not_block_a_new_one(store: Store) -> None:
    """Once settled, the same hash creates a new download; the old one is reported."""
    old = (await store.create_download_if_no_active(new(h1(30)))).download
    await store.transition(old.id, State.FAILED, reason="qbt_add_failed", actor=Actor.WORKER)
    fresh = await store.create_download_if_no_active(new(h1(30)))
    assert fresh.created
    assert fresh.download.id != old.id
    assert await store.settled_with_hashes([h1(30).value]) == [old.id]
    assert await store.settled_with_hashes([h1(30).value], exclude=old.id) == []


async def test_concurrent_creates_on_one_store(store: Store) -> None:
    """Many simultaneous creates with overlapping hashes: every hash ends with exactly one active owner."""
    rng = random.Random(7)
    pool = [h1(100 + i) for i in range(12)] + [h2(100 + i) for i in range(12)]
    sources = [new(*rng.sample(pool, rng.randint(1, 3))) for _ in range(40)]
    results = await asyncio.gather(*(store.create_download_if_no_active(s) for s in sources))
    owners = await active_owners(store)
    assert set(owners) == {h.value for s in sources for h in s.infohashes}
    assert all(len(ids) == 1 for ids in owners.values())
    created = [r for r in results if r.created]
    assert await count(store, "download") == len(created) == await count(store, "state_transition")
    for source, result in zip(sources, results, strict=True):
        assert result.created or set(result.download.hashes()) & {h.value for h in source.infohashes}


async def test_concurrent_creates_over_separate_connections(tmp_path: Path) -> None:
    """Four connections migrating and creating the same hashes at once: one active download per hash."""
    path = tmp_path / "shared.db"
    stores = [Store(path) for _ in range(4)]
    try:
        await asyncio.gather(*(s.open() for s in stores))
        for round_no in range(5):
            sources = [new(h1(200 + round_no), h2(200 + round_no)) if i % 2 else new(h1(200 + round_no))
                       for i in range(len(stores))]
            results = await asyncio.gather(
                *(s.create_download_if_no_active(src) for s, src in zip(stores, sources, strict=True))
            )
            assert sum(r.created for r in results) == 1
            assert len({r.download.id for r in results}) == 1
            final = await stores[0].get_download(results[0].download.id)
            assert final.hashes() == {h1(200 + round_no).value, h2(200 + round_no).value}
        assert await stores[0].applied_migrations() == [m.version for m in load_migrations()]
        assert all(len(ids) == 1 for ids in (await active_owners(stores[0])).values())
    finally:
        await asyncio.gather(*(s.close() for s in stores))


async def test_concurrent_first_opens_of_a_new_file_all_succeed(tmp_path: Path) -> None:
    """Processes starting together on a file that does not exist yet all get WAL and the schema.

    Switching a new file to WAL can deadlock two connections, and SQLite then answers one of
    them "database is locked" without waiting for the busy timeout; `open()` retries it.
    """
    for round_no in range(40):
        stores = [Store(tmp_path / f"fresh-{round_no}.db") for _ in range(4)]
        try:
            await asyncio.gather(*(s.open() for s in stores))
            modes = [(await s.fetchone("PRAGMA journal_mode"))[0] for s in stores]
            assert modes == ["wal"] * 4
            assert await stores[3].applied_migrations() == [m.version for m in load_migrations()]
        finally:
            await asyncio.gather(*(s.close() for s in stores))


async def test_failed_open_leaves_no_connection_behind(tmp_path: Path) -> None:
    """An open that fails (the file is not a database) closes its connection and its thread."""
    path = tmp_path / "not-a-db.db"
    path.write_bytes(b"this is not an SQLite file, just text that someone left here\n" * 64)
    store = Store(path)
    before = {t.ident for t in threading.enumerate()}
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        await store.open()
    with pytest.raises(RuntimeError, match="not open"):
        _ = store.conn
    for _ in range(100):
        leaked = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()]
        if not leaked:
            break
        await asyncio.sleep(0.01)
    assert leaked == []


# ---------------------------------------------------------------- guards


async def test_activate_refuses_while_another_active_owns_a_hash(store: Store) -> None:
    """Retry of a settled download is refused (Conflict) before any change while the hash is taken."""
    old = (await store.create_download_if_no_active(new(h1(40), h2(40)))).download
    await store.transition(old.id, State.FAILED, reason="stalled", actor=Actor.WORKER)
    other = (await store.create_download_if_no_active(new(h2(40)))).download
    before = await snapshot(store)
    with pytest.raises(Conflict, match=other.id):
        await store.activate_if_no_other_active(old.id, State.QUEUED, reason="retry", actor=Actor.HUMAN)
    assert await snapshot(store) == before
    await store.transition(other.id, State.CANCELLED, reason="cancel", actor=Actor.HUMAN)
    retried, row = await store.activate_if_no_other_active(
        old.id, State.QUEUED, reason="retry", actor=Actor.HUMAN,
        fields={"retried_at": "2026-01-01T00:00:00.000000Z"},
    )
    assert retried.state is State.QUEUED
    assert retried.settled_at is None
    assert retried.retried_at == "2026-01-01T00:00:00.000000Z"
    assert (row.from_state, row.to_state, row.reason) == (State.FAILED, State.QUEUED, "retry")
    with pytest.raises(NotFound):
        await store.activate_if_no_other_active(ident.new_id(), State.QUEUED, reason="retry",
                                                actor=Actor.HUMAN)


async def test_add_infohashes_guard(store: Store) -> None:
    """Adding a hash another active download owns is refused, even next to one we own."""
    a = (await store.create_download_if_no_active(new(h1(50)))).download
    b = (await store.create_download_if_no_active(new(h2(50)))).download
    before = await snapshot(store)
    for target, hashes in ((a.id, [h1(50), h2(50)]), (b.id, [h1(50)]), (a.id, [h2(50), h1(51)])):
        with pytest.raises(Conflict):
            await store.add_infohashes(target, hashes)
        assert await snapshot(store) == before
    with pytest.raises(NotFound):
        await store.add_infohashes(ident.new_id(), [h1(52)])
    assert await store.add_infohashes(a.id, [h1(50), h2(51)]) == (h2(51).value,)
    assert await store.add_infohashes(a.id, [h2(51)]) == ()
    assert (await store.get_download(a.id)).hashes() == {h1(50).value, h2(51).value}


async def test_transition_backstop_and_table(store: Store) -> None:
    """settled -> active only through the guard; transitions outside the table change nothing."""
    failed = (await store.create_download_if_no_active(new(h1(60)))).download
    await store.transition(failed.id, State.FAILED, reason="stalled", actor=Actor.WORKER)
    queued = (await store.create_download_if_no_active(new(h1(61)))).download
    before = await snapshot(store)
    with pytest.raises(InvalidState, match="activate_if_no_other_active"):
        await store.transition(failed.id, State.QUEUED, reason="sneaky", actor=Actor.HUMAN)
    with pytest.raises(InvalidState, match="not possible"):
        await store.transition(queued.id, State.DONE, reason="not in the table", actor=Actor.WORKER)
    with pytest.raises(InvalidState, match="expected review"):
        await store.transition(queued.id, State.CANCELLED, reason="x", actor=Actor.HUMAN,
                               expected=State.REVIEW)
    with pytest.raises(ValueError, match="not updatable"):
        await store.transition(queued.id, State.CANCELLED, reason="x", actor=Actor.HUMAN,
                               fields={"state": "done"})
    with pytest.raises(NotFound):
        await store.transition(ident.new_id(), State.DOWNLOADING, reason="x", actor=Actor.WORKER)
    assert await snapshot(store) == before
    settled, row = await store.transition(queued.id, State.CANCELLED, reason="cancel", actor=Actor.HUMAN,
                                          expected=[State.QUEUED, State.REVIEW])
    assert settled.state is State.CANCELLED
    assert settled.settled_at is not None
    assert (row.from_state, row.to_state, row.actor) == (State.QUEUED, State.CANCELLED, Actor.HUMAN)
