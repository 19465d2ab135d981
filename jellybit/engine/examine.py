"""One download's examination in a poll cycle: add it, follow its torrent, fail it, or start recognition.

The worker (worker.py) decides which downloads a cycle examines; this module decides what an
examination does with one of them, under the download's lock. Everything it writes it also
hands to the active set, so the in-memory copy never needs a read to catch up with the worker.

Recognition starts as soon as qBittorrent lists the files (`worker.recognize_early`): the download
goes on to `recognizing` with `awaiting_files` set, and while that flag stands it is followed like a
`downloading` one in `recognizing`, `review` and `applying` alike (progress, errors, stalls, a
vanished torrent). Completion clears the flag and, in `applying`, starts the layout, which first
checks the completed files (pipeline.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from jellybit import clock
from jellybit.config import QbittorrentConfig, WorkerConfig
from jellybit.core.backoff import backoff
from jellybit.core.models import Download, Infohash
from jellybit.core.ports import AddTorrent, TorrentClient, TorrentInfo
from jellybit.core.states import EARLY_STATES, Actor, State
from jellybit.core.store_port import DownloadStore
from jellybit.core.torrent_state import (
    TorrentIndex,
    files_known,
    is_complete,
    is_error,
    near_completion,
    view_fields,
)
from jellybit.engine.active_set import ActiveDownloads
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.housekeeping import Housekeeping
from jellybit.engine.pipeline import Pipeline
from jellybit.engine.serial import Serializer
from jellybit.engine.timeouts import DownloadTimeouts
from jellybit.errors import AdapterError, Conflict, TorrentRejected
from jellybit.logs import for_download

log = logging.getLogger(__name__)

PROGRESS_KEYS = frozenset({"progress", "dl_speed", "eta", "torrent_state", "num_seeds", "num_peers"})
POLLED = (State.QUEUED, State.DOWNLOADING, State.RECOGNIZING)


def still_downloading(download: Download) -> bool:
    """Recognized early and qBittorrent has not completed its files yet."""
    return download.awaiting_files and download.state in EARLY_STATES


def polled(download: Download) -> bool:
    """Tell whether poll cycles follow this download's torrent."""
    return download.state in POLLED or still_downloading(download)


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


