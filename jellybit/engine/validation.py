"""Argument checks shared by the commands: text, times and the overrides a human may pin."""

from __future__ import annotations

from collections.abc import Mapping, Set
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jellybit import clock
from jellybit.engine.ingest import clean_text
from jellybit.errors import InvalidArgument

PROVIDERS = frozenset({"tmdb", "tvdb", "tvmaze", "imdb"})
# A subtitle/audio language a human pins: 'en', 'rus', 'pt-BR', 'zh-Hans'.
LANGUAGE_PATTERN = r"^[A-Za-z]{2,3}(-([A-Za-z]{2}|[A-Za-z]{4}|[0-9]{3}))?$"


class FileOverride(BaseModel):
    """A human's numbering, role, and subtitle/audio language and flags for one source file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    season: int | None = Field(None, ge=0, le=1000)
    episodes: list[int] = Field(default_factory=list, max_length=50)
    role: Literal["video", "subtitle", "audio", "extra", "ignored"] | None = None
    language: str | None = Field(None, pattern=LANGUAGE_PATTERN)
    flags: list[Literal["default", "forced", "sdh"]] | None = Field(None, max_length=3)


class Overrides(BaseModel):
    """Fields a human pins on apply; re-recognition never overwrites them (same shape as MQTT's)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    media_type: Literal["movie", "series"] | None = None
    title: str | None = Field(None, min_length=1, max_length=300)
    year: int | None = Field(None, ge=1870, le=2200)
    season: int | None = Field(None, ge=0, le=1000)
    provider: Literal["tmdb", "tvdb", "tvmaze", "imdb"] | None = None
    provider_id: str | None = Field(None, min_length=1, max_length=32)
    files: dict[str, FileOverride] | None = Field(None, max_length=10_000)


def validate_overrides(values: Mapping[str, Any], sources: Set[str]) -> dict[str, Any]:
    """Check overrides; every per-file key must name a file of the current plan. Returns JSON values."""
    if not isinstance(values, Mapping):
        raise InvalidArgument("'overrides' must be an object")
    try:
        model = Overrides.model_validate(dict(values))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "overrides"
        message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        raise InvalidArgument(f"overrides.{where}: {message}") from None
    if model.title is not None:
        title = clean_required(model.title, limit=300, what="overrides.title")
        model = model.model_copy(update={"title": title})
    unknown = sorted(set(model.files or {}) - set(sources))
    if unknown:
        raise InvalidArgument(f"overrides.files names a file that is not in the torrent: "
                              f"{unknown[0][:200]!r}")
    return model.model_dump(exclude_unset=True, mode="json")


def clean_required(value: object, *, limit: int, what: str) -> str:
    """Non-empty clean text (control characters stripped) of at most `limit` characters."""
    text = clean_text(value, limit=limit, what=what)
    if not text:
        raise InvalidArgument(f"{what} must not be empty")
    return text


def clean_optional(value: object, *, limit: int, what: str) -> str | None:
    """Like clean_required, but None (or empty) means "not given"."""
    if value is None:
        return None
    return clean_text(value, limit=limit, what=what) or None


def parse_until(value: object) -> datetime:
    """An RFC 3339 time with a zone, in the future."""
    if not isinstance(value, str) or len(value) > 64:
        raise InvalidArgument("'until' must be an RFC 3339 time such as 2026-12-31T18:00:00Z")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise InvalidArgument(f"'until' is not an RFC 3339 time: {value[:64]!r}") from None
    if moment.tzinfo is None:
        raise InvalidArgument("'until' needs a time zone (e.g. a trailing Z for UTC)")
    if moment <= clock.utcnow():
        raise InvalidArgument("'until' is in the past")
    return moment
