"""Done means in Jellyfin, as `build_app` wires it: real qBittorrent, the real recognizer against local
TMDB/TVDB fakes, the real layout with hardlinks, and a local Jellyfin that scans the real library folders
through a container-style volume mapping. The Jellyfin item id ends up stored and on every face; Jellyfin
down or never listing the download leaves it done, with a note that says what to check."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from jellybit.app import App, _probes, build_app
from jellybit.cli.remote import format_detail
from jellybit.config import (
    Config,
    JellyfinConfig,
    JellyfinPathMapping,
    MetadataConfig,
    PathsConfig,
    StorageConfig,
    WorkerConfig,
)
from jellybit.core.models import Download
from jellybit.core.states import State
from jellybit.engine.events import EventKind
from jellybit.protocol import DownloadDetail
from jellybit.transports.payloads import detail_payload, event_payload
from jellybit.transports.telegram.render import done_card
from tests.support.fake_http import Reply
from tests.support.fake_metadata import FakeJellyfin
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent
from tests.support.services import free_port

PUBLIC = "http://jellyfin.example.org:8096"
FOLDER = "The Matrix (1999) [tmdbid-603]"


def media_paths(qbittorrent: QbittorrentInstance, tmp_path: Path) -> PathsConfig:
    """Library roots under `<tmp>/media`, which Jellyfin's container sees as `/media`."""
    paths = PathsConfig(downloads=qbittorrent.data_dir, movies=tmp_path / "media" / "movies",
                        series=tmp_path / "media" / "series")
    for root in (paths.movies, paths.series):
        root.mkdir(parents=True)
    return paths


def jellyfin_config(fake: FakeJellyfin, paths: PathsConfig, **overrides: Any) -> JellyfinConfig:
    """Jellyfin with a movies and a shows library over the mapped folders."""
    fake.add_library("Movies", "movies", "/media/movies")
    fake.add_library("Shows", "tvshows", "/media/series")
    fake.mount("/media", paths.movies.parent)
    return fake.config(public_url=PUBLIC, check_interval=0.05,
                       path_map=[JellyfinPathMapping(jellyfin="/media", local=str(paths.movies.parent))],
                       **overrides)


@contextlib.asynccontextmanager
async def running(config: Config, *, worker: bool = True) -> AsyncIterator[App]:
    """The app with its worker (polled by the test) and the Jellyfin confirmation loop."""
    app = build_app(config, mqtt=False)
    await app.store.open()
    if worker:
        await app.worker.start()
    assert app.jellyfin is not None
    confirming = asyncio.create_task(app.jellyfin.run())
    try:
        yield app
    finally:
        confirming.cancel()
        await asyncio.gather(confirming, return_exceptions=True)
        await app.stop()


async def lay_out_the_matrix(app: App, qbittorrent: QbittorrentInstance) -> Download:
    """Add a film and poll until it is done (the worker's loop, driven here)."""
    movie = seeded_torrent(qbittorrent.data_dir, "The.Matrix.1999.1080p.BluRay.x264", {
        "The.Matrix.1999.1080p.BluRay.x264.mkv": 120_000,
        "The.Matrix.1999.1080p.BluRay.x264.en.srt": 2_000,
    })
    added = await app.commands.add(torrent=movie.torrent, context="the 1999 film")
    return await until(app, added.download.id, lambda d: d.state in (State.DONE, State.REVIEW, State.FAILED))


async def until(app: App, download_id: str, condition: Any, within: float = 30.0) -> Download:
    """Poll the worker until the download meets the condition."""
    deadline = asyncio.get_running_loop().time() + within
    while True:
        await app.worker.poll_once()
        download = await app.store.get_download(download_id)
        if condition(download):
            return download
        assert asyncio.get_running_loop().time() < deadline, (download.state, download.jellyfin_status,
                                                              download.jellyfin_note)
        await asyncio.sleep(0.05)


