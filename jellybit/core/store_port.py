"""The store as the engine sees it: one protocol per concern, and `StorePort` for all of them.

The engine imports this, never the SQLite adapter (`adapters/store/`), which implements it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from jellybit.core.jellyfin import Confirmation
from jellybit.core.links import ApplyBatch, BatchStatus, FileLink, LinkStatus, LinkUpdate, NewLink, TitleGroup
from jellybit.core.models import Download, Infohash, NewDownload, Transition
from jellybit.core.records import Candidate, Recognition, RecognitionDraft
from jellybit.core.states import Actor, State
from jellybit.core.store_records import (
    CreateResult,
    DownloadRecord,
    DownloadView,
    Hint,
    PageRecord,
    ReconcileItem,
    RowPage,
    SummaryRecord,
)


class DownloadStore(Protocol):
    """Downloads, their hashes and their state history."""

    async def activate_if_no_other_active(
        self, download_id: str, target: State, *, reason: str, actor: Actor,
        expected: State | Iterable[State] | None = None, fields: dict[str, Any] | None = None,
    ) -> tuple[Download, Transition]:
        """Settled -> active (retry, relink), refused if another active download owns a hash."""

    async def active_downloads(self) -> list[Download]:
        """Return every download in an active state, oldest first."""

    async def add_infohashes(self, download_id: str, hashes: Iterable[Infohash]) -> tuple[str, ...]:
        """Add hashes to a download unless another active download owns one (guarded)."""

    async def count_by_state(self) -> dict[State, int]:
        """Return how many downloads are in each state."""

    async def create_download_if_no_active(
        self, new: NewDownload, *, state: State = State.QUEUED, reason: str = "added",
        actor: Actor = Actor.HUMAN, qbt_tag_prefix: str = "jellybit-",
    ) -> CreateResult:
        """Create a download unless an active one owns a hash (or, for a URL, the same URL): join it."""

    async def find_active_by_hashes(self, hashes: Iterable[str]) -> Download | None:
        """Return the active download owning any of these hashes, if one does."""

    async def find_by_tag(self, tag: str) -> Download | None:
        """Return the download carrying this qBittorrent tag."""

    async def find_download(self, download_id: str) -> Download | None:
        """Return one download or None."""

    async def get_download(self, download_id: str) -> Download:
        """Return one download or raise NotFound."""

    async def settled_with_hashes(self, hashes: Iterable[str], exclude: str | None = None) -> list[str]:
        """Return ids of settled downloads that share any of these hashes (processed before)."""

    async def torrent_bytes(self, download_id: str) -> bytes | None:
        """Return the stored `.torrent` bytes of a download, if it was added from a file."""

    async def transition(
        self, download_id: str, target: State, *, reason: str, actor: Actor,
        expected: State | Iterable[State] | None = None, fields: dict[str, Any] | None = None,
    ) -> tuple[Download, Transition]:
        """Move a download to `target` with its history row; refuses settled -> active."""

    async def transitions(self, download_id: str) -> list[Transition]:
        """Return a download's history, oldest first."""

    async def update_download(self, download_id: str, **fields: Any) -> Download:
        """Update non-state columns; `updated_at` moves only when a value really changes."""


class RecognitionStore(Protocol):
    """Recognitions, their candidates, a human's hints and overrides."""

    async def add_hint(self, download_id: str, text: str) -> Hint:
        """Store a hint for a download."""

    async def choose_candidate(self, download_id: str, candidate_id: str) -> Candidate:
        """Mark one candidate of the current recognition as chosen (the others not)."""

    async def current_recognition(self, download_id: str) -> Recognition | None:
        """Return the current recognition with its candidates, or None before the first one."""

    async def hints(self, download_id: str) -> list[Hint]:
        """Return a download's hints, oldest first."""

    async def overrides(self, download_id: str) -> dict[str, Any]:
        """Return a download's pinned fields."""

    async def save_recognition(self, download_id: str, draft: RecognitionDraft) -> Recognition:
        """Store a draft as the download's new current recognition (with its candidates)."""

    async def set_overrides(self, download_id: str, values: Mapping[str, Any]) -> dict[str, Any]:
        """Pin fields (JSON values) in one transaction; a None value unpins the field."""


