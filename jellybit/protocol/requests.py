"""Request payloads: one model per command, the one overrides model, and parsing a request message."""

from __future__ import annotations

import base64
import binascii
import json
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from jellybit.protocol.topics import Command
from jellybit.protocol.vocabulary import (
    MAX_CONTEXT_CHARS,
    MAX_DEFER_HOURS,
    MAX_EPISODE,
    MAX_EPISODES_PER_FILE,
    MAX_FILE_OVERRIDES,
    MAX_HINT_CHARS,
    MAX_ID_CHARS,
    MAX_LIST_LIMIT,
    MAX_LIST_OFFSET,
    MAX_LIST_TEXT_CHARS,
    MAX_PATH_CHARS,
    MAX_PROVIDER_ID_CHARS,
    MAX_REASON_CHARS,
    MAX_SEASON,
    MAX_SOURCE_CHARS,
    MAX_TITLE_CHARS,
    MAX_TRANSACTION_CHARS,
    MAX_YEAR,
    MIN_YEAR,
    MediaType,
    Provider,
    Role,
    State,
    UpgradeChoice,
)

MAX_JSON_DEPTH = 32                   # the deepest request (apply → overrides → files → …) needs 5
# A subtitle/audio language a human pins: 'en', 'rus', 'pt-BR', 'zh-Hans'.
LANGUAGE_PATTERN = r"^[A-Za-z]{2,3}(-([A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?$"
OVERRIDE_ROLES = (Role.VIDEO, Role.SUBTITLE, Role.AUDIO, Role.EXTRA, Role.IGNORED)


class Request(BaseModel):
    """Base of every request payload; unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    transaction: str | None = Field(None, max_length=MAX_TRANSACTION_CHARS,
                                    description="Echoed in the response; a repeat is not executed twice.")


class IdRequest(Request):
    """A request naming one download."""

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS, description="Download id (ULID).")


class AddRequest(Request):
    """Add a torrent: a magnet, an http(s) URL or a bare infohash, or a base64 `.torrent`."""

    source: str | None = Field(None, max_length=MAX_SOURCE_CHARS, description="Magnet, URL or infohash.")
    torrent: str | None = Field(None, description="The .torrent file, base64-encoded.")
    context: str = Field("", max_length=MAX_CONTEXT_CHARS, description="What it is, in a sentence.")

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


class FileOverride(BaseModel):
    """A human's numbering, role, and subtitle/audio language and flags for one source file."""

    model_config = ConfigDict(extra="forbid")

    season: int | None = Field(None, ge=0, le=MAX_SEASON)
    episodes: list[Annotated[int, Field(ge=0, le=MAX_EPISODE)]] = Field(
        default_factory=list, max_length=MAX_EPISODES_PER_FILE)
    role: Role | None = None
    language: str | None = Field(None, pattern=LANGUAGE_PATTERN,
                                 description="ISO 639 code of a subtitle/audio file: 'en', 'rus', 'pt-BR'.")
    flags: list[Literal["default", "forced", "sdh"]] | None = Field(
        None, max_length=3, description="Subtitle flags; [] pins none.")
    provider: Provider | None = Field(None, description="Movie packs: which film this video is.")
    provider_id: str | None = Field(None, min_length=1, max_length=MAX_PROVIDER_ID_CHARS)

    @field_validator("role")
    @classmethod
    def _pinnable(cls, role: Role | None) -> Role | None:
        if role is not None and role not in OVERRIDE_ROLES:
            raise ValueError(f"a role is one of {', '.join(r.value for r in OVERRIDE_ROLES)}")
        return role


class Overrides(BaseModel):
    """Fields a human pins on apply; re-recognition never overwrites them. The one overrides model:
    the `apply` request carries it, the commands validate with it, `get` answers with it."""

    model_config = ConfigDict(extra="forbid")

    media_type: MediaType | None = None
    title: str | None = Field(None, min_length=1, max_length=MAX_TITLE_CHARS)
    year: int | None = Field(None, ge=MIN_YEAR, le=MAX_YEAR)
    season: int | None = Field(None, ge=0, le=MAX_SEASON)
    provider: Provider | None = None
    provider_id: str | None = Field(None, min_length=1, max_length=MAX_PROVIDER_ID_CHARS)
    files: dict[Annotated[str, Field(max_length=MAX_PATH_CHARS)], FileOverride] | None = Field(
        None, max_length=MAX_FILE_OVERRIDES,
        description="Per source path: numbering, role, language and flags.")
    upgrade: UpgradeChoice | None = Field(None, description="A better-copy question's answer (the "
                                          "`upgrade` command pins it).")


