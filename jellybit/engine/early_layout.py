"""Each file into the library as it completes (issue 25): while a download whose plan is decided
still downloads, its complete files are laid out at once, one journal batch per poll that found some.

A download qualifies while it is `applying` with `awaiting_files` (decided during the download:
automatically, or by a human's apply). Each poll that names its torrent as changed lists the
torrent's files; the wanted ones whose every piece is verified (`core/torrent_files.py`) and not
yet laid out go to `Layouter.apply_files`, under the download's lock, without changing its state.
Only videos and extras go early: their targets come from the file list alone, while a subtitle's
name may still change with its text (language, forced, SDH), so tracks wait for the completion.
The state machine is untouched: when the torrent completes, the normal `applying` stage lays out
the whole plan (the early files are found in place) and the download becomes `done`. A failure
here (a file moving under us, a full library) only waits for the next poll or for that stage.

Early layout is off, and files wait for completion, when qBittorrent's settings would change a
completed file's inode (a folder for incomplete torrents on another filesystem) or put it where
Jellybit cannot read it; that is said once in the log and on `<base>/info` (`problems`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

from jellybit.core.arrival import waits_for_bytes
from jellybit.core.links import LIVE_STATUSES
from jellybit.core.models import Download
from jellybit.core.ports import Layouter, TorrentClient, TorrentFile, TorrentInfo
from jellybit.core.records import PlanItem, Role
from jellybit.core.states import State
from jellybit.core.store_port import StorePort
from jellybit.core.torrent_files import complete_sources, early_layout_problems, torrent_problem
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.serial import Serializer
from jellybit.errors import AdapterError, JellybitError
from jellybit.logs import for_download

log = logging.getLogger(__name__)

EARLY = "early-layout"
DEFAULT_PROBLEM = "qBittorrent's settings have not been read yet"


def decided_while_downloading(download: Download) -> bool:
    """Tell whether a download's plan is decided and its torrent still downloads."""
    return download.state is State.APPLYING and download.awaiting_files


