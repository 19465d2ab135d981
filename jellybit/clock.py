"""The one clock: RFC 3339 UTC timestamps with a Z suffix, fixed width so text order is time order."""

from __future__ import annotations

from datetime import UTC, datetime

_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def utcnow() -> datetime:
    """Return the current time as an aware UTC datetime."""
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """Format an aware datetime as fixed-width RFC 3339 UTC (`2026-12-03T07:20:44.123456Z`)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    return moment.astimezone(UTC).strftime(_FORMAT)


def parse_time(text: str) -> datetime:
    """Parse a timestamp written by format_time (or any RFC 3339 UTC `Z` timestamp)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def now() -> str:
    """Return the current time formatted for the store and the wire."""
    return format_time(utcnow())
