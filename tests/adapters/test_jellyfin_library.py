"""JellyfinLibraries against a local Jellyfin speaking 10.10's shapes, over real HTTP and real folders."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from jellybit.adapters.jellyfin_library import JellyfinLibraries, library_checks
from jellybit.config import JellyfinConfig, JellyfinPathMapping, PathsConfig
from jellybit.core.jellyfin import Wanted
from jellybit.errors import AdapterError
from tests.support.fake_metadata import FakeJellyfin
from tests.support.services import free_port

MOVIE = "The Matrix (1999) [tmdbid-603]"
SHOW = "Фарго (2014) [tvdbid-269613]"


def since(minutes: float = 60) -> str:
    """A `MinDateLastSaved` that many minutes ago."""
    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
def media(tmp_path: Path) -> PathsConfig:
    """Jellybit's roots on disk: one film and one season laid out (real files)."""
    paths = PathsConfig(downloads=tmp_path / "downloads", movies=tmp_path / "media" / "movies",
                        series=tmp_path / "media" / "series")
    (paths.movies / MOVIE).mkdir(parents=True)
    (paths.movies / MOVIE / f"{MOVIE}.mkv").write_bytes(b"x" * 10)
    (paths.movies / MOVIE / f"{MOVIE}.en.srt").write_text("1\n", encoding="utf-8")
    season = paths.series / SHOW / "Season 02"
    season.mkdir(parents=True)
    for n in (1, 2):
        (season / f"Фарго S02E0{n}.mkv").write_bytes(b"y" * n)
    return paths


def mapped(fake: FakeJellyfin, media: PathsConfig, **overrides: object) -> JellyfinConfig:
    """Jellyfin in a container sees `<tmp>/media` as `/media`; the config says so."""
    fake.mount("/media", media.movies.parent)
    return fake.config(path_map=[JellyfinPathMapping(jellyfin="/media", local=str(media.movies.parent))],
                       **overrides)


def film(media: PathsConfig) -> Wanted:
    """What the laid-out film should have become."""
    folder = media.movies / MOVIE
    return Wanted("d1", "movie", str(folder), frozenset({str(folder / f"{MOVIE}.mkv")}), "tmdb", "603")


async def test_libraries_are_read_and_their_folders_translated(fake_jellyfin: FakeJellyfin,
                                                               media: PathsConfig) -> None:
    movies_id = fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series/")
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    try:
        found = await libraries.libraries()
        checks = await libraries.check()
    finally:
        await libraries.close()
    assert [(lib.name, lib.collection_type, lib.locations) for lib in found] == [
        ("Movies", "movies", (str(media.movies),)), ("Shows", "tvshows", (str(media.series),))]
    assert found[0].item_id == movies_id
    assert [(c.kind, c.ok, c.library) for c in checks] == [("movie", True, "Movies"),
                                                           ("series", True, "Shows")]
    calls = fake_jellyfin.calls("/Library/VirtualFolders")
    assert len(calls) == 2
    assert all(c.headers["x-emby-token"] == FakeJellyfin.API_KEY for c in calls)


