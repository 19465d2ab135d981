"""Published payloads: the retained `info`, `summary`, `downloads/<id>`, `reviews/<id>`, and `events`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from jellybit.protocol.topics import PROTOCOL_VERSION, EventType
from jellybit.protocol.vocabulary import (
    Actor,
    MediaType,
    Provider,
    Recommendation,
    Role,
    State,
    UpgradeChoice,
)


class Payload(BaseModel):
    """Base of published payloads; extra keys are tolerated for forward compatibility."""

    model_config = ConfigDict(extra="ignore")


class ErrorInfo(Payload):
    """Why a download failed."""

    code: str
    message: str | None = None


class JellyfinPayload(Payload):
    """Whether Jellyfin lists a done download: `pending`, `found` (item and link), `missing` or
    `unreachable` (a note says what to check). Never a failure: the download stays done."""

    status: Literal["pending", "found", "missing", "unreachable"]
    item_id: str | None = None
    url: str | None = None           # the item's page in Jellyfin's web client
    note: str | None = None
    checked_at: str | None = None


class DownloadPayload(Payload):
    """`<base>/downloads/<id>`: one download as the views show it."""

    id: str
    name: str
    state: State
    context: str = ""
    source_type: str = ""
    progress: float = 0.0
    dl_speed: int = 0
    eta: int | None = None
    size: int | None = None
    torrent_state: str | None = None
    seeds: int | None = None
    peers: int | None = None
    error: ErrorInfo | None = None
    media_type: MediaType | None = None
    title: str | None = None
    original_title: str | None = None
    year: int | None = None
    poster_url: str | None = None
    provider: Provider | None = None
    provider_id: str | None = None
    target_folder: str | None = None
    warnings: list[str] = Field(default_factory=list)
    infohashes: list[str] = Field(default_factory=list)
    defer_until: str | None = None
    created_at: str
    updated_at: str
    settled_at: str | None = None
    jellyfin: JellyfinPayload | None = None     # set once a done download is looked up in Jellyfin


class ReasonPayload(Payload):
    """One reason a download is not automatic."""

    code: str
    message: str
    weight: float = 0.0
    blocking: bool = False
    meaning: str | None = None       # what the code means in general, from the one table of reasons


class EvidencePayload(Payload):
    """One thing the download's evidence says about a candidate: `match`, `mismatch` or `info`."""

    verdict: Literal["match", "mismatch", "info"]
    text: str
    source: str | None = None        # where the download's side came from: "your context", …


class CandidatePayload(Payload):
    """A metadata candidate offered for review."""

    id: str | None = None
    provider: Provider
    provider_id: str
    media_type: MediaType | None = None
    title: str
    year: int | None = None
    original_title: str | None = None
    url: str | None = None
    poster_url: str | None = None
    overview: str | None = None
    distance: float | None = None
    chosen: bool = False
    # What tells one work from another of the same name (Shameless 2011 US Showtime / 2004 GB Channel 4).
    country: str | None = None
    network: str | None = None
    first_year: int | None = None
    last_year: int | None = None
    season_count: int | None = None
    episode_count: int | None = None
    links: dict[str, str] = Field(default_factory=dict)
    seasons: dict[str, int] = Field(default_factory=dict)          # season number -> episode count
    evidence: list[EvidencePayload] = Field(default_factory=list)
    film: str | None = None          # movie packs: the `key` of the film this candidate is offered for


class PlanItemPayload(Payload):
    """One row of the plan preview: source -> target."""

    source: str
    size: int = 0
    role: Role
    season: int | None = None
    episodes: list[int] = Field(default_factory=list)
    language: str | None = None
    library: str | None = None
    target: str | None = None
    status: str | None = None
    note: str | None = None


class UpgradePayload(Payload):
    """A better-copy question: a video of this download whose film or episode the library already has."""

    source: str
    target: str | None = None
    message: str                         # "already in your library as 1080p WEB-DL from …; this copy is …"
    choices: list[UpgradeChoice] = Field(default_factory=lambda: list(UpgradeChoice))


class FilmPayload(Payload):
    """One film of a movie pack, matched on its own: decided one by one on review."""

    key: str                         # its first video's source path; `candidates[].film` names it
    title: str                       # the title read
    year: int | None = None
    sources: list[str] = Field(default_factory=list)
    provider: Provider | None = None
    provider_id: str | None = None
    match_title: str | None = None
    match_year: int | None = None
    confidence: float | None = None
    recommendation: Recommendation | None = None
    confirmed: bool = False          # sure enough to be laid out without a human
    reasons: list[ReasonPayload] = Field(default_factory=list)


