"""Migration 0004 carries an existing layout journal into the compact one, row for row."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jellybit.adapters.store import Store, load_migrations
from jellybit.adapters.store.links import split_path
from jellybit.core.links import BatchStatus, LinkStatus, NewLink

NOW = "2026-01-01T00:00:0{}.000000Z"


def _old_journal(path: Path, links: list[tuple[str, str, str, str]]) -> None:
    """A database at migration 0003: one download, two batches, these (batch, src, dst, status) rows."""
    async def migrate() -> None:
        store = Store(path)
        await store.open(migrate=False)
        try:
            await store.migrate([m for m in load_migrations() if m.version <= 3])
        finally:
            await store.close()

    asyncio.run(migrate())
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO download (id, source_type, source_ref, display_name, context, state,"
                     " qbt_tag, created_at, updated_at)"
                     " VALUES ('d1', 'magnet', 'm', 'Фарго', '', 'done', 't', ?, ?)",
                     (NOW.format(0), NOW.format(0)))
        batch = "INSERT INTO apply_batch VALUES (?, 'd1', ?, ?, ?)"
        conn.execute(batch, ("b2", "committed", NOW.format(2), NOW.format(3)))
        conn.execute(batch, ("b1", "undone", NOW.format(1), NOW.format(2)))
        for n, (batch, src, dst, status) in enumerate(links):
            # Ids that sort against creation order: the migration numbers rows by created_at.
            conn.execute(
                "INSERT INTO file_link VALUES (?, 'd1', ?, ?, ?, 'video', ?, 10, 1, ?, 5, ?, ?, ?, ?)",
                (f"z{len(links) - n:04d}", batch, src, dst, status, 100 + n,
                 100 + n if status == "linked" else None, "a note" if status == "skipped" else None,
                 NOW.format(4) + f"{n:06d}", NOW.format(4)),
            )


async def _read(path: Path):
    store = Store(path)
    await store.open()
    try:
        return (await store.links_for_download("d1"), await store.batches_for_download("d1"), store)
    finally:
        await store.close()


def test_an_old_journal_reads_the_same_after_the_migration(tmp_path: Path) -> None:
    season = "/media/series/Фарго (2014)/Season 01"
    links = [
        ("b1", "/downloads/Fargo.S01/Fargo.S01E01.mkv", f"{season}/Фарго S01E01.mkv", "removed"),
        ("b2", "/downloads/Fargo.S01/Fargo.S01E01.mkv", f"{season}/Фарго S01E01.mkv", "linked"),
        ("b2", "/downloads/Fargo.S01/Subs/2_Russian.srt", f"{season}/Фарго S01E01.ru.srt", "linked"),
        ("b2", "/top-level-file.mkv", "/media/movies/A (2001)/A (2001).mkv", "skipped"),
    ]
    db = tmp_path / "jellybit.db"
    _old_journal(db, links)

    rows, batches, _ = asyncio.run(_read(db))

    assert [(r.apply_batch_id, r.src_path, r.dst_path, r.status.value) for r in rows] == links
    assert [r.id for r in rows] == [1, 2, 3, 4]         # numbered in the order they were journaled
    assert {r.download_id for r in rows} == {"d1"}
    assert [r.src_ino for r in rows] == [100, 101, 102, 103]
    assert [r.dst_ino for r in rows] == [None, 101, 102, None]
    assert rows[3].message == "a note"
    assert rows[3].status is LinkStatus.SKIPPED
    assert [(b.id, b.status) for b in batches] == [("b2", BatchStatus.COMMITTED), ("b1", BatchStatus.UNDONE)]
    with sqlite3.connect(db) as conn:
        folders = [r[0] for r in conn.execute("SELECT path FROM link_folder ORDER BY path")]
        assert folders == sorted({"/downloads/Fargo.S01", "/downloads/Fargo.S01/Subs", "", season,
                                  "/media/movies/A (2001)"})
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_migrated_journal_takes_new_batches_after_its_rows(tmp_path: Path) -> None:
    db = tmp_path / "jellybit.db"
    await asyncio.to_thread(_old_journal, db, [
        ("b2", "/downloads/A/a.mkv", "/media/movies/A (2001)/A (2001).mkv", "linked")])
    store = Store(db)
    await store.open()
    try:
        batch, rows = await store.open_batch("d1", [
            NewLink("/downloads/A/a.mkv", "/media/movies/A (2001)/A (2001).mkv", "video", 10, 1, 100, 5)])
        assert rows[0].id == 2
        assert rows[0].apply_batch_id == batch.id
        assert await store.commit_batch(batch.id, pending_laid=True) == 1      # supersedes the migrated row
        statuses = [r.status for r in await store.links_at("/media/movies/A (2001)/A (2001).mkv")]
        assert statuses == [LinkStatus.SUPERSEDED, LinkStatus.LINKED]
    finally:
        await store.close()


_NAME = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)),
                min_size=1, max_size=12)
_PATH = st.lists(_NAME, min_size=1, max_size=4).map(lambda parts: "/" + "/".join(parts))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(paths=st.lists(st.tuples(_PATH, _PATH), min_size=1, max_size=5))
def test_the_migration_splits_paths_as_the_store_does(tmp_path_factory, paths) -> None:
    """The migration's SQL split (rtrim) and the store's (rpartition) agree on any absolute path."""
    db = tmp_path_factory.mktemp("split") / "jellybit.db"
    _old_journal(db, [("b2", src, dst, "linked") for src, dst in paths])
    rows, _, _ = asyncio.run(_read(db))
    assert [(r.src_path, r.dst_path) for r in rows] == paths
    with sqlite3.connect(db) as conn:
        stored = conn.execute(
            "SELECT sf.path, fl.src_name, df.path, fl.dst_name FROM file_link fl"
            " JOIN link_folder sf ON sf.id = fl.src_folder JOIN link_folder df ON df.id = fl.dst_folder"
            " ORDER BY fl.id").fetchall()
    assert stored == [(*split_path(src), *split_path(dst)) for src, dst in paths]
