"""The worker's in-memory active set over a real SQLite store: what it sees, and when."""

from __future__ import annotations

import pytest

from jellybit.adapters.store import Store
from jellybit.core.models import NewDownload
from jellybit.core.states import Actor, State
from jellybit.engine.active_set import ActiveDownloads
from jellybit.engine.events import EventBus
from jellybit.engine.machine import change_state


async def _download(store: Store, name: str) -> str:
    created = await store.create_download_if_no_active(NewDownload("magnet", f"magnet:?dn={name}", name, ""))
    return created.download.id


async def test_a_change_is_seen_once_marked_and_a_settled_download_leaves(store: Store) -> None:
    first, second = await _download(store, "Первый"), await _download(store, "Second")
    active = ActiveDownloads(store)
    assert await active.refresh() == {first, second}            # the first refresh reads everything
    assert await active.refresh() == set()                      # nothing marked: no read at all
    await store.update_download(first, display_name="Переименован")
    assert active.get(first).display_name == "Первый"           # unannounced: the copy is as it was
    active.mark(first)
    assert active.changed(first)
    assert await active.refresh() == {first}
    assert active.get(first).display_name == "Переименован"
    assert not active.changed(first)
    await change_state(store, EventBus(), second, State.CANCELLED, reason="test", actor=Actor.HUMAN)
    active.mark(second)
    await active.refresh()
    assert active.get(second) is None
    assert active.ids_in(State.QUEUED) == {first}
    assert len(active) == 1


async def test_matches_tell_which_downloads_a_changed_torrent_concerns(store: Store) -> None:
    one, two = await _download(store, "One"), await _download(store, "Two")
    active = ActiveDownloads(store)
    await active.refresh()
    assert active.unmatched(State.QUEUED) == {one, two}         # never examined yet
    active.matched(one, "a" * 40)
    active.matched(two, None)
    assert active.owners(["a" * 40, "b" * 40]) == {one}
    assert active.unmatched(State.QUEUED) == {two}
    active.matched(one, "b" * 40)                               # its torrent is another one now
    assert active.owners(["a" * 40]) == set()
    assert active.owners(["b" * 40]) == {one}
    await change_state(store, EventBus(), one, State.CANCELLED, reason="test", actor=Actor.HUMAN)
    await active.reread(one)
    assert active.owners(["b" * 40]) == set()                   # a download that left keeps no match
    active.matched(one, "c" * 40)                               # a late examination of it changes nothing
    assert active.owners(["c" * 40]) == set()


async def test_a_read_that_failed_is_done_again_at_the_next_refresh(store: Store) -> None:
    download_id = await _download(store, "Kept")
    active = ActiveDownloads(store)
    await active.refresh()
    active.mark(download_id)
    active.reload()
    await store.close()
    with pytest.raises(RuntimeError, match="not open"):
        await active.refresh()
    await store.open()
    await store.update_download(download_id, display_name="Read again")
    assert download_id in await active.refresh()
    assert active.get(download_id).display_name == "Read again"
