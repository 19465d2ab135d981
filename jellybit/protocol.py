"""The MQTT contract: every topic and every payload, shared by the worker, the panel and the CLI.

`docs/mqtt-api.md` documents exactly this module. Nothing else builds topic strings.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

PROTOCOL_VERSION = 1
AVAILABILITY_ONLINE = "online"
AVAILABILITY_OFFLINE = "offline"
MAX_ID_LENGTH = 64
MAX_CONTEXT_LENGTH = 4000
MAX_HINT_LENGTH = 2000
MAX_TRANSACTION_LENGTH = 128
MAX_LIST_OFFSET = 1_000_000_000       # far beyond any history; keeps SQLite's 64-bit OFFSET safe
MAX_EPISODE = 100_000
MAX_FILE_OVERRIDES = 100_000
MAX_JSON_DEPTH = 32                   # the deepest request (apply → overrides → files → …) needs 5


class Command(StrEnum):
    """Every command a client may send on `<base>/request/<command>`."""

    ADD = "add"
    APPLY = "apply"
    REFINE = "refine"
    REJECT = "reject"
    DEFER = "defer"
    UNDO = "undo"
    RETRY = "retry"
    CANCEL = "cancel"
    RELINK = "relink"
    DELETE_TITLE = "delete_title"
    GET = "get"
    LIST = "list"
    TITLES = "titles"
    NOTIFY = "notify"


# Commands that change nothing: never stored for transaction de-duplication.
READ_ONLY_COMMANDS = frozenset({Command.GET, Command.LIST, Command.TITLES, Command.NOTIFY})


class EventType(StrEnum):
    """`event_type` values on `<base>/events` (and the Home Assistant event entity)."""

    ADDED = "added"
    STATE_CHANGED = "state_changed"
    REVIEW_REQUESTED = "review_requested"
    DONE = "done"
    FAILED = "failed"
    ERROR = "error"            # a command failed; `command`, `code` and `message` say which and why
    FAULT = "fault"            # a worker component failed or recovered; `id` names the component


@dataclass(frozen=True)
class Topics:
    """Topic builders for one base topic and one Home Assistant discovery prefix."""

    base: str = "jellybit"
    discovery_prefix: str = "homeassistant"

    @property
    def availability(self) -> str:
        """Retained `online`/`offline`; `offline` is also the Last Will."""
        return f"{self.base}/availability"

    @property
    def info(self) -> str:
        """Retained worker info and the status of every outside system."""
        return f"{self.base}/info"

    @property
    def summary(self) -> str:
        """Retained counts per state."""
        return f"{self.base}/summary"

    @property
    def events(self) -> str:
        """Event stream (not retained, QoS 1)."""
        return f"{self.base}/events"

    def download(self, download_id: str) -> str:
        """Retained state of one download."""
        return f"{self.base}/downloads/{download_id}"

    @property
    def downloads_wildcard(self) -> str:
        """Subscribe to every download topic."""
        return f"{self.base}/downloads/+"

    def review(self, download_id: str) -> str:
        """Retained review request of one download in review."""
        return f"{self.base}/reviews/{download_id}"

    @property
    def reviews_wildcard(self) -> str:
        """Subscribe to every review topic."""
        return f"{self.base}/reviews/+"

    def request(self, command: Command | str) -> str:
        """Where a client sends a command."""
        return f"{self.base}/request/{command}"

    @property
    def requests_wildcard(self) -> str:
        """What the worker subscribes to."""
        return f"{self.base}/request/+"

    def response(self, command: Command | str) -> str:
        """Where the worker answers (unless an MQTT 5 response topic was given)."""
        return f"{self.base}/response/{command}"

    @property
    def ha_status(self) -> str:
        """Home Assistant's birth/last-will topic."""
        return f"{self.discovery_prefix}/status"

    def ha_device_config(self, node_id: str) -> str:
        """Device-based discovery config topic."""
        return f"{self.discovery_prefix}/device/{node_id}/config"

    def ha_text_state(self) -> str:
        """State topic of the Home Assistant "add torrent" text entity (always empty)."""
        return f"{self.base}/ha/add_text"

    def parse_download_topic(self, topic: str) -> str | None:
        """Return the id of a `downloads/<id>` or `reviews/<id>` topic, else None."""
        for prefix in (f"{self.base}/downloads/", f"{self.base}/reviews/"):
            if topic.startswith(prefix):
                rest = topic[len(prefix):]
                return rest if rest and "/" not in rest else None
        return None

    def parse_request_topic(self, topic: str) -> str | None:
        """Return the command name of a request topic (validated later), else None."""
        prefix = f"{self.base}/request/"
        if topic.startswith(prefix):
            rest = topic[len(prefix):]
            return rest if rest and "/" not in rest else None
        return None