ApplyOverrides = Overrides    # the name the `apply` request used before there was one model


class ApplyRequest(IdRequest):
    """Lay out a download in review, optionally with a chosen candidate and overrides."""

    candidate_id: str | None = Field(None, max_length=MAX_ID_CHARS)
    overrides: Overrides | None = None


class UpgradeRequest(IdRequest):
    """Decide a review's better-copy question: keep both, replace the library's copy, or skip this one."""

    choice: UpgradeChoice


class RefineRequest(IdRequest):
    """Add a hint and recognize again."""

    hint: str = Field(min_length=1, max_length=MAX_HINT_CHARS)


class RejectRequest(IdRequest):
    """Reject a download in review (it becomes cancelled; nothing is laid out)."""

    reason: str | None = Field(None, max_length=MAX_REASON_CHARS)


class DeferRequest(IdRequest):
    """Keep a download in review without notifications until a time."""

    until: str | None = Field(None, max_length=64, description="RFC 3339 time.")
    hours: float | None = Field(None, gt=0, le=MAX_DEFER_HOURS)

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

    provider: Provider
    provider_id: str = Field(min_length=1, max_length=MAX_PROVIDER_ID_CHARS)
    delete_torrents: bool = False
    confirm: bool = False


class ListRequest(Request):
    """History query with filters and paging."""

    states: list[State] | None = Field(None, max_length=20)
    text: str | None = Field(None, max_length=MAX_LIST_TEXT_CHARS)
    limit: int = Field(50, ge=1, le=MAX_LIST_LIMIT)
    offset: int = Field(0, ge=0, le=MAX_LIST_OFFSET)


class TitlesRequest(Request):
    """The computed title groups."""


class NotifyRequest(Request):
    """qBittorrent finished a torrent (its completion hook): poll now instead of at the next interval."""

    hash: str | None = Field(None, max_length=64, description="The torrent's infohash (%I), if known.")


REQUEST_MODELS: dict[Command, type[Request]] = {
    Command.ADD: AddRequest,
    Command.APPLY: ApplyRequest,
    Command.UPGRADE: UpgradeRequest,
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
    del text        # a base64 .torrent is megabytes: one copy of it less while it is decoded below
    if not stripped:
        data: Any = {}
    else:
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise ValueError(f"payload is not valid JSON: {exc.msg} at position {exc.pos}") from exc
        except RecursionError:
            raise ValueError(f"payload is nested deeper than {MAX_JSON_DEPTH} levels") from None
        finally:
            del stripped
    if not isinstance(data, dict):
        raise ValueError("payload must be a JSON object")
    if json_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"payload is nested deeper than {MAX_JSON_DEPTH} levels")
    broken = lone_surrogate_at(data)
    if broken is not None:
        raise ValueError(f"{broken}: the text is not valid Unicode (a lone surrogate, such as a JSON "
                         "\\ud800 escape without its pair); send UTF-8 text")
    try:
        request = model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(validation_message(exc)) from exc
    if isinstance(request, AddRequest):
        request.torrent_bytes()  # validate base64 now
    return request


def validation_message(exc: ValidationError, prefix: str = "") -> str:
    """Every error of a validation, as `field: what is wrong`, joined by semicolons."""
    parts = []
    for item in exc.errors():
        key = ".".join(str(p) for p in item["loc"]) or "payload"
        problem = "unknown field" if item["type"] == "extra_forbidden" else item["msg"]
        parts.append(f"{prefix}{key}: {problem}")
    return "; ".join(parts)


_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate_at(value: Any) -> str | None:
    """Where a decoded JSON value holds a lone surrogate (`field.sub`, `payload`), else None.

    `json.loads` turns an unpaired `\\ud800` escape into a string that cannot be encoded as UTF-8:
    it could not be stored, logged as JSON or answered, so such a request is refused up front.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return path or "payload"
        elif isinstance(item, dict):
            for key, child in item.items():
                where = f"{path}.{_printable(key)}" if path else _printable(key)
                if _has_surrogate(key):
                    return where
                stack.append((child, where))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{n}]" if path else f"[{n}]") for n, child in enumerate(item))
    return None


def _has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def _printable(key: str) -> str:
    """A field name as it may appear in an answer (a lone surrogate shown as its escape)."""
    return key[:64].encode("utf-8", "backslashreplace").decode("utf-8")


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
