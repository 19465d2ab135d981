"""What the commands return: frozen records a transport maps to its own payloads.

State-changing commands (apply, refine, reject, defer, retry, cancel, relink) return the
`Download` after the change; the others return one of these.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from jellybit.core.models import Download
from jellybit.core.records import Recognition
from jellybit.core.store_records import DownloadRecord, DownloadView
from jellybit.engine.reconcile import ReconcileProgress

__all__ = ["AddOutcome", "DownloadDetail", "DownloadPage", "DownloadView", "QbittorrentStatus", "Status",
           "Summary", "TitleDeleteOutcome", "UndoOutcome"]


@dataclass(frozen=True)
class AddOutcome:
    """`add`: the new download, or the active one the source joined (and the hashes it gained)."""

    download: Download
    created: bool
    added_hashes: tuple[str, ...] = ()
    settled_before: tuple[str, ...] = ()   # ids of settled downloads with a same hash ("seen before")


@dataclass(frozen=True)
class UndoOutcome:
    """`undo`: what was removed, what was refused and why; `complete` = the download is reverted."""

    download: Download
    removed: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]
    complete: bool


@dataclass(frozen=True)
class TitleDeleteOutcome:
    """`delete_title`: which downloads were reverted, whose torrents went, which folders."""

    provider: str
    provider_id: str
    reverted: tuple[str, ...]
    deleted_torrents: tuple[str, ...]
    removed_folders: tuple[str, ...]
    kept_folders: tuple[tuple[str, str], ...]
    complete: bool


# `get`: one download with its timeline, recognition, hints, overrides and links, as the store reads it.
DownloadDetail = DownloadRecord


@dataclass(frozen=True)
class DownloadPage:
    """`list`: one page of downloads (newest first) and how many match in total."""

    items: tuple[Download, ...]
    total: int
    limit: int
    offset: int
    headlines: dict[str, Recognition] = field(default_factory=dict)   # id -> current recognition, no plan


@dataclass(frozen=True)
class Summary:
    """`summary`: counts per state (every state present) and the dashboard numbers."""

    states: dict[str, int]
    active: int
    downloading: int                       # still downloading, in any state (recognized early too)
    in_review: int
    failed: int
    review_queue: int                      # in review and not deferred right now
    last_done: tuple[Download, Recognition | None] | None = None    # the last to reach done, headline
    waiting: tuple[tuple[Download, Recognition | None], ...] = ()    # longest waiting reviews, headlines


@dataclass(frozen=True)
class QbittorrentStatus:
    """qBittorrent as the worker last saw it (`reachable` None = not polled yet)."""

    reachable: bool | None
    since: str | None = None
    error: str | None = None
    torrents: int = 0
    version: str | None = None
    api_version: str | None = None
    early_layout: str | None = None      # why files wait for their whole torrent (None: laid out early)


@dataclass(frozen=True)
class Status:
    """`status`: Jellybit's version and the health of qBittorrent."""

    version: str
    qbittorrent: QbittorrentStatus
    reconcile: ReconcileProgress | None = None
