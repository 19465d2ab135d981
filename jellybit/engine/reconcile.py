"""Reconciliation as its own task: compare laid-out downloads with qBittorrent and the libraries.

A pass walks every `done`, `target_missing` and `orphaned` download in chunks: one joined
query per chunk (keyset paging by id: the downloads, their hashes and their live links, read
on the store's reader thread), one worker-thread trip that `lstat`s targets until one is found
still in place, and a pure decision per download. Only the few that drifted take their lock,
are read again and are moved (`actor` reconcile); a busy one is left for the next pass. The
loop yields between chunks, so polls and commands never wait behind a pass, however long the
history. Its progress (`ReconcileProgress`) is shown on `<base>/info`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from jellybit import clock
from jellybit.core.ports import Layouter
from jellybit.core.states import RECONCILABLE, Actor, State, drift
from jellybit.core.store_port import StorePort
from jellybit.core.store_records import ReconcileItem
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.serial import Serializer
from jellybit.errors import InvalidState, StorageFault
from jellybit.logs import for_download

log = logging.getLogger(__name__)

CHUNK = 500


@dataclass(frozen=True)
class ReconcileProgress:
    """Where the reconciliation is: the running pass, or the last one."""

    running: bool = False
    checked: int = 0              # downloads looked at in this (or the last) pass
    total: int = 0                # reconcilable downloads when the pass began
    moved: int = 0                # downloads it moved to another state
    started_at: str | None = None
    finished_at: str | None = None
    seconds: float | None = None  # how long the last finished pass took


class Reconciler:
    """Runs reconciliation passes, chunk by chunk, and keeps their progress."""

    def __init__(self, store: StorePort, serial: Serializer, layouter: Layouter, *,
                 chunk: int = CHUNK) -> None:
        self.store = store
        self.serial = serial
        self.layouter = layouter
        self.chunk = max(1, chunk)
        self.progress = ReconcileProgress()
        self._pass = asyncio.Lock()

    async def run(self, interval: float, index: Callable[[], TorrentIndex | None],
                  ready: Callable[[], bool]) -> None:
        """Reconcile every `interval` seconds once the worker has a fresh view of qBittorrent."""
        while True:
            await asyncio.sleep(1.0 if not ready() else interval if self.progress.finished_at else 0)
            if ready():
                try:
                    await self.reconcile_pass(index)
                except StorageFault:
                    # A library not mounted: its files only look gone. The watch reports it; next pass.
                    await asyncio.sleep(interval)

    async def reconcile_pass(self, index: Callable[[], TorrentIndex | None]) -> int:
        """One pass over every laid-out download; returns how many it moved."""
        async with self._pass:
            started = time.monotonic()
            counts = await self.store.count_by_state()
            self.progress = ReconcileProgress(True, 0, sum(counts.get(s, 0) for s in RECONCILABLE), 0,
                                              clock.now(), self.progress.finished_at, self.progress.seconds)
            after = ""
            try:
                while True:
                    items = await self.store.reconcile_page(RECONCILABLE, after, self.chunk)
                    if not items:
                        break
                    after = items[-1].id
                    torrents = index()
                    if torrents is None:
                        break
                    moved = await self._chunk(items, torrents)
                    self.progress = replace(self.progress, checked=self.progress.checked + len(items),
                                            moved=self.progress.moved + moved)
                    await asyncio.sleep(0)      # polls and commands run between chunks
            finally:
                self.progress = replace(self.progress, running=False, finished_at=clock.now(),
                                        seconds=round(time.monotonic() - started, 3))
            if self.progress.moved or self.progress.checked:
                log.info("reconciled", extra={"checked": self.progress.checked, "moved": self.progress.moved,
                                              "seconds": self.progress.seconds})
            return self.progress.moved

    async def _chunk(self, items: list[ReconcileItem], torrents: TorrentIndex) -> int:
        targets = await self.layouter.targets_present_many(items)
        moved = 0
        for item in items:
            present = torrents.find(item.hashes, item.qbt_tag) is not None
            target = drift(item.state, present, targets.get(item.id))
            if target is not None and await self._move(item.id, item.state, target, present):
                moved += 1
        return moved

    async def _move(self, download_id: str, seen: State, target: State, present: bool) -> bool:
        """Move one drifted download, after checking again under its lock (busy: the next pass)."""
        if self.serial.busy(download_id):
            return False
        async with self.serial.serialized(download_id):
            download = await self.store.find_download(download_id)
            if download is None or download.state is not seen:
                return False
            again = await self.layouter.targets_present(download)
            target = drift(download.state, present, again)
            return target is not None and await self._change(download_id, download.state, target, present)

    async def _change(self, download_id: str, state: State, target: State, present: bool) -> bool:
        try:
            await self.serial.change(download_id, target, reason=f"reconcile: torrent "
                                     f"{'present' if present else 'gone'}", actor=Actor.RECONCILE,
                                     expected=state)
        except InvalidState as exc:
            log.warning("reconciliation refused: %s", exc.message, **for_download(download_id))
            return False
        return True