# ---------------------------------------------------------------- requests


class Request(BaseModel):
    """Base of every request payload; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    transaction: str | None = Field(None, max_length=MAX_TRANSACTION_LENGTH,
                                    description="Echoed in the response; a repeat is not executed twice.")


class IdRequest(Request):
    """A request naming one download."""

    id: str = Field(min_length=1, max_length=MAX_ID_LENGTH, description="Download id (ULID).")


class AddRequest(Request):
    """Add a torrent: a magnet, an http(s) URL or a bare infohash, or a base64 `.torrent`."""

    source: str | None = Field(None, max_length=65536, description="Magnet, URL or infohash.")
    torrent: str | None = Field(None, description="The .torrent file, base64-encoded.")
    context: str = Field("", max_length=MAX_CONTEXT_LENGTH, description="What it is, in a sentence.")

    @model_validator(mode="after")
    def _one_source(self) -> AddRequest:
        if bool(self.source) == bool(self.torrent):
            raise ValueError("give exactly one of 'source' or 'torrent'")
        return self

    def torrent_bytes(self) -> bytes | None:
        """Decode the base64 `.torrent`, if one was sent."""
        if self.torrent is None:
            return None
        try:
            return base64.b64decode(self.torrent, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ValueError("'torrent' is not valid base64") from exc


class ApplyOverrides(BaseModel):
    """Fields a human pins on apply; re-recognition never overwrites them."""

    model_config = ConfigDict(extra="forbid")

    media_type: Literal["movie", "series"] | None = None
    title: str | None = Field(None, min_length=1, max_length=300)
    year: int | None = Field(None, ge=1870, le=2200)
    season: int | None = Field(None, ge=0, le=1000)
    provider: Literal["tmdb", "tvdb", "tvmaze", "imdb"] | None = None
    provider_id: str | None = Field(None, min_length=1, max_length=32)
    files: dict[Annotated[str, Field(max_length=4096)], FileOverride] | None = Field(
        None, max_length=MAX_FILE_OVERRIDES,
        description="Per source path: numbering, role, language and flags.")


class FileOverride(BaseModel):
    """A human's numbering, role, and subtitle/audio language and flags for one source file."""

    model_config = ConfigDict(extra="forbid")

    season: int | None = Field(None, ge=0, le=1000)
    episodes: list[Annotated[int, Field(ge=0, le=MAX_EPISODE)]] = Field(default_factory=list, max_length=50)
    role: Literal["video", "subtitle", "audio", "extra", "ignored"] | None = None
    language: str | None = Field(None, pattern=r"^[A-Za-z]{2,3}(-([A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?$",
                                 description="ISO 639 code of a subtitle/audio file: 'en', 'rus', 'pt-BR'.")
    flags: list[Literal["default", "forced", "sdh"]] | None = Field(
        None, max_length=3, description="Subtitle flags; [] pins none.")


ApplyOverrides.model_rebuild()


class ApplyRequest(IdRequest):
    """Lay out a download in review, optionally with a chosen candidate and overrides."""

    candidate_id: str | None = Field(None, max_length=MAX_ID_LENGTH)
    overrides: ApplyOverrides | None = None


class RefineRequest(IdRequest):
    """Add a hint and recognize again."""

    hint: str = Field(min_length=1, max_length=MAX_HINT_LENGTH)


