"""Keeping the worker's background loops alive: restart on a crash with capped backoff, report it.

Every long-running loop of the worker process (the qBittorrent poll, the MQTT connection, the
state forwarder) runs under `Supervisor.supervise`. A loop that raises — or returns while nobody
asked it to stop — is logged, reported to `notify` (which publishes a `fault` event and refreshes
`<base>/info`), and started again after a backoff that doubles up to `max_backoff`. A loop that
keeps crashing (`max_crashes` times in a row, each run shorter than `stable_after`) is given up:
`wait()` raises `GaveUp`, and the process exits non-zero so systemd or compose restart it.

Loops that handle their own errors (the poll loop survives a failed cycle) report them with
`report(name, exc)` and `report(name, None)` on recovery; that shows on `info` without a restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from jellybit import clock
from jellybit.core.backoff import backoff

log = logging.getLogger(__name__)

ERROR_CHARS = 300


@dataclass(frozen=True)
class ComponentHealth:
    """How one supervised loop is doing (published on `<base>/info` under `components`)."""

    name: str
    running: bool = False
    restarts: int = 0              # times it crashed and was started again
    error: str | None = None       # the current fault (None = healthy)
    failed_at: str | None = None   # when the last fault began
    faults: int = 0                # faults reported or crashes since the process started
    code: str | None = None        # a storage fault's code (`storage_full`, …); None for a loop's crash


@dataclass(frozen=True)
class Fault:
    """A notice for `notify`: a component failed (`error` set) or recovered (`error` None)."""

    component: str
    error: str | None
    restarts: int


class GaveUp(Exception):
    """A component kept crashing; the process should exit non-zero and be restarted from outside."""

    def __init__(self, component: str, error: BaseException) -> None:
        super().__init__(f"{component} crashed repeatedly; last error: {describe(error)}")
        self.component = component
        self.error = error


def describe(error: BaseException) -> str:
    """One short line for an exception: its type and message."""
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text if len(text) <= ERROR_CHARS else text[: ERROR_CHARS - 1] + "…"


class Supervisor:
    """Runs named loops, restarts crashed ones with capped backoff, and keeps their health."""

    def __init__(self, *, notify: Callable[[Fault], None] | None = None, first_backoff: float = 1.0,
                 max_backoff: float = 60.0, max_crashes: int = 10, stable_after: float = 300.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.notify = notify
        self.first_backoff = first_backoff
        self.max_backoff = max_backoff
        self.max_crashes = max(1, max_crashes)
        self.stable_after = stable_after
        self._monotonic = monotonic
        self._health: dict[str, ComponentHealth] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._stopping = False
        self._gave_up: asyncio.Future[GaveUp] | None = None

    # ------------------------------------------------------------ running loops

    def supervise(self, name: str, loop: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Start `loop()` as a supervised task (started again whenever it crashes)."""
        if name in self._tasks:
            raise ValueError(f"{name} is already supervised")
        self._health[name] = ComponentHealth(name)
        task = asyncio.create_task(self._keep(name, loop), name=name)
        self._tasks[name] = task
        return task

    def task(self, name: str) -> asyncio.Task[None] | None:
        """The task of a supervised loop."""
        return self._tasks.get(name)

    async def _keep(self, name: str, loop: Callable[[], Awaitable[None]]) -> None:
        crashes = 0
        while True:
            started = self._monotonic()
            self._set(name, running=True)
            # A restarted loop that stays up for `stable_after` counts as recovered.
            settle = (asyncio.get_running_loop().call_later(self.stable_after, self.report, name, None)
                      if crashes else None)
            try:
                await loop()
            except asyncio.CancelledError:
                self._set(name, running=False)
                raise
            except Exception as exc:
                error: Exception = exc
            else:
                if self._stopping:
                    self._set(name, running=False)
                    return
                error = RuntimeError(f"the {name} loop ended by itself")
            finally:
                if settle is not None:
                    settle.cancel()
            self._set(name, running=False)
            crashes = 1 if self._monotonic() - started >= self.stable_after else crashes + 1
            if crashes >= self.max_crashes:
                log.critical("%s crashed %d times in a row; giving up", name, crashes, exc_info=error,
                             extra={"component": name})
                self._fail(name, error, restarted=False)
                self._give_up(GaveUp(name, error))
                return
            delay = backoff(self.first_backoff, crashes, self.max_backoff)
            log.error("%s crashed; restarting in %.1f s", name, delay, exc_info=error,
                      extra={"component": name, "crashes": crashes})
            self._fail(name, error, restarted=True)
            await asyncio.sleep(delay)

    def _give_up(self, reason: GaveUp) -> None:
        if self._gave_up is None:
            self._gave_up = asyncio.get_running_loop().create_future()
        if not self._gave_up.done():
            self._gave_up.set_result(reason)

    async def wait(self) -> None:
        """Return never while every loop is kept alive; raise GaveUp when one could not be."""
        if self._gave_up is None:
            self._gave_up = asyncio.get_running_loop().create_future()
        raise await asyncio.shield(self._gave_up)

    async def stop(self, grace: float = 0.0) -> None:
        """Stop restarting; wait up to `grace` seconds for loops that end by themselves, cancel the rest."""
        self._stopping = True
        tasks = [t for t in self._tasks.values() if not t.done()]
        if grace > 0 and tasks:
            await asyncio.wait(tasks, timeout=grace)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def stopping(self) -> None:
        """From now on a loop that returns is finished, not crashed (the caller is stopping it)."""
        self._stopping = True

    # ------------------------------------------------------------ health

    def report(self, name: str, error: BaseException | None) -> None:
        """A loop that survives its own errors reports one (or, with None, that it works again)."""
        health = self._health.get(name) or ComponentHealth(name, running=True)
        self._health[name] = health
        if error is not None:
            self._fail(name, error, restarted=False)
        elif health.error is not None:
            self._health[name] = replace(health, error=None)
            log.info("%s works again", name, extra={"component": name})
            if self.notify is not None:
                self.notify(Fault(name, None, health.restarts))

    def status(self) -> dict[str, ComponentHealth]:
        """The health of every supervised or reporting component."""
        return dict(self._health)

    def _set(self, name: str, *, running: bool) -> None:
        self._health[name] = replace(self._health[name], running=running)

    def _fail(self, name: str, error: BaseException, *, restarted: bool) -> None:
        health = self._health[name]
        message = describe(error)
        first = health.error is None
        self._health[name] = replace(
            health, error=message, failed_at=clock.now() if first else health.failed_at,
            restarts=health.restarts + (1 if restarted else 0), faults=health.faults + 1)
        # Publish on change: a fault that repeats with the same message is not news.
        if self.notify is not None and (first or restarted or message != health.error):
            self.notify(Fault(name, message, self._health[name].restarts))
