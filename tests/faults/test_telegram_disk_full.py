"""Telegram pings while the database's disk is full: a real SQLite store on a small tmpfs filled up
and freed (root is needed; in CI a failure to mount fails the test), the real transport and the fake
Bot API. The ping of a download that reached review just before the disk filled waits in memory,
with one log line and no traceback, and is sent once there is room."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jellybit.adapters.storage_watch import StorageWatch
from jellybit.adapters.store import Store
from jellybit.core.pings import PingStatus
from tests.support.fake_telegram import TOKEN, FakeTelegram
from tests.support.qbittorrent import eventually
from tests.support.storage import fill, tmpfs
from tests.support.telegram_bot import ANNA, BotFactory, to_review


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """The engine's store on a 4 MiB tmpfs of its own, watched as the worker watches it."""
    with tmpfs(tmp_path / "db", 4096) as folder:
        s = Store(folder / "jellybit.db")
        s.watch = StorageWatch(s.path, {})
        s.watch.try_write = s.try_write
        await s.open()
        try:
            yield s
        finally:
            await s.close()


async def test_a_full_database_disk_keeps_the_ping_until_there_is_room(
        make_bot: BotFactory, fake_telegram: FakeTelegram, store: Store, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    bot = await make_bot(start=False)
    pinger = bot.transport.pinger
    await pinger.catch_up()                              # the cursor, as the first start sets it
    download_id = await to_review(bot.engine)            # its event waits in the bot's subscription
    filler = fill(tmp_path / "db")
    caplog.set_level(logging.INFO)
    try:
        await bot.start()

        async def held() -> bool:
            return pinger.held >= 1
        await eventually(held)
        await fake_telegram.until(lambda: fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
        await asyncio.sleep(0.3)
        rows = await store.telegram_pings(download_id)
        current = store.watch.fault("database") if store.watch else None
    finally:
        filler.unlink()
    assert rows == []
    assert current is not None
    assert current.code == "storage_full"
    waiting = [r for r in caplog.records if "wait in memory" in r.getMessage()]
    assert len(waiting) == 1
    assert "the database disk is full" in waiting[0].getMessage()
    assert not [s for s in fake_telegram.outbox() if s.text.startswith("Needs review")]

    card = await bot.card(download_id, within=30.0)
    assert card.buttons
    async def sent() -> bool:
        return any(p.status is PingStatus.SENT for p in await store.telegram_pings(download_id))
    await eventually(sent)
    assert pinger.held == 0
    assert len([s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")]) == 1
    assert not [r for r in caplog.records if r.exc_info and r.name.startswith("jellybit")]


async def test_a_ping_sent_while_the_disk_is_full_goes_once_and_is_recorded_when_there_is_room(
        make_bot: BotFactory, fake_telegram: FakeTelegram, store: Store, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """The ping was queued before the disk filled; Telegram took it, the database refused to mark it
    sent. It is not sent again on any later round, nor after the fault: the sender records it then."""
    bot = await make_bot(start=False)
    pinger = bot.transport.pinger
    await pinger.catch_up()
    download_id = await to_review(bot.engine)
    while (event := pinger.subscription.get_nowait()) is not None:
        await pinger.on_event(event)                     # queued while there is room, as the bot does
    (queued,) = await store.telegram_pings(download_id)
    assert queued.status is PingStatus.PENDING
    caplog.set_level(logging.INFO)
    filler = fill(tmp_path / "db")
    try:
        assert await pinger.send_due() == 1              # Telegram has it; the database refuses the mark
        assert pinger.unrecorded == 1
        for _ in range(3):                               # the sender's later rounds during the fault
            assert await pinger.send_due() == 0
            assert await pinger.record_unrecorded() == 0
        during = await store.telegram_pings(download_id)
    finally:
        filler.unlink()
    assert [p.status for p in during] == [PingStatus.PENDING]      # the database could not learn it
    cards = [s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")]
    assert len(cards) == 1
    waiting = [r for r in caplog.records if "wait in memory to be recorded" in r.getMessage()]
    assert len(waiting) == 1
    assert "the database disk is full" in waiting[0].getMessage()

    await bot.start()                                    # room again: the sender's loop records it

    async def recorded() -> bool:
        return [(p.status, p.message_id) for p in await store.telegram_pings(download_id)] == [
            (PingStatus.SENT, cards[0].message["message_id"])]
    await eventually(recorded)
    assert pinger.unrecorded == 0
    pinger.wake()
    assert await pinger.send_due() == 0
    await fake_telegram.until(lambda: fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
    assert len([s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")]) == 1
    assert not [r for r in caplog.records if r.exc_info and r.name.startswith("jellybit")]