def config_for(qbittorrent: QbittorrentInstance, paths: PathsConfig, tmp_path: Path, jellyfin: JellyfinConfig,
               fake_tmdb: Any, fake_tvdb: Any, fake_tvmaze: Any) -> Config:
    """The whole configuration."""
    return Config(qbittorrent=qbittorrent.config(), paths=paths,
                  storage=StorageConfig(database=tmp_path / "jellybit.db"),
                  metadata=MetadataConfig(tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(),
                                          tvmaze=fake_tvmaze.config()),
                  jellyfin=jellyfin, worker=WorkerConfig(poll_interval=0.05))


async def test_a_laid_out_film_is_found_in_jellyfin_and_every_face_links_to_it(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, fake_jellyfin: FakeJellyfin,
    tmp_path: Path,
) -> None:
    paths = media_paths(qbittorrent, tmp_path)
    config = config_for(qbittorrent, paths, tmp_path, jellyfin_config(fake_jellyfin, paths),
                        fake_tmdb, fake_tvdb, fake_tvmaze)
    async with running(config) as app:
        events = app.bus.subscribe()
        done = await lay_out_the_matrix(app, qbittorrent)
        assert done.state is State.DONE
        found = await until(app, done.id, lambda d: d.jellyfin_status == "found")
        item = fake_jellyfin.items[f"/media/movies/{FOLDER}/{FOLDER}.mkv"]
        assert found.jellyfin_item_id == item.id
        assert found.jellyfin_url == f"{PUBLIC}/web/#/details?id={item.id}"
        assert found.state is State.DONE
        assert fake_jellyfin.refreshes >= 1

        detail = await app.commands.get(done.id)
        payload = DownloadDetail.model_validate(detail_payload(detail))
        assert payload.download.jellyfin is not None
        assert (payload.download.jellyfin.status, payload.download.jellyfin.item_id) == ("found", item.id)
        assert f"jellyfin: in Jellyfin: {found.jellyfin_url}" in format_detail(payload)      # `jellybit show`
        card = done_card(payload, panel="http://panel.lan")
        assert card.text.startswith("<b>In Jellyfin:</b> The Matrix (1999)")                # Telegram
        assert f"Open in Jellyfin: {found.jellyfin_url}" in card.text
        told = [e for e in iter(events.get_nowait, None) if e.event_type is EventKind.JELLYFIN]
        assert [e.reason for e in told] == ["found"]
        wire = event_payload(told[0], detail.recognition, "http://panel.lan").wire()          # MQTT, HA
        assert (wire["event_type"], wire["reason"], wire["url"]) == ("jellyfin", "found", found.jellyfin_url)
        assert wire["title"] == "The Matrix"


async def test_jellyfin_down_leaves_the_layout_done_with_a_note(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, tmp_path: Path,
) -> None:
    paths = media_paths(qbittorrent, tmp_path)
    down = JellyfinConfig(enabled=True, url=f"http://127.0.0.1:{free_port()}", api_key="k", timeout=1,
                          debounce_seconds=0.05, check_interval=0.05, confirm_within_seconds=0.5)
    config = config_for(qbittorrent, paths, tmp_path, down, fake_tmdb, fake_tvdb, fake_tvmaze)
    async with running(config) as app:
        done = await lay_out_the_matrix(app, qbittorrent)
        assert done.state is State.DONE                          # the layout never waited for Jellyfin
        assert (paths.movies / FOLDER / f"{FOLDER}.mkv").exists()
        noted = await until(app, done.id, lambda d: d.jellyfin_status == "unreachable")
    assert noted.state is State.DONE
    assert noted.error_code is None
    assert noted.jellyfin_item_id is None
    assert "Jellyfin could not be asked" in (noted.jellyfin_note or "")


