"""Housekeeping of the poll loop: adopting torrents added by hand, reconciling laid-out downloads."""

from __future__ import annotations

import logging
from typing import Any

from jellybit.adapters.store import Store
from jellybit.config import QbittorrentConfig
from jellybit.core.ports import Layouter, TorrentClient, TorrentInfo
from jellybit.core.states import Actor, State, can_transition
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.events import Event, EventBus, EventType
from jellybit.engine.ingest import adopt
from jellybit.engine.serial import Serializer
from jellybit.errors import AdapterError, InvalidState
from jellybit.logs import for_download

log = logging.getLogger(__name__)

RECONCILABLE = (State.DONE, State.TARGET_MISSING, State.ORPHANED)
PAGE = 200


class Housekeeping:
    """Adoption (a torrent under the category nobody owns becomes a download) and reconciliation."""

    def __init__(self, store: Store, serial: Serializer, bus: EventBus, client: TorrentClient,
                 layouter: Layouter, qbt: QbittorrentConfig) -> None:
        self.store = store
        self.serial = serial
        self.bus = bus
        self.client = client
        self.layouter = layouter
        self.qbt = qbt
        self._claimed: set[str] = set()     # hashes known to belong to a download (a cache)

    def claim(self, hashes: set[str]) -> None:
        """Remember hashes a download owns, so adoption never looks at them again."""
        self._claimed |= hashes

    async def adopt_new(self, index: TorrentIndex) -> None:
        """Adopt every torrent under the category that no download (active or settled) owns."""
        for torrent in index.torrents:
            hashes = torrent.hashes()
            if torrent.category != self.qbt.category or not hashes or hashes & self._claimed:
                continue
            if await self._known(torrent):
                self._claimed |= hashes
                continue
            await self._adopt(torrent)
            self._claimed |= hashes

    async def _known(self, torrent: TorrentInfo) -> bool:
        hashes = torrent.hashes()
        if await self.store.find_active_by_hashes(hashes) or await self.store.settled_with_hashes(hashes):
            return True
        for tag in torrent.tags:
            if tag.startswith(self.qbt.tag_prefix) and await self.store.find_by_tag(tag) is not None:
                return True
        return False

    async def _adopt(self, torrent: TorrentInfo) -> None:
        result = await adopt(self.store, name=torrent.name, infohashes=sorted(torrent.hashes()),
                             tag_prefix=self.qbt.tag_prefix)
        download = result.download
        log.info("adopted a torrent added by hand", **for_download(download.id, name=torrent.name))
        if result.created:
            self.bus.publish(Event(EventType.ADDED, download.id, name=download.display_name,
                                   to_state=download.state, reason="adopted", actor=Actor.WORKER))
        # Matching is by hash anyway; an adapter that can tag also makes it findable by its tag.
        add_tags = getattr(self.client, "add_tags", None)
        if callable(add_tags):
            try:
                await add_tags([torrent.hash], [download.qbt_tag])
            except AdapterError as exc:
                log.warning("cannot tag the adopted torrent: %s", exc.message, **for_download(download.id))

    async def reconcile(self, index: TorrentIndex) -> None:
        """Compare laid-out downloads with qBittorrent and the libraries; move the ones that drifted."""
        reconcile = getattr(self.layouter, "reconcile", None)
        ids: list[str] = []
        while True:  # collect first: moving a download changes the pages
            page = await self.store.list_downloads(states=RECONCILABLE, limit=PAGE, offset=len(ids))
            ids.extend(d.id for d in page)
            if len(page) < PAGE:
                break
        for download_id in ids:
            if self.serial.busy(download_id):
                continue
            async with self.serial.serialized(download_id):
                await self._reconcile_one(download_id, index, reconcile)

    async def _reconcile_one(self, download_id: str, index: TorrentIndex, reconcile: Any) -> None:
        download = await self.store.get_download(download_id)
        if download.state not in RECONCILABLE:
            return
        present = index.find(download.hashes(), download.qbt_tag) is not None
        if callable(reconcile):
            target = await reconcile(download, present)
        else:
            target = reconcile_target(download.state, present, await self.layouter.targets_present(download))
        if target is None or target is download.state:
            return
        try:
            await self.serial.change(download.id, target, reason=f"reconcile: torrent "
                                     f"{'present' if present else 'gone'}", actor=Actor.RECONCILE,
                                     expected=download.state)
        except InvalidState as exc:
            log.warning("reconciliation refused: %s", exc.message, **for_download(download.id))


def reconcile_target(state: State, torrent_present: bool, targets_present: bool | None) -> State | None:
    """Where reconciliation moves a laid-out download (None: leave it), per spec §3."""
    if targets_present is None:
        return None
    target = {(True, True): State.DONE, (True, False): State.TARGET_MISSING, (False, True): State.ORPHANED,
              (False, False): State.DELETED}[(torrent_present, targets_present)]
    return target if target is not state and can_transition(state, target) else None
