"""kill -9 at random moments of apply, undo and recovery, with hardlinks and with the copy fallback:
after the worker's recovery every invariant holds, and finishing the operation lays every file
exactly once (or removes every link). The heavy version with thousands of files and hundreds of
kills is `bench/faults.py`; this is a representative few, with fixed seeds."""

from __future__ import annotations

import random

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.store import Store
from tests.support.faults import check_invariants, kill_at_random, planned_files, season_pack, timed
from tests.support.media import Media

FILES = 120
KILLS = 3


@pytest.mark.parametrize("copy", [False, True], ids=["hardlinks", "copy-fallback"])
async def test_kill_9_during_apply_and_undo_then_recovery(store: Store, media: Media, copy: bool) -> None:
    download, recognition = await season_pack(store, media, "Pack", FILES)
    engine = LayoutEngine(store, media.paths, chunk=64)
    expected = planned_files(recognition)
    applying = timed(store.path, media, download.id, "apply", copy=copy)
    undoing = timed(store.path, media, download.id, "undo", copy=copy)
    assert (await check_invariants(store, media, download.id))["live"] == 0
    rng = random.Random(15 + copy)
    for _round in range(KILLS):
        kill_at_random(store.path, media, download.id, "apply", copy=copy, rng=rng, within=applying)
        await engine.recover()                                   # what the worker does at start
        await check_invariants(store, media, download.id)
        result = await engine.apply(download, recognition)       # the download is still `applying`
        assert result.outcome == "done", result.message
        assert (await check_invariants(store, media, download.id))["live"] == expected

        kill_at_random(store.path, media, download.id, "undo", copy=copy, rng=rng, within=undoing)
        await engine.recover()
        await check_invariants(store, media, download.id, undo_interrupted=True)
        assert (await engine.undo(download)).complete
        assert (await check_invariants(store, media, download.id))["live"] == 0


async def test_kill_9_during_recovery_itself(store: Store, media: Media) -> None:
    download, recognition = await season_pack(store, media, "Pack", FILES)
    engine = LayoutEngine(store, media.paths, chunk=16)
    expected = planned_files(recognition)
    applying = timed(store.path, media, download.id, "apply", copy=False, chunk=16)
    assert (await engine.undo(download)).complete
    rng = random.Random(1515)
    for _round in range(KILLS):
        kill_at_random(store.path, media, download.id, "apply", copy=False, rng=rng, within=applying,
                       chunk=16)
        # A crash, then another one while the restarted worker recovers, then a clean restart.
        kill_at_random(store.path, media, download.id, "recover", copy=False, rng=rng, within=applying / 2,
                       chunk=16)
        await engine.recover()
        await check_invariants(store, media, download.id)
        assert (await engine.apply(download, recognition)).outcome == "done"
        assert (await check_invariants(store, media, download.id))["live"] == expected
        assert (await engine.undo(download)).complete
