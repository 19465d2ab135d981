"""The whole product in one process, as `build_app` wires it: real qBittorrent, the real recognizer
against local TMDB/TVDB fakes, the real layout engine with hardlinks, and the Jellyfin rescan."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from jellybit.app import build_app
from jellybit.config import MetadataConfig
from jellybit.core.states import State
from tests.support.app_config import whole_config
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent


async def settle(app, download_id: str, *states: State, within: float = 30.0):
    deadline = asyncio.get_running_loop().time() + within
    while True:
        await app.worker.poll_once()
        download = await app.store.get_download(download_id)
        if download.state in states:
            return download
        assert asyncio.get_running_loop().time() < deadline, (download.state, download.error_msg)
        await asyncio.sleep(0.05)


async def test_a_movie_and_a_season_go_from_torrent_to_library_and_jellyfin_is_told(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, fake_jellyfin, tmp_path: Path
) -> None:
    config = whole_config(tmp_path, qbittorrent, jellyfin=fake_jellyfin.config(), metadata=MetadataConfig(
        tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(), tvmaze=fake_tvmaze.config()))
    paths = config.paths
    app = build_app(config, mqtt=False)
    await app.store.open()
    await app.worker.start()
    try:
        movie = seeded_torrent(qbittorrent.data_dir, "The.Matrix.1999.1080p.BluRay.x264", {
            "The.Matrix.1999.1080p.BluRay.x264.mkv": 120_000,
            "The.Matrix.1999.1080p.BluRay.x264.en.srt": 2_000,
            "Sample/sample.mkv": 1_000,
        })
        added = await app.commands.add(torrent=movie.torrent, context="the 1999 film")
        done = await settle(app, added.download.id, State.DONE, State.REVIEW)
        assert done.state is State.DONE, (await app.store.current_recognition(done.id)).reasons
        folder = paths.movies / "The Matrix (1999) [tmdbid-603]"
        video = folder / "The Matrix (1999) [tmdbid-603].mkv"
        source = movie.content / "The.Matrix.1999.1080p.BluRay.x264.mkv"
        assert os.stat(video).st_ino == os.stat(source).st_ino
        assert (folder / "The Matrix (1999) [tmdbid-603].en.srt").exists()
        assert sorted(p.name for p in folder.iterdir()) == [
            "The Matrix (1999) [tmdbid-603].en.srt", "The Matrix (1999) [tmdbid-603].mkv"]

        season = seeded_torrent(qbittorrent.data_dir, "Fargo.S02.1080p.WEB-DL", {
            f"Fargo.S02E{n:02d}.1080p.WEB-DL.mkv": 50_000 + n for n in (1, 2, 3)}, seed=7)
        added = await app.commands.add(torrent=season.torrent, context="Фарго, второй сезон (сериал 2014)")
        download = await settle(app, added.download.id, State.DONE, State.REVIEW)
        if download.state is State.REVIEW:        # a human picks the series candidate
            recognition = await app.store.current_recognition(download.id)
            chosen = next(c for c in recognition.candidates
                          if c.media_type and c.media_type.value == "series")
            await app.commands.apply(download.id, candidate_id=chosen.id)
            download = await settle(app, download.id, State.DONE)
        show = next(paths.series.iterdir())
        assert show.name.startswith("Fargo (2014) [")
        assert sorted(p.name for p in (show / "Season 02").iterdir()) == [
            "Fargo S02E01.mkv", "Fargo S02E02.mkv", "Fargo S02E03.mkv"]

        deadline = asyncio.get_running_loop().time() + 10
        while fake_jellyfin.refreshes < 1:                   # the rescan goes out, coalesced
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        assert fake_jellyfin.refreshes <= 2
    finally:
        await app.stop()
