"""Reading qBittorrent's view of a torrent: its state strings, completion, and the worker's index."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from jellybit.core.ports import TorrentInfo

# qBittorrent 4.x and 5.x state strings (5.x renamed paused* to stopped* and added forcedMetaDL).
ERROR_STATES = frozenset({"error", "missingFiles"})
METADATA_STATES = frozenset({"metaDL", "forcedMetaDL"})
BUSY_STATES = frozenset({"moving", "checkingUP", "checkingDL", "checkingResumeData", "allocating",
                         "unknown"})
HELD_STATES = frozenset({"pausedDL", "pausedUP", "stoppedDL", "stoppedUP", "queuedDL", "queuedUP"})


def is_error(torrent: TorrentInfo) -> bool:
    """qBittorrent gave up on the torrent (I/O error, files missing)."""
    return torrent.state in ERROR_STATES


def lacks_metadata(torrent: TorrentInfo) -> bool:
    """A magnet whose metadata has not arrived yet (no file list, no size)."""
    return torrent.state in METADATA_STATES or (torrent.total_size <= 0 and torrent.size <= 0
                                                 and torrent.progress < 1)


def is_complete(torrent: TorrentInfo) -> bool:
    """Every wanted byte is there and qBittorrent is not moving or checking the files."""
    return (torrent.progress >= 1 and torrent.state not in BUSY_STATES
            and not is_error(torrent) and not lacks_metadata(torrent))


def files_known(torrent: TorrentInfo) -> bool:
    """qBittorrent lists every file with its size and is not checking or moving them: recognizable."""
    return not lacks_metadata(torrent) and torrent.state not in BUSY_STATES and not is_error(torrent)


def can_stall(torrent: TorrentInfo) -> bool:
    """The torrent is meant to be making progress (not held, checked, or waiting for metadata)."""
    return not (torrent.state in HELD_STATES or torrent.state in BUSY_STATES
                or lacks_metadata(torrent) or is_error(torrent) or torrent.progress >= 1)


def near_completion(torrent: TorrentInfo, eta_limit: float) -> bool:
    """About to complete: downloading with an ETA within `eta_limit` s, or complete and being checked."""
    if eta_limit <= 0 or is_error(torrent) or lacks_metadata(torrent):
        return False
    if torrent.progress >= 1:
        return torrent.state in BUSY_STATES
    # qBittorrent reports an unknown ETA as 8640000 (100 days); no speed means no real estimate.
    return torrent.dlspeed > 0 and torrent.eta is not None and 0 <= torrent.eta <= eta_limit


def view_fields(torrent: TorrentInfo) -> dict[str, object]:
    """The download columns the views show, taken from qBittorrent (paths as it reports them)."""
    size = torrent.total_size if torrent.total_size > 0 else torrent.size
    fields: dict[str, object] = {
        "progress": round(torrent.progress, 6),
        "dl_speed": max(torrent.dlspeed, 0),
        "eta": torrent.eta,
        "torrent_state": torrent.state,
        "num_seeds": torrent.num_seeds,
        "num_peers": torrent.num_leechs,
        "total_size": size if size > 0 else None,
    }
    if torrent.content_path:
        fields["content_path"] = torrent.content_path
    if torrent.save_path:
        fields["save_path"] = torrent.save_path
    return fields


def _age_key(torrent: TorrentInfo) -> tuple[bool, int, str]:
    return (torrent.added_on is None, torrent.added_on or 0, torrent.hash)


class TorrentIndex:
    """qBittorrent's torrents indexed by real infohash and by tag (O(1) matching per download).

    Matching follows the one rule: a real infohash (v1 or v2) first, then the per-download
    tag; a hybrid's `hash` field (its truncated v2 hash) is never matched on its own. The
    index is kept up to date with `update` from each poll's changes, so a poll that changed
    nothing costs nothing here.
    """

    def __init__(self, torrents: Mapping[str, TorrentInfo] | Iterable[TorrentInfo] = ()) -> None:
        self._all: dict[str, TorrentInfo] = {}
        # Every torrent under each key; a key rarely has two (a tag copied by hand), then the oldest wins.
        self._by_hash: dict[str, dict[str, TorrentInfo]] = {}
        self._by_tag: dict[str, dict[str, TorrentInfo]] = {}
        values = torrents.values() if isinstance(torrents, Mapping) else torrents
        self.update(values)

    def __len__(self) -> int:
        return len(self._all)

    @property
    def torrents(self) -> tuple[TorrentInfo, ...]:
        """Every torrent, in no particular order."""
        return tuple(self._all.values())

    def torrent_ids(self) -> set[str]:
        """Every torrent's qBittorrent id."""
        return set(self._all)

    def get(self, torrent_hash: str) -> TorrentInfo | None:
        """The torrent with this qBittorrent id (its `hash` field)."""
        return self._all.get(torrent_hash)

    def update(self, changed: Iterable[TorrentInfo], removed: Iterable[str] = ()) -> None:
        """Take in new or changed torrents and drop removed ones (by qBittorrent id)."""
        for torrent_hash in removed:
            old = self._all.pop(torrent_hash, None)
            if old is not None:
                self._unlink(old)
        for torrent in changed:
            old = self._all.get(torrent.hash)
            if old is not None:
                self._unlink(old)
            self._all[torrent.hash] = torrent
            for value in torrent.hashes():
                self._by_hash.setdefault(value, {})[torrent.hash] = torrent
            for tag in torrent.tags:
                self._by_tag.setdefault(tag, {})[torrent.hash] = torrent

    def _unlink(self, torrent: TorrentInfo) -> None:
        for table, keys in ((self._by_hash, torrent.hashes()), (self._by_tag, torrent.tags)):
            for key in keys:
                bucket = table.get(key)
                if bucket is not None:
                    bucket.pop(torrent.hash, None)
                    if not bucket:
                        del table[key]

    def find(self, hashes: Iterable[str], tag: str | None = None) -> TorrentInfo | None:
        """The torrent holding one of these infohashes, else the one carrying the tag."""
        for value in sorted(hashes):
            found = _oldest(self._by_hash.get(value))
            if found is not None:
                return found
        return _oldest(self._by_tag.get(tag)) if tag else None


def _oldest(bucket: dict[str, TorrentInfo] | None) -> TorrentInfo | None:
    """Of several torrents under one key (a tag copied by hand), the oldest wins."""
    if not bucket:
        return None
    if len(bucket) == 1:
        return next(iter(bucket.values()))
    return min(bucket.values(), key=_age_key)
