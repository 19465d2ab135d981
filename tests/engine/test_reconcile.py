"""Reconciliation in chunks over real hardlinks and a real store: who moves, who waits, who is left."""

from __future__ import annotations

import asyncio
import hashlib
import shutil

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.core.ports import TorrentInfo
from jellybit.core.states import Actor, State
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.events import EventBus
from jellybit.engine.reconcile import Reconciler, drift
from jellybit.engine.serial import Serializer
from tests.adapters.library.test_layouter import FOLDER, _season, _to_done


def torrent(download) -> TorrentInfo:
    """qBittorrent's view of a download's torrent (found by its hash, else by its tag)."""
    # Each torrent its own qBittorrent id, as in qBittorrent: the index keys torrents by it.
    own_id = hashlib.sha1(download.id.encode()).hexdigest()
    infohash = sorted(download.hashes())[0] if download.hashes() else own_id
    return TorrentInfo(hash=infohash, infohash_v1=infohash, infohash_v2="", name=download.display_name,
                       state="uploading", progress=1.0, dlspeed=0, eta=None, size=1, total_size=1,
                       amount_left=0, content_path="", save_path="", category="jellybit",
                       tags=(download.qbt_tag,), added_on=None, completion_on=None)


async def laid_out(store, media, engine, count: int):
    """`count` done downloads, each a one-episode season of its own show laid out for real."""
    done = []
    for n in range(count):
        download, recognition = await _season(store, media, f"Show{n}.S01", title=f"Сериал {n}",
                                              ids=("tvdb", str(1000 + n)), episodes=range(1, 2))
        assert (await engine.apply(download, recognition)).outcome == "done"
        done.append(await _to_done(store, download))
    return done


@pytest.fixture
def engine(store, media):
    return LayoutEngine(store, media.paths)


async def test_a_pass_moves_exactly_the_downloads_that_drifted(store, media, engine) -> None:
    downloads = await laid_out(store, media, engine, 12)
    gone_files = {downloads[1].id, downloads[5].id}
    gone_torrents = {downloads[5].id, downloads[7].id}
    for download in downloads:
        if download.id in gone_files:
            shutil.rmtree(media.series / f"Сериал {downloads.index(download)} (2014) [tvdbid-"
                                          f"{1000 + downloads.index(download)}]")
    index = TorrentIndex([torrent(d) for d in downloads if d.id not in gone_torrents])
    reconciler = Reconciler(store, Serializer(store, EventBus()), engine, chunk=5)
    assert await reconciler.reconcile_pass(lambda: index) == 3
    states = {d.id: (await store.get_download(d.id)).state for d in downloads}
    assert states[downloads[1].id] is State.TARGET_MISSING
    assert states[downloads[5].id] is State.DELETED
    assert states[downloads[7].id] is State.ORPHANED
    assert {s for i, s in states.items() if i not in gone_files | gone_torrents} == {State.DONE}
    history = await store.transitions(downloads[7].id)
    assert (history[-1].actor, history[-1].reason) == (Actor.RECONCILE, "reconcile: torrent gone")
    progress = reconciler.progress
    assert (progress.running, progress.checked, progress.total, progress.moved) == (False, 12, 12, 3)
    assert progress.finished_at is not None
    assert progress.seconds is not None
    # Nothing drifted since: a second pass moves nothing, and the settled stay where they are.
    assert await reconciler.reconcile_pass(lambda: index) == 0
    assert reconciler.progress.total == 11          # deleted is not reconcilable any more


async def test_a_busy_download_waits_for_the_next_pass(store, media, engine) -> None:
    [download] = await laid_out(store, media, engine, 1)
    serial = Serializer(store, EventBus())
    reconciler = Reconciler(store, serial, engine)
    index = TorrentIndex([])                         # the torrent is gone: it should become orphaned
    async with serial.serialized(download.id):
        assert await reconciler.reconcile_pass(lambda: index) == 0
    assert (await store.get_download(download.id)).state is State.DONE
    assert await reconciler.reconcile_pass(lambda: index) == 1
    assert (await store.get_download(download.id)).state is State.ORPHANED


async def test_the_files_are_checked_again_under_the_lock(store, media, engine) -> None:
    [download] = await laid_out(store, media, engine, 1)
    folder = media.series / FOLDER.replace("Fargo", "Сериал 0").replace("269613", "1000")
    moved_away = media.root / "moved"
    folder.rename(moved_away)                         # gone when the chunk looks...
    serial = Serializer(store, EventBus())
    reconciler = Reconciler(store, serial, engine)
    index = TorrentIndex([torrent(download)])
    real_targets = engine.targets_present

    async def back_before_the_move(d):
        moved_away.rename(folder)                     # ...and back when the download is locked
        engine.targets_present = real_targets
        return await real_targets(d)

    engine.targets_present = back_before_the_move
    assert await reconciler.reconcile_pass(lambda: index) == 0
    assert (await store.get_download(download.id)).state is State.DONE


async def test_commands_run_while_a_long_pass_is_going(store, media, engine) -> None:
    downloads = await laid_out(store, media, engine, 30)
    reconciler = Reconciler(store, Serializer(store, EventBus()), engine, chunk=1)
    index = TorrentIndex([torrent(d) for d in downloads])
    task = asyncio.create_task(reconciler.reconcile_pass(lambda: index))
    await asyncio.sleep(0)
    renamed = await store.update_download(downloads[0].id, display_name="Переименован")   # a write
    page = await store.download_page(limit=5)                                            # a read
    assert not task.done()
    assert reconciler.progress.checked < 30
    assert renamed.display_name == "Переименован"
    assert len(page.items) == 5
    assert await task == 0
    assert reconciler.progress.checked == 30


def test_drift_is_the_reconciliation_table() -> None:
    assert drift(State.DONE, True, True) is None
    assert drift(State.DONE, False, True) is State.ORPHANED
    assert drift(State.TARGET_MISSING, False, True) is State.DONE
    assert drift(State.TARGET_MISSING, True, False) is None
    assert drift(State.TARGET_MISSING, False, False) is State.DELETED
    assert drift(State.ORPHANED, True, False) is State.DELETED
    assert drift(State.ORPHANED, False, True) is None
    assert drift(State.REVIEW, False, False) is None
    assert drift(State.DONE, False, None) is None


async def test_the_progress_of_the_last_pass_is_on_info(make_engine) -> None:
    import json

    from jellybit.config import Config
    from jellybit.transports.mqtt import EngineState

    engine = await make_engine()
    state = EngineState(engine.commands, engine.bus, Config())
    before = json.loads((await state.info()).payload)
    assert before["reconcile"] == {"running": False, "checked": 0, "total": 0, "moved": 0, "started_at": None,
                                   "finished_at": None, "seconds": None}
    await engine.worker.reconcile(TorrentIndex([]))
    after = json.loads((await state.info()).payload)["reconcile"]
    assert after["running"] is False
    assert after["finished_at"] is not None
    assert (await engine.commands.status()).reconcile == engine.worker.housekeeping.reconciler.progress
