"""Done means in Jellyfin: after a layout and its rescan, find the item the download became.

A done download is `pending` until Jellyfin lists it (`found`, with the item id and a link), or until
`confirm_within_seconds` pass (`missing` or `unreachable`, with a note that says what to check; it is
looked for again, slower, for a day). None of this ever changes the download's state: Jellyfin being
down or slow is reported, never failed (the same degraded-mode rule as the LLM). docs/jellyfin.md.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from typing import Protocol

from jellybit import clock
from jellybit.config import JellyfinConfig, PathsConfig
from jellybit.core.jellyfin import (
    Confirmation,
    Found,
    JellyfinLookup,
    Library,
    Wanted,
    covering,
    item_url,
    missing_note,
    uncovered_note,
    unreachable_note,
)
from jellybit.core.models import Download
from jellybit.core.store_port import JellyfinStore, ViewStore
from jellybit.core.store_records import DownloadRecord
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.errors import AdapterError
from jellybit.logs import for_download

log = logging.getLogger(__name__)


SINCE_MARGIN = timedelta(hours=1)       # items saved this long before the layout still count (clock skew,
                                        # a realtime-monitor scan while the links were being made)
KEEP_LOOKING = timedelta(hours=24)      # after that a missing download is no longer looked for
ROOT_CHECK_EVERY = 3600.0               # seconds between two comparisons of the libraries with the roots
ROOT_CHECK_RETRY = 60.0                 # ...and after one Jellyfin could not answer


class Store(JellyfinStore, ViewStore, Protocol):
    """What the confirmer asks of the store."""


class JellyfinConfirmer:
    """Looks done downloads up in Jellyfin until found or given up; publishes what changed."""

    def __init__(self, store: Store, bus: EventBus, lookup: JellyfinLookup, config: JellyfinConfig,
                 paths: PathsConfig) -> None:
        self.store = store
        self.bus = bus
        self.lookup = lookup
        self.config = config
        self.paths = paths
        self.public_url = (config.public_url or config.url).rstrip("/")
        self._wake = asyncio.Event()
        self._thorough_at: dict[str, float] = {}     # download id -> loop time of its last thorough look-up
        self._failing: str | None = None

    async def track(self, download: Download) -> None:
        """A download reached done: look for it from now on (never raises: it must not touch the layout)."""
        try:
            tracked = await self.store.jellyfin_track(download.id)
        except Exception:
            log.exception("could not start the jellyfin confirmation", **for_download(download.id))
            return
        if tracked is not None:
            self._thorough_at.pop(download.id, None)
            self.bus.publish(Event(EventKind.DOWNLOAD_UPDATED, download.id, name=download.display_name))
            self._wake.set()

    async def run(self) -> None:
        """Compare the libraries with the roots, then look up unconfirmed downloads every check_interval."""
        loop = asyncio.get_running_loop()
        next_root_check = loop.time()
        while True:
            self._wake.clear()
            if loop.time() >= next_root_check:
                compared = await self._check_roots()
                next_root_check = loop.time() + (ROOT_CHECK_EVERY if compared else ROOT_CHECK_RETRY)
            try:
                await self.confirm_due()
            except Exception:      # the store is busy or a bug: the layouts are done already; try later
                log.exception("jellyfin confirmation pass failed")
            try:
                async with asyncio.timeout(self.config.check_interval):
                    await self._wake.wait()
            except TimeoutError:
                pass

    async def _check_roots(self) -> bool:
        try:
            await self.lookup.check()
        except AdapterError as exc:
            log.info("jellyfin libraries not compared yet: %s", exc.message)
            return False
        return True

    async def confirm_due(self) -> int:
        """Look up every unconfirmed download that is due; returns how many Jellyfin now lists."""
        since = clock.format_time(clock.utcnow() - KEEP_LOOKING)
        pending = [d for d in await self.store.jellyfin_unconfirmed(since)
                   if d.jellyfin_status == Confirmation.PENDING or self._thorough_due(d)]
        if not pending:
            return 0
        try:
            libraries = await self.lookup.libraries()
        except AdapterError as exc:
            self._down(exc.message)
            for download in pending:
                await self._unreachable(download, exc.message)
            return 0
        found = 0
        for download in pending:
            found += await self._confirm(download, libraries)
        return found

    def _late(self, download: Download) -> bool:
        settled = clock.parse_time(download.settled_at or clock.now())
        return clock.utcnow() - settled >= timedelta(seconds=self.config.confirm_within_seconds)

    def _thorough_due(self, download: Download) -> bool:
        if not self._late(download):
            return False
        last = self._thorough_at.get(download.id)
        now = asyncio.get_running_loop().time()
        return last is None or now - last >= self.config.confirm_within_seconds

    async def _confirm(self, download: Download, libraries: list[Library]) -> int:
        record = await self.store.download_record(download.id)
        if record is None:
            return 0
        wanted = self._wanted(record)
        where = wanted.folder or next(iter(sorted(wanted.videos)), None)
        library = covering(libraries, where) if where else None
        if library is None:
            self._thorough_at[download.id] = asyncio.get_running_loop().time()
            await self._record(download, Confirmation.MISSING, note=uncovered_note(wanted.folder))
            return 0
        late = self._late(download)       # decided once: only a thorough look-up may call it missing
        thorough = late and self._thorough_due(download)
        if thorough:
            self._thorough_at[download.id] = asyncio.get_running_loop().time()
        since = clock.parse_time(download.settled_at or clock.now()) - SINCE_MARGIN
        try:
            found = await self.lookup.find(wanted, library, since.strftime("%Y-%m-%dT%H:%M:%SZ"),
                                           thorough=thorough)
        except AdapterError as exc:
            self._down(exc.message)
            await self._unreachable(download, exc.message)
            return 0
        self._up()
        if found is not None:
            await self._found(download, found)
            return 1
        if thorough:
            await self._record(download, Confirmation.MISSING,
                               note=missing_note(self.config.confirm_within_seconds, wanted.folder))
        return 0

    def _wanted(self, record: DownloadRecord) -> Wanted:
        recognition = record.recognition
        media = recognition.media_type.value if recognition and recognition.media_type else None
        root = self.paths.series if media == "series" else self.paths.movies
        folder = str(root / recognition.plan.folder) if recognition and recognition.plan.folder else None
        videos = frozenset(link.dst_path for link in record.links if link.live and link.kind == "video")
        return Wanted(record.download.id, media, folder, videos,
                      recognition.provider if recognition else None,
                      recognition.provider_id if recognition else None)

    async def _found(self, download: Download, found: Found) -> None:
        url = item_url(self.public_url, found.item_id)
        await self._record(download, Confirmation.FOUND, item_id=found.item_id, url=url)
        self._thorough_at.pop(download.id, None)
        log.info("jellyfin lists the download", **for_download(download.id, jellyfin_item=found.item_id,
                                                                matched_by=found.how))

    async def _unreachable(self, download: Download, why: str) -> None:
        late = self._late(download)
        if late:      # asked again (and written again) only every confirm_within_seconds from now on
            self._thorough_at[download.id] = asyncio.get_running_loop().time()
        status = Confirmation.UNREACHABLE if late else Confirmation.PENDING
        if download.jellyfin_status == Confirmation.MISSING and not late:
            return
        await self._record(download, status, note=unreachable_note(why))

    async def _record(self, download: Download, status: Confirmation, *, item_id: str | None = None,
                      url: str | None = None, note: str | None = None) -> None:
        updated, changed = await self.store.jellyfin_record(download.id, status, item_id=item_id, url=url,
                                                            note=note)
        if not changed:
            return
        if status in (Confirmation.MISSING, Confirmation.UNREACHABLE):
            log.warning("jellyfin has not confirmed the download: %s", note, **for_download(download.id))
        self.bus.publish(Event(EventKind.JELLYFIN, download.id, name=updated.display_name,
                               reason=status.value, data={"url": url, "note": note}))

    def _down(self, why: str) -> None:
        if self._failing is None:
            log.warning("jellyfin cannot be asked about new items: %s (layouts go on; asked again later)",
                        why)
        self._failing = why

    def _up(self) -> None:
        if self._failing is not None:
            log.info("jellyfin answers look-ups again")
        self._failing = None
