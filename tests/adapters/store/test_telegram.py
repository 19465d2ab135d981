"""The Telegram transport's rows in a real SQLite file: ping queue, handled updates, named values."""

from __future__ import annotations

from pathlib import Path

import pytest

from jellybit import clock
from jellybit.adapters.store import Store
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.pings import PingStatus

LATER = "2999-01-01T00:00:00.000000Z"


async def a_download(store: Store, n: int = 1) -> str:
    """A queued download to hang pings on."""
    new = NewDownload("infohash", f"magnet:?xt=urn:btih:{n:040x}", f"Film {n}", "",
                      (Infohash(f"{n:040x}", "v1"),))
    return (await store.create_download_if_no_active(new)).download.id


async def test_queueing_is_idempotent_per_download_chat_and_key(store: Store) -> None:
    """The same transition queued twice (event and catch-up) is one ping; another chat is another."""
    download_id = await a_download(store)
    assert await store.telegram_enqueue(download_id, 1001, "review", "review@t1") is True
    assert await store.telegram_enqueue(download_id, 1001, "review", "review@t1") is False
    assert await store.telegram_enqueue(download_id, 1002, "review", "review@t1") is True
    assert await store.telegram_enqueue(download_id, 1001, "review", "review@defer:x", LATER) is True
    due = await store.telegram_due_pings(clock.now())
    assert [(p.chat_id, p.dedupe_key) for p in due] == [(1001, "review@t1"), (1002, "review@t1")]
    assert all(p.status is PingStatus.PENDING and p.attempts == 0 for p in due)
    assert await store.telegram_next_due() == due[0].next_attempt_at


async def test_a_ping_is_rescheduled_sent_and_found_by_its_message(store: Store) -> None:
    """Attempts count; a sent ping keeps its message id for replies; others of its kind are superseded."""
    download_id = await a_download(store)
    await store.telegram_enqueue(download_id, 1001, "review", "review@t1")
    await store.telegram_enqueue(download_id, 1001, "review", "review@defer:x", LATER)
    (ping,) = await store.telegram_due_pings(clock.now())
    await store.telegram_reschedule(ping.id, LATER, error="timed out")
    assert await store.telegram_due_pings(clock.now()) == []
    await store.telegram_reschedule(ping.id, clock.now(), attempted=False)
    (again,) = await store.telegram_due_pings(clock.now())
    assert again.attempts == 1
    assert again.last_error == "timed out"
    await store.telegram_mark_sent(ping.id, 77, has_photo=True)
    assert await store.telegram_supersede(download_id, 1001, "review", keep=ping.id) == 1
    found = await store.telegram_message_ping(1001, 77)
    assert found is not None
    assert (found.download_id, found.status, found.has_photo, found.attempts) == (
        download_id, PingStatus.SENT, True, 2)
    assert await store.telegram_message_ping(1002, 77) is None
    statuses = [p.status for p in await store.telegram_pings(download_id)]
    assert statuses == [PingStatus.SENT, PingStatus.SUPERSEDED]
    assert await store.telegram_next_due() is None


async def test_closing_only_settles_pending_pings(store: Store) -> None:
    """Dropped keeps its reason; a sent ping cannot be closed; only superseded/dropped are closing states."""
    download_id = await a_download(store)
    await store.telegram_enqueue(download_id, 1, "failed", "failed@t")
    (ping,) = await store.telegram_due_pings(clock.now())
    await store.telegram_close_ping(ping.id, PingStatus.DROPPED, "Bad Request: chat not found")
    (row,) = await store.telegram_pings(download_id)
    assert (row.status, row.last_error) == (PingStatus.DROPPED, "Bad Request: chat not found")
    await store.telegram_close_ping(ping.id, PingStatus.SUPERSEDED)
    assert (await store.telegram_pings(download_id))[0].status is PingStatus.DROPPED
    with pytest.raises(ValueError, match="superseded or dropped"):
        await store.telegram_close_ping(ping.id, PingStatus.SENT)


async def test_handled_updates_and_values_survive_a_reopen(tmp_path: Path) -> None:
    """Update ids and the event cursor are on disk; old update ids are forgotten."""
    path = tmp_path / "jellybit.db"
    async with Store(path) as store:
        assert await store.telegram_mark_update(500) is True
        assert await store.telegram_mark_update(500) is False
        await store.telegram_set_value("event_cursor", "2026-01-01T00:00:00.000000Z")
        await store.telegram_set_value("event_cursor", "2026-01-02T00:00:00.000000Z")
    async with Store(path) as store:
        assert await store.telegram_update_seen(500)
        assert not await store.telegram_update_seen(501)
        assert await store.telegram_value("event_cursor") == "2026-01-02T00:00:00.000000Z"
        assert await store.telegram_value("missing") is None
        assert await store.telegram_forget_updates(LATER) == 1
        assert not await store.telegram_update_seen(500)


async def test_pings_go_with_their_download(store: Store) -> None:
    """ON DELETE CASCADE: a deleted download takes its pings along."""
    download_id = await a_download(store)
    await store.telegram_enqueue(download_id, 1, "done", "done@t")
    async with store.write() as conn:
        await conn.execute("DELETE FROM download WHERE id = ?", (download_id,))
    assert await store.telegram_pings(download_id) == []
