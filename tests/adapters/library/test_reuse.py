"""An apply right after its preview takes the preview's work; the journal still proves the disk."""

from __future__ import annotations

import gc
import os
from dataclasses import replace

import pytest

from jellybit.adapters.library.gc_pause import gc_paused
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.core.links import BatchStatus, LinkStatus
from jellybit.core.records import Plan
from tests.adapters.library.test_layouter import FOLDER, _after_journaling, _season


@pytest.fixture
def engine(store, media):
    return LayoutEngine(store, media.paths)


async def _previewed(engine, store, download, recognition):
    """What the pipeline does: preview, store the previewed plan as the current recognition."""
    preview = await engine.preview(download, recognition)
    return await store.save_recognition(download.id, replace(recognition, plan=preview.plan,
                                                             reasons=preview.reasons))


async def test_the_stored_plan_reads_back_equal_to_the_preview(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01", subtitles=True)
    preview = await engine.preview(download, recognition)
    stored = await _previewed(engine, store, download, recognition)
    assert stored.plan == preview.plan
    assert Plan.from_json(preview.plan.to_json()) == preview.plan


async def test_apply_after_its_preview_computes_nothing_again(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01", subtitles=True)
    stored = await _previewed(engine, store, download, recognition)
    assert engine.inspections == 1
    result = await engine.apply(download, stored)
    assert (result.outcome, result.linked) == ("done", 6)
    assert (engine.inspections, engine.previews.reused) == (1, 1)
    rows = await store.links_for_batch(result.batch_id)
    assert all(r.status is LinkStatus.LINKED and r.dst_ino == r.src_ino for r in rows)
    assert len(media.library_files()) == 6
    assert len(engine.previews) == 0          # taken once, and every layout operation forgets the rest


async def test_a_file_appearing_after_the_preview_is_caught_by_link_and_rolled_back(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    stored = await _previewed(engine, store, download, recognition)
    blocker = media.series / FOLDER / "Season 01" / "Fargo S01E03.mkv"
    blocker.parent.mkdir(parents=True)
    blocker.write_bytes(b"a file somebody put there after the preview")
    result = await engine.apply(download, stored)
    assert engine.previews.reused == 1
    assert result.outcome == "collision"
    assert media.library_files() == {str(blocker.relative_to(media.root))}
    assert blocker.read_bytes() == b"a file somebody put there after the preview"
    assert (await store.get_batch(result.batch_id)).status is BatchStatus.ROLLED_BACK


async def test_a_source_replaced_after_the_preview_is_never_linked(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01")
    stored = await _previewed(engine, store, download, recognition)
    source = media.downloads / "Fargo.S01" / "Fargo.S01.S01E02.mkv"
    media.forget(source)

    def recheck() -> None:
        fresh = source.with_name("fresh.part")
        fresh.write_bytes(b"rewritten by a recheck")
        os.replace(fresh, source)

    _after_journaling(store, monkeypatch, recheck)
    result = await engine.apply(download, stored)
    assert engine.previews.reused == 1
    assert result.outcome == "failed"
    assert "replaced since it was planned" in result.message
    assert media.library_files() == set()


async def test_a_layout_in_between_makes_apply_look_again(engine, store, media):
    s2, rec2 = await _season(store, media, "Fargo.S02", title="Fargo", season=2)
    stored = await _previewed(engine, store, s2, rec2)
    # Meanwhile another download of the same show is laid out under a differently spelt folder.
    s1, rec1 = await _season(store, media, "Fargo.S01", title="Фарго")
    assert (await engine.apply(s1, rec1)).outcome == "done"
    result = await engine.apply(s2, stored)
    assert result.outcome == "done"
    assert engine.previews.reused == 0
    # Looked at again, the second season converges into the folder the first one made.
    assert [p.name for p in media.series.iterdir()] == ["Фарго (2014) [tvdbid-269613]"]


async def test_another_recognition_is_not_reused(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    await _previewed(engine, store, download, recognition)
    other = await store.save_recognition(download.id, replace(recognition, year=2015))
    assert (await engine.apply(download, other)).outcome == "done"
    assert (engine.previews.reused, engine.inspections) == (0, 2)
    assert [p.name for p in media.series.iterdir()] == ["Fargo (2015) [tvdbid-269613]"]


async def test_an_old_preview_is_not_reused(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    engine.previews.max_age = 0.0
    stored = await _previewed(engine, store, download, recognition)
    assert (await engine.apply(download, stored)).outcome == "done"
    assert (engine.previews.reused, engine.inspections) == (0, 2)
    assert len(media.library_files()) == 3


def test_gc_stays_paused_until_the_outermost_block_ends() -> None:
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()                 # it was off before: it stays off
    finally:
        gc.enable()


async def test_a_layout_leaves_the_collector_as_it_found_it(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    stored = await _previewed(engine, store, download, recognition)
    assert gc.isenabled()
    assert (await engine.apply(download, stored)).outcome == "done"
    assert gc.isenabled()
