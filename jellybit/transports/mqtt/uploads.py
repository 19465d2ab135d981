"""Large requests (a base64 `.torrent`) in bounded memory: admitted as they are read, run one at a time.

A request of `LARGE_REQUEST` bytes or more carries a `.torrent`, and answering it decodes it into
several copies of itself. Twenty 8 MiB uploads at once sat in the worker's memory together
(289 MiB): paho reads every message the broker has queued for the worker before the bridge gets
a turn, so a bound applied when the bridge takes a message is too late. Here the decision is made
as each message is read (the client's message queue calls `admit`), before it waits anywhere:
past `LARGE_WAITING` bytes of large requests waiting or running, the payload is dropped at once
and only what its `busy` answer needs is kept. Admitted ones run one at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

LARGE_REQUEST = 1 << 20
LARGE_WAITING = 12 << 20


@dataclass(frozen=True)
class Dropped:
    """A large request refused as it was read: only what its `busy` answer needs."""

    topic: str
    properties: Any
    size: int


class Uploads:
    """Counts the bytes of large requests read but not yet answered; one of them runs at a time."""

    def __init__(self, *, threshold: int = LARGE_REQUEST, budget: int = LARGE_WAITING) -> None:
        self.threshold = threshold
        self.budget = budget
        self.pending = 0        # read, not yet taken from the client's message queue
        self.held = 0           # taken: waiting in the request queue or running
        self._turn = asyncio.Lock()

    def large(self, size: int) -> bool:
        """Tell whether a payload of this size counts as a large request."""
        return size >= self.threshold

    def admit(self, size: int) -> bool:
        """As a request of `size` bytes is read: may it wait (it is counted), or is it dropped?

        One large request is always admitted when none is held, however large (the payload limit
        applies later, with its own answer).
        """
        if not self.large(size):
            return True
        total = self.pending + self.held
        if total and total + size > self.budget:
            return False
        self.pending += size
        return True

    def taken(self, size: int, *, queued: bool) -> None:
        """The bridge took an admitted request from the client's queue (and queued it, or not)."""
        if self.large(size):
            self.pending -= size
            if queued:
                self.held += size

    def reconnected(self) -> None:
        """A new connection: whatever the old client's queue still held is gone."""
        self.pending = 0

    async def run(self, size: int, answer: Callable[[], Awaitable[None]]) -> None:
        """Answer one held large request once no other is running; it stops counting after."""
        try:
            async with self._turn:
                await answer()
        finally:
            self.held -= size


def admitting_queue(admit: Callable[[Any], Any]) -> type[asyncio.Queue[Any]]:
    """An `asyncio.Queue` class for aiomqtt's `queue_type` that passes each message through `admit`
    as paho reads it (aiomqtt puts every incoming message with `put_nowait`)."""

    class AdmittingQueue(asyncio.Queue[Any]):
        def put_nowait(self, item: Any) -> None:
            super().put_nowait(admit(item))

    return AdmittingQueue