class EarlyLayout:
    """Lays out complete files of decided downloads; knows when qBittorrent makes that unsafe."""

    def __init__(self, store: StorePort, serial: Serializer, client: TorrentClient, layouter: Layouter, *,
                 bus: EventBus | None = None, enabled: bool = True,
                 on_change: Callable[[], None] = lambda: None,
                 read_content: Callable[[str, Sequence[TorrentFile]], Awaitable[bool]] | None = None) -> None:
        self.store = store
        self.bus = bus
        self.serial = serial
        self.client = client
        self.layouter = layouter
        self.enabled = enabled
        self.on_change = on_change          # the problems changed: publish `info` again
        self.read_content = read_content    # reads files whose content the plan waits for (pipeline)
        self.problems: tuple[str, ...] | None = None   # None: not read yet; (): safe
        self._laid: dict[str, frozenset[str]] = {}     # download id -> sources laid out (this run)
        self._refused: dict[str, str] = {}             # download id -> why its torrent is not safe

    @property
    def safe(self) -> bool:
        """Tell whether complete files may be laid out before their torrent completes."""
        return self.enabled and self.problems == ()

    def status(self) -> str | None:
        """What keeps early layout off, in words (None: it is on)."""
        if not self.enabled or not self.problems:
            return None       # turned off by the user (worker.early_layout), not read yet, or on
        return "; ".join(self.problems)

    async def check(self) -> tuple[str, ...] | None:
        """Read qBittorrent's preferences and decide whether early layout is safe (logged on change)."""
        try:
            preferences = await self.client.preferences()
        except AdapterError as exc:
            log.warning("cannot read qBittorrent's preferences for early layout: %s", exc.message)
            return self.problems
        self._take(early_layout_problems(preferences, self.layouter.place_of))
        return self.problems

    def _take(self, problems: tuple[str, ...]) -> None:
        if problems == self.problems:
            return
        if problems:
            log.warning("files are laid out only when their torrent completes: %s "
                        "(docs/qbittorrent.md, Early layout)", "; ".join(problems))
        elif self.problems:
            log.info("early layout is on again: complete files are laid out while the rest downloads")
        self.problems = problems
        self.on_change()

    def forget(self, download_id: str) -> None:
        """Drop what is remembered about a download (it left `applying`)."""
        self._laid.pop(download_id, None)
        self._refused.pop(download_id, None)

    def start(self, download: Download, torrent: TorrentInfo) -> bool:
        """Lay out the download's newly complete files in a stage of its own; True when started."""
        if not self.safe or not decided_while_downloading(download):
            return False
        problem = torrent_problem(torrent, self.layouter.place_of)
        if problem is not None:
            if self._refused.get(download.id) != problem:
                log.warning("this torrent's files are laid out only when it completes: %s", problem,
                            **for_download(download.id))
                self._refused[download.id] = problem
            return False
        self._refused.pop(download.id, None)
        return self.serial.spawn(download.id, EARLY, lambda: self._stage(download.id, torrent.hash))

    async def _stage(self, download_id: str, torrent_hash: str) -> None:
        async with self.serial.external(download_id):
            try:
                files = await self.client.files(torrent_hash)
            except AdapterError as exc:
                log.debug("cannot list the torrent's files: %s", exc.message, **for_download(download_id))
                return
        ready = complete_sources(files) - self._laid.get(download_id, frozenset())
        if not ready:
            return
        if self.read_content is not None:
            # A subtitle whose language its text tells is read first; the plan then names it.
            await self.read_content(download_id, files)
        async with self.serial.serialized(download_id):
            download = await self.store.find_download(download_id)
            if download is None or not decided_while_downloading(download):
                return
            recognition = await self.store.current_recognition(download_id)
            if recognition is None:
                return
            planned = planned_sources(recognition.plan.items)
            ready &= planned
            if not ready:
                return
            try:
                result = await self.layouter.apply_files(download, recognition, frozenset(ready))
            except (JellybitError, OSError) as exc:
                # A file moved or vanished under us, a full library: the completion's apply decides.
                message = exc.message if isinstance(exc, JellybitError) else str(exc)
                log.info("early layout waits: %s", message, **for_download(download_id))
                return
            if result.outcome != "done":
                log.info("early layout waits: %s", result.message or result.outcome,
                         **for_download(download_id))
                return
            self._laid[download_id] = self._laid.get(download_id, frozenset()) | ready
            await self._count(download)
            log.info("laid out while downloading", **for_download(
                download_id, files=len(ready), linked=result.linked, copied=result.copied,
                existing=result.existing))

    async def _count(self, download: Download) -> None:
        """Write and publish how many of the download's files are in the library now (for the views)."""
        count = len(await self.store.links_for_download(download.id, LIVE_STATUSES))
        if count == download.files_in_library:
            return
        updated = await self.store.update_download(download.id, files_in_library=count)
        if self.bus is not None:
            self.bus.publish(Event(EventKind.DOWNLOAD_UPDATED, download.id, name=updated.display_name,
                                   to_state=updated.state, data={"files_in_library": count}))

    def laid(self) -> Mapping[str, frozenset[str]]:
        """Sources laid out early in this run, per download (for tests and the bench)."""
        return self._laid


# Videos and extras are named from the file list alone; a subtitle's or an audio track's name may
# still change with its bytes (its language, forced or SDH read from the text), so tracks wait for
# the completion's apply, which checks the content first.
EARLY_ROLES = frozenset({Role.VIDEO, Role.EXTRA})


def planned_sources(items: Sequence[PlanItem]) -> set[str]:
    """The sources a plan lays out early: placed videos and extras (never ignored files, samples or
    tracks; `waits_for_bytes` would also hold back a subtitle whose text must tell its language)."""
    return {i.source for i in items
            if i.target and i.library and i.role in EARLY_ROLES and not waits_for_bytes(i)}
