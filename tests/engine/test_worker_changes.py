"""Polling in proportion to change, against a real qbittorrent-nox: what a cycle must still see.

A cycle examines only the downloads whose torrent changed, the queued and missing ones and
those read again because something changed them; these tests pin down the cases that must
not slip through: a command between two polls, a torrent removed by hand, a torrent that
changes into the category, and a torrent added by hand (adopted once, however many polls).
"""

from __future__ import annotations

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.core.ports import AddTorrent
from jellybit.core.states import State
from tests.engine.test_worker import torrents_with_tag
from tests.support.engine import EngineFactory
from tests.support.qbittorrent import QbittorrentInstance, eventually, magnet, seeded_torrent


async def test_a_download_a_command_changed_between_polls_is_read_again_before_it_is_examined(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"source_miss_threshold": 3})
    added = await engine.commands.add(source=magnet(name="Сериал.Туда.И.Обратно"))
    download = await engine.settle(added.download.id, State.DOWNLOADING)
    for _ in range(3):                      # nothing changes: the worker keeps its copy in memory
        await engine.worker.poll_once()
    (torrent,) = torrents_with_tag(qbittorrent, download.qbt_tag)
    with qbittorrent.process.admin() as admin:
        admin.post("torrents/delete", data={"hashes": torrent["hash"], "deleteFiles": "false"})

    async def misses(n: int) -> bool:
        return (await engine.store.get_download(download.id)).source_miss_count >= n

    await engine.poll_until(lambda: misses(2))              # the removal is noticed, poll after poll
    await engine.commands.cancel(download.id)
    retried = await engine.commands.retry(download.id)      # between two polls: queued, misses reset
    assert (retried.state, retried.source_miss_count) == (State.QUEUED, 0)
    # A stale copy (downloading, two misses) would count a third miss and fail it; the worker
    # reads it again, adds the torrent once more and finds it.
    back = await engine.settle(download.id, State.DOWNLOADING, State.FAILED)
    assert (back.state, back.source_miss_count, back.error_code) == (State.DOWNLOADING, 0, None)

    async def listed() -> list:
        return torrents_with_tag(qbittorrent, download.qbt_tag)

    assert len(await eventually(listed)) == 1


async def test_a_torrent_added_by_hand_is_adopted_once_even_when_it_joins_the_category_later(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    early = seeded_torrent(qbittorrent.data_dir, "Сразу.В.Категории", {"a.mkv": 30_000}, seed=11)
    late = seeded_torrent(qbittorrent.data_dir, "Later.Moved.In", {"a.mkv": 30_000}, seed=12)
    async with QbittorrentClient(qbittorrent.config()) as hand:
        await hand.add(AddTorrent(tag="", category="jellybit", torrent_bytes=early.torrent))
        await hand.add(AddTorrent(tag="", category="linux-isos", torrent_bytes=late.torrent))

    async def adopted() -> list:
        return await engine.store.list_downloads()

    (first,) = await engine.poll_until(adopted)
    assert first.hashes() == {early.infohash_v1}
    for _ in range(5):          # the torrents keep changing (they seed): still one download
        await engine.worker.poll_once()
    assert await engine.store.count_downloads() == 1

    with qbittorrent.process.admin() as admin:
        admin.post("torrents/setCategory", data={"hashes": late.infohash_v1, "category": "jellybit"})

    async def two() -> bool:
        return await engine.store.count_downloads() == 2

    await engine.poll_until(two)
    for _ in range(5):
        await engine.worker.poll_once()
    downloads = await engine.store.list_downloads()
    assert sorted(d.display_name for d in downloads) == ["Later.Moved.In", "Сразу.В.Категории"]
