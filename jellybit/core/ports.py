"""The small interfaces the engine needs from the outside; adapters implement them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from jellybit.core.links import TitleGroup
from jellybit.core.models import Download
from jellybit.core.records import (
    Candidate,
    MediaType,
    Plan,
    Reason,
    Recognition,
    RecognitionDraft,
    SourceFile,
)
from jellybit.core.store_records import ReconcileItem

# ---------------------------------------------------------------- qBittorrent


@dataclass(frozen=True)
class TorrentInfo:
    """qBittorrent's view of one torrent (paths as qBittorrent sees them)."""

    hash: str
    infohash_v1: str
    infohash_v2: str
    name: str
    state: str
    progress: float
    dlspeed: int
    eta: int | None
    size: int
    total_size: int
    amount_left: int
    content_path: str
    save_path: str
    category: str
    tags: tuple[str, ...]
    added_on: int | None
    completion_on: int | None
    magnet_uri: str = ""
    num_seeds: int = 0                   # connected seeds
    num_leechs: int = 0                  # connected peers that are not seeds
    download_path: str = ""              # where it downloads while incomplete ("": in save_path)

    def hashes(self) -> set[str]:
        """The real infohashes (never the truncated `hash` of a v2/hybrid torrent alone)."""
        found = {h for h in (self.infohash_v1, self.infohash_v2) if h}
        if not found and len(self.hash) == 40:
            found.add(self.hash)  # very old servers without infohash_v1/_v2 fields
        return found


@dataclass(frozen=True)
class TorrentFile:
    """One file inside a torrent as qBittorrent lists it (`name` is relative to save_path).

    `name` is the final name (never with the `.!qB` suffix the file may carry on disk while
    incomplete); `progress` 1 means every piece it touches is downloaded and verified.
    """

    index: int
    name: str
    size: int
    progress: float
    priority: int = 1                    # 0: the user deselected it (never downloaded, never laid out)
    piece_range: tuple[int, int] | None = None
    availability: float | None = None    # copies among connected peers (-1 or None: unknown)


@dataclass(frozen=True)
class PathPlace:
    """Where a qBittorrent path is on this machine: its filesystem, and whether Jellybit may read it."""

    local: str
    device: int | None              # st_dev of the path or its nearest existing folder; None: unknown
    inside_downloads: bool


@dataclass(frozen=True)
class AddTorrent:
    """What to add: exactly one of magnet/url/torrent_bytes, plus where and how to tag it."""

    tag: str
    category: str
    save_path: str | None = None
    magnet: str | None = None
    url: str | None = None
    torrent_bytes: bytes | None = None
    paused: bool = False


@dataclass(frozen=True)
class SyncSnapshot:
    """The client's running view after one `sync/maindata` poll, and what that poll changed."""

    torrents: Mapping[str, TorrentInfo]      # keyed by qBittorrent's `hash`
    removed: tuple[str, ...] = ()            # hashes removed since the previous poll
    full_update: bool = False                # a full answer: every torrent counts as changed
    changed: frozenset[str] = frozenset()    # hashes new or changed since the previous poll


class TorrentClient(Protocol):
    """What the worker needs from qBittorrent; failures raise AdapterError."""

    async def add(self, request: AddTorrent) -> None:
        """Add a torrent (qBittorrent answers without a hash)."""

    async def sync(self) -> SyncSnapshot:
        """Poll incrementally and return the merged view of all torrents."""

    async def files(self, torrent_hash: str) -> list[TorrentFile]:
        """List the files of one torrent."""

    async def delete(self, hashes: Sequence[str], *, delete_files: bool) -> None:
        """Remove torrents, with or without their data."""

    async def pause(self, hashes: Sequence[str]) -> None:
        """Pause (4.x) / stop (5.x) torrents."""

    async def resume(self, hashes: Sequence[str]) -> None:
        """Resume (4.x) / start (5.x) torrents."""

    async def add_tags(self, hashes: Sequence[str], tags: Sequence[str]) -> None:
        """Add tags to torrents."""

    async def app_version(self) -> str:
        """The client's own version (shown by `status`)."""

    async def api_version(self) -> tuple[int, ...]:
        """The client's API version (shown by `status`)."""

    async def preferences(self) -> dict[str, Any]:
        """The client's application preferences (the completion hook reads them)."""

    async def set_preferences(self, values: dict[str, Any]) -> None:
        """Change some application preferences; the others stay as they are."""

    async def close(self) -> None:
        """Release the HTTP client."""