async def test_an_item_jellyfin_never_lists_gets_a_warning_that_says_what_to_check(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, fake_jellyfin: FakeJellyfin,
    tmp_path: Path,
) -> None:
    paths = media_paths(qbittorrent, tmp_path)
    fake_jellyfin.hide("Matrix")                                 # Jellyfin cannot read the files
    jellyfin = jellyfin_config(fake_jellyfin, paths, confirm_within_seconds=0.5)
    config = config_for(qbittorrent, paths, tmp_path, jellyfin, fake_tmdb, fake_tvdb, fake_tvmaze)
    async with running(config) as app:
        done = await lay_out_the_matrix(app, qbittorrent)
        assert done.state is State.DONE
        missing = await until(app, done.id, lambda d: d.jellyfin_status == "missing")
        detail = await app.commands.get(done.id)
    assert missing.state is State.DONE
    note = missing.jellyfin_note or ""
    for what in (str(paths.movies / FOLDER), "jellyfin.path_map", "Scan All Libraries", "read the files"):
        assert what in note
    card = done_card(DownloadDetail.model_validate(detail_payload(detail)), panel="http://panel.lan")
    assert card.text.startswith("<b>Done, not in Jellyfin yet:</b>")
    assert fake_jellyfin.calls("/Items")[-1].param("MinDateLastSaved") is None       # looked thoroughly


async def test_a_root_no_library_covers_is_on_the_status_probe(fake_jellyfin: FakeJellyfin,
                                                               tmp_path: Path) -> None:
    """At start the libraries are compared with the roots; `info.jellyfin.detail` names the gap."""
    paths = PathsConfig(downloads=tmp_path / "d", movies=tmp_path / "media" / "movies",
                        series=tmp_path / "media" / "series")
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.mount("/media", tmp_path / "media")
    jellyfin = fake_jellyfin.config(check_interval=0.05, path_map=[
        JellyfinPathMapping(jellyfin="/media", local=str(tmp_path / "media"))])
    config = Config(paths=paths, storage=StorageConfig(database=tmp_path / "j.db"), jellyfin=jellyfin)
    async with running(config, worker=False) as app:
        deadline = asyncio.get_running_loop().time() + 10
        while not app.jellyfin.lookup.last_checks:
            assert asyncio.get_running_loop().time() < deadline
            await asyncio.sleep(0.05)
        status = await _probes(config, None, [], app.refresher, app.jellyfin.lookup)["jellyfin"]()
    assert status.connected is True                      # Jellyfin answers, but it is not all right
    assert status.state == "misconfigured"
    assert "jellyfin.path_map" in (status.hint or "")
    assert f"{paths.series} (series root): no Jellyfin library has it" in (status.detail or "")
    assert str(paths.movies) not in (status.detail or "").replace(str(paths.series), "")


async def test_a_confirmation_jellyfin_could_not_give_is_made_when_it_is_back(
    qbittorrent: QbittorrentInstance, fake_tmdb, fake_tvdb, fake_tvmaze, fake_jellyfin: FakeJellyfin,
    tmp_path: Path,
) -> None:
    """Jellyfin answers 503 through the layout and past the wait: done, `unreachable`; back: `found`."""
    paths = media_paths(qbittorrent, tmp_path)
    jellyfin = jellyfin_config(fake_jellyfin, paths, confirm_within_seconds=0.5)
    config = config_for(qbittorrent, paths, tmp_path, jellyfin, fake_tmdb, fake_tvdb, fake_tvmaze)
    fake_jellyfin.outage = Reply(503, "")
    async with running(config) as app:
        done = await lay_out_the_matrix(app, qbittorrent)
        assert done.state is State.DONE
        noted = await until(app, done.id, lambda d: d.jellyfin_status == "unreachable")
        assert "HTTP 503" in (noted.jellyfin_note or "")
        fake_jellyfin.outage = None
        fake_jellyfin.scan()                     # Jellyfin's own scan (its refresh was owed meanwhile)
        found = await until(app, done.id, lambda d: d.jellyfin_status == "found")
    assert found.jellyfin_item_id == fake_jellyfin.items[f"/media/movies/{FOLDER}/{FOLDER}.mkv"].id
    assert found.jellyfin_note is None
    assert found.state is State.DONE
