"""What the store hands back beyond the domain models: the outcome of a create, a human's hint, and
the read models a request or a background task asks for in one trip (`core/store_port.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from jellybit.core.links import FileLink
from jellybit.core.models import Download, Transition
from jellybit.core.records import Recognition
from jellybit.core.states import State


@dataclass(frozen=True)
class CreateResult:
    """Outcome of create-download-if-no-active."""

    download: Download
    created: bool
    added_hashes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hint:
    """Free text a human added during review; fed to every later recognition."""

    id: str
    download_id: str
    text: str
    created_at: str


@dataclass(frozen=True)
class DownloadRecord:
    """Everything `get` shows about one download."""

    download: Download
    transitions: tuple[Transition, ...]
    recognition: Recognition | None
    hints: tuple[Hint, ...]
    overrides: dict[str, Any] = field(default_factory=dict)
    links: tuple[FileLink, ...] = ()


@dataclass(frozen=True)
class DownloadView:
    """What the retained `downloads/<id>` and `reviews/<id>` topics of one download need."""

    download: Download
    recognition: Recognition | None           # in review: complete; otherwise its headline
    hints: tuple[str, ...] = ()
    review_requested_at: str | None = None


@dataclass(frozen=True)
class PageRecord:
    """One page of downloads, newest first, with each one's recognition headline and the total."""

    items: tuple[Download, ...]
    headlines: dict[str, Recognition] = field(default_factory=dict)
    total: int = 0


class DownloadRow(TypedDict):
    """One download of a list page as plain data: its columns, its hashes, its current recognition's
    headline (None throughout before the first recognition) and that recognition's poster."""

    id: str
    source_type: str
    source_ref: str
    display_name: str
    context: str
    state: str                      # a `State` value
    error_code: str | None
    error_msg: str | None
    total_size: int | None
    progress: float
    dl_speed: int
    eta: int | None
    torrent_state: str | None
    num_seeds: int | None
    num_peers: int | None
    defer_until: str | None
    created_at: str
    updated_at: str
    settled_at: str | None
    jellyfin_status: str | None     # core/jellyfin.Confirmation; None = Jellyfin never asked
    jellyfin_item_id: str | None
    jellyfin_url: str | None
    jellyfin_note: str | None
    jellyfin_checked_at: str | None
    awaiting_files: int             # 1 = recognized while its files still download
    files_in_library: int           # laid out while the rest downloads
    infohashes: list[str]           # the hash values, sorted
    media_type: str | None          # a `MediaType` value
    title: str | None
    original_title: str | None
    year: int | None
    provider: str | None
    provider_id: str | None
    folder: str | None
    poster_url: str | None          # the chosen candidate's poster, else the matched provider id's


@dataclass(frozen=True)
class RowPage:
    """One page of downloads as plain rows, newest first, and how many match in total."""

    rows: tuple[DownloadRow, ...]
    total: int = 0


@dataclass(frozen=True)
class ReconcileItem:
    """A laid-out download as reconciliation sees it: how to find its torrent, and its live targets."""

    id: str
    state: State
    qbt_tag: str
    hashes: frozenset[str]
    links: tuple[tuple[str, int | None], ...]        # (target path, recorded inode) of each live link


@dataclass(frozen=True)
class SummaryRecord:
    """Counts per state, the review queue, the last download that reached done, who waits longest."""

    counts: dict[State, int]
    review_queue: int
    last_done: tuple[Download, Recognition | None] | None
    waiting: tuple[tuple[Download, Recognition | None], ...] = ()
    early: int = 0          # recognized, in review or decided while the files still download
