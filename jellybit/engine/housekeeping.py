"""Housekeeping of the poll loop: adopting torrents added by hand; reconciliation (reconcile.py)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from jellybit.config import QbittorrentConfig
from jellybit.core.ports import Layouter, TorrentClient, TorrentInfo
from jellybit.core.states import Actor
from jellybit.core.store_port import StorePort
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.ingest import adopt
from jellybit.engine.reconcile import Reconciler
from jellybit.engine.serial import Serializer
from jellybit.errors import AdapterError
from jellybit.logs import for_download

log = logging.getLogger(__name__)

class Housekeeping:
    """Adoption (a torrent under the category nobody owns becomes a download) and reconciliation."""

    def __init__(self, store: StorePort, serial: Serializer, bus: EventBus, client: TorrentClient,
                 layouter: Layouter, qbt: QbittorrentConfig) -> None:
        self.store = store
        self.serial = serial
        self.bus = bus
        self.client = client
        self.layouter = layouter
        self.qbt = qbt
        self._claimed: set[str] = set()     # hashes known to belong to a download (a cache)
        self._unseen: set[str] = set()      # torrents (qBittorrent ids) new or changed, not looked at yet
        self.reconciler = Reconciler(store, serial, layouter)

    def claim(self, hashes: set[str]) -> None:
        """Remember hashes a download owns, so adoption never looks at them again."""
        self._claimed |= hashes

    async def adopt_new(self, index: TorrentIndex, changed: Iterable[str]) -> None:
        """Adopt torrents under the category that no download (active or settled) owns.

        Only the torrents new or changed since the last look are looked at (`changed`, every
        torrent after a full answer): a torrent that changed into the category counts too.
        """
        self._unseen.update(changed)
        while self._unseen:
            torrent_hash = self._unseen.pop()
            torrent = index.get(torrent_hash)
            if torrent is None:
                continue
            hashes = torrent.hashes()
            if torrent.category != self.qbt.category or not hashes or hashes & self._claimed:
                continue
            try:
                if not await self._known(torrent):
                    await self._adopt(torrent)
            except BaseException:
                self._unseen.add(torrent_hash)    # looked at again next cycle
                raise
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
        log.info("adopted a torrent added by hand", **for_download(download.id, torrent=torrent.name))
        if result.created:
            self.bus.publish(Event(EventKind.ADDED, download.id, name=download.display_name,
                                   to_state=download.state, reason="adopted", actor=Actor.WORKER))
        # Matching is by hash anyway; an adapter that can tag also makes it findable by its tag.
        try:
            await self.client.add_tags([torrent.hash], [download.qbt_tag])
        except AdapterError as exc:
            log.warning("cannot tag the adopted torrent: %s", exc.message, **for_download(download.id))

    async def reconcile(self, index: TorrentIndex) -> int:
        """One reconciliation pass now, against this view of qBittorrent; returns how many moved."""
        return await self.reconciler.reconcile_pass(lambda: index)
