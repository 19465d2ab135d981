"""`apply_files`: a pack's complete files laid out while the rest downloads, each group its own batch;
`place_of`: where a path qBittorrent reports is on this machine (real files, a real SQLite store)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.core.links import BatchStatus, LinkStatus
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role
from tests.adapters.library.test_layouter import _download

NAME = "Fargo.S01"
EPISODES = [f"{NAME}/{NAME}.E0{e}.mkv" for e in (1, 2, 3)]


@pytest.fixture
def engine(store, media):
    return LayoutEngine(store, media.paths)


async def _pack(store, media):
    """A three-episode pack whose recognition is decided while only the first episode is on disk."""
    download = await _download(store, media, NAME)
    media.source(EPISODES[0], b"episode 1")
    items = tuple(PlanItem(src, 9, Role.VIDEO, season=1, episodes=(e,)) for e, src in enumerate(EPISODES, 1))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Fargo", year=2014, plan=Plan(items),
        provider="tvdb", provider_id="269613"))
    return download, recognition


async def test_complete_files_are_laid_out_one_batch_each(engine, store, media) -> None:
    download, recognition = await _pack(store, media)
    first = await engine.apply_files(download, recognition, frozenset(EPISODES[:1]))
    assert (first.outcome, first.linked) == ("done", 1)
    assert len(media.library_files()) == 1
    rows = await store.links_for_download(download.id)
    assert [(r.src_path.endswith(EPISODES[0]), r.status) for r in rows] == [(True, LinkStatus.LINKED)]

    again = await engine.apply_files(download, recognition, frozenset(EPISODES[:1]))
    assert (again.outcome, again.linked, again.batch_id) == ("done", 0, None)   # nothing new: no batch

    media.source(EPISODES[1], b"episode 2")
    second = await engine.apply_files(download, recognition, frozenset(EPISODES[:2]))
    assert (second.outcome, second.linked) == ("done", 1)
    batches = await store.batches_for_download(download.id)
    assert [b.status for b in batches] == [BatchStatus.COMMITTED, BatchStatus.COMMITTED]

    media.source(EPISODES[2], b"episode 3")
    full = await engine.apply(download, recognition)       # the completion's apply
    assert (full.outcome, full.linked, full.existing) == ("done", 1, 2)
    assert len(media.library_files()) == 3
    # The completion's batch owns every file now (the early rows are superseded, as by any re-apply).
    rows = await store.links_for_batch(full.batch_id)
    assert sorted((os.path.basename(r.src_path), r.status) for r in rows) == [
        ("Fargo.S01.E01.mkv", LinkStatus.EXISTS), ("Fargo.S01.E02.mkv", LinkStatus.EXISTS),
        ("Fargo.S01.E03.mkv", LinkStatus.LINKED)]
    early = await store.links_for_download(download.id, [LinkStatus.SUPERSEDED])
    assert len(early) == 2


async def test_a_file_not_there_yet_waits_and_writes_nothing(engine, store, media) -> None:
    """qBittorrent said complete but the file is not at its final name yet (a rename in flight)."""
    download, recognition = await _pack(store, media)
    with pytest.raises(Exception, match=r"missing|not found|No such") as caught:
        await engine.apply_files(download, recognition, frozenset(EPISODES[1:2]))
    assert getattr(caught.value, "code", None) is not None
    assert media.library_files() == set()
    assert await store.batches_for_download(download.id) == []


def test_place_of_tells_the_filesystem_and_downloads(engine, media) -> None:
    inside = engine.place_of(str(media.downloads / "incomplete" / "not-yet"))
    assert inside.inside_downloads
    assert inside.device == os.stat(media.downloads).st_dev      # the nearest existing folder's
    outside = engine.place_of(str(media.root / "elsewhere"))
    assert not outside.inside_downloads
    if os.stat("/dev/shm").st_dev != os.stat(media.downloads).st_dev:
        with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
            assert engine.place_of(shm).device != inside.device


def test_place_of_follows_the_path_map(store, media) -> None:
    paths = type(media.paths).model_validate({**media.paths.model_dump(), "path_map": [
        {"qbittorrent": "/downloads", "local": str(media.downloads)}]})
    engine = LayoutEngine(store, paths)
    place = engine.place_of("/downloads/incomplete")
    assert place.local == str(Path(media.downloads) / "incomplete")
    assert place.inside_downloads
