"""The worker end to end against a real qbittorrent-nox, with in-test recognizer/layouter ports."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.core.ports import AddTorrent
from jellybit.core.states import Actor, State
from jellybit.engine.events import EventKind
from jellybit.engine.reconcile import drift
from jellybit.engine.worker import magnet_for
from jellybit.errors import InvalidState
from tests.support.engine import EngineFactory
from tests.support.qbittorrent import (
    QbittorrentInstance,
    TorrentFileServer,
    eventually,
    magnet,
    seeded_torrent,
)
from tests.support.torrents import make_content, make_torrent

HAPPY_PATH = [(None, "queued"), ("queued", "downloading"), ("downloading", "recognizing"),
              ("recognizing", "applying"), ("applying", "done")]


def torrents_with_tag(qbittorrent: QbittorrentInstance, tag: str) -> list[dict]:
    """qBittorrent's own list of torrents carrying a tag (checked with the test's admin client)."""
    with qbittorrent.process.admin() as admin:
        return admin.get("torrents/info", params={"tag": tag}).json()


async def test_a_complete_torrent_goes_all_the_way_to_done(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    events = engine.bus.subscribe()
    seeded = seeded_torrent(qbittorrent.data_dir, "Test.Movie.1999.1080p", {"movie.mkv": 120_000,
                                                                             "sample/sample.mkv": 9_000})
    added = await engine.commands.add(torrent=seeded.torrent, context="the one with the spoon")
    assert added.created

    download = await engine.settle(added.download.id, State.DONE)

    assert await engine.path(download.id) == HAPPY_PATH
    assert {h.value for h in download.infohashes} == {seeded.infohash_v1}
    assert download.progress == 1
    assert download.total_size == 129_000
    assert download.content_path == str(seeded.content)
    assert download.completed_at is not None
    (request,) = engine.recognizer.requests
    assert sorted(f.path for f in request.files) == ["Test.Movie.1999.1080p/movie.mkv",
                                                     "Test.Movie.1999.1080p/sample/sample.mkv"]
    assert request.download.context == "the one with the spoon"
    assert request.use_llm is True
    ((applied_id, recognition),) = engine.layouter.applied
    assert applied_id == download.id
    assert (recognition.provider, recognition.provider_id) == ("tmdb", "603")
    assert recognition.plan.folder == "Test Movie (1999)"
    assert engine.done == [download.id]
    (torrent,) = torrents_with_tag(qbittorrent, download.qbt_tag)
    assert torrent["category"] == "jellybit"
    kinds = []
    while (event := events.get_nowait()) is not None:
        kinds.append(event.event_type)
    assert kinds[0] is EventKind.ADDED
    assert kinds.count(EventKind.STATE_CHANGED) == 4
    assert kinds[-1] is EventKind.DONE


async def test_not_sure_goes_to_review_and_apply_lays_it_out_without_the_llm(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    events = engine.bus.subscribe()
    seeded = seeded_torrent(qbittorrent.data_dir, "Unclear.Release", {"video.mkv": 50_000})
    added = await engine.commands.add(torrent=seeded.torrent)
    download = await engine.settle(added.download.id, State.REVIEW)
    recognition = await engine.store.current_recognition(download.id)
    assert recognition is not None
    assert [r.code for r in recognition.reasons] == ["no_match"]
    assert recognition.plan.items[0].target == "Test Movie (None)/video.mkv"
    review_events = []
    while (event := events.get_nowait()) is not None:
        review_events.append(event)
    assert review_events[-1].event_type is EventKind.REVIEW_REQUESTED
    assert review_events[-1].reason == "needs review: no confirmed metadata match"

    second = recognition.candidates[1]
    await engine.commands.apply(download.id, candidate_id=second.id, overrides={"title": "Reloaded"})
    download = await engine.settle(download.id, State.DONE)

    assert [p[1] for p in await engine.path(download.id)][-3:] == ["review", "applying", "done"]
    last = engine.recognizer.requests[-1]
    assert last.use_llm is False
    assert last.chosen is not None
    assert last.chosen.provider_id == "604"
    assert last.overrides == {"title": "Reloaded"}
    assert [f.path for f in last.files] == ["Unclear.Release/video.mkv"]
    current = await engine.store.current_recognition(download.id)
    assert current is not None
    assert (current.attempt_no, current.provider_id, current.title) == (2, "604", "Reloaded")


async def test_a_collision_goes_back_to_review_and_an_io_error_fails(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    engine.layouter.outcome = "collision"
    engine.layouter.collisions = ("/lib/Test Movie (1999)/movie.mkv",)
    first = seeded_torrent(qbittorrent.data_dir, "One", {"movie.mkv": 20_000}, seed=1)
    one = (await engine.commands.add(torrent=first.torrent)).download
    await engine.settle(one.id, State.REVIEW)
    last = (await engine.store.transitions(one.id))[-1]
    assert last.reason == "collision: /lib/Test Movie (1999)/movie.mkv"

    engine.layouter.outcome = "failed"
    second = seeded_torrent(qbittorrent.data_dir, "Two", {"movie.mkv": 20_000}, seed=2)
    two = (await engine.commands.add(torrent=second.torrent)).download
    failed = await engine.settle(two.id, State.FAILED)
    assert (failed.error_code, failed.error_msg) == ("layout_io", "disk full")


async def test_hybrid_torrent_is_matched_by_both_hashes(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    seeded = seeded_torrent(qbittorrent.data_dir, "Hybrid", {"a.mkv": 40_000}, kind="hybrid")
    added = await engine.commands.add(torrent=seeded.torrent)
    download = await engine.settle(added.download.id, State.DONE)
    assert {(h.kind, h.value) for h in download.infohashes} == {("v1", seeded.infohash_v1),
                                                                ("v2", seeded.infohash_v2)}
    (torrent,) = torrents_with_tag(qbittorrent, download.qbt_tag)
    assert torrent["hash"] == seeded.infohash_v2[:40]    # qBittorrent's id is neither real hash
    # Done is settled: adding it again months later is a new download that says it was seen before.
    again = await engine.commands.add(source=f"magnet:?xt=urn:btih:{seeded.infohash_v1}")
    assert again.created
    assert again.settled_before == (download.id,)


async def test_url_source_is_found_by_its_tag_and_learns_its_hash(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(allow_private_hosts=["127.0.0.1"]))   # the file server
    seeded = seeded_torrent(qbittorrent.data_dir, "From.Url", {"a.mkv": 30_000})
    with TorrentFileServer({"/x.torrent": seeded.torrent}) as server:
        added = await engine.commands.add(source=f"{server.base_url}/x.torrent")
        assert added.download.infohashes == ()
        download = await engine.settle(added.download.id, State.DONE)
        assert server.fetched == ["/x.torrent"]
    assert download.hashes() == {seeded.infohash_v1}
    assert download.display_name == "From.Url"


async def test_adding_the_same_torrent_twice_joins(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    link = magnet(name="Twice")
    first = await engine.commands.add(source=link)
    second = await engine.commands.add(source=link, context="again")
    assert not second.created
    assert second.download.id == first.download.id
    await engine.settle(first.download.id, State.DOWNLOADING)
    await engine.worker.poll_once()
    assert len(torrents_with_tag(qbittorrent, first.download.qbt_tag)) == 1


async def test_a_torrent_added_by_hand_under_the_category_is_adopted(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    mine = seeded_torrent(qbittorrent.data_dir, "By.Hand", {"a.mkv": 30_000}, seed=3)
    other = seeded_torrent(qbittorrent.data_dir, "Not.Ours", {"a.mkv": 30_000}, seed=4)
    async with QbittorrentClient(qbittorrent.config()) as hand:
        await hand.add(AddTorrent(tag="", category="jellybit", torrent_bytes=mine.torrent))
        await hand.add(AddTorrent(tag="", category="linux-isos", torrent_bytes=other.torrent))

    async def adopted() -> list:
        return await engine.store.list_downloads()

    (download,) = await engine.poll_until(adopted)
    assert (download.source_type, download.display_name, download.context) == ("adopted", "By.Hand", "")
    assert download.hashes() == {mine.infohash_v1}
    download = await engine.settle(download.id, State.DONE)
    assert [p[0] for p in await engine.path(download.id)][:2] == [None, "queued"]

    async def tagged() -> list:
        return torrents_with_tag(qbittorrent, download.qbt_tag)

    assert len(await eventually(tagged, within=10)) == 1     # adoption tags it with the download's tag
    for _ in range(3):     # the done download still seeds in the category: never adopted twice
        await engine.worker.poll_once()
    assert await engine.store.count_downloads() == 1


async def test_a_trackerless_magnet_fails_with_metadata_timeout(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"metadata_timeout": 0.5})
    added = await engine.commands.add(source=magnet(name="Nobody.Seeds"))
    failed = await engine.settle(added.download.id, State.FAILED)
    assert failed.error_code == "metadata_timeout"
    assert failed.torrent_state == "metaDL"
    assert await engine.path(failed.id) == [(None, "queued"), ("queued", "downloading"),
                                            ("downloading", "failed")]


async def test_no_progress_for_the_stall_timeout_fails_with_stalled(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance, tmp_path: Path
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"stall_timeout": 0.5})
    content = make_content(tmp_path / "elsewhere", "No.Peers", {"a.bin": 50_000})
    added = await engine.commands.add(torrent=make_torrent(content))   # the data is not in the save path
    failed = await engine.settle(added.download.id, State.FAILED)
    assert failed.error_code == "stalled"
    assert failed.progress == 0


async def test_a_torrent_deleted_behind_our_back_fails_only_after_the_debounce(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"source_miss_threshold": 3})
    added = await engine.commands.add(source=magnet(name="Going.Away"))
    download = await engine.settle(added.download.id, State.DOWNLOADING)
    (torrent,) = torrents_with_tag(qbittorrent, download.qbt_tag)
    with qbittorrent.process.admin() as admin:
        admin.post("torrents/delete", data={"hashes": torrent["hash"], "deleteFiles": "false"})
    await engine.poll_until(lambda: _misses_at_least(engine, download.id, 1))
    await engine.worker.poll_once()
    middle = await engine.store.get_download(download.id)
    assert (middle.state, middle.source_miss_count) == (State.DOWNLOADING, 2)
    await engine.worker.poll_once()
    failed = await engine.store.get_download(download.id)
    assert (failed.state, failed.error_code, failed.source_miss_count) == (State.FAILED, "source_missing", 3)


async def _misses_at_least(engine, download_id: str, n: int) -> bool:  # type: ignore[no-untyped-def]
    return (await engine.store.get_download(download_id)).source_miss_count >= n


async def test_an_unreachable_qbittorrent_fails_nothing_and_the_add_happens_when_it_is_back(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance, caplog: pytest.LogCaptureFixture
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"source_miss_threshold": 2},
                               reconnect_grace=1.0)
    running = await engine.commands.add(source=magnet(name="Already.Running"))
    await engine.settle(running.download.id, State.DOWNLOADING)
    qbittorrent.process.stop()
    caplog.set_level(logging.INFO, logger="jellybit.engine.worker")
    queued = await engine.commands.add(source=magnet(name="Added.While.Down"))
    for _ in range(6):
        assert await engine.worker.poll_once() is False
    assert engine.worker.health.reachable is False
    assert "cannot connect" in (engine.worker.health.error or "")
    assert (await engine.commands.status()).qbittorrent.reachable is False
    warnings = [r for r in caplog.records if r.message.startswith("qBittorrent is unreachable")]
    assert len(warnings) == 1       # logged once, not once per poll
    assert (await engine.store.get_download(queued.download.id)).state is State.QUEUED
    still = await engine.store.get_download(running.download.id)
    assert (still.state, still.source_miss_count) == (State.DOWNLOADING, 0)

    qbittorrent.process.start()
    await engine.settle(queued.download.id, State.DOWNLOADING)
    assert engine.worker.health.reachable is True
    assert any(r.message == "qBittorrent is reachable again" for r in caplog.records)
    for _ in range(4):
        await engine.worker.poll_once()
    assert (await engine.store.get_download(running.download.id)).state is State.DOWNLOADING
    assert len(torrents_with_tag(qbittorrent, queued.download.qbt_tag)) == 1


async def test_bad_credentials_are_a_clear_health_error_not_a_crash(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(password="wrong-password"))
    added = await engine.commands.add(source=magnet())
    assert await engine.worker.poll_once() is False
    assert "wrong user name or password" in (engine.worker.health.error or "")
    assert "wrong-password" not in (engine.worker.health.error or "")
    assert (await engine.store.get_download(added.download.id)).state is State.QUEUED


async def test_recovery_after_a_crash_never_adds_twice(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    first = await make_engine(qbittorrent.config(allow_private_hosts=["127.0.0.1"]))    # the file server
    seeded = seeded_torrent(qbittorrent.data_dir, "Crash.Test", {"a.mkv": 30_000}, seed=5)
    with TorrentFileServer({"/c.torrent": seeded.torrent}) as server:
        by_url = await first.commands.add(source=f"{server.base_url}/c.torrent")
        by_magnet = await first.commands.add(source=magnet(name="Crash.Magnet"))
        # One cycle adds both; the worker then "dies" before it ever sees them in qBittorrent.
        await first.worker.poll_once()
        assert (await first.store.get_download(by_url.download.id)).state is State.QUEUED

        async def listed() -> bool:
            return bool(torrents_with_tag(qbittorrent, by_url.download.qbt_tag))

        await _wait(listed)
        second = await make_engine(qbittorrent.config())       # a new process: nothing in memory
        await second.settle(by_magnet.download.id, State.DOWNLOADING)
        await second.settle(by_url.download.id, State.DONE)
        assert server.fetched == ["/c.torrent"]
    assert len(torrents_with_tag(qbittorrent, by_url.download.qbt_tag)) == 1
    assert len(torrents_with_tag(qbittorrent, by_magnet.download.qbt_tag)) == 1
    assert second.layouter.recovered == 1


async def _wait(predicate, within: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + within
    while not await predicate():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail("condition not met")
        await asyncio.sleep(0.05)


async def test_interrupted_recognition_and_layout_are_run_again_on_start(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    first = await make_engine(qbittorrent.config())
    first.layouter.gate = asyncio.Event()       # the layout never finishes in the first "process"
    seeded = seeded_torrent(qbittorrent.data_dir, "Interrupted", {"a.mkv": 30_000}, seed=6)
    added = await first.commands.add(torrent=seeded.torrent)
    await first.settle(added.download.id, State.APPLYING)
    await asyncio.wait_for(first.layouter.entered.wait(), 10)
    second = await make_engine(qbittorrent.config())
    done = await second.settle(added.download.id, State.DONE)
    assert second.layouter.recovered == 1
    assert [a for a, _ in second.layouter.applied] == [done.id]
    first.layouter.gate.set()          # the dead process's stage wakes up: it must not lay out again
    await asyncio.sleep(0.1)
    assert (await second.store.get_download(done.id)).state is State.DONE


async def test_reconciliation_moves_done_downloads_whose_torrent_or_files_went(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config())
    seeded = seeded_torrent(qbittorrent.data_dir, "Reconciled", {"a.mkv": 30_000}, seed=7)
    added = await engine.commands.add(torrent=seeded.torrent)
    download = await engine.settle(added.download.id, State.DONE)
    engine.layouter.present = False
    await engine.worker.reconcile()
    moved = await engine.store.get_download(download.id)
    assert moved.state is State.TARGET_MISSING
    assert (await engine.store.transitions(download.id))[-1].actor is Actor.RECONCILE
    with qbittorrent.process.admin() as admin:
        admin.post("torrents/delete", data={"hashes": seeded.infohash_v1, "deleteFiles": "false"})
    await engine.worker.poll_once()
    await engine.worker.reconcile()
    assert (await engine.store.get_download(download.id)).state is State.DELETED


def test_drift_follows_the_table() -> None:
    assert drift(State.DONE, True, True) is None
    assert drift(State.DONE, True, False) is State.TARGET_MISSING
    assert drift(State.DONE, False, True) is State.ORPHANED
    assert drift(State.DONE, False, False) is State.DELETED
    assert drift(State.TARGET_MISSING, True, True) is State.DONE
    assert drift(State.ORPHANED, True, True) is None          # orphaned -> done is not a path
    assert drift(State.DONE, True, None) is None              # nothing laid: nothing to judge


# ---------------------------------------------------------------- serialization


class GatedClient(QbittorrentClient):
    """The real client, with the `add` of one tag held at a gate the test opens."""

    hold_tag: str = ""
    gate: asyncio.Event
    entered: asyncio.Event

    async def add(self, request: AddTorrent) -> None:
        if request.tag == self.hold_tag:
            self.entered.set()
            await self.gate.wait()
        await super().add(request)


async def test_a_command_waits_for_the_poll_that_holds_the_same_download(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), client_cls=GatedClient)
    client = engine.client
    assert isinstance(client, GatedClient)
    other = (await engine.commands.add(source=magnet(name="Other"))).download
    held = (await engine.commands.add(source=magnet(name="Held"))).download
    client.hold_tag, client.gate, client.entered = held.qbt_tag, asyncio.Event(), asyncio.Event()
    poll = asyncio.create_task(engine.worker.poll_once())
    await asyncio.wait_for(client.entered.wait(), 10)     # the poll is inside `add` for `held`
    # A command on another download is not held up by the poll.
    cancelled = await asyncio.wait_for(engine.commands.cancel(other.id), 5)
    assert cancelled.state is State.CANCELLED
    # A command on the download the poll holds waits until the poll is done with it.
    cancel = asyncio.create_task(engine.commands.cancel(held.id))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(cancel), 0.3)
    assert (await engine.store.get_download(held.id)).state is State.QUEUED
    client.gate.set()
    await asyncio.wait_for(poll, 10)
    result = await asyncio.wait_for(cancel, 10)
    assert result.state is State.CANCELLED
    # The add completed first (qBittorrent lists an added torrent a moment after answering).
    async def listed() -> list:
        return torrents_with_tag(qbittorrent, held.qbt_tag)

    assert len(await eventually(listed, within=10)) == 1


def test_magnet_for_a_download_known_by_hashes() -> None:
    from jellybit.core.models import Download, Infohash

    base = {"id": "x", "source_type": "adopted", "source_ref": "x", "display_name": "x", "context": "",
            "state": State.QUEUED, "qbt_tag": "t", "created_at": "", "updated_at": ""}
    hybrid = Download(**base, infohashes=(Infohash("a" * 40, "v1"), Infohash("b" * 64, "v2")))
    assert magnet_for(hybrid) == f"magnet:?xt=urn:btih:{'a' * 40}&xt=urn:btmh:1220{'b' * 64}"
    assert magnet_for(Download(**base)) is None


async def test_a_retried_download_resumes_without_re_adding_what_qbittorrent_has(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"metadata_timeout": 0.3})
    added = await engine.commands.add(source=magnet(name="Retry.Me"))
    await engine.settle(added.download.id, State.FAILED)
    engine.worker.config = engine.worker.config.model_copy(update={"metadata_timeout": 600.0})
    retried = await engine.commands.retry(added.download.id)
    assert retried.state is State.QUEUED
    assert (retried.error_code, retried.error_msg) == (None, None)
    await engine.settle(added.download.id, State.DOWNLOADING)
    assert len(torrents_with_tag(qbittorrent, retried.qbt_tag)) == 1
    with pytest.raises(InvalidState, match="retry is not possible in state downloading"):
        await engine.commands.retry(added.download.id)


async def test_a_recognition_overtaken_by_cancel_and_retry_is_discarded(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    seeded = seeded_torrent(qbittorrent.data_dir, "Overtaken", {"a.mkv": 20_000}, seed=8)
    download_id = (await engine.commands.add(torrent=seeded.torrent)).download.id
    await engine.settle(download_id, State.REVIEW)
    engine.recognizer.gate = asyncio.Event()
    engine.recognizer.entered.clear()
    await engine.commands.refine(download_id, hint="first try")
    await asyncio.wait_for(engine.recognizer.entered.wait(), 10)      # the old stage waits outside the lock
    await engine.commands.cancel(download_id)
    retried = await engine.commands.retry(download_id)                 # recognizing again: a new stage
    assert retried.state is State.RECOGNIZING
    engine.recognizer.gate.set()
    await engine.settle(download_id, State.REVIEW)
    await asyncio.wait_for(engine.worker.serial.wait_stage(download_id), 5)
    for _ in range(3):
        await engine.worker.poll_once()
    current = await engine.store.current_recognition(download_id)
    assert current is not None
    assert len(engine.recognizer.requests) == 3      # the first, the refine's (stale), the retry's
    assert (current.attempt_no, current.raw_llm) == (2, "request 3")
    assert [t.to_state for t in await engine.store.transitions(download_id)][-4:] == [
        State.RECOGNIZING, State.CANCELLED, State.RECOGNIZING, State.REVIEW]


async def test_a_url_qbittorrent_cannot_fetch_fails_with_qbt_add_failed(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(allow_private_hosts=["127.0.0.1"]),
                               worker={"metadata_timeout": 0.3}, appear_timeout=0.3)
    with TorrentFileServer({}) as server:              # every path is a 404
        added = await engine.commands.add(source=f"{server.base_url}/gone.torrent")
        failed = await engine.settle(added.download.id, State.FAILED)
    assert failed.error_code == "qbt_add_failed"
    assert "did not show up" in (failed.error_msg or "")
    assert await engine.path(failed.id) == [(None, "queued"), ("queued", "failed")]