# ---------------------------------------------------------------- recognition


@dataclass(frozen=True)
class RecognitionRequest:
    """Everything a recognizer may use; overrides are pinned by a human and always win."""

    download: Download
    files: tuple[SourceFile, ...]
    hints: tuple[str, ...] = ()
    overrides: Mapping[str, Any] = field(default_factory=dict)
    previous: Recognition | None = None      # the current recognition, for reuse on apply
    chosen: Candidate | None = None          # a candidate a human picked
    use_llm: bool = True                     # False on apply: reuse the previous answer
    pending: frozenset[str] = frozenset()    # files still downloading: their bytes are not read yet


class Recognizer(Protocol):
    """Works out what a download is; never raises for an LLM/metadata outage (reasons instead)."""

    async def recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Return a draft recognition with a plan (roles and numbering; no targets yet)."""


@dataclass(frozen=True)
class SubtitleSample:
    """What the head of one text subtitle file says: its language (if confidently detected) and cues."""

    language: str | None = None              # ISO 639-1, only above the detector's confidence bar
    confidence: float = 0.0
    encoding: str | None = None              # how the bytes were decoded
    cues: int = 0                            # cues with text in the bytes read
    sdh_cues: int = 0                        # of them: sound descriptions, music-only lines, SPEAKER: labels
    sdh: bool = False                        # enough such cues to call the track hearing-impaired
    problem: str | None = None               # why no language could be read (missing, binary, too short)


class SubtitleSampler(Protocol):
    """Reads a bounded head of subtitle files of a download (read-only) and detects their language."""

    async def sample(self, download: Download, sources: Sequence[str]) -> Mapping[str, SubtitleSample]:
        """Return one sample per source path (a failure is a sample with `problem`, never an exception)."""


# ---------------------------------------------------------------- layout


@dataclass(frozen=True)
class LayoutPreview:
    """The plan with targets computed, plus reasons that block applying it automatically."""

    plan: Plan
    reasons: tuple[Reason, ...] = ()


@dataclass(frozen=True)
class ApplyResult:
    """Outcome of laying out one recognition."""

    outcome: str                         # done | collision | failed
    batch_id: str | None = None
    linked: int = 0
    copied: int = 0
    existing: int = 0
    skipped: int = 0
    collisions: tuple[str, ...] = ()     # target paths held by a different file
    warnings: tuple[str, ...] = ()
    message: str = ""


@dataclass(frozen=True)
class UndoResult:
    """Outcome of undoing a download's batches."""

    removed: tuple[str, ...] = ()
    refused: tuple[tuple[str, str], ...] = ()   # (path, why)
    complete: bool = True


