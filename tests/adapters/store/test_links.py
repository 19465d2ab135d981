"""The layout journal's SQL: rows come back exactly as written, in planned order."""

from __future__ import annotations

import pytest

from jellybit.core.links import LinkStatus, LinkUpdate, NewLink
from jellybit.core.models import NewDownload


async def _download_id(store) -> str:
    created = await store.create_download_if_no_active(NewDownload("magnet", "magnet:?xt=rows", "rows", ""))
    return created.download.id


async def test_open_batch_rows_read_back_identically_in_planned_order(store):
    download_id = await _download_id(store)
    links = [
        NewLink(f"/d/src{n:04d}.mkv", f"/s/Show/Season 01/Show S01E{n:03d}.mkv", "video", 10 + n,
                src_dev=1, src_ino=1000 + n, src_mtime_ns=7)
        for n in range(600)
    ]
    links[5] = NewLink("/d/x.srt", "/s/Show/x.srt", "subtitle", 3, status=LinkStatus.EXISTS, dst_ino=42,
                       message="already linked")
    links[6] = NewLink("/d/y.srt", "/s/Show/y.srt", "subtitle", 3, status="skipped", message="present")
    batch, rows = await store.open_batch(download_id, links)
    assert await store.links_for_batch(batch.id) == rows
    assert [r.dst_path for r in rows] == [link.dst_path for link in links]
    assert len({r.id for r in rows}) == 600
    assert (rows[5].status, rows[5].dst_ino) == (LinkStatus.EXISTS, 42)
    assert rows[6].status is LinkStatus.SKIPPED
    assert {r.status for r in rows[7:]} == {LinkStatus.PENDING}

    await store.finish_links([LinkUpdate(rows[7].id, LinkStatus.LINKED, 1007, None),
                              LinkUpdate(rows[8].id, "copied", 99, "copied")])
    linked, copied = await store.links_for_batch(batch.id, [LinkStatus.LINKED, LinkStatus.COPIED])
    assert (linked.id, linked.status, linked.dst_ino) == (rows[7].id, LinkStatus.LINKED, 1007)
    assert (copied.id, copied.status, copied.message) == (rows[8].id, LinkStatus.COPIED, "copied")


@pytest.mark.parametrize("size", [1, 63, 64, 65, 128, 130])
async def test_any_batch_size_is_journaled_whole_in_order(store, size):
    """Rows go in 64 per statement and the rest in one: every size comes back whole, in order."""
    download_id = await _download_id(store)
    links = [NewLink(f"/d/Сезон/{n}.mkv", f"/s/Шоу/Season 01/{n}.mkv", "video", n, 1, n, 7)
             for n in range(size)]
    batch, rows = await store.open_batch(download_id, links)
    back = await store.links_for_batch(batch.id)
    assert back == rows
    assert [(r.src_path, r.dst_path, r.size, r.src_ino) for r in back] == [
        (link.src_path, link.dst_path, link.size, link.src_ino) for link in links]


async def test_commit_supersedes_only_live_rows_of_other_batches_on_the_same_path_and_inode(store):
    download_id = await _download_id(store)

    def link(path: str, ino: int) -> NewLink:
        return NewLink("/d/s.mkv", path, "video", 1, src_dev=1, src_ino=ino, status=LinkStatus.EXISTS,
                       dst_ino=ino)

    old, old_rows = await store.open_batch(download_id, [link("/s/a.mkv", 1), link("/s/b.mkv", 2),
                                                         link("/s/c.mkv", 3), link("/s/d.mkv", 4)])
    await store.commit_batch(old.id)
    await store.finish_links([LinkUpdate(old_rows[3].id, LinkStatus.REMOVED, None, "undone")])
    new, _ = await store.open_batch(download_id, [link("/s/a.mkv", 1), link("/s/b.mkv", 20),
                                                  link("/s/d.mkv", 4), link("/s/e.mkv", 5)])
    assert await store.commit_batch(new.id) == 1
    statuses = {r.dst_path: r.status for r in await store.links_for_batch(old.id)}
    assert statuses == {"/s/a.mkv": LinkStatus.SUPERSEDED, "/s/b.mkv": LinkStatus.EXISTS,
                        "/s/c.mkv": LinkStatus.EXISTS, "/s/d.mkv": LinkStatus.REMOVED}
    assert {r.status for r in await store.links_for_batch(new.id)} == {LinkStatus.EXISTS}
    [superseded] = await store.links_for_batch(old.id, [LinkStatus.SUPERSEDED])
    assert new.id in superseded.message


async def test_plain_links_are_finished_by_id_in_statements_of_many(store):
    download_id = await _download_id(store)
    links = [NewLink(f"/d/Сезон/src{n:04d}.mkv", f"/s/Show/Season 01/Show S01E{n:04d}.mkv", "video", 10,
                     src_dev=1, src_ino=5000 + n, src_mtime_ns=7) for n in range(2000)]
    batch, rows = await store.open_batch(download_id, links)
    plain = [r.id for r in rows[:1950]]                   # more than one statement's worth
    await store.finish_links([LinkUpdate(rows[1950].id, LinkStatus.COPIED, 77, "copied")], plain)
    after = await store.links_for_batch(batch.id)
    assert [(r.status, r.dst_ino, r.message) for r in after[:1950]] == [
        (LinkStatus.LINKED, 5000 + n, None) for n in range(1950)]
    assert (after[1950].status, after[1950].dst_ino) == (LinkStatus.COPIED, 77)
    assert {r.status for r in after[1951:]} == {LinkStatus.PENDING}


async def test_a_commit_marks_the_rows_still_pending_as_linked_and_leaves_the_others(store):
    download_id = await _download_id(store)
    links = [NewLink(f"/d/Сезон/src{n}.mkv", f"/s/Шоу/Season 01/Шоу S01E{n:02d}.mkv", "video", 10,
                     src_dev=1, src_ino=300 + n, src_mtime_ns=7) for n in range(6)]
    links[4] = NewLink("/d/x.srt", "/s/Шоу/x.srt", "subtitle", 3, status=LinkStatus.EXISTS, dst_ino=42,
                       message="already linked")
    batch, rows = await store.open_batch(download_id, links)
    other, _ = await store.open_batch(download_id, links[:1])
    await store.finish_links([LinkUpdate(rows[1].id, LinkStatus.COPIED, 77, "copied")])
    await store.commit_batch(batch.id, pending_laid=True)
    after = await store.links_for_batch(batch.id)
    assert [(r.status, r.dst_ino, r.message) for r in after] == [
        (LinkStatus.LINKED, 300, None), (LinkStatus.COPIED, 77, "copied"), (LinkStatus.LINKED, 302, None),
        (LinkStatus.LINKED, 303, None), (LinkStatus.EXISTS, 42, "already linked"),
        (LinkStatus.LINKED, 305, None)]
    assert [r.status for r in await store.links_for_batch(other.id)] == [LinkStatus.PENDING]