class RejectRequest(IdRequest):
    """Reject a download in review (it becomes cancelled; nothing is laid out)."""

    reason: str | None = Field(None, max_length=500)


class DeferRequest(IdRequest):
    """Keep a download in review without notifications until a time."""

    until: str | None = Field(None, max_length=64, description="RFC 3339 time.")
    hours: float | None = Field(None, gt=0, le=24 * 365)

    @model_validator(mode="after")
    def _one(self) -> DeferRequest:
        if (self.until is None) == (self.hours is None):
            raise ValueError("give exactly one of 'until' or 'hours'")
        return self


class CancelRequest(IdRequest):
    """Cancel an active download; deleting its data needs `delete_data` and `confirm`."""

    delete_data: bool = False
    confirm: bool = False


class DeleteTitleRequest(Request):
    """Undo every download of a title; removing torrents needs `delete_torrents` and `confirm`."""

    provider: Literal["tmdb", "tvdb", "tvmaze", "imdb"]
    provider_id: str = Field(min_length=1, max_length=32)
    delete_torrents: bool = False
    confirm: bool = False


class ListRequest(Request):
    """History query with filters and paging."""

    states: list[Annotated[str, Field(max_length=32)]] | None = Field(None, max_length=20)
    text: str | None = Field(None, max_length=200)
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=MAX_LIST_OFFSET)


class TitlesRequest(Request):
    """The computed title groups."""


class NotifyRequest(Request):
    """qBittorrent finished a torrent (its completion hook): poll now instead of at the next interval."""

    hash: str | None = Field(None, max_length=64, description="The torrent's infohash (%I), if known.")


REQUEST_MODELS: dict[Command, type[Request]] = {
    Command.ADD: AddRequest,
    Command.APPLY: ApplyRequest,
    Command.REFINE: RefineRequest,
    Command.REJECT: RejectRequest,
    Command.DEFER: DeferRequest,
    Command.UNDO: IdRequest,
    Command.RETRY: IdRequest,
    Command.CANCEL: CancelRequest,
    Command.RELINK: IdRequest,
    Command.DELETE_TITLE: DeleteTitleRequest,
    Command.GET: IdRequest,
    Command.LIST: ListRequest,
    Command.TITLES: TitlesRequest,
    Command.NOTIFY: NotifyRequest,
}


# ---------------------------------------------------------------- responses


class ErrorBody(BaseModel):
    """A failed command: a stable code and a sentence for a human."""

    code: str
    message: str


class Response(BaseModel):
    """The answer on `<base>/response/<command>`."""

    transaction: str | None = None
    status: Literal["ok", "error"]
    data: Any = None
    error: ErrorBody | None = None

    @classmethod
    def ok(cls, data: Any, transaction: str | None = None) -> Response:
        """A successful response."""
        return cls(transaction=transaction, status="ok", data=data)

    @classmethod
    def fail(cls, code: str, message: str, transaction: str | None = None) -> Response:
        """An error response."""
        return cls(transaction=transaction, status="error", error=ErrorBody(code=code, message=message))


# ---------------------------------------------------------------- published state


class Payload(BaseModel):
    """Base of published payloads; extra keys are tolerated for forward compatibility."""

    model_config = ConfigDict(extra="ignore")


class ErrorInfo(Payload):
    """Why a download failed."""

    code: str
    message: str | None = None


class DownloadPayload(Payload):
    """`<base>/downloads/<id>`: one download as the views show it."""

    id: str
    name: str
    state: str
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
    media_type: str | None = None
    title: str | None = None
    original_title: str | None = None
    year: int | None = None
    poster_url: str | None = None
    provider: str | None = None
    provider_id: str | None = None
    target_folder: str | None = None
    warnings: list[str] = Field(default_factory=list)
    infohashes: list[str] = Field(default_factory=list)
    defer_until: str | None = None
    created_at: str
    updated_at: str
    settled_at: str | None = None


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
    provider: str
    provider_id: str
    media_type: str | None = None
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


