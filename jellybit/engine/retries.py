"""Recognizing again by itself after a metadata outage: which downloads, and when (with backoff)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from jellybit.core.states import Actor, State
from jellybit.core.store_port import StorePort
from jellybit.engine.serial import Serializer
from jellybit.logs import for_download

log = logging.getLogger(__name__)

RETRY_CODE = "provider_unavailable"


@dataclass
class _Due:
    attempts: int
    at: float


class OutageRetries:
    """Downloads sent to review only because a provider was down; each is due again after a backoff.

    The schedule lives in memory: after a restart every such download is found again in the store
    and retried at once, which is what a restart should do anyway.
    """

    def __init__(self, first: float, longest: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.first = max(0.0, first)
        self.longest = max(self.first, longest)
        self._clock = clock
        self._due: dict[str, _Due] = {}

    def schedule(self, download_id: str, *, now: bool = False) -> float:
        """Note another failed attempt; return the seconds until the next one (0 with `now`)."""
        entry = self._due.get(download_id)
        attempts = entry.attempts + 1 if entry is not None else 1
        delay = 0.0 if now else min(self.first * 2 ** min(attempts - 1, 32), self.longest)
        self._due[download_id] = _Due(attempts, self._clock() + delay)
        return delay

    def clear(self, download_id: str) -> None:
        """Forget a download: its providers answered, or a human or a command moved it on."""
        self._due.pop(download_id, None)

    def due(self) -> list[str]:
        """The downloads whose next attempt is due now."""
        moment = self._clock()
        return [key for key, entry in self._due.items() if entry.at <= moment]

    def __contains__(self, download_id: object) -> bool:
        return download_id in self._due


class OutageRecovery:
    """Moves due downloads from `review` back to `recognizing`; finds them again after a restart."""

    def __init__(self, retries: OutageRetries, store: StorePort, serial: Serializer) -> None:
        self.retries = retries
        self.store = store
        self.serial = serial

    async def resume(self) -> None:
        """At start: every download in review because of an outage is due at once."""
        for download in await self.store.active_downloads():
            if download.state is State.REVIEW and await self._outage(download.id):
                self.retries.schedule(download.id, now=True)

    async def run_due(self) -> list[str]:
        """Send every due download back to recognition; return their ids."""
        moved = []
        for download_id in self.retries.due():
            if self.serial.busy(download_id):
                continue          # a command holds it; the next cycle looks again
            async with self.serial.serialized(download_id):
                download = await self.store.find_download(download_id)
                waiting = download is not None and download.state is State.REVIEW
                if not waiting or not await self._outage(download_id):
                    self.retries.clear(download_id)
                    continue
                await self.serial.change(download_id, State.RECOGNIZING, actor=Actor.WORKER,
                                         expected=State.REVIEW,
                                         reason="a metadata provider was unreachable; recognizing again")
                log.info("recognizing again after a metadata outage", **for_download(download_id))
                moved.append(download_id)
        return moved

    async def _outage(self, download_id: str) -> bool:
        recognition = await self.store.current_recognition(download_id)
        return recognition is not None and any(r.code == RETRY_CODE for r in recognition.reasons)
