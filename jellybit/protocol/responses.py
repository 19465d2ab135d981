"""Responses: the envelope on `<base>/response/<command>` and one data model per command.

The worker serializes trusted rows straight to JSON (no model is built per row); a client
validates the whole answer once, with `response_model(command)`.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from jellybit.protocol.published import (
    CandidatePayload,
    DownloadPayload,
    FilmPayload,
    Payload,
    PlanItemPayload,
    ReasonPayload,
)
from jellybit.protocol.requests import Overrides
from jellybit.protocol.topics import Command
from jellybit.protocol.vocabulary import Actor, LinkStatus, MediaType, Provider, Recommendation, State

DataT = TypeVar("DataT")


class ErrorBody(BaseModel):
    """A failed command: a stable code and a sentence for a human."""

    code: str
    message: str


class Response(BaseModel, Generic[DataT]):
    """The answer on `<base>/response/<command>`; `Response[Model]` reads one command's `data`."""

    transaction: str | None = None
    status: Literal["ok", "error"]
    data: DataT | None = None
    error: ErrorBody | None = None

    @classmethod
    def ok(cls, data: Any, transaction: str | None = None) -> Response[Any]:
        """A successful response (the data is trusted: it is not validated again)."""
        return cls.model_construct(transaction=transaction, status="ok", data=data, error=None)

    @classmethod
    def fail(cls, code: str, message: str, transaction: str | None = None) -> Response[Any]:
        """An error response."""
        return cls(transaction=transaction, status="error", error=ErrorBody(code=code, message=message))


class AddResult(Payload):
    """`add`: the download created or joined."""

    id: str
    created: bool
    joined: bool
    settled_before: list[str] = Field(default_factory=list)    # settled downloads with a same hash
    added_hashes: list[str] = Field(default_factory=list)      # hashes a joined download gained
    download: DownloadPayload


class Refusal(Payload):
    """A library file undo kept, and why."""

    path: str
    why: str


class UndoResult(Payload):
    """`undo`: what was removed and what was kept; `complete` = the download is reverted."""

    download: DownloadPayload
    removed: list[str] = Field(default_factory=list)
    refused: list[Refusal] = Field(default_factory=list)
    complete: bool


class DeleteTitleResult(Payload):
    """`delete_title`: which downloads were reverted, whose torrents went, which folders."""

    provider: Provider
    provider_id: str
    reverted: list[str] = Field(default_factory=list)
    deleted_torrents: list[str] = Field(default_factory=list)
    removed_folders: list[str] = Field(default_factory=list)
    kept_folders: list[tuple[str, str]] = Field(default_factory=list)    # [folder, why]
    complete: bool


class TransitionRow(Payload):
    """One timeline entry of `get`."""

    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    id: str
    at: str
    from_: State | None = Field(None, alias="from")
    to: State
    reason: str | None = None
    actor: Actor


class LinkRow(Payload):
    """One library file a download laid (what undo removes)."""

    id: str
    batch: str
    source: str
    target: str
    kind: str
    status: LinkStatus
    size: int = 0
    message: str | None = None


class RecognitionDetail(Payload):
    """The current recognition in `get`: the work, the reasons, the candidates and the plan."""

    id: str
    attempt_no: int
    media_type: MediaType | None = None
    title: str | None = None
    original_title: str | None = None
    year: int | None = None
    provider: Provider | None = None
    provider_id: str | None = None
    confidence: float | None = None
    recommendation: Recommendation | None = None
    reasons: list[ReasonPayload] = Field(default_factory=list)
    candidates: list[CandidatePayload] = Field(default_factory=list)
    films: list[FilmPayload] = Field(default_factory=list)
    recommended: str | None = None
    plan: list[PlanItemPayload] = Field(default_factory=list)
    folder: str | None = None
    created_at: str | None = None


class DownloadDetail(Payload):
    """`get`: the download, its timeline, recognition (with candidates and plan), hints, overrides, links."""

    download: DownloadPayload
    timeline: list[TransitionRow] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)
    overrides: Overrides = Field(default_factory=Overrides)
    links: list[LinkRow] = Field(default_factory=list)
    recognition: RecognitionDetail | None = None


class ListPage(Payload):
    """`list`: one page of downloads (newest first) and how many match in total."""

    items: list[DownloadPayload] = Field(default_factory=list)
    total: int
    limit: int
    offset: int


class TitleMember(Payload):
    """One download of a title group."""

    download_id: str
    display_name: str
    state: State
    live_links: int = 0


class TitleGroup(Payload):
    """`titles`: one computed title, its folders and the episodes laid out per season."""

    provider: Provider
    provider_id: str
    media_type: MediaType | None = None
    title: str | None = None
    year: int | None = None
    members: list[TitleMember] = Field(default_factory=list)
    folders: list[str] = Field(default_factory=list)
    seasons: dict[int, list[int]] = Field(default_factory=dict)
    live_folders: list[str] = Field(default_factory=list)


class NotifyResult(Payload):
    """`notify`: the worker polls now."""

    woken: bool = True


RESPONSE_MODELS: dict[Command, Any] = {
    Command.ADD: AddResult,
    Command.APPLY: DownloadPayload,
    Command.UPGRADE: DownloadPayload,
    Command.REFINE: DownloadPayload,
    Command.REJECT: DownloadPayload,
    Command.DEFER: DownloadPayload,
    Command.UNDO: UndoResult,
    Command.RETRY: DownloadPayload,
    Command.CANCEL: DownloadPayload,
    Command.RELINK: DownloadPayload,
    Command.DELETE_TITLE: DeleteTitleResult,
    Command.GET: DownloadDetail,
    Command.LIST: ListPage,
    Command.TITLES: list[TitleGroup],
    Command.NOTIFY: NotifyResult,
}


@cache
def response_model(command: Command) -> type[Response[Any]]:
    """The envelope whose `data` is this command's model: one validation reads the whole answer."""
    return Response[RESPONSE_MODELS[command]]  # type: ignore[index]
