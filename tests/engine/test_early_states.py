"""The state machine of a download recognized while it downloads, against a real qbittorrent-nox:
it follows its torrent in `review` and `applying` like `downloading` does, a retry starts it over
at `queued`, and with `recognize_early` off it waits for completion as before."""

from __future__ import annotations

import shutil
from pathlib import Path

from jellybit.core.states import State
from tests.support.engine import Engine, EngineFactory
from tests.support.qbittorrent import QbittorrentInstance, SeededTorrent, seeded_torrent

FILES: dict[str, int | bytes] = {"movie.mkv": 120_000, "movie.srt": 3_000}


async def held(engine: Engine, qbittorrent: QbittorrentInstance,
               name: str) -> tuple[str, SeededTorrent, Path]:
    """Add a torrent whose files are away: qBittorrent lists them and has none of the bytes."""
    seeded = seeded_torrent(qbittorrent.data_dir, name, FILES)
    away = qbittorrent.data_dir / f".away-{name}"
    shutil.move(seeded.content, away)
    added = await engine.commands.add(torrent=seeded.torrent)
    return added.download.id, seeded, away


def arrive(qbittorrent: QbittorrentInstance, seeded: SeededTorrent, away: Path) -> None:
    """The bytes are there: qBittorrent checks the torrent again and finds it complete."""
    shutil.move(away, seeded.content)
    with qbittorrent.process.admin() as admin:
        admin.post("torrents/recheck", data={"hashes": seeded.infohash_v1}).raise_for_status()


async def test_a_review_while_downloading_fails_when_the_torrent_goes_and_retry_starts_over(
        make_engine: EngineFactory, qbittorrent: QbittorrentInstance) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    download_id, seeded, _away = await held(engine, qbittorrent, "Gone.Movie.2001.1080p")
    review = await engine.settle(download_id, State.REVIEW)
    assert review.awaiting_files
    assert review.completed_at is None
    (request,) = engine.recognizer.requests
    assert request.pending == frozenset(f"Gone.Movie.2001.1080p/{name}" for name in FILES)

    with qbittorrent.process.admin() as admin:        # the user removes it in qBittorrent
        admin.post("torrents/delete", data={"hashes": seeded.infohash_v1, "deleteFiles": "false"})
    failed = await engine.settle(download_id, State.FAILED)
    assert failed.error_code == "source_missing"
    assert ("review", "failed") in await engine.path(download_id)

    retried = await engine.commands.retry(download_id)
    assert retried.state is State.QUEUED                # not `recognizing`: the torrent has to come back
    assert not retried.awaiting_files
    again = await engine.settle(download_id, State.REVIEW)     # re-added, recognized while it downloads
    assert again.awaiting_files


async def test_a_decision_waits_in_applying_and_is_laid_out_once_complete(
        make_engine: EngineFactory, qbittorrent: QbittorrentInstance) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=True)
    download_id, seeded, away = await held(engine, qbittorrent, "Sure.Movie.1999.1080p")
    decided = await engine.settle(download_id, State.APPLYING)
    assert decided.awaiting_files
    for _ in range(20):                                  # polls go on; nothing is laid out meanwhile
        await engine.worker.poll_once()
    assert engine.layouter.applied == []
    assert (await engine.store.get_download(download_id)).state is State.APPLYING

    arrive(qbittorrent, seeded, away)
    done = await engine.settle(download_id, State.DONE, within=60)
    assert not done.awaiting_files
    assert done.completed_at is not None
    assert len(engine.layouter.applied) == 1
    # Recognized twice: with the file list, then with the completed files (their bytes read).
    first, last = engine.recognizer.requests[0], engine.recognizer.requests[-1]
    assert first.pending
    assert not last.pending
    assert not last.use_llm
    assert await engine.path(download_id) == [
        (None, "queued"), ("queued", "downloading"), ("downloading", "recognizing"),
        ("recognizing", "applying"), ("applying", "done")]


async def test_with_early_recognition_off_it_waits_for_the_download(
        make_engine: EngineFactory, qbittorrent: QbittorrentInstance) -> None:
    engine = await make_engine(qbittorrent.config(), worker={"recognize_early": False})
    download_id, seeded, away = await held(engine, qbittorrent, "Late.Movie.1999.1080p")
    await engine.settle(download_id, State.DOWNLOADING)
    for _ in range(20):
        await engine.worker.poll_once()
    assert (await engine.store.get_download(download_id)).state is State.DOWNLOADING
    assert engine.recognizer.requests == []

    arrive(qbittorrent, seeded, away)
    done = await engine.settle(download_id, State.DONE, within=60)
    assert not done.awaiting_files
    history = await engine.store.transitions(download_id)
    assert [t.reason for t in history if t.to_state is State.RECOGNIZING] == ["download complete"]
