"""A bounded, fair queue of request jobs: a few run at once, each client waits in its own line.

One MQTT message used to become one task, without limit, so a flood of requests held a
thousand handlers (and their database pages) in memory at once. Here at most `workers` jobs
run; each key (a client's response topic, or the request topic of clients without one) may
have at most `per_key` jobs waiting or running, and the queue at most `total`. Past that,
`submit` says no and the caller answers `busy` at once. Keys take turns, and one key never
runs on more than half the workers, so a flood of slow requests (large `.torrent` uploads)
from one client always leaves a worker for everybody else.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[None]]


class RequestQueue:
    """Round-robin over keys, `workers` jobs at a time, bounded per key and in total."""

    def __init__(self, *, workers: int = 4, per_key: int = 16, total: int = 256) -> None:
        self.workers = max(1, workers)
        self.per_key = max(1, per_key)
        self.total = max(1, total)
        self.running_per_key = max(1, self.workers // 2)
        self._running: dict[str, int] = {}
        self._waiting: dict[str, deque[Job]] = {}
        self._turns: deque[str] = deque()            # keys with waiting jobs, in turn order
        self._load: dict[str, int] = {}              # key -> jobs waiting or running
        self._size = 0
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._runners: list[asyncio.Task[None]] = []

    def __len__(self) -> int:
        return self._size

    def submit(self, key: str, job: Job) -> bool:
        """Queue a job under a key; False (nothing queued) when the key or the queue is full."""
        if self._size >= self.total or self._load.get(key, 0) >= self.per_key:
            return False
        line = self._waiting.get(key)
        if line is None:
            line = self._waiting[key] = deque()
            self._turns.append(key)
        line.append(job)
        self._load[key] = self._load.get(key, 0) + 1
        self._size += 1
        self._idle.clear()
        self._ready.set()
        return True

    async def join(self) -> None:
        """Wait until no job is waiting or running."""
        await self._idle.wait()

    def start(self) -> None:
        """Start the workers (idempotent)."""
        self._runners = [t for t in self._runners if not t.done()]
        while len(self._runners) < self.workers:
            self._runners.append(asyncio.create_task(self._work(), name=f"request-{len(self._runners)}"))

    async def stop(self) -> None:
        """Cancel the workers; jobs still waiting are dropped (and logged)."""
        for task in self._runners:
            task.cancel()
        await asyncio.gather(*self._runners, return_exceptions=True)
        self._runners.clear()
        dropped = sum(len(line) for line in self._waiting.values())
        if dropped:
            log.warning("dropped %d queued requests on stop", dropped)
        self._waiting.clear()
        self._turns.clear()
        self._load.clear()
        self._running.clear()
        self._size = 0
        self._idle.set()

    def _next(self) -> tuple[str, Job] | None:
        for _ in range(len(self._turns)):
            key = self._turns.popleft()
            line = self._waiting.get(key)
            if not line:
                self._waiting.pop(key, None)
                continue
            if self._running.get(key, 0) >= self.running_per_key:
                self._turns.append(key)          # its share of workers is busy; the next key's turn
                continue
            job = line.popleft()
            if line:
                self._turns.append(key)
            else:
                del self._waiting[key]
            self._running[key] = self._running.get(key, 0) + 1
            return key, job
        return None

    async def _work(self) -> None:
        while True:
            picked = self._next()
            if picked is None:
                self._ready.clear()
                await self._ready.wait()
                continue
            key, job = picked
            try:
                await job()
            except asyncio.CancelledError:
                raise
            except Exception:
                # Jobs answer their own errors; this is the last line so a worker never dies.
                log.exception("a queued request failed", extra={"queue": key[:120]})
            finally:
                self._size -= 1
                if self._size <= 0:
                    self._idle.set()
                running = self._running.get(key, 1) - 1
                if running > 0:
                    self._running[key] = running
                else:
                    self._running.pop(key, None)
                self._ready.set()                # a key held back by its share may run now
                left = self._load.get(key, 1) - 1
                if left > 0:
                    self._load[key] = left
                else:
                    self._load.pop(key, None)
