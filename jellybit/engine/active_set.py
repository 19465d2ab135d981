"""The worker's in-memory copy of the active downloads, re-read from the store only when one changes.

A download is marked changed by whoever changes it: the serializer (a state change, or anyone
leaving a download's lock: commands, stages, reconciliation), the event bus (an add or a join,
which run outside a lock) and the worker itself (it stores what its own writes return). A
cycle re-reads just the marked downloads; the whole set is read again at start, after a full
answer from qBittorrent and every `FULL_RELOAD` seconds, a safety net for a write that
announced itself nowhere.

It also remembers which torrent each download was matched to at its last examination, so a
poll can turn "these torrents changed" into "these downloads need a look".
"""

from __future__ import annotations

from collections.abc import Iterable

from jellybit.core.models import Download
from jellybit.core.states import ACTIVE_STATES, State
from jellybit.core.store_port import DownloadStore

FULL_RELOAD = 600.0   # seconds between safety-net reads of every active download


class ActiveDownloads:
    """Active downloads by id and by state, the ids marked changed, and each one's matched torrent."""

    def __init__(self, store: DownloadStore) -> None:
        self.store = store
        self._by_id: dict[str, Download] = {}
        self._by_state: dict[State, dict[str, Download]] = {state: {} for state in ACTIVE_STATES}
        self._dirty: set[str] = set()
        self._stale = True                          # read everything on the next refresh
        self._torrent_of: dict[str, str | None] = {}  # download id -> qBittorrent id (None: missing)
        self._owners: dict[str, set[str]] = {}         # qBittorrent id -> download ids matched to it
        self._unmatched: set[str] = set()              # not examined yet, or no torrent last time

    def __len__(self) -> int:
        return len(self._by_id)

    def get(self, download_id: str) -> Download | None:
        """The in-memory copy of an active download."""
        return self._by_id.get(download_id)

    def in_state(self, state: State) -> list[Download]:
        """The active downloads in one state."""
        return list(self._by_state.get(state, {}).values())

    def ids_in(self, *states: State) -> set[str]:
        """The ids of the active downloads in these states."""
        return {download_id for state in states for download_id in self._by_state.get(state, {})}

    # ------------------------------------------------------------ keeping it current

    def mark(self, download_id: str) -> None:
        """Someone changed (or may have changed) the download: read it again before it is examined."""
        self._dirty.add(download_id)

    def changed(self, download_id: str) -> bool:
        """Tell whether the download was marked since it was last read."""
        return download_id in self._dirty

    def reload(self) -> None:
        """Read every active download again on the next refresh."""
        self._stale = True

    async def refresh(self) -> set[str]:
        """Bring the copy up to date; return the ids read again (every id after a full read)."""
        if self._stale:
            self._dirty.clear()          # marks made while the read runs stay for the next refresh
            rows = await self.store.active_downloads()
            self._stale = False          # only now: a read that failed is tried again next cycle
            gone = set(self._by_id) - {d.id for d in rows}
            for download_id in gone:
                self._drop(download_id)
            for download in rows:
                self.put(download)
            return set(self._by_id)
        if not self._dirty:
            return set()
        ids, self._dirty = self._dirty, set()
        try:
            for download_id in ids:
                await self.reread(download_id, clear=False)
        except BaseException:
            self._dirty |= ids           # read them again next cycle (a second read does no harm)
            raise
        return ids

    async def reread(self, download_id: str, *, clear: bool = True) -> Download | None:
        """Read one download again now (None when it is gone or settled)."""
        if clear:
            self._dirty.discard(download_id)
        download = await self.store.find_download(download_id)
        if download is None:
            self._drop(download_id)
            return None
        return self.put(download)

    def put(self, download: Download) -> Download | None:
        """Store a download the caller just read or wrote; a settled one leaves the set."""
        if download.state not in ACTIVE_STATES:
            self._drop(download.id)
            return None
        old = self._by_id.get(download.id)
        if old is None:
            self._unmatched.add(download.id)
        elif old.state is not download.state:
            self._by_state[old.state].pop(download.id, None)
        self._by_id[download.id] = download
        self._by_state[download.state][download.id] = download
        return download

    def _drop(self, download_id: str) -> None:
        old = self._by_id.pop(download_id, None)
        if old is not None:
            self._by_state[old.state].pop(download_id, None)
        self.matched(download_id, None)
        self._unmatched.discard(download_id)

    # ------------------------------------------------------------ download -> torrent

    def matched(self, download_id: str, torrent_hash: str | None) -> None:
        """Record the torrent an examination found for the download (None: not in qBittorrent)."""
        previous = self._torrent_of.pop(download_id, None)
        if previous is not None:
            owners = self._owners.get(previous)
            if owners is not None:
                owners.discard(download_id)
                if not owners:
                    del self._owners[previous]
        if download_id not in self._by_id:
            return                   # it left the set meanwhile: nothing to remember
        self._torrent_of[download_id] = torrent_hash
        if torrent_hash is None:
            self._unmatched.add(download_id)
        else:
            self._unmatched.discard(download_id)
            self._owners.setdefault(torrent_hash, set()).add(download_id)

    def owners(self, torrent_hashes: Iterable[str]) -> set[str]:
        """The downloads last matched to any of these torrents."""
        found: set[str] = set()
        for torrent_hash in torrent_hashes:
            found |= self._owners.get(torrent_hash, set())
        return found

    def unmatched(self, *states: State) -> set[str]:
        """Downloads in these states never examined or whose torrent was missing last time."""
        return {download_id for download_id in self._unmatched
                if (d := self._by_id.get(download_id)) is not None and d.state in states}
