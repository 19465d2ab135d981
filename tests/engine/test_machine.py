"""The one state-changing function and the event bus, over a real SQLite store."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from jellybit.adapters.store import Store
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.states import Actor, State
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.machine import change_state
from jellybit.errors import Conflict, InvalidState

HASH = "a" * 40


async def new_download(store: Store, infohash: str = HASH) -> str:
    """A queued download with one v1 hash."""
    result = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{infohash}", "Фильм", "", (Infohash(infohash, "v1"),))
    )
    return result.download.id


async def walk(store: Store, bus: EventBus, download_id: str, *states: State) -> None:
    """Move a download through states with the real machine."""
    for state in states:
        await change_state(store, bus, download_id, state, reason="test", actor=Actor.WORKER)


class CommitCheckingBus(EventBus):
    """A bus that, at the moment of publishing, reads the database through a second connection."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.seen: list[tuple[str, str | None, int]] = []

    def publish(self, event: Event) -> None:
        with sqlite3.connect(self.path) as conn:
            state = conn.execute("SELECT state FROM download WHERE id = ?", (event.download_id,)).fetchone()
            rows = conn.execute(
                "SELECT COUNT(*) FROM state_transition WHERE download_id = ? AND to_state = ?",
                (event.download_id, event.to_state),
            ).fetchone()
        self.seen.append((event.event_type, state[0] if state else None, rows[0]))
        super().publish(event)


async def test_change_is_committed_before_the_event_is_published(store: Store) -> None:
    bus = CommitCheckingBus(str(store.path))
    download_id = await new_download(store)
    await change_state(store, bus, download_id, State.DOWNLOADING, reason="qBittorrent has it",
                       actor=Actor.WORKER)
    # Another connection already saw the new state and its history row when the event went out.
    assert bus.seen == [("state_changed", "downloading", 1)]


async def test_state_changed_carries_the_transition(store: Store) -> None:
    bus = EventBus()
    sub = bus.subscribe()
    download_id = await new_download(store)
    download = await change_state(store, bus, download_id, State.DOWNLOADING, reason="qBittorrent has it",
                                  actor=Actor.WORKER, fields={"progress": 0.25})
    event = sub.get_nowait()
    assert event is not None
    assert (event.event_type, event.download_id) == (EventKind.STATE_CHANGED, download_id)
    assert event.name == "Фильм"
    assert (event.from_state, event.to_state, event.reason, event.actor) == (
        State.QUEUED, State.DOWNLOADING, "qBittorrent has it", Actor.WORKER)
    assert download.progress == 0.25
    history = await store.transitions(download_id)
    assert [(t.from_state, t.to_state, t.reason, t.actor) for t in history][-1] == (
        State.QUEUED, State.DOWNLOADING, "qBittorrent has it", Actor.WORKER)
    assert event.at == history[-1].created_at
    assert sub.get_nowait() is None


@pytest.mark.parametrize(("path", "follow_up"), [
    ((State.DOWNLOADING, State.RECOGNIZING, State.REVIEW), EventKind.REVIEW_REQUESTED),
    ((State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE), EventKind.DONE),
])
async def test_review_and_done_emit_their_own_event(store: Store, path: tuple[State, ...],
                                                    follow_up: EventKind) -> None:
    bus = EventBus()
    download_id = await new_download(store)
    await walk(store, bus, download_id, *path[:-1])
    sub = bus.subscribe()
    await change_state(store, bus, download_id, path[-1], reason="test", actor=Actor.WORKER)
    kinds = [sub.get_nowait(), sub.get_nowait(), sub.get_nowait()]
    assert [k.event_type if k else None for k in kinds] == [EventKind.STATE_CHANGED, follow_up, None]


async def test_failed_carries_the_error(store: Store) -> None:
    bus = EventBus()
    download_id = await new_download(store)
    await walk(store, bus, download_id, State.DOWNLOADING)
    sub = bus.subscribe()
    download = await change_state(store, bus, download_id, State.FAILED, reason="stalled: no progress",
                                  actor=Actor.WORKER,
                                  fields={"error_code": "stalled", "error_msg": "no progress"})
    assert download.settled_at is not None
    sub.get_nowait()
    failed = sub.get_nowait()
    assert failed is not None
    assert failed.event_type is EventKind.FAILED
    assert failed.data == {"error_code": "stalled", "error_msg": "no progress"}


