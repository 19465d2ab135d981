"""Argument checks shared by the commands: text, times and the overrides a human may pin."""

from __future__ import annotations

import json
from collections.abc import Mapping, Set
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from jellybit import clock
from jellybit.core.limits import MAX_TITLE_CHARS
from jellybit.core.providers import Provider
from jellybit.engine.ingest import checked_text
from jellybit.errors import InvalidArgument
from jellybit.protocol import Overrides

PROVIDERS = frozenset(p.value for p in Provider)


def validate_overrides(values: Mapping[str, Any], sources: Set[str]) -> dict[str, Any]:
    """Check overrides; every per-file key must name a file of the current plan. Returns JSON values."""
    if not isinstance(values, Mapping):
        raise InvalidArgument("'overrides' must be an object")
    try:
        text = json.dumps(dict(values), ensure_ascii=False)
    except (TypeError, ValueError):
        raise InvalidArgument("'overrides' must be plain JSON values") from None
    try:
        # Strict, read as JSON: the CLI and Telegram hand over Python values, and "2014" is not a year.
        model = Overrides.model_validate_json(text, strict=True)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "overrides"
        message = "unknown field" if first["type"] == "extra_forbidden" else first["msg"]
        raise InvalidArgument(f"overrides.{where}: {message}") from None
    if model.title is not None:
        title = clean_required(model.title, limit=MAX_TITLE_CHARS, what="overrides.title")
        model = model.model_copy(update={"title": title})
    unknown = sorted(set(model.files or {}) - set(sources))
    if unknown:
        raise InvalidArgument(f"overrides.files names a file that is not in the torrent: "
                              f"{unknown[0][:200]!r}")
    return model.model_dump(exclude_unset=True, mode="json")


def clean_required(value: object, *, limit: int, what: str) -> str:
    """Non-empty clean text (control characters stripped) of at most `limit` characters."""
    text = checked_text(value, limit=limit, what=what)
    if not text:
        raise InvalidArgument(f"{what} must not be empty")
    return text


def clean_optional(value: object, *, limit: int, what: str) -> str | None:
    """Like clean_required, but None (or empty) means "not given"."""
    if value is None:
        return None
    return checked_text(value, limit=limit, what=what) or None


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
