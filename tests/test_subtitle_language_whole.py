"""An untagged subtitle through the whole product as `build_app` wires it: real qBittorrent reports
where the files are, the worker's recognizer reads the subtitle's head there, and the layout links
it with the language it read."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from jellybit.app import build_app
from jellybit.config import MetadataConfig
from jellybit.core.states import State
from tests.support.app_config import whole_config
from tests.support.qbittorrent import QbittorrentInstance
from tests.support.torrents import make_content, make_torrent

NAME = "The.Matrix.1999.1080p.BluRay.x264"
FOLDER = "The Matrix (1999) [tmdbid-603]"
RUSSIAN = ["Где ты был прошлой ночью?", "Я же сказал, я был на работе до десяти.",
           "Не ври мне. Твоей машины там не было.", "Ладно. Я ездил к брату."]


async def test_an_untagged_russian_subtitle_is_read_and_linked_as_ru(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, tmp_path: Path
) -> None:
    config = whole_config(tmp_path, qbittorrent, metadata=MetadataConfig(
        tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(), tvmaze=fake_tvmaze.config()))
    paths = config.paths
    content = make_content(qbittorrent.data_dir, NAME, {f"{NAME}.mkv": 120_000})
    cues = "".join(f"{n}\r\n00:00:{n:02d},000 --> 00:00:{n:02d},900\r\n{line}\r\n\r\n"
                   for n, line in enumerate(RUSSIAN, 1))
    (content / f"{NAME}.srt").write_bytes(cues.encode("cp1251"))
    before = (content / f"{NAME}.srt").read_bytes()
    app = build_app(config, mqtt=False)
    await app.store.open()
    await app.worker.start()
    try:
        added = await app.commands.add(torrent=make_torrent(content), context="")
        deadline = asyncio.get_running_loop().time() + 30
        while (download := await app.store.get_download(added.download.id)).state not in (
                State.DONE, State.REVIEW):
            assert asyncio.get_running_loop().time() < deadline, download.state
            await app.worker.poll_once()
            await asyncio.sleep(0.05)
        recognition = await app.store.current_recognition(download.id)
        assert download.state is State.DONE, recognition.reasons
        folder = paths.movies / FOLDER
        assert sorted(p.name for p in folder.iterdir()) == [f"{FOLDER}.mkv", f"{FOLDER}.ru.srt"]
        linked = folder / f"{FOLDER}.ru.srt"
        assert os.stat(linked).st_ino == os.stat(content / f"{NAME}.srt").st_ino
        assert (content / f"{NAME}.srt").read_bytes() == before          # read, never written
        subtitle = next(i for i in recognition.plan.items if i.source.endswith(".srt"))
        assert "language ru detected from its text" in (subtitle.note or "")
    finally:
        await app.stop()