async def test_a_refused_change_changes_and_publishes_nothing(store: Store) -> None:
    bus = EventBus()
    sub = bus.subscribe()
    download_id = await new_download(store)
    before = await store.transitions(download_id)
    with pytest.raises(InvalidState, match="not possible in state queued"):
        await change_state(store, bus, download_id, State.DONE, reason="skip ahead", actor=Actor.WORKER)
    with pytest.raises(InvalidState, match="expected downloading"):
        await change_state(store, bus, download_id, State.CANCELLED, reason="cancel", actor=Actor.HUMAN,
                           expected=State.DOWNLOADING)
    assert await store.transitions(download_id) == before
    assert (await store.get_download(download_id)).state is State.QUEUED
    assert sub.get_nowait() is None


async def test_settled_to_active_needs_the_guarded_path(store: Store) -> None:
    bus = EventBus()
    download_id = await new_download(store)
    await walk(store, bus, download_id, State.CANCELLED)
    with pytest.raises(InvalidState, match="activate_if_no_other_active"):
        await change_state(store, bus, download_id, State.QUEUED, reason="retry", actor=Actor.HUMAN)
    download = await change_state(store, bus, download_id, State.QUEUED, reason="retry", actor=Actor.HUMAN,
                                  reactivate=True)
    assert download.state is State.QUEUED
    assert download.settled_at is None


async def test_reactivation_is_refused_when_another_active_download_owns_a_hash(store: Store) -> None:
    bus = EventBus()
    first = await new_download(store)
    await walk(store, bus, first, State.CANCELLED)
    second = await new_download(store)          # allowed: the first one is settled
    assert second != first
    sub = bus.subscribe()
    before = await store.transitions(first)
    with pytest.raises(Conflict, match=second):
        await change_state(store, bus, first, State.QUEUED, reason="retry", actor=Actor.HUMAN,
                           reactivate=True)
    assert await store.transitions(first) == before
    assert sub.get_nowait() is None


# ---------------------------------------------------------------- the event bus


def progress(download_id: str, value: float) -> Event:
    return Event(EventKind.PROGRESS, download_id, data={"progress": value})


def changed(download_id: str, to: State) -> Event:
    return Event(EventKind.STATE_CHANGED, download_id, to_state=to)


async def test_a_full_queue_drops_the_oldest_progress_but_never_a_state_event() -> None:
    bus = EventBus()
    sub = bus.subscribe(maxsize=3)
    bus.publish(progress("a", 0.1))
    bus.publish(changed("a", State.DOWNLOADING))
    bus.publish(progress("a", 0.2))
    bus.publish(progress("a", 0.3))             # full: the 0.1 progress goes
    bus.publish(changed("a", State.RECOGNIZING))  # full: the 0.2 progress goes
    bus.publish(changed("a", State.REVIEW))       # full of state events but one progress: 0.3 goes
    bus.publish(changed("a", State.APPLYING))     # only state events left: the queue grows instead
    bus.publish(progress("a", 0.9))               # a new progress into a queue of state events is dropped
    got = []
    while (event := sub.get_nowait()) is not None:
        got.append((event.event_type.value, event.to_state or event.data["progress"]))
    assert got == [("state_changed", "downloading"), ("state_changed", "recognizing"),
                   ("state_changed", "review"), ("state_changed", "applying")]
    assert sub.dropped == 4


async def test_a_slow_subscriber_never_blocks_publishing_or_other_subscribers() -> None:
    bus = EventBus()
    slow = bus.subscribe(maxsize=2)
    fast = bus.subscribe(maxsize=2000)
    received: list[Event] = []

    async def consume() -> None:
        async for event in fast:
            received.append(event)

    consumer = asyncio.create_task(consume())
    for i in range(1000):
        bus.publish(progress("a", i / 1000))       # synchronous: returns at once
    await asyncio.sleep(0)
    fast.close()
    await asyncio.wait_for(consumer, 5)
    assert len(received) == 1000
    assert len(slow) == 2
    assert slow.dropped == 998
    assert bus.subscriber_count == 1


async def test_closing_ends_iteration_after_draining() -> None:
    bus = EventBus()
    sub = bus.subscribe()
    bus.publish(changed("a", State.DOWNLOADING))
    waiter = asyncio.create_task(sub.get())
    first = await asyncio.wait_for(waiter, 5)
    assert first.to_state is State.DOWNLOADING
    pending = asyncio.create_task(sub.get())
    await asyncio.sleep(0)
    bus.close()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(pending, 5)
    bus.publish(changed("a", State.RECOGNIZING))   # nobody listens any more: nothing breaks
    assert bus.subscriber_count == 0
