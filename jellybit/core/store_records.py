"""What the store hands back beyond the domain models: the outcome of a create, a human's hint, and
the read models a request or a background task asks for in one trip (`core/store_port.py`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    overrides: dict[str, Any]
    links: tuple[FileLink, ...]


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
