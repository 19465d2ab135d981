"""Per-download serialization: one lock per download, epochs, and the background stage tasks.

Everything that reads a download and then changes it (a poll result, a command, a stage of
the pipeline) does so inside `serialized(id)`, so two of them never interleave for the same
download while different downloads proceed concurrently. Long calls to outside systems (the
recognizer, which may ask an LLM for minutes) run *outside* the lock; the stage records the
download's epoch before and re-checks it after, so a command that changed the download in
between (cancel, retry) makes the stale result be discarded instead of applied.

Nothing here grows with the history: a lock exists only while someone holds or waits for it,
a stage is forgotten when its task ends, and a settled download's epoch is dropped once no
lock or stage refers to it. Epochs come from one counter for the whole process, so an epoch
read after it was dropped (0) never equals one recorded before.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from jellybit.core.models import Download
from jellybit.core.states import ACTIVE_STATES, State
from jellybit.core.store_port import StorePort
from jellybit.engine.events import EventBus
from jellybit.engine.machine import change_state
from jellybit.errors import StorageFault
from jellybit.logs import for_download

log = logging.getLogger(__name__)

DoneCallback = Callable[[Download], Any]


@dataclass
class StageTask:
    """One running background stage of a download (recognition or layout)."""

    task: asyncio.Task[None]
    kind: str                 # recognize | apply
    epoch: int
    external: bool = False    # True while it waits on an outside system outside the lock


@dataclass
class _Slot:
    """One download's lock and how many tasks hold it or wait for it (dropped at zero)."""

    lock: asyncio.Lock
    users: int = 0