class LinkStore(Protocol):
    """The layout journal: batches of links and each link's status."""

    async def batches_for_download(
        self, download_id: str, statuses: Iterable[BatchStatus] | None = None
    ) -> list[ApplyBatch]:
        """Return a download's batches, newest first."""

    async def close_batch(self, batch_id: str, status: BatchStatus) -> None:
        """Set a batch's final status (`rolled_back` or `undone`)."""

    async def commit_batch(self, batch_id: str, *, pending_laid: bool = False) -> int:
        """Mark a batch committed (rows still pending as linked, with `pending_laid`) and supersede."""

    async def finish_links(self, updates: Sequence[LinkUpdate], linked: Sequence[int] = ()) -> None:
        """Record the outcome of journal rows in one transaction."""

    async def links_for_batch(
        self, batch_id: str, statuses: Iterable[LinkStatus] | None = None
    ) -> list[FileLink]:
        """Return one batch's journal rows in the order they were planned."""

    async def links_for_download(
        self, download_id: str, statuses: Iterable[LinkStatus] | None = None
    ) -> list[FileLink]:
        """Return a download's journal rows, oldest first."""

    async def live_links_for_title(self, provider: str, provider_id: str) -> list[FileLink]:
        """Return live rows of every download whose current recognition is `(provider, provider_id)`."""

    async def note_copy_inode(self, link_id: int, dst_ino: int) -> None:
        """Record a pending copy's inode before it is published (so recovery can recognise it)."""

    async def open_batch(
        self, download_id: str, links: Sequence[NewLink]
    ) -> tuple[ApplyBatch, list[FileLink]]:
        """Write a batch (`open`) and its journal rows in one transaction, before any file is touched."""

    async def open_batches(self) -> list[ApplyBatch]:
        """Return the batches a crash left `open`, oldest first."""

    async def title_download_ids(self, provider: str, provider_id: str) -> list[str]:
        """Return downloads of a title group: current recognition on the id, with live (or replaced) links."""

    async def get_batch(self, batch_id: str) -> ApplyBatch:
        """Return one batch or raise NotFound."""

    async def replaced_in_batch(self, batch_id: str) -> dict[int, FileLink]:
        """For each row of the batch that replaces another download's row: that row (new id -> old row)."""

    async def replacing_rows(self, link_ids: Sequence[int]) -> dict[int, FileLink]:
        """For each of these rows another row replaced: the newest row that replaced it."""

    async def title_groups(self, roots: Sequence[str]) -> list[TitleGroup]:
        """Compute every title group with live links: members, title folders, episode coverage."""


class ViewStore(Protocol):
    """Reads a request or a background task makes in one trip."""

    async def download_page(
        self, *, states: Iterable[State] | None = None, text: str | None = None, limit: int = 50,
        offset: int = 0, after: str | None = None, with_total: bool = True,
    ) -> PageRecord:
        """Downloads newest first with their headlines; by OFFSET, or after an id (keyset)."""

    async def download_record(self, download_id: str) -> DownloadRecord | None:
        """Everything `get` shows about a download (None: unknown id)."""

    async def download_rows(
        self, *, states: Iterable[State] | None = None, text: str | None = None, limit: int = 50,
        offset: int = 0,
    ) -> RowPage:
        """The same page as `download_page` (by OFFSET, with the total) as plain rows, for the wire."""

    async def download_view(self, download_id: str) -> DownloadView | None:
        """A download and what its retained topics show (None: unknown id)."""

    async def reconcile_page(self, states: Sequence[State], after: str, limit: int) -> list[ReconcileItem]:
        """One chunk for reconciliation: downloads after an id with their hashes and live links."""

    async def summary_record(self, now: str, *, waiting: int = 0) -> SummaryRecord:
        """Counts per state, the review queue at `now`, the last download done, the longest waiting."""


class JellyfinStore(Protocol):
    """Whether Jellyfin lists a done download (adapters/store/jellyfin.py)."""

    async def jellyfin_track(self, download_id: str) -> Download | None:
        """Start confirming a done download (again); None unless it is done."""

    async def jellyfin_unconfirmed(self, settled_since: str, limit: int = 200) -> list[Download]:
        """Done downloads Jellyfin has not confirmed yet, settled at or after `settled_since`."""

    async def jellyfin_record(self, download_id: str, status: Confirmation, *, item_id: str | None = None,
                              url: str | None = None, note: str | None = None) -> tuple[Download, bool]:
        """Record a look-up's outcome; True when what it shows changed."""


class StorePort(DownloadStore, RecognitionStore, LinkStore, ViewStore, JellyfinStore, Protocol):
    """Everything the engine asks of the store."""
