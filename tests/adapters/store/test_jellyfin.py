"""The store's Jellyfin confirmation (`download.jellyfin_*`, migration 0007) in a real SQLite file."""

from __future__ import annotations

from jellybit.adapters.store import Store
from jellybit.core.jellyfin import Confirmation
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.states import Actor, State

PATH = (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE)


async def a_download(store: Store, n: int, *, to: State = State.DONE) -> str:
    """A download walked along the happy path up to `to`."""
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"ref-{n}", f"Фильм {n}", "", (Infohash(f"{n:040x}", "v1"),)))
    download_id = created.download.id
    for state in PATH[:PATH.index(to) + 1]:
        await store.transition(download_id, state, reason="test", actor=Actor.WORKER)
    return download_id


async def test_only_a_done_download_is_tracked_and_listed_until_found(store: Store) -> None:
    done, active = await a_download(store, 1), await a_download(store, 2, to=State.RECOGNIZING)
    assert await store.jellyfin_track(active) is None
    tracked = await store.jellyfin_track(done)
    assert tracked is not None
    assert tracked.jellyfin_status == "pending"
    assert [d.id for d in await store.jellyfin_unconfirmed("2000-01-01T00:00:00.000000Z")] == [done]
    assert await store.jellyfin_unconfirmed("2999-01-01T00:00:00.000000Z") == []     # settled too long ago

    missing, changed = await store.jellyfin_record(done, Confirmation.MISSING, note="check the mapping")
    assert changed
    assert (missing.jellyfin_status, missing.jellyfin_note) == ("missing", "check the mapping")
    again, changed = await store.jellyfin_record(done, Confirmation.MISSING, note="check the mapping")
    assert not changed
    assert again.updated_at == missing.updated_at                  # a look-up alone is no change
    assert again.jellyfin_checked_at is not None
    assert again.jellyfin_checked_at >= missing.jellyfin_checked_at

    found, changed = await store.jellyfin_record(done, Confirmation.FOUND, item_id="a" * 32, url="http://x/")
    assert changed
    assert (found.jellyfin_item_id, found.jellyfin_url, found.jellyfin_note) == ("a" * 32, "http://x/", None)
    assert await store.jellyfin_unconfirmed("2000-01-01T00:00:00.000000Z") == []


async def test_a_download_that_left_done_is_not_written(store: Store) -> None:
    done = await a_download(store, 3)
    await store.jellyfin_track(done)
    await store.transition(done, State.REVERTED, reason="undo", actor=Actor.HUMAN)
    unchanged, changed = await store.jellyfin_record(done, Confirmation.FOUND, item_id="b" * 32)
    assert not changed
    assert unchanged.jellyfin_item_id is None
    assert await store.jellyfin_unconfirmed("2000-01-01T00:00:00.000000Z") == []


async def test_a_second_done_starts_over(store: Store) -> None:
    done = await a_download(store, 4)
    await store.jellyfin_track(done)
    await store.jellyfin_record(done, Confirmation.FOUND, item_id="c" * 32, url="http://x/")
    again = await store.jellyfin_track(done)
    assert again is not None
    assert (again.jellyfin_status, again.jellyfin_item_id, again.jellyfin_url) == ("pending", None, None)