class Serializer:
    """Locks, epochs and stage tasks per download, and the state-change entry the engine uses."""

    def __init__(self, store: StorePort, bus: EventBus, *, on_done: DoneCallback | None = None) -> None:
        self.store = store
        self.bus = bus
        self.on_done = on_done
        self._locks: dict[str, _Slot] = {}
        self._epochs: dict[str, int] = {}
        self._counter = itertools.count(1)
        self._settled: set[str] = set()        # settled, epoch kept while a lock or stage refers to it
        self.forgotten = 0                     # epochs dropped so far (a snapshot older than a drop is stale)
        self._stages: dict[str, StageTask] = {}
        self._listeners: list[Callable[[str], None]] = []
        self._release_listeners: list[Callable[[str], None]] = []
        self._background: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------ locks and epochs

    @asynccontextmanager
    async def serialized(self, download_id: str) -> AsyncIterator[None]:
        """Hold the download's lock: nothing else reads-and-changes it meanwhile."""
        slot = self._locks.get(download_id)
        if slot is None:
            slot = self._locks[download_id] = _Slot(asyncio.Lock())
        slot.users += 1
        try:
            async with slot.lock:
                yield
        finally:
            slot.users -= 1
            if slot.users == 0:
                del self._locks[download_id]
                self._forget_if_settled(download_id)
            for listener in self._release_listeners:
                listener(download_id)

    def busy(self, download_id: str) -> bool:
        """Tell whether someone holds the download's lock right now."""
        slot = self._locks.get(download_id)
        return slot is not None and slot.lock.locked()

    def held(self) -> int:
        """How many downloads have a lock right now (held or waited for)."""
        return len(self._locks)

    def tracked(self) -> int:
        """How many downloads this serializer keeps any state for (locks, epochs, stages)."""
        return len(self._locks.keys() | self._epochs.keys() | self._stages.keys())

    def _forget_if_settled(self, download_id: str) -> None:
        idle = download_id not in self._locks and download_id not in self._stages
        if idle and download_id in self._settled:
            self._settled.discard(download_id)
            self._epochs.pop(download_id, None)
            self.forgotten += 1

    def epoch(self, download_id: str) -> int:
        """A counter that moves on every state change of the download."""
        return self._epochs.get(download_id, 0)

    def epochs(self) -> dict[str, int]:
        """A copy of every download's epoch (to tell later whether a download changed since)."""
        return dict(self._epochs)

    def on_change(self, listener: Callable[[str], None]) -> None:
        """Call `listener(download_id)` after every state change (e.g. to reset poll trackers)."""
        self._listeners.append(listener)

    def on_release(self, listener: Callable[[str], None]) -> None:
        """Call `listener(download_id)` whenever someone leaves `serialized(id)`: it may have changed it."""
        self._release_listeners.append(listener)

    async def change(self, download_id: str, to: State, **kwargs: Any) -> Download:
        """Change state through the one state machine function, then move the epoch."""
        download = await change_state(self.store, self.bus, download_id, to, **kwargs)
        self._epochs[download_id] = next(self._counter)
        if to in ACTIVE_STATES:
            self._settled.discard(download_id)
        else:
            self._settled.add(download_id)
            self._forget_if_settled(download_id)
        for listener in self._listeners:
            listener(download_id)
        if to is State.DONE and self.on_done is not None:
            self._call_done(download)
        return download

    def _call_done(self, download: Download) -> None:
        # The Jellyfin refresh must never block or break the worker.
        try:
            result = self.on_done(download) if self.on_done else None
            if inspect.isawaitable(result):
                self._keep(asyncio.ensure_future(result))
        except Exception:
            log.exception("done callback failed", **for_download(download.id))

    def _keep(self, task: asyncio.Future[Any]) -> None:
        self._background.add(task)  # type: ignore[arg-type]

        def finished(done: asyncio.Future[Any]) -> None:
            self._background.discard(done)  # type: ignore[arg-type]
            if not done.cancelled() and done.exception() is not None:
                log.error("done callback failed: %s", done.exception())

        task.add_done_callback(finished)

    # ------------------------------------------------------------ stage tasks

    def stage(self, download_id: str) -> StageTask | None:
        """The download's current, still relevant stage task (None if none or stale)."""
        stage = self._stages.get(download_id)
        if stage is None or stage.task.done() or stage.epoch != self.epoch(download_id):
            return None
        return stage

    def spawn(self, download_id: str, kind: str, make: Callable[[], Coroutine[Any, Any, None]]) -> bool:
        """Start a stage task unless a relevant one runs already; True when started."""
        if self.stage(download_id) is not None:
            return False
        task = asyncio.create_task(self._run_stage(download_id, kind, make), name=f"{kind}:{download_id}")
        stage = self._stages[download_id] = StageTask(task, kind, self.epoch(download_id))
        task.add_done_callback(lambda _task: self._stage_ended(download_id, stage))
        return True

    def _stage_ended(self, download_id: str, stage: StageTask) -> None:
        if self._stages.get(download_id) is stage:
            del self._stages[download_id]
            self._forget_if_settled(download_id)

    async def _run_stage(self, download_id: str, kind: str,
                         make: Callable[[], Coroutine[Any, Any, None]]) -> None:
        try:
            await make()
        except asyncio.CancelledError:
            raise
        except StorageFault as exc:
            # The disk, not a bug: the storage watch logged it once; the next poll retries the stage.
            log.debug("%s stage stopped: %s", kind, exc.message, **for_download(download_id))
        except Exception:
            # A bug in one stage must not kill the worker; the next poll retries the stage.
            log.exception("%s stage crashed", kind, **for_download(download_id))

    async def wait_stage(self, download_id: str) -> None:
        """Wait until the download's last stage task (relevant or stale) has ended."""
        stage = self._stages.get(download_id)
        if stage is not None:
            await asyncio.wait({stage.task})

    @asynccontextmanager
    async def external(self, download_id: str) -> AsyncIterator[None]:
        """Mark the running stage as waiting on an outside system (safe to cancel on stop)."""
        stage = self._stages.get(download_id)
        if stage is not None:
            stage.external = True
        try:
            yield
        finally:
            if stage is not None:
                stage.external = False

    async def drain(self, grace: float) -> None:
        """Stop: cancel stages that wait outside the lock, let the others finish (bounded)."""
        running = [s for s in self._stages.values() if not s.task.done()]
        for stage in running:
            if stage.external:
                stage.task.cancel()
        tasks = [s.task for s in running] + list(self._background)
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=5)
        self._stages.clear()
