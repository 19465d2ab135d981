"""The stall and metadata clocks of downloading torrents, and the slow timer that checks them.

A poll examines a download only when its torrent changed, but a stalled torrent is exactly one
that stops changing. So each examination records when the torrent last made progress (and
since when it lacks metadata), and a sweep every `sweep_interval` seconds picks the downloads
whose clock ran out, without touching the others.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from jellybit import clock
from jellybit.config import WorkerConfig
from jellybit.core.models import Download
from jellybit.core.ports import TorrentInfo
from jellybit.core.torrent_state import can_stall, lacks_metadata

SWEEP_INTERVAL = 30.0     # the longest time between two sweeps
SWEEP_SHARE = 0.25        # ...and at most this share of the shorter timeout, so short ones stay exact


@dataclass(frozen=True)
class Expired:
    """A clock that ran out: the failure code and its message."""

    code: str
    message: str


class DownloadTimeouts:
    """Per-download progress and metadata clocks; `observe` on examination, `overdue` on the timer."""

    def __init__(self, config: WorkerConfig, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._now = monotonic
        self._progress: dict[str, tuple[float, float]] = {}   # id -> (progress, since)
        self._metadata: dict[str, float] = {}                  # id -> waiting for metadata since
        self._next_sweep = 0.0

    @property
    def sweep_interval(self) -> float:
        """Seconds between sweeps."""
        shortest = min(self.config.stall_timeout, self.config.metadata_timeout)
        return min(SWEEP_INTERVAL, shortest * SWEEP_SHARE)

    def observe(self, download: Download, torrent: TorrentInfo) -> Expired | None:
        """Record what the torrent shows now; the clock that ran out, if one did."""
        now = self._now()
        if lacks_metadata(torrent):
            since = self._metadata.setdefault(download.id, now - _age(download.source_added_at))
            if now - since > self.config.metadata_timeout:
                return Expired("metadata_timeout", "no metadata for the magnet after "
                               f"{self.config.metadata_timeout:g} s (no peers?)")
        else:
            self._metadata.pop(download.id, None)
        if not can_stall(torrent):
            # Held or checking: the clock starts again when it is meant to move again.
            self._progress.pop(download.id, None)
            return None
        seen = self._progress.get(download.id)
        if seen is None or seen[0] != torrent.progress:
            self._progress[download.id] = (torrent.progress, now)
        elif now - seen[1] > self.config.stall_timeout:
            return Expired("stalled", f"no progress for {self.config.stall_timeout:g} s "
                           f"(at {torrent.progress:.1%})")
        return None

    def sweep_due(self) -> bool:
        """Tell whether the slow timer has fired (and set it again)."""
        now = self._now()
        if now < self._next_sweep:
            return False
        self._next_sweep = now + self.sweep_interval
        return True

    def overdue(self) -> set[str]:
        """The downloads whose progress or metadata clock has run out."""
        now = self._now()
        stall, metadata = self.config.stall_timeout, self.config.metadata_timeout
        late = {i for i, (_progress, since) in self._progress.items() if now - since > stall}
        return late | {i for i, since in self._metadata.items() if now - since > metadata}

    def forget(self, download_id: str) -> None:
        """Drop a download's clocks (its state changed)."""
        self._progress.pop(download_id, None)
        self._metadata.pop(download_id, None)

    def tracked(self) -> int:
        """How many downloads have a running clock."""
        return len(self._progress.keys() | self._metadata.keys())


def _age(timestamp: str | None) -> float:
    """Seconds since an RFC 3339 timestamp (0 when unknown or in the future)."""
    if not timestamp:
        return 0.0
    return max((clock.utcnow() - clock.parse_time(timestamp)).total_seconds(), 0.0)