class PlanItemPayload(Payload):
    """One row of the plan preview: source -> target."""

    source: str
    size: int = 0
    role: str
    season: int | None = None
    episodes: list[int] = Field(default_factory=list)
    language: str | None = None
    library: str | None = None
    target: str | None = None
    status: str | None = None
    note: str | None = None


class ReviewPayload(Payload):
    """`<base>/reviews/<id>`: everything a human needs to decide."""

    id: str
    name: str
    context: str = ""
    media_type: str | None = None
    title: str | None = None
    year: int | None = None
    confidence: float | None = None
    recommendation: str | None = None
    reasons: list[ReasonPayload] = Field(default_factory=list)
    candidates: list[CandidatePayload] = Field(default_factory=list)
    recommended: str | None = None       # the candidate id a client preselects (the chosen, else the best)
    plan: list[PlanItemPayload] = Field(default_factory=list)
    collisions: list[str] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)
    defer_until: str | None = None
    requested_at: str | None = None


class EventPayload(Payload):
    """One message on `<base>/events`."""

    event_type: str
    id: str
    name: str = ""
    from_: str | None = Field(None, alias="from")
    to: str | None = None
    reason: str | None = None
    actor: str | None = None
    at: str
    # What a notification shows: the recognized work, and for `error` the failed command.
    title: str | None = None
    year: int | None = None
    poster_url: str | None = None
    message: str | None = None
    url: str | None = None
    candidate_id: str | None = None      # review_requested: what Apply without a choice lays out
    candidate: str | None = None         # …in words: "The Matrix (1999, US, Warner Bros.)"
    command: str | None = None
    code: str | None = None

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The JSON object as sent (with `from`, not `from_`)."""
        return self.model_dump(by_alias=True)


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


class ComponentStatus(Payload):
    """One of the worker's own background loops on `<base>/info` (poll, mqtt, …)."""

    running: bool = True
    restarts: int = 0
    error: str | None = None
    failed_at: str | None = None


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

    states: dict[str, int] = Field(default_factory=dict)
    active: int = 0
    downloading: int = 0
    in_review: int = 0
    failed: int = 0
    last_completed: LastCompleted | None = None
    review_queue: int = 0                       # in review and not deferred right now
    reviews: list[QueueItem] = Field(default_factory=list)   # those, oldest first (bounded)


def response_prefix(base: str, configured: str | None = None) -> str:
    """The topic prefix every response is published under: `<base>/response/` unless configured."""
    prefix = configured or f"{base}/response/"
    return prefix if prefix.endswith("/") else prefix + "/"


def parse_request(command: Command, payload: bytes) -> Request:
    """Parse a request payload (a plain magnet/URL/hash is accepted for `add`, a plain hash for `notify`).

    Raises ValueError with a message a user understands.
    """
    text = payload.decode("utf-8", errors="strict") if payload else ""
    stripped = text.strip()
    model = REQUEST_MODELS[command]
    if command is Command.ADD and stripped and not stripped.startswith("{"):
        return AddRequest(source=stripped)
    if command is Command.NOTIFY and stripped and not stripped.startswith("{"):
        stripped = json.dumps({"hash": stripped})          # `mosquitto_pub -m %I` from the hook
    if not stripped:
        data: Any = {}
    else:
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"payload is not valid JSON: {exc.msg} at position {exc.pos}") from exc
        except RecursionError:
            raise ValueError(f"payload is nested deeper than {MAX_JSON_DEPTH} levels") from None
    if not isinstance(data, dict):
        raise ValueError("payload must be a JSON object")
    if json_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"payload is nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        request = model.model_validate(data)
    except ValidationError as exc:
        parts = []
        for item in exc.errors():
            key = ".".join(str(p) for p in item["loc"]) or "payload"
            parts.append(f"{key}: {'unknown field' if item['type'] == 'extra_forbidden' else item['msg']}")
        raise ValueError("; ".join(parts)) from exc
    if isinstance(request, AddRequest):
        request.torrent_bytes()  # validate base64 now
    return request



def json_depth(value: Any) -> int:
    """How deeply JSON containers nest in a decoded value (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest
