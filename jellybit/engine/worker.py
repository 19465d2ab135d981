"""The worker loop: poll qBittorrent, drive the active downloads that changed, adopt, recover.

One poll cycle costs in proportion to what changed. The active downloads live in memory
(active_set.py) and are read again only when something changed them; `sync/maindata` says
which torrents changed or went, and the torrent index takes in just those. A cycle examines
(examine.py, under each download's lock; a download whose lock is busy is left for later) the
downloads whose torrent changed or went, the ones read again, the queued ones (waiting to be
added or found), the ones whose torrent is missing and the ones in `recognizing` without a
running stage; a slow timer (timeouts.py) adds the ones whose stall or metadata clock ran out.
Adoption (housekeeping.py) looks only at torrents new or changed since its last look, and
reconciliation is a task of its own. While qBittorrent is unreachable nothing fails and no miss
is counted; the loop backs off exponentially up to `retry_max_backoff`. After (re)connecting,
misses are not counted for a grace period, because a restarting qBittorrent lists its torrents
only as it loads them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from jellybit import clock
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.backoff import backoff
from jellybit.core.models import Download
from jellybit.core.ports import Layouter, Recognizer, SyncSnapshot, TorrentClient, TorrentInfo
from jellybit.core.states import EARLY_STATES, State
from jellybit.core.store_port import StorePort
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.active_set import FULL_RELOAD, ActiveDownloads
from jellybit.engine.completion_hook import CompletionHook
from jellybit.engine.early_layout import EarlyLayout, decided_while_downloading
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.examine import POLLED, Examiner, hash_kind, magnet_for, placeholder_name, polled
from jellybit.engine.housekeeping import Housekeeping
from jellybit.engine.pipeline import Pipeline
from jellybit.engine.retries import OutageRecovery, OutageRetries
from jellybit.engine.serial import DoneCallback, Serializer
from jellybit.engine.timeouts import DownloadTimeouts
from jellybit.errors import AdapterError, StorageFault
from jellybit.logs import for_download

log = logging.getLogger(__name__)

__all__ = ["APPEAR_TIMEOUT", "QbtHealth", "Worker", "hash_kind", "magnet_for", "placeholder_name"]

STOP_GRACE = 30.0
EARLY_CHECK = 300.0       # seconds between two reads of qBittorrent's settings for early layout
APPEAR_TIMEOUT = 60.0     # least time an accepted add may take to show up in qBittorrent's list


@dataclass(frozen=True)
class QbtHealth:
    """Can the worker reach qBittorrent? (`reachable` None = not tried yet)."""

    reachable: bool | None = None
    since: str | None = None
    error: str | None = None
    torrents: int = 0


class Worker:
    """Owns the poll loop and every worker-side state change; commands share its serializer."""

    def __init__(
        self, store: StorePort, bus: EventBus, client: TorrentClient, recognizer: Recognizer,
        layouter: Layouter, *, worker: WorkerConfig, qbittorrent: QbittorrentConfig,
        paths: PathsConfig | None = None, on_done: DoneCallback | None = None,
        reconnect_grace: float | None = None, appear_timeout: float = APPEAR_TIMEOUT,
    ) -> None:
        self.store = store
        self.bus = bus
        self.client = client
        self.layouter = layouter
        self._config = worker
        self.qbt = qbittorrent
        self.paths = paths or PathsConfig()
        self.serial = Serializer(store, bus, on_done=on_done)
        self.retries = OutageRetries(worker.provider_retry, worker.provider_retry_max)
        self.pipeline = Pipeline(store, self.serial, client, recognizer, layouter, self.retries)
        self.outages = OutageRecovery(self.retries, store, self.serial)
        self.reconnect_grace = (reconnect_grace if reconnect_grace is not None
                                else max(5.0, 2 * worker.poll_interval))
        self.appear_timeout = appear_timeout
        self.health = QbtHealth()
        self.index: TorrentIndex | None = None
        self._failures = 0
        self._grace_until = 0.0
        self._changed: set[str] = set()      # torrents changed or gone since the last cycle looked
        self._waiting: set[str] = set()      # applying, awaiting files, its stage already ran once
        self._full = True                    # the next cycle examines every polled download
        self._reloaded_at = time.monotonic()
        self.completion = CompletionHook(client, qbittorrent)
        self.early = EarlyLayout(store, self.serial, client, layouter, bus=bus, enabled=worker.early_layout)
        self._early_checked = 0.0
        self._files_moving = False           # a decided download is downloading: poll at file pace
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._started = False
        self._cycle_error: str | None = None
        # Told about a failing poll cycle (and, with None, the recovery); the app wires it to its
        # supervisor so the fault shows on `<base>/info`.
        self.on_fault: Callable[[BaseException | None], None] = lambda _error: None
        self.housekeeping = Housekeeping(store, self.serial, bus, client, layouter, qbittorrent)
        self.active = ActiveDownloads(store)
        self.timeouts = DownloadTimeouts(worker)
        self.examiner = Examiner(
            store=store, serial=self.serial, bus=bus, client=client, pipeline=self.pipeline,
            housekeeping=self.housekeeping, active=self.active, timeouts=self.timeouts, worker=worker,
            qbittorrent=qbittorrent, appear_timeout=appear_timeout, wake=self.wake)
        self.serial.on_change(self._state_changed)
        self.serial.on_release(self._touched)
        bus.watch(self._event)

    @property
    def config(self) -> WorkerConfig:
        """The worker's settings."""
        return self._config

    @config.setter
    def config(self, value: WorkerConfig) -> None:
        # The examinations and the clocks read the same settings: a change reaches them too.
        self._config = self.examiner.config = self.timeouts.config = value

    # ------------------------------------------------------------ life cycle

    async def start(self) -> None:
        """Recover: finish or roll back layout batches a crash left open (once, before polling)."""
        if self._started:
            return
        self._started = True
        try:
            await self.layouter.recover()
        except Exception:
            log.exception("layout recovery failed; interrupted layouts are laid again idempotently")
        await self.outages.resume()

    async def run(self, *, reconcile: bool = True) -> None:
        """Poll until `stop()`; then let in-flight stages finish (bounded) and return.

        Reconciliation runs beside the loop as its own task (reconcile.py), never inside a cycle;
        `reconcile=False` when the caller runs `run_reconciler` itself (the app, supervised).
        """
        await self.start()
        reconciling = asyncio.create_task(self._reconcile_forever(), name="reconcile") if reconcile else None
        try:
            while not self._stopping.is_set():
                try:
                    reachable = await self.poll_once()
                except Exception as exc:
                    self._cycle_failed(exc)
                    reachable = True
                else:
                    self._cycle_worked()
                await self._pause(self.next_poll() if reachable else self._backoff())
        finally:
            if reconciling is not None:
                reconciling.cancel()
                await asyncio.gather(reconciling, return_exceptions=True)
            await self.serial.drain(STOP_GRACE)

    async def run_reconciler(self) -> None:
        """Reconcile every `reconcile_interval` once qBittorrent answers; a failing pass raises."""
        await self.housekeeping.reconciler.run(self.config.reconcile_interval, lambda: self.index,
                                               self._reconcile_ready)

    async def _reconcile_forever(self) -> None:
        """`run_reconciler` started again after a failing pass (for a loop nobody supervises)."""
        while True:
            try:
                await self.run_reconciler()
            except Exception:
                # A failing pass must not end reconciliation for good; the next pass starts over.
                log.exception("reconciliation failed")
                await asyncio.sleep(min(self.config.reconcile_interval, self.config.retry_max_backoff))

    def _reconcile_ready(self) -> bool:
        return (self.index is not None and self.health.reachable is True
                and time.monotonic() >= self._grace_until)

    def _cycle_failed(self, exc: Exception) -> None:
        """Log a failing cycle once per distinct error (not every poll), and report it."""
        if isinstance(exc, StorageFault):
            return          # the storage watch logged it and shows it as its own component
        message = f"{type(exc).__name__}: {exc}"
        if message != self._cycle_error:
            log.error("poll cycle failed", exc_info=exc)
        self._cycle_error = message
        self.on_fault(exc)

    def _cycle_worked(self) -> None:
        if self._cycle_error is not None:
            log.info("poll cycles work again")
            self._cycle_error = None
            self.on_fault(None)

    async def stop(self) -> None:
        """Ask the loop to end after the current cycle."""
        self._stopping.set()
        self._wake.set()

    def wake(self) -> None:
        """Poll again now (a command queued something)."""
        self._wake.set()

    def notify(self, infohash: str | None = None) -> None:
        """qBittorrent finished a torrent (its completion hook): poll now instead of at the next interval."""
        log.debug("qBittorrent finished %s: polling now", infohash or "a torrent")
        self._wake.set()

    def next_poll(self) -> float:
        """Seconds to the next poll: `fast_poll_interval` while a download is about to complete,
        `file_poll_interval` while a decided download's files are arriving (early layout)."""
        wait = self.poll_interval
        if self.examiner.near:
            wait = min(self.config.fast_poll_interval, wait)
        if self._files_moving:
            wait = min(self.config.file_poll_interval, wait)
        return wait

    @property
    def failed_polls(self) -> int:
        """Consecutive polls that could not reach qBittorrent (0 once it answers)."""
        return self._failures

    @property
    def poll_interval(self) -> float:
        """Seconds between polls while qBittorrent answers."""
        return self.config.poll_interval

    def _backoff(self) -> float:
        return backoff(self.poll_interval, self._failures, self.config.retry_max_backoff)

    async def _pause(self, seconds: float) -> None:
        # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation that
        # arrives as the wait ends, and a stopping worker would then never stop
        try:
            async with asyncio.timeout(seconds):
                await self._wake.wait()
        except TimeoutError:
            pass
        self._wake.clear()

    # ------------------------------------------------------------ one cycle

    async def poll_once(self) -> bool:
        """One poll cycle; False when qBittorrent could not be reached (nothing was changed)."""
        if time.monotonic() - self._reloaded_at > FULL_RELOAD:
            self._reloaded_at = time.monotonic()
            self.active.reload()
        refreshed = await self.active.refresh()
        for download in self.active.in_state(State.APPLYING):
            await self._ensure_apply(download)
        if await self.outages.run_due():
            refreshed |= await self.active.refresh()
        try:
            snapshot = await self.client.sync()
        except AdapterError as exc:
            self._unreachable(exc)
            return False
        if self._reachable(len(snapshot.torrents)):
            await self.completion.ensure()
            await self._check_early(force=True)
        else:
            await self._check_early(force=False)
        index = self._take(snapshot)
        changed, full, self._changed, self._full = self._changed, self._full, set(), False
        count_misses = time.monotonic() >= self._grace_until
        polled = sorted(self._to_examine(refreshed, changed, full))
        results = await asyncio.gather(
            *(self.examiner.examine(download_id, index, count_misses) for download_id in polled),
            return_exceptions=True,
        )
        for download_id, result in zip(polled, results, strict=True):
            if isinstance(result, Exception):
                self.active.mark(download_id)
                if isinstance(result, StorageFault):
                    continue        # logged once by the storage watch, not once per download per cycle
                log.error("polling the download failed: %r", result, exc_info=result,
                          **for_download(download_id))
        self._lay_out_early(index, changed, full)
        if self.config.adopt:
            await self.housekeeping.adopt_new(index, index.torrent_ids() if full else changed)
        return True

    async def _check_early(self, *, force: bool) -> None:
        """Read qBittorrent's settings for early layout on (re)connecting and every EARLY_CHECK s."""
        if not self.config.early_layout:
            return
        if force or time.monotonic() - self._early_checked > EARLY_CHECK:
            self._early_checked = time.monotonic()
            await self.early.check()

    def _lay_out_early(self, index: TorrentIndex, changed: set[str], full: bool) -> None:
        """Start early layout for decided downloads whose torrent changed (every one after a full poll)."""
        moving = False
        for download in self.active.in_state(State.APPLYING):
            if not decided_while_downloading(download):
                self.early.forget(download.id)
                continue
            torrent = index.find(download.hashes(), download.qbt_tag)
            if torrent is None:
                continue
            moving = moving or torrent.progress < 1
            if full or torrent.hash in changed:
                self.early.start(download, torrent)
        self._files_moving = moving and self.early.safe

    def _take(self, snapshot: SyncSnapshot) -> TorrentIndex:
        """Bring the torrent index up to date with a sync's answer; remember what it changed."""
        if snapshot.full_update or self.index is None:
            self.index = TorrentIndex(snapshot.torrents)
            self._full = True
            self.active.reload()     # qBittorrent restarted or we did: read everything again too
        else:
            torrents = snapshot.torrents
            self.index.update((torrents[h] for h in snapshot.changed if h in torrents), snapshot.removed)
            self._changed |= snapshot.changed
            self._changed.update(snapshot.removed)
        return self.index

    def _to_examine(self, refreshed: set[str], changed: set[str], full: bool) -> set[str]:
        """The downloads this cycle looks at (all polled ones after a full answer)."""
        active = self.active
        if full:
            return {i for i in active.ids_in(*POLLED, *EARLY_STATES)
                    if (d := active.get(i)) is not None and polled(d)}
        wanted = (refreshed | active.ids_in(State.QUEUED) | active.owners(changed)
                  | active.unmatched(State.DOWNLOADING, *EARLY_STATES))
        # A recognition stage that ended without moving the download (its torrent's files could not
        # be listed yet, a crash) is started again by the next examination.
        wanted |= {i for i in active.ids_in(State.RECOGNIZING) if self.serial.stage(i) is None}
        if self.timeouts.sweep_due():
            wanted |= self.timeouts.overdue()
        return {i for i in wanted if (d := active.get(i)) is not None and polled(d)}

    def _unreachable(self, exc: AdapterError) -> None:
        self._failures += 1
        if self.health.reachable is not False or self.health.error != exc.message:
            log.warning("qBittorrent is unreachable: %s", exc.message)
            self.health = QbtHealth(False, clock.now(), exc.message, self.health.torrents)

    def _reachable(self, torrents: int) -> bool:
        """Record that qBittorrent answered; True when it just became reachable (first time or again)."""
        became = self.health.reachable is not True
        if became:
            if self.health.reachable is False:
                log.info("qBittorrent is reachable again")
            self._grace_until = time.monotonic() + self.reconnect_grace
            self.health = QbtHealth(True, clock.now(), None, torrents)
        elif self.health.torrents != torrents:
            self.health = QbtHealth(True, self.health.since, None, torrents)
        self._failures = 0
        return became

    # ------------------------------------------------------------ keeping the active set current

    def _state_changed(self, download_id: str) -> None:
        # Even the examination's own transitions: the next cycle looks at it in its new state.
        self.examiner.forget(download_id)
        self.early.forget(download_id)
        self._waiting.discard(download_id)
        self.active.mark(download_id)

    def _touched(self, download_id: str) -> None:
        """Someone other than this examination held or changed the download: read it again."""
        if download_id not in self.examiner.examining:
            self.active.mark(download_id)

    def _event(self, event: Event) -> None:
        # An add or a join changes downloads outside any lock; progress is the worker's own.
        if event.event_type not in (EventKind.PROGRESS, EventKind.FAULT):
            self._touched(event.download_id)

    # ------------------------------------------------------------ applying (recovery)

    async def _ensure_apply(self, download: Download) -> None:
        if self.serial.stage(download.id) is not None or self.serial.busy(download.id):
            return
        if download.awaiting_files:
            # Decided while downloading: the stage runs once (a human's apply is recognized again and
            # stored), then the examination starts it again when the files are complete.
            if download.id in self._waiting:
                return
            self._waiting.add(download.id)
        torrent = self.index.find(download.hashes(), download.qbt_tag) if self.index is not None else None
        await self.pipeline.resume_apply(download.id, torrent.hash if torrent is not None else None)

    # ------------------------------------------------------------ adoption and reconciliation

    async def reconcile(self, index: TorrentIndex | None = None) -> int:
        """One reconciliation pass now (laid-out downloads whose torrent or files went); how many moved."""
        index = index if index is not None else self.index
        return await self.housekeeping.reconcile(index) if index is not None else 0

    # ------------------------------------------------------------ for commands

    async def find_torrent(self, download: Download) -> TorrentInfo | None:
        """qBittorrent's torrent for a download, from a fresh poll when possible."""
        try:
            self._take(await self.client.sync())
        except AdapterError:
            if self.index is None:
                raise
        assert self.index is not None
        return self.index.find(download.hashes(), download.qbt_tag)

    def start_stage(self, download: Download, *, mode: str = "plain") -> None:
        """Kick the stage of a download a command moved to `recognizing` or `applying`."""
        if download.state is State.APPLYING:
            self.pipeline.start_apply(download.id, mode=mode)
        elif download.state is State.RECOGNIZING and self.index is not None:
            torrent = self.index.find(download.hashes(), download.qbt_tag)
            if torrent is not None:
                self.pipeline.start_recognition(download.id, torrent.hash)
        self.wake()

