"""The in-process event stream: the worker publishes, transports (MQTT, panel) subscribe.

Publishing never blocks and never waits for a subscriber. Each subscriber has its own
bounded queue; when it is full, the oldest queued `progress` event is dropped (a newer
one says the same thing better). State events are never dropped: a queue that holds
only state events grows past its bound rather than lose one.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jellybit import clock
from jellybit.core.states import Actor, State

log = logging.getLogger(__name__)

DEFAULT_QUEUE_SIZE = 1000


class EventKind(StrEnum):
    """What happened to a download."""

    ADDED = "added"                        # a new download was created (ingest or adoption)
    STATE_CHANGED = "state_changed"
    REVIEW_REQUESTED = "review_requested"
    DONE = "done"
    FAILED = "failed"
    PROGRESS = "progress"                  # progress / speed / ETA / torrent state changed
    DOWNLOAD_UPDATED = "download_updated"  # other fields changed (name, hashes, defer_until, ...)
    FAULT = "fault"                        # a worker component failed or recovered (download_id names it)
    JELLYFIN = "jellyfin"                  # Jellyfin lists a done download, or has not in time (reason says)


# Events a full queue may lose: only the newest progress of a download matters.
DROPPABLE: frozenset[EventKind] = frozenset({EventKind.PROGRESS})


@dataclass(frozen=True)
class Event:
    """One event about one download (`data` carries event-specific details, JSON-safe)."""

    event_type: EventKind
    download_id: str
    name: str = ""
    from_state: State | None = None
    to_state: State | None = None
    reason: str = ""
    actor: Actor | None = None
    at: str = field(default_factory=clock.now)
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def droppable(self) -> bool:
        """Tell whether a full subscriber queue may drop this event."""
        return self.event_type in DROPPABLE


class Subscription:
    """One subscriber's bounded queue; iterate it with `async for`, end it with `close()`."""

    def __init__(self, bus: EventBus, maxsize: int) -> None:
        self._bus = bus
        self.maxsize = maxsize
        self._queue: deque[Event] = deque()
        self._ready = asyncio.Event()
        self.closed = False
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._queue)

    def _offer(self, event: Event) -> None:
        if self.closed:
            return
        if len(self._queue) >= self.maxsize and not self._make_room(event):
            self.dropped += 1
            return
        self._queue.append(event)
        self._ready.set()

    def _make_room(self, event: Event) -> bool:
        """Drop the oldest droppable event; False when the new event itself must be dropped."""
        for index, queued in enumerate(self._queue):
            if queued.droppable:
                del self._queue[index]
                self.dropped += 1
                return True
        if event.droppable:
            return False
        if len(self._queue) == self.maxsize:
            log.warning("event subscriber is slow; its queue grows past its bound",
                        extra={"maxsize": self.maxsize})
        return True

    def get_nowait(self) -> Event | None:
        """Return the next queued event, or None when the queue is empty."""
        if not self._queue:
            self._ready.clear()
            return None
        return self._queue.popleft()

    async def get(self) -> Event:
        """Wait for the next event (raises StopAsyncIteration once closed and drained)."""
        while True:
            event = self.get_nowait()
            if event is not None:
                return event
            if self.closed:
                raise StopAsyncIteration
            await self._ready.wait()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        return await self.get()

    def close(self) -> None:
        """Stop receiving; a waiting `get` ends once the queue is drained."""
        if not self.closed:
            self.closed = True
            self._bus._unsubscribe(self)
            self._ready.set()

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> Subscription:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class EventBus:
    """Fan-out of events to every subscriber; `publish` is synchronous and never blocks."""

    def __init__(self, default_maxsize: int = DEFAULT_QUEUE_SIZE) -> None:
        self.default_maxsize = default_maxsize
        self._subscribers: list[Subscription] = []
        self._watchers: list[Callable[[Event], None]] = []

    def watch(self, callback: Callable[[Event], None]) -> None:
        """Call `callback(event)` synchronously on every publish (an in-process cache; must not block)."""
        self._watchers.append(callback)

    def subscribe(self, maxsize: int | None = None) -> Subscription:
        """Start receiving every event published from now on."""
        size = maxsize or self.default_maxsize
        if size < 1:
            raise ValueError("maxsize must be at least 1")
        subscription = Subscription(self, size)
        self._subscribers.append(subscription)
        return subscription

    def _unsubscribe(self, subscription: Subscription) -> None:
        if subscription in self._subscribers:
            self._subscribers.remove(subscription)

    @property
    def subscriber_count(self) -> int:
        """How many subscriptions are open."""
        return len(self._subscribers)

    def publish(self, event: Event) -> None:
        """Hand an event to every watcher and every subscriber's queue."""
        for watcher in self._watchers:
            watcher(event)
        for subscription in list(self._subscribers):
            subscription._offer(event)

    def close(self) -> None:
        """Close every subscription (their iterators end once drained)."""
        for subscription in list(self._subscribers):
            subscription.close()
