"""Per-download serialization keeps state only for downloads something is working on."""

from __future__ import annotations

import asyncio

from jellybit.adapters.store import Store
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.states import Actor, State
from jellybit.engine.events import EventBus
from jellybit.engine.serial import Serializer


async def new_download(store: Store, n: int) -> str:
    """A queued download with its own v1 hash."""
    infohash = f"{n:040x}"
    new = NewDownload("magnet", f"magnet:?xt=urn:btih:{infohash}", f"Сериал {n}", "",
                      (Infohash(infohash, "v1"),))
    result = await store.create_download_if_no_active(new)
    return result.download.id


async def test_a_lock_exists_only_while_it_is_held_or_awaited(store: Store) -> None:
    serial = Serializer(store, EventBus())
    order: list[str] = []
    entered = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with serial.serialized("x"):
            order.append("first in")
            entered.set()
            await release.wait()
            order.append("first out")

    async def second() -> None:
        await entered.wait()
        async with serial.serialized("x"):
            order.append("second in")

    tasks = [asyncio.create_task(first()), asyncio.create_task(second())]
    await entered.wait()
    await asyncio.sleep(0)
    assert serial.busy("x")
    assert serial.held() == 1
    release.set()
    await asyncio.gather(*tasks)
    assert order == ["first in", "first out", "second in"]     # still one lock for both
    assert not serial.busy("x")
    assert serial.held() == 0
    assert serial.tracked() == 0


async def test_a_cancelled_waiter_leaves_no_lock_behind(store: Store) -> None:
    serial = Serializer(store, EventBus())
    async with serial.serialized("x"):
        waiter = asyncio.create_task(serial.serialized("x").__aenter__())
        await asyncio.sleep(0)
        waiter.cancel()
        await asyncio.gather(waiter, return_exceptions=True)
    assert serial.held() == 0


async def test_settled_downloads_leave_no_state_however_many(store: Store) -> None:
    serial = Serializer(store, EventBus())
    ids = [await new_download(store, n) for n in range(300)]
    for download_id in ids:
        async with serial.serialized(download_id):
            await serial.change(download_id, State.DOWNLOADING, reason="t", actor=Actor.WORKER)
            await serial.change(download_id, State.CANCELLED, reason="t", actor=Actor.HUMAN)
    assert serial.tracked() == 0
    assert serial.epochs() == {}


async def test_an_active_download_keeps_its_epoch_and_a_stale_stage_stays_stale(store: Store) -> None:
    serial = Serializer(store, EventBus())
    download_id = await new_download(store, 1)
    await serial.change(download_id, State.DOWNLOADING, reason="t", actor=Actor.WORKER)
    before = serial.epoch(download_id)
    assert before > 0
    assert serial.epochs() == {download_id: before}
    gate = asyncio.Event()
    assert serial.spawn(download_id, "recognize", gate.wait)
    stage = serial.stage(download_id)
    assert stage is not None
    assert stage.epoch == before
    await serial.change(download_id, State.CANCELLED, reason="t", actor=Actor.HUMAN)
    # Settled, but the stage still refers to it: the epoch stays, and the stage is stale.
    assert serial.stage(download_id) is None
    assert serial.epoch(download_id) != before
    gate.set()
    await serial.wait_stage(download_id)
    await asyncio.sleep(0)
    assert serial.tracked() == 0
    # Dropped: it reads 0, which no epoch recorded after a change ever is.
    assert serial.epoch(download_id) == 0 != stage.epoch
    assert serial.forgotten == 1


async def test_a_finished_stage_is_forgotten_and_a_new_one_can_start(store: Store) -> None:
    serial = Serializer(store, EventBus())
    download_id = await new_download(store, 2)
    runs: list[int] = []

    async def stage() -> None:
        runs.append(1)

    assert serial.spawn(download_id, "apply", stage)
    await serial.wait_stage(download_id)
    await asyncio.sleep(0)
    assert serial.tracked() == 0
    assert serial.spawn(download_id, "apply", stage)
    await serial.wait_stage(download_id)
    assert runs == [1, 1]