async def test_a_root_no_library_covers_is_reported_once(fake_jellyfin: FakeJellyfin, media: PathsConfig,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Kids", "tvshows", "/media/series/kids")      # only part of the series root
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    caplog.set_level(logging.INFO, logger="jellybit.adapters.jellyfin_library")
    try:
        first = await libraries.check()
        await libraries.check()
    finally:
        await libraries.close()
    series = next(c for c in first if c.kind == "series")
    assert not series.ok
    assert series.library is None
    assert str(media.series) in series.problem
    assert "Kids" in series.problem
    assert "jellyfin.path_map" in series.problem
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1
    assert str(media.series) in warned[0]


async def test_without_the_path_map_no_root_is_covered(fake_jellyfin: FakeJellyfin,
                                                       media: PathsConfig) -> None:
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series")
    checks = await library_checks(fake_jellyfin.config(), media)       # Jellyfin's /media is not <tmp>/media
    assert [ok for _, ok, _ in checks] == [False, False]
    assert all("no Jellyfin library has it" in detail for _, _, detail in checks)


async def test_a_library_of_the_wrong_type_is_a_problem(fake_jellyfin: FakeJellyfin,
                                                        media: PathsConfig) -> None:
    fake_jellyfin.add_library("Everything", "music", "/media")
    fake_jellyfin.add_library("Shows", None, "/media/series")             # mixed content: takes both
    checks = dict((name, (ok, detail)) for name, ok, detail in
                  await library_checks(mapped(fake_jellyfin, media), media))
    ok, detail = checks["jellyfin movie root"]
    assert not ok
    assert "'Everything' of type music, not movies" in detail
    assert checks["jellyfin series root"][0]


async def test_a_film_is_found_by_its_video_path_after_the_rescan(fake_jellyfin: FakeJellyfin,
                                                                  media: PathsConfig) -> None:
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    try:
        (library,) = await libraries.libraries()
        assert await libraries.find(film(media), library, since(), thorough=False) is None   # not scanned
        fake_jellyfin.scan()
        found = await libraries.find(film(media), library, since(), thorough=False)
    finally:
        await libraries.close()
    item = fake_jellyfin.items[f"/media/movies/{MOVIE}/{MOVIE}.mkv"]
    assert found is not None
    assert (found.item_id, found.how, found.name) == (item.id, "path", "The Matrix")
    call = fake_jellyfin.calls("/Items")[-1]
    assert call.param("ParentId") == library.item_id
    assert call.param("IncludeItemTypes") == "Movie"
    assert call.param("Recursive") == "true"
    assert call.param("Fields") == "Path,ProviderIds"
    assert call.param("MinDateLastSaved")


async def test_an_episode_stands_for_its_series(fake_jellyfin: FakeJellyfin, media: PathsConfig) -> None:
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series")
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    fake_jellyfin.scan()
    folder = media.series / SHOW
    wanted = Wanted("d2", "series", str(folder),
                    frozenset({str(folder / "Season 02" / "Фарго S02E02.mkv")}), "tvdb", "269613")
    try:
        (library,) = await libraries.libraries()
        found = await libraries.find(wanted, library, since(), thorough=False)
    finally:
        await libraries.close()
    series = fake_jellyfin.items[f"/media/series/{SHOW}"]
    assert found is not None
    assert (found.item_id, found.name) == (series.id, "Фарго")
    assert fake_jellyfin.calls("/Items")[-1].param("IncludeItemTypes") == "Episode"


async def test_an_item_saved_before_the_layout_is_found_only_thoroughly(fake_jellyfin: FakeJellyfin,
                                                                        media: PathsConfig) -> None:
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    fake_jellyfin.scan()
    later = (datetime.now(UTC) + timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        (library,) = await libraries.libraries()
        assert await libraries.find(film(media), library, later, thorough=False) is None
        found = await libraries.find(film(media), library, later, thorough=True)
    finally:
        await libraries.close()
    assert found is not None
    assert found.how == "path"
    assert fake_jellyfin.calls("/Items")[-1].param("MinDateLastSaved") is None


async def test_a_provider_id_matches_when_the_paths_do_not(fake_jellyfin: FakeJellyfin,
                                                           media: PathsConfig) -> None:
    """Jellyfin reads the film under a path Jellybit cannot map: the tmdb id still names it."""
    fake_jellyfin.add_library("Movies", "movies", "/data/films")
    fake_jellyfin.mount("/data/films", media.movies)
    fake_jellyfin.scan()
    libraries = JellyfinLibraries(fake_jellyfin.config(), media)
    try:
        (library,) = await libraries.libraries()
        found = await libraries.find(film(media), library, since(), thorough=False)
    finally:
        await libraries.close()
    assert found is not None
    assert found.how == "provider id"


async def test_an_unreadable_file_never_appears(fake_jellyfin: FakeJellyfin, media: PathsConfig) -> None:
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series")
    fake_jellyfin.hide("Matrix")
    libraries = JellyfinLibraries(mapped(fake_jellyfin, media), media)
    fake_jellyfin.scan()
    try:
        library = (await libraries.libraries())[0]
        assert await libraries.find(film(media), library, since(), thorough=True) is None
    finally:
        await libraries.close()
    assert len(fake_jellyfin.items) == 3                # the show was scanned; only the film is missing


async def test_a_naive_path_filter_is_not_jellyfins_api(fake_jellyfin: FakeJellyfin,
                                                        media: PathsConfig) -> None:
    """`/Items?Path=` is ignored, as Jellyfin ignores it: every item comes back, so matching is ours."""
    fake_jellyfin.add_library("Movies", "movies", "/media/movies")
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series")
    mapped(fake_jellyfin, media)
    fake_jellyfin.scan()
    async with httpx.AsyncClient(base_url=fake_jellyfin.origin,
                                 headers={"X-Emby-Token": FakeJellyfin.API_KEY}) as client:
        answer = (await client.get("/Items", params={"Recursive": "true", "Path": "/nowhere"})).json()
    assert answer["TotalRecordCount"] == len(fake_jellyfin.items) == 4
    assert all("Path" not in item for item in answer["Items"])              # only with Fields=Path


async def test_jellyfin_down_or_refusing_the_key_is_an_adapter_error(fake_jellyfin: FakeJellyfin,
                                                                     media: PathsConfig) -> None:
    down = JellyfinLibraries(JellyfinConfig(enabled=True, url=f"http://127.0.0.1:{free_port()}",
                                            api_key="k", timeout=1), media)
    with pytest.raises(AdapterError, match="unreachable"):
        await down.libraries()
    await down.close()
    refused = JellyfinLibraries(fake_jellyfin.config(api_key="wrong"), media)
    with pytest.raises(AdapterError, match="API key was rejected"):
        await refused.libraries()
    await refused.close()
    fake_jellyfin.outage = None
    checks = await library_checks(JellyfinConfig(enabled=True, url=f"http://127.0.0.1:{free_port()}",
                                                 api_key="k", timeout=1), media)
    assert checks == [("jellyfin libraries", False, "jellyfin: unreachable (ConnectError)")]
