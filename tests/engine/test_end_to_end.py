"""The whole engine with the real layout engine: qBittorrent → recognition port → hardlinks → undo."""

from __future__ import annotations

import os
from pathlib import Path

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.config import PathsConfig
from jellybit.core.states import State
from jellybit.transports.payloads import review_payload
from tests.support.engine import EngineFactory
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent

FOLDER = "Test Movie (1999) [tmdbid-603]"


async def movie_engine(make_engine: EngineFactory, qbittorrent: QbittorrentInstance, tmp_path: Path,
                       store):  # type: ignore[no-untyped-def]
    """An engine with the real layout over temp libraries, and one seeded movie torrent."""
    paths = PathsConfig(downloads=qbittorrent.data_dir, movies=tmp_path / "movies",
                        series=tmp_path / "series")
    paths.movies.mkdir()
    paths.series.mkdir()
    engine = await make_engine(qbittorrent.config(), layouter=LayoutEngine(store, paths), paths=paths)
    seeded = seeded_torrent(qbittorrent.data_dir, "Test.Movie.1999.1080p",
                            {"Test.Movie.1999.1080p.mkv": 90_000})
    return engine, paths, seeded


async def test_a_movie_is_laid_out_undone_retried_relinked_and_its_title_deleted(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance, tmp_path: Path, store
) -> None:
    engine, paths, seeded = await movie_engine(make_engine, qbittorrent, tmp_path, store)
    source = seeded.content / "Test.Movie.1999.1080p.mkv"
    target = paths.movies / FOLDER / f"{FOLDER}.mkv"

    added = await engine.commands.add(torrent=seeded.torrent)
    download = await engine.settle(added.download.id, State.DONE)
    assert os.stat(target).st_ino == os.stat(source).st_ino          # a hardlink, not a copy
    detail = await engine.commands.get(download.id)
    assert [(link.dst_path, link.status.value) for link in detail.links] == [(str(target), "linked")]
    (group,) = await engine.commands.titles()
    assert (group.provider, group.provider_id, [m.download_id for m in group.members]) == (
        "tmdb", "603", [download.id])

    undone = await engine.commands.undo(download.id)
    assert undone.complete
    assert undone.download.state is State.REVERTED
    assert not target.exists()
    assert source.exists()

    await engine.commands.retry(download.id)                         # reverted -> applying -> done
    await engine.settle(download.id, State.DONE)
    assert os.stat(target).st_ino == os.stat(source).st_ino

    target.unlink()                                                  # someone cleaned the library
    await engine.worker.reconcile()
    assert (await engine.store.get_download(download.id)).state is State.TARGET_MISSING
    await engine.commands.relink(download.id)
    await engine.settle(download.id, State.DONE)
    assert os.stat(target).st_ino == os.stat(source).st_ino

    deleted = await engine.commands.delete_title("tmdb", "603", delete_torrents=True, confirm=True)
    assert deleted.reverted == (download.id,)
    assert deleted.deleted_torrents == (download.id,)
    assert deleted.removed_folders == (str(paths.movies / FOLDER),)
    assert not (paths.movies / FOLDER).exists()
    assert (await engine.store.get_download(download.id)).state is State.REVERTED
    with qbittorrent.process.admin() as admin:
        assert admin.get("torrents/info").json() == []
    assert [t.to_state.value for t in await engine.store.transitions(download.id)] == [
        "queued", "downloading", "recognizing", "applying", "done", "reverted", "applying", "done",
        "target_missing", "applying", "done", "reverted"]


async def test_a_collision_found_only_when_laying_out_is_explained_in_the_review(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance, tmp_path: Path, store
) -> None:
    engine, paths, seeded = await movie_engine(make_engine, qbittorrent, tmp_path, store)
    target = paths.movies / FOLDER / f"{FOLDER}.mkv"
    added = await engine.commands.add(torrent=seeded.torrent)
    download = await engine.settle(added.download.id, State.DONE)
    await engine.commands.undo(download.id)
    target.parent.mkdir()
    target.write_bytes(b"another release of the same film")    # laid meanwhile by something else

    await engine.commands.retry(download.id)                         # reverted -> applying -> review
    await engine.settle(download.id, State.REVIEW)

    review = review_payload(download, await engine.store.current_recognition(download.id), [])
    assert [r.code for r in review.reasons if r.blocking] == ["collision"]
    assert [row.status for row in review.plan] == ["collision"]
    assert review.collisions == [f"{FOLDER}/{FOLDER}.mkv"]
    assert target.read_bytes() == b"another release of the same film"
