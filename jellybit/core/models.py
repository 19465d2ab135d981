"""Frozen records the store returns and the engine passes around."""

from __future__ import annotations

from dataclasses import dataclass, field

from jellybit.core.states import Actor, State


@dataclass(frozen=True)
class Infohash:
    """One infohash of a download: v1 (40 hex) or v2 (64 hex)."""

    value: str
    kind: str  # "v1" | "v2"


@dataclass(frozen=True)
class Download:
    """One accepted torrent: the bridge between qBittorrent and the library files."""

    id: str
    source_type: str
    source_ref: str
    display_name: str
    context: str
    state: State
    qbt_tag: str
    created_at: str
    updated_at: str
    infohashes: tuple[Infohash, ...] = ()
    error_code: str | None = None
    error_msg: str | None = None
    source_miss_count: int = 0
    content_path: str | None = None
    save_path: str | None = None
    total_size: int | None = None
    progress: float = 0.0
    dl_speed: int = 0
    eta: int | None = None
    torrent_state: str | None = None
    num_seeds: int | None = None         # connected seeds and peers, as qBittorrent last said
    num_peers: int | None = None
    source_added_at: str | None = None
    completed_at: str | None = None
    retried_at: str | None = None
    defer_until: str | None = None
    settled_at: str | None = None
    jellyfin_status: str | None = None   # core/jellyfin.Confirmation; None = Jellyfin was never asked
    jellyfin_item_id: str | None = None
    jellyfin_url: str | None = None
    jellyfin_note: str | None = None
    jellyfin_checked_at: str | None = None
    awaiting_files: bool = False         # recognized early: qBittorrent has not completed its files yet
    files_in_library: int = 0            # laid out while the rest downloads (early layout)

    def hashes(self) -> set[str]:
        """Return the set of infohash values."""
        return {h.value for h in self.infohashes}


@dataclass(frozen=True)
class Transition:
    """One row of a download's history."""

    id: str
    download_id: str
    from_state: State | None
    to_state: State
    reason: str
    actor: Actor
    created_at: str


@dataclass(frozen=True)
class NewDownload:
    """What ingest hands to the store to create a download."""

    source_type: str
    source_ref: str
    display_name: str
    context: str
    infohashes: tuple[Infohash, ...] = ()
    torrent_bytes: bytes | None = None
    extra: dict[str, object] = field(default_factory=dict)