class ReviewPayload(Payload):
    """`<base>/reviews/<id>`: everything a human needs to decide."""

    id: str
    name: str
    context: str = ""
    media_type: MediaType | None = None
    title: str | None = None
    year: int | None = None
    confidence: float | None = None
    recommendation: Recommendation | None = None
    reasons: list[ReasonPayload] = Field(default_factory=list)
    candidates: list[CandidatePayload] = Field(default_factory=list)
    films: list[FilmPayload] = Field(default_factory=list)      # a movie pack's films
    recommended: str | None = None       # the candidate id a client preselects (the chosen, else the best)
    plan: list[PlanItemPayload] = Field(default_factory=list)
    collisions: list[str] = Field(default_factory=list)
    upgrades: list[UpgradePayload] = Field(default_factory=list)   # answered by the `upgrade` command
    hints: list[str] = Field(default_factory=list)
    defer_until: str | None = None
    requested_at: str | None = None


class EventPayload(Payload):
    """One message on `<base>/events`."""

    event_type: EventType
    id: str
    name: str = ""
    from_: State | None = Field(None, alias="from")
    to: State | None = None
    reason: str | None = None
    actor: Actor | None = None
    at: str
    # What a notification shows: the recognized work, and for `error` the failed command.
    title: str | None = None
    year: int | None = None
    poster_url: str | None = None
    message: str | None = None
    url: str | None = None
    candidate_id: str | None = None      # review_requested: what Apply without a choice lays out
    candidate: str | None = None         # …in words: "The Matrix (1999, US, Warner Bros.)"
    upgrade: str | None = None           # review_requested with a better-copy question: what is there
    command: str | None = None
    code: str | None = None
    # The commands the download's state (`to`) allows, from the engine's one table: a notification
    # offers exactly these (the Home Assistant blueprint does).
    actions: list[str] = Field(default_factory=list)

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object as sent (with `from`, not `from_`)."""
        return self.model_dump(mode="json", by_alias=True)


class ReconcileStatus(Payload):
    """Reconciliation on `<base>/info`: the pass running now, or the last one."""

    running: bool = False
    checked: int = 0
    total: int = 0
    moved: int = 0
    started_at: str | None = None
    finished_at: str | None = None
    seconds: float | None = None


class SystemStatus(Payload):
    """The status of one outside system on `<base>/info`."""

    enabled: bool = True
    connected: bool | None = None
    version: str | None = None
    detail: str | None = None
    state: str | None = None        # ok, refused (a bad key or token), unreachable, not configured, starting
    hint: str | None = None         # what to do about it


class ComponentStatus(Payload):
    """One of the worker's own background loops on `<base>/info` (poll, mqtt, …)."""

    running: bool = True
    restarts: int = 0
    error: str | None = None
    failed_at: str | None = None
    code: str | None = None          # a storage fault's code (`storage_full`, `library_read_only`, …)


class InfoPayload(Payload):
    """`<base>/info`: versions and the status of every outside system (never secrets)."""

    version: str
    protocol: int = PROTOCOL_VERSION
    started_at: str
    panel_url: str | None = None
    reconcile: ReconcileStatus | None = None
    qbittorrent: SystemStatus = Field(default_factory=SystemStatus)
    llm: SystemStatus = Field(default_factory=SystemStatus)
    metadata: dict[str, SystemStatus] = Field(default_factory=dict)
    jellyfin: SystemStatus = Field(default_factory=SystemStatus)
    telegram: SystemStatus = Field(default_factory=SystemStatus)
    components: dict[str, ComponentStatus] = Field(default_factory=dict)


class LastCompleted(Payload):
    """The download that reached done most recently (by the time it got there)."""

    id: str
    title: str
    at: str | None = None


class QueueItem(Payload):
    """One download waiting for a human, for dashboards and notifications."""

    id: str
    name: str
    title: str | None = None
    year: int | None = None
    reason: str = ""
    url: str | None = None
    since: str | None = None


class SummaryPayload(Payload):
    """`<base>/summary`: counts for dashboards."""

    states: dict[State, int] = Field(default_factory=dict)
    active: int = 0
    downloading: int = 0
    in_review: int = 0
    failed: int = 0
    last_completed: LastCompleted | None = None
    review_queue: int = 0                       # in review and not deferred right now
    reviews: list[QueueItem] = Field(default_factory=list)   # those, oldest first (bounded)


