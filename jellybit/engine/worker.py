"""The worker loop: poll qBittorrent, drive every active download, adopt, reconcile, recover.

One poll cycle: `sync/maindata` (incremental) → one index of the torrents by real infohash and
by tag → each active download is handled under its own lock (downloads whose lock is busy —
a command or a layout is running — are simply left for the next cycle) → torrents added by
hand under the category are adopted (housekeeping.py); reconciliation is a task of its own. While
qBittorrent is unreachable nothing fails and no miss is counted; the loop backs off
exponentially up to `retry_max_backoff`. After (re)connecting, misses are not counted for a
grace period, because a restarting qBittorrent lists its torrents only as it loads them.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jellybit import clock
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.backoff import backoff
from jellybit.core.models import Download, Infohash
from jellybit.core.ports import AddTorrent, Layouter, Recognizer, TorrentClient, TorrentInfo
from jellybit.core.states import Actor, State
from jellybit.core.store_port import StorePort
from jellybit.core.torrent_state import (
    TorrentIndex,
    can_stall,
    is_complete,
    is_error,
    lacks_metadata,
    near_completion,
    view_fields,
)
from jellybit.engine.completion_hook import CompletionHook
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.housekeeping import Housekeeping
from jellybit.engine.pipeline import Pipeline
from jellybit.engine.retries import OutageRecovery, OutageRetries
from jellybit.engine.serial import DoneCallback, Serializer
from jellybit.errors import AdapterError, Conflict, TorrentRejected
from jellybit.logs import for_download

log = logging.getLogger(__name__)

PROGRESS_KEYS = frozenset({"progress", "dl_speed", "eta", "torrent_state", "num_seeds", "num_peers"})
STOP_GRACE = 30.0
APPEAR_TIMEOUT = 60.0     # least time an accepted add may take to show up in qBittorrent's list


@dataclass(frozen=True)
class QbtHealth:
    """Can the worker reach qBittorrent? (`reachable` None = not tried yet)."""

    reachable: bool | None = None
    since: str | None = None
    error: str | None = None
    torrents: int = 0


def hash_kind(value: str) -> str:
    """v1 for a 40-hex SHA-1 infohash, v2 for a 64-hex SHA-256 one."""
    return "v2" if len(value) == 64 else "v1"


def magnet_for(download: Download) -> str | None:
    """A bare magnet for a download known only by its hashes (adopted, or added by infohash)."""
    v1 = sorted(h.value for h in download.infohashes if h.kind == "v1")
    v2 = sorted(h.value for h in download.infohashes if h.kind == "v2")
    parts = [f"xt=urn:btih:{v1[0]}"] if v1 else []
    parts += [f"xt=urn:btmh:1220{v2[0]}"] if v2 else []
    return "magnet:?" + "&".join(parts) if parts else None


def placeholder_name(download: Download) -> bool:
    """Tell whether the display name is only a stand-in (empty, the URL, or an infohash)."""
    name = download.display_name.strip()
    return not name or name == download.source_ref or name.lower() in download.hashes()


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
        self.config = worker
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
        self._added: dict[str, float] = {}                       # id -> when add was accepted
        self._add_retry: dict[str, tuple[int, float]] = {}        # id -> (attempts, not before)
        self._progress_seen: dict[str, tuple[float, float]] = {}  # id -> (progress, since)
        self._meta_since: dict[str, float] = {}
        self._near: set[str] = set()                              # ids about to complete: poll faster
        self.completion = CompletionHook(client, qbittorrent)
        self._stopping = asyncio.Event()
        self._wake = asyncio.Event()
        self._started = False
        self._cycle_error: str | None = None
        # Told about a failing poll cycle (and, with None, the recovery); the app wires it to its
        # supervisor so the fault shows on `<base>/info`.
        self.on_fault: Callable[[BaseException | None], None] = lambda _error: None
        self.housekeeping = Housekeeping(store, self.serial, bus, client, layouter, qbittorrent)
        self.serial.on_change(self._reset_trackers)

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
        """Seconds to the next poll: `fast_poll_interval` while a download is about to complete."""
        if self._near:
            return min(self.config.fast_poll_interval, self.poll_interval)
        return self.poll_interval

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
        epochs = self.serial.epochs()          # taken first: a change after it makes a listed row stale
        forgotten = self.serial.forgotten
        active = await self.store.active_downloads()
        for download in active:
            if download.state is State.APPLYING:
                await self._ensure_apply(download)
        if await self.outages.run_due():
            epochs, forgotten = self.serial.epochs(), self.serial.forgotten
            active = await self.store.active_downloads()
        try:
            snapshot = await self.client.sync()
        except AdapterError as exc:
            self._unreachable(exc)
            return False
        if self._reachable(len(snapshot.torrents)):
            await self.completion.ensure()
        index = self.index = TorrentIndex(snapshot.torrents)
        count_misses = time.monotonic() >= self._grace_until
        polled = [d for d in active if d.state in (State.QUEUED, State.DOWNLOADING, State.RECOGNIZING)]
        results = await asyncio.gather(
            *(self._poll_one(d, epochs.get(d.id, 0), forgotten, index, count_misses) for d in polled),
            return_exceptions=True,
        )
        for download, result in zip(polled, results, strict=True):
            if isinstance(result, Exception):
                log.error("polling the download failed: %r", result, exc_info=result,
                          **for_download(download.id))
        if self.config.adopt:
            await self.housekeeping.adopt_new(index)
        return True

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

    async def _poll_one(self, listed: Download, epoch: int, forgotten: int, index: TorrentIndex,
                        count_misses: bool) -> None:
        if self.serial.busy(listed.id):
            return  # a command or a stage holds it; the next cycle looks again
        async with self.serial.serialized(listed.id):
            download: Download | None = listed
            # Changed since it was listed (or settled, its epoch dropped): read it again.
            if self.serial.epoch(listed.id) != epoch or self.serial.forgotten != forgotten:
                download = await self.store.find_download(listed.id)
            if download is None:
                return
            torrent = index.find(download.hashes(), download.qbt_tag)
            if torrent is not None:
                self.housekeeping.claim(torrent.hashes())
            if download.state is State.QUEUED:
                await self._poll_queued(download, torrent)
            elif download.state is State.DOWNLOADING:
                await self._poll_downloading(download, torrent, count_misses)
            elif download.state is State.RECOGNIZING:
                if torrent is None:
                    await self._missed(download, count_misses)
                    return
                if download.source_miss_count:
                    await self.store.update_download(download.id, source_miss_count=0)
                self.pipeline.start_recognition(download.id, torrent.hash)

    # ------------------------------------------------------------ queued: add once

    async def _poll_queued(self, download: Download, torrent: TorrentInfo | None) -> None:
        if torrent is not None:
            download = await self._learn(download, torrent)
            fields = {**view_fields(torrent), "source_miss_count": 0,
                      "source_added_at": _added_at(torrent), **self._name_field(download, torrent)}
            await self.serial.change(download.id, State.DOWNLOADING, reason="qBittorrent has the torrent",
                                     actor=Actor.WORKER, expected=State.QUEUED, fields=fields)
            return
        accepted = self._added.get(download.id)
        if accepted is not None:
            # qBittorrent fetches a URL itself and lists the torrent only once it has it.
            limit = max(self.config.metadata_timeout, self.appear_timeout)
            if time.monotonic() - accepted > limit:
                await self._fail(download, "qbt_add_failed", "qBittorrent accepted the torrent but it "
                                 f"did not show up within {limit:g} s (a bad URL, or a duplicate of a "
                                 "torrent it already has)")
            return
        attempts, not_before = self._add_retry.get(download.id, (0, 0.0))
        if time.monotonic() < not_before:
            return
        request = await self._add_request(download)
        if request is None:
            await self._fail(download, "qbt_add_failed", "nothing to add: no magnet, URL, .torrent or hash")
            return
        try:
            await self.client.add(request)
        except TorrentRejected as exc:
            if exc.reason == "duplicate":  # it is there after all: the next poll finds it by hash
                self._added[download.id] = time.monotonic()
                return
            await self._fail(download, "qbt_add_failed", exc.message)
            return
        except AdapterError as exc:
            delay = backoff(self.poll_interval, attempts + 1, self.config.retry_max_backoff)
            self._add_retry[download.id] = (attempts + 1, time.monotonic() + delay)
            log.warning("adding to qBittorrent failed; retrying in %.1f s: %s", delay, exc.message,
                        **for_download(download.id))
            return
        self._add_retry.pop(download.id, None)
        self._added[download.id] = time.monotonic()
        log.info("added to qBittorrent", **for_download(download.id, tag=download.qbt_tag))
        self.wake()

    async def _add_request(self, download: Download) -> AddTorrent | None:
        common: dict[str, Any] = {"tag": download.qbt_tag, "category": self.qbt.category,
                                  "save_path": self.qbt.save_path}
        if download.source_type == "torrent":
            data = await self.store.torrent_bytes(download.id)
            if data:
                return AddTorrent(**common, torrent_bytes=data)
        ref = download.source_ref.strip()
        if ref.lower().startswith("magnet:"):
            return AddTorrent(**common, magnet=ref)
        if ref.lower().startswith(("http://", "https://")):
            return AddTorrent(**common, url=ref)
        link = magnet_for(download)
        return AddTorrent(**common, magnet=link) if link else None

    # ------------------------------------------------------------ downloading

    async def _poll_downloading(self, download: Download, torrent: TorrentInfo | None,
                                count_misses: bool) -> None:
        if torrent is None:
            await self._missed(download, count_misses)
            return
        download = await self._learn(download, torrent)
        fields = {**view_fields(torrent), "source_miss_count": 0, **self._name_field(download, torrent)}
        if is_error(torrent):
            await self._fail(download, "torrent_error", f"qBittorrent reports the torrent as {torrent.state}",
                             fields)
            return
        now = time.monotonic()
        if lacks_metadata(torrent):
            since = self._meta_since.setdefault(download.id, now - _age(download.source_added_at))
            if now - since > self.config.metadata_timeout:
                await self._fail(download, "metadata_timeout", "no metadata for the magnet after "
                                 f"{self.config.metadata_timeout:g} s (no peers?)", fields)
                return
        else:
            self._meta_since.pop(download.id, None)
        seen = self._progress_seen.get(download.id)
        if not can_stall(torrent) or seen is None or seen[0] != torrent.progress:
            self._progress_seen[download.id] = (torrent.progress, now)
        elif now - seen[1] > self.config.stall_timeout:
            await self._fail(download, "stalled", f"no progress for {self.config.stall_timeout:g} s "
                             f"(at {torrent.progress:.1%})", fields)
            return
        if is_complete(torrent):
            fields["completed_at"] = clock.now()
            await self.serial.change(download.id, State.RECOGNIZING, reason="download complete",
                                     actor=Actor.WORKER, expected=State.DOWNLOADING, fields=fields)
            self.pipeline.start_recognition(download.id, torrent.hash)
            return
        if near_completion(torrent, self.config.near_completion_eta):
            self._near.add(download.id)
        else:
            self._near.discard(download.id)
        await self._update_view(download, fields)

    async def _missed(self, download: Download, count_misses: bool) -> None:
        """The torrent is not in qBittorrent's list: count it; fail after the debounce."""
        if not count_misses:
            return
        misses = download.source_miss_count + 1
        if misses >= self.config.source_miss_threshold:
            await self._fail(download, "source_missing", f"the torrent has been missing from qBittorrent "
                             f"for {misses} consecutive polls", {"source_miss_count": misses})
        else:
            await self.store.update_download(download.id, source_miss_count=misses)

    async def _fail(self, download: Download, code: str, message: str,
                    fields: Mapping[str, Any] | None = None) -> None:
        await self.serial.change(download.id, State.FAILED, reason=f"{code}: {message}", actor=Actor.WORKER,
                                 expected=download.state,
                                 fields={**(fields or {}), "error_code": code, "error_msg": message})

    async def _learn(self, download: Download, torrent: TorrentInfo) -> Download:
        """Record hashes qBittorrent knows and we did not (URL sources); guarded against owners."""
        new = torrent.hashes() - download.hashes()
        if not new:
            return download
        try:
            added = await self.store.add_infohashes(download.id, [Infohash(h, hash_kind(h)) for h in new])
        except Conflict as exc:
            log.warning("qBittorrent's hashes belong to another download: %s", exc.message,
                        **for_download(download.id))
            return download
        download = await self.store.get_download(download.id)
        if added:
            self._publish(EventKind.DOWNLOAD_UPDATED, download, {"infohashes": sorted(added)})
        return download

    def _name_field(self, download: Download, torrent: TorrentInfo) -> dict[str, Any]:
        name = torrent.name.strip()
        if name and name.lower() not in torrent.hashes() and placeholder_name(download):
            return {"display_name": name}
        return {}

    async def _update_view(self, download: Download, fields: Mapping[str, Any]) -> Download:
        """Write the view fields that changed and publish progress / update events on change only."""
        changed = {k: v for k, v in fields.items() if getattr(download, k) != v}
        if not changed:
            return download
        download = await self.store.update_download(download.id, **changed)
        if changed.keys() & PROGRESS_KEYS:
            self._publish(EventKind.PROGRESS, download, {
                "progress": download.progress, "dl_speed": download.dl_speed, "eta": download.eta,
                "torrent_state": download.torrent_state, "size": download.total_size})
        if changed.keys() - PROGRESS_KEYS - {"source_miss_count"}:
            self._publish(EventKind.DOWNLOAD_UPDATED, download,
                          {k: v for k, v in changed.items() if k not in PROGRESS_KEYS})
        return download

    def _publish(self, kind: EventKind, download: Download, data: dict[str, Any]) -> None:
        self.bus.publish(Event(kind, download.id, name=download.display_name, to_state=download.state,
                               data=data))

    def _reset_trackers(self, download_id: str) -> None:
        for tracker in (self._added, self._add_retry, self._progress_seen, self._meta_since):
            tracker.pop(download_id, None)
        self._near.discard(download_id)

    # ------------------------------------------------------------ applying (recovery)

    async def _ensure_apply(self, download: Download) -> None:
        if self.serial.stage(download.id) is not None or self.serial.busy(download.id):
            return
        history = await self.store.transitions(download.id)
        last = history[-1] if history else None
        mode = "plain"
        if last is not None and last.to_state is State.APPLYING:
            if last.from_state is State.REVIEW:
                mode = "human"
            elif last.from_state is State.TARGET_MISSING:
                mode = "relink"
        self.pipeline.start_apply(download.id, mode=mode)

    # ------------------------------------------------------------ adoption and reconciliation

    async def reconcile(self, index: TorrentIndex | None = None) -> int:
        """One reconciliation pass now (laid-out downloads whose torrent or files went); how many moved."""
        index = index if index is not None else self.index
        return await self.housekeeping.reconcile(index) if index is not None else 0

    # ------------------------------------------------------------ for commands

    async def find_torrent(self, download: Download) -> TorrentInfo | None:
        """qBittorrent's torrent for a download, from a fresh poll when possible."""
        try:
            snapshot = await self.client.sync()
            self.index = TorrentIndex(snapshot.torrents)
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


def _added_at(torrent: TorrentInfo) -> str:
    if torrent.added_on:
        return clock.format_time(datetime.fromtimestamp(torrent.added_on, UTC))
    return clock.now()


def _age(timestamp: str | None) -> float:
    """Seconds since an RFC 3339 timestamp (0 when unknown or in the future)."""
    if not timestamp:
        return 0.0
    return max((clock.utcnow() - clock.parse_time(timestamp)).total_seconds(), 0.0)