class Examiner:
    """What one cycle does with one download in `queued`, `downloading` or `recognizing`."""

    def __init__(self, *, store: DownloadStore, serial: Serializer, bus: EventBus, client: TorrentClient,
                 pipeline: Pipeline, housekeeping: Housekeeping, active: ActiveDownloads,
                 timeouts: DownloadTimeouts, worker: WorkerConfig, qbittorrent: QbittorrentConfig,
                 appear_timeout: float, wake: Callable[[], None]) -> None:
        self.store = store
        self.serial = serial
        self.bus = bus
        self.client = client
        self.pipeline = pipeline
        self.housekeeping = housekeeping
        self.active = active
        self.timeouts = timeouts
        self.config = worker
        self.qbt = qbittorrent
        self.appear_timeout = appear_timeout
        self.wake = wake
        self.examining: set[str] = set()     # ids under examination: their own writes need no re-read
        self.near: set[str] = set()          # ids about to complete: poll faster
        self._added: dict[str, float] = {}                       # id -> when add was accepted
        self._add_retry: dict[str, tuple[int, float]] = {}        # id -> (attempts, not before)

    def forget(self, download_id: str) -> None:
        """Drop what the examinations remembered about a download (its state changed)."""
        self._added.pop(download_id, None)
        self._add_retry.pop(download_id, None)
        self.timeouts.forget(download_id)
        self.near.discard(download_id)

    async def examine(self, download_id: str, index: TorrentIndex, count_misses: bool) -> None:
        """Examine one download under its lock (skipped when a command or a stage holds it)."""
        if self.serial.busy(download_id):
            return  # a command or a stage holds it; it is marked changed when they let go
        self.examining.add(download_id)
        try:
            async with self.serial.serialized(download_id):
                await self._examine(download_id, index, count_misses)
        finally:
            self.examining.discard(download_id)

    async def _examine(self, download_id: str, index: TorrentIndex, count_misses: bool) -> None:
        download = self.active.get(download_id)
        if download is None or self.active.changed(download_id):
            download = await self.active.reread(download_id)
        if download is None or not polled(download):
            return
        torrent = index.find(download.hashes(), download.qbt_tag)
        self.active.matched(download.id, torrent.hash if torrent is not None else None)
        if torrent is not None:
            self.housekeeping.claim(torrent.hashes())
        if download.state is State.QUEUED:
            await self._queued(download, torrent)
        elif download.state is State.DOWNLOADING or still_downloading(download):
            await self._downloading(download, torrent, count_misses)
        elif torrent is None:
            await self._missed(download, count_misses)
        else:
            if download.source_miss_count:
                self.active.put(await self.store.update_download(download.id, source_miss_count=0))
            self.pipeline.start_recognition(download.id, torrent.hash)

    async def _change(self, download: Download, to: State, **kwargs: Any) -> Download:
        changed = await self.serial.change(download.id, to, actor=Actor.WORKER, expected=download.state,
                                           **kwargs)
        self.active.put(changed)
        return changed

    # ------------------------------------------------------------ queued: add once

    async def _queued(self, download: Download, torrent: TorrentInfo | None) -> None:
        if torrent is not None:
            download = await self._learn(download, torrent)
            fields = {**view_fields(torrent), "source_miss_count": 0,
                      "source_added_at": _added_at(torrent), **self._name_field(download, torrent)}
            await self._change(download, State.DOWNLOADING, reason="qBittorrent has the torrent",
                               fields=fields)
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
            delay = backoff(self.config.poll_interval, attempts + 1, self.config.retry_max_backoff)
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

    async def _downloading(self, download: Download, torrent: TorrentInfo | None, count_misses: bool) -> None:
        if torrent is None:
            await self._missed(download, count_misses)
            return
        download = await self._learn(download, torrent)
        fields = {**view_fields(torrent), "source_miss_count": 0, **self._name_field(download, torrent)}
        if is_error(torrent):
            await self._fail(download, "torrent_error", f"qBittorrent reports the torrent as {torrent.state}",
                             fields)
            return
        expired = self.timeouts.observe(download, torrent)
        if expired is not None:
            await self._fail(download, expired.code, expired.message, fields)
            return
        if download.state is not State.DOWNLOADING:
            await self._early(download, torrent, fields)
            return
        if is_complete(torrent):
            fields["completed_at"] = clock.now()
            await self._change(download, State.RECOGNIZING, reason="download complete", fields=fields)
            self.pipeline.start_recognition(download.id, torrent.hash)
            return
        if self.config.recognize_early and files_known(torrent):
            fields["awaiting_files"] = True
            await self._change(download, State.RECOGNIZING, reason=f"file list known, {torrent.progress:.0%} "
                               "downloaded: recognized while it downloads", fields=fields)
            self.pipeline.start_recognition(download.id, torrent.hash)
            return
        self._watch_near(download, torrent)
        await self._update_view(download, fields)

    async def _early(self, download: Download, torrent: TorrentInfo, fields: dict[str, Any]) -> None:
        """A download recognized early: follow its torrent; on completion clear the flag and go on."""
        if not is_complete(torrent):
            self._watch_near(download, torrent)
            await self._update_view(download, fields)
            if download.state is State.RECOGNIZING:
                self.pipeline.start_recognition(download.id, torrent.hash)
            return
        self.near.discard(download.id)
        self.timeouts.forget(download.id)
        download = await self._update_view(download, {**fields, "completed_at": clock.now(),
                                                      "awaiting_files": False})
        log.info("the files are complete", **for_download(download.id, state=download.state.value))
        if download.state is State.APPLYING:
            await self.pipeline.resume_apply(download.id, torrent.hash)
        elif download.state is State.RECOGNIZING:
            self.pipeline.start_recognition(download.id, torrent.hash)

    def _watch_near(self, download: Download, torrent: TorrentInfo) -> None:
        if near_completion(torrent, self.config.near_completion_eta):
            self.near.add(download.id)
        else:
            self.near.discard(download.id)

    async def _missed(self, download: Download, count_misses: bool) -> None:
        """The torrent is not in qBittorrent's list: count it; fail after the debounce."""
        if not count_misses:
            return
        misses = download.source_miss_count + 1
        if misses >= self.config.source_miss_threshold:
            await self._fail(download, "source_missing", f"the torrent has been missing from qBittorrent "
                             f"for {misses} consecutive polls", {"source_miss_count": misses})
        else:
            self.active.put(await self.store.update_download(download.id, source_miss_count=misses))

    async def _fail(self, download: Download, code: str, message: str,
                    fields: Mapping[str, Any] | None = None) -> None:
        await self._change(download, State.FAILED, reason=f"{code}: {message}",
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
        self.active.put(download)
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
        current = vars(download)              # the dataclass's own fields, read by name
        changed = {k: v for k, v in fields.items() if current[k] != v}
        if not changed:
            return download
        download = await self.store.update_download(download.id, **changed)
        self.active.put(download)
        if changed.keys() & PROGRESS_KEYS:
            self._publish(EventKind.PROGRESS, download, {
                "progress": download.progress, "dl_speed": download.dl_speed, "eta": download.eta,
                "torrent_state": download.torrent_state, "size": download.total_size})
        if changed.keys() - PROGRESS_KEYS - {"source_miss_count", "completed_at"}:
            self._publish(EventKind.DOWNLOAD_UPDATED, download,
                          {k: v for k, v in changed.items() if k not in PROGRESS_KEYS})
        return download

    def _publish(self, kind: EventKind, download: Download, data: dict[str, Any]) -> None:
        self.bus.publish(Event(kind, download.id, name=download.display_name, to_state=download.state,
                               data=data))


def _added_at(torrent: TorrentInfo) -> str:
    if torrent.added_on:
        return clock.format_time(datetime.fromtimestamp(torrent.added_on, UTC))
    return clock.now()
