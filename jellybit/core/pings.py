"""A message a chat transport owes a user about a download: the record its ping queue port exchanges."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PingStatus(StrEnum):
    """Where a ping is in its life."""

    PENDING = "pending"          # waiting for its time or for Telegram to be reachable
    SENT = "sent"
    SUPERSEDED = "superseded"    # the download left the state the ping is about; not sent
    DROPPED = "dropped"          # Telegram refused it for good (the reason is kept)


@dataclass(frozen=True)
class TelegramPing:
    """One message the bot owes a chat about a download."""

    id: str
    download_id: str
    chat_id: int
    kind: str                   # review | done | failed
    dedupe_key: str
    status: PingStatus
    attempts: int
    next_attempt_at: str
    last_error: str | None
    message_id: int | None
    has_photo: bool
    created_at: str