class Layouter(Protocol):
    """Lays recognitions out in the libraries and takes them back."""

    async def preview(self, download: Download, recognition: RecognitionDraft) -> LayoutPreview:
        """Compute targets (folder convergence included) and blocking reasons; touches nothing."""

    async def apply(self, download: Download, recognition: Recognition) -> ApplyResult:
        """Lay out the recognition's plan as one crash-safe batch."""

    async def apply_files(self, download: Download, recognition: Recognition,
                          sources: frozenset[str]) -> ApplyResult:
        """Lay out only these files of the plan (complete while the rest downloads) as one batch."""

    def place_of(self, path: str) -> PathPlace:
        """Where a path qBittorrent reports is here: its filesystem, and whether it is inside downloads."""

    def check_library(self, media_type: MediaType) -> None:
        """Raise the `StorageFault` of the library a media type goes to (full, read-only, unmounted)."""

    async def undo(self, download: Download) -> UndoResult:
        """Remove this download's surplus links (never the last copy)."""

    async def recover(self) -> None:
        """Complete or roll back batches a crash left unfinished."""

    async def relink(self, download: Download, recognition: Recognition | None = None) -> ApplyResult:
        """Lay out again what a download had (after undo or a missing target), as one batch."""

    async def targets_present(self, download: Download) -> bool | None:
        """Reconciliation: are the download's library files still there? None = nothing laid."""

    async def targets_present_many(self, items: Sequence[ReconcileItem]) -> dict[str, bool | None]:
        """`targets_present` for a chunk of laid-out downloads, in one trip to the disk."""

    async def title_groups(self) -> list[TitleGroup]:
        """Every title folder in the libraries with the downloads that share it."""


# ---------------------------------------------------------------- LLM


@dataclass(frozen=True)
class PromptFile:
    """One file line for the LLM: its path, size and what the classifier thinks it is."""

    path: str
    size: int
    role: str                                # classifier's role (video, subtitle, ...)


@dataclass(frozen=True)
class LlmQuestion:
    """Everything the LLM is told about a download (untrusted text, all of it)."""

    name: str
    context: str
    files: tuple[PromptFile, ...]
    hints: tuple[str, ...] = ()
    parsed: Mapping[str, Any] = field(default_factory=dict)   # the release parser's reading


@dataclass(frozen=True)
class LlmFileAnswer:
    """The LLM's reading of one file (only files that exist survive validation)."""

    path: str
    role: str
    season: int | None = None
    episodes: tuple[int, ...] = ()
    part: int | None = None
    extra_kind: str | None = None
    language: str | None = None
    work_title: str | None = None            # movie packs: which film this file is
    work_year: int | None = None
    edition: str | None = None               # movies: Director's Cut, Extended … (normalized)
    flags: tuple[str, ...] = ()              # only from a previous recognition (the LLM is not asked)


@dataclass(frozen=True)
class LlmAnswer:
    """The validated structured answer plus the raw text and what was dropped."""

    media_type: str | None
    title: str | None
    original_title: str | None
    year: int | None
    files: tuple[LlmFileAnswer, ...]
    raw: str
    dropped: tuple[str, ...] = ()            # notes on answer parts that were discarded
    notes: str | None = None


class LlmClient(Protocol):
    """Asks an OpenAI-compatible model; failures raise AdapterError('llm', ...)."""

    async def ask(self, question: LlmQuestion) -> LlmAnswer:
        """Return the validated answer."""


# ---------------------------------------------------------------- metadata


@dataclass(frozen=True)
class MetadataQuery:
    """A search: title (and original title), year, media type."""

    title: str
    media_type: str | None = None            # movie | series | None = both
    year: int | None = None
    original_title: str | None = None
    language: str | None = None


class MetadataProvider(Protocol):
    """One metadata source (TMDB, TVDB, TVMaze); failures raise AdapterError(name, ...)."""

    name: str                                # tmdb | tvdb | tvmaze

    async def search(self, query: MetadataQuery) -> list[Candidate]:
        """Return candidates (without distance) for the query, best first as the provider ranks."""

    async def details(self, media_type: str, provider_id: str) -> Candidate:
        """Return one candidate with details (seasons -> episode counts for series)."""


class AirDates(Protocol):
    """Optional on a MetadataProvider: which episodes of a series aired on given dates (daily shows)."""

    async def aired(self, provider_id: str, dates: Sequence[str]) -> dict[str, tuple[tuple[int, int], ...]]:
        """Each date -> the (season, episode) pairs the provider lists as aired that day."""
