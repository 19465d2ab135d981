"""Logging setup: JSON lines on stdout; lines about a download carry `download_id`."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any

_STANDARD = set(vars(logging.makeLogRecord({}))) | {"message", "asctime", "taskName"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and every `extra` field."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record."""
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


JsonFormatter.converter = __import__("time").gmtime  # type: ignore[assignment]


class TextFormatter(logging.Formatter):
    """Human-readable lines with the extra fields appended as key=value."""

    def format(self, record: logging.LogRecord) -> str:
        """Render one record."""
        base = super().format(record)
        extras = [
            f"{k}={v}" for k, v in vars(record).items()
            if k not in _STANDARD and not k.startswith("_")
        ]
        return base + ("  " + " ".join(extras) if extras else "")


def setup_logging(level: str = "INFO", fmt: str = "json", stream: Any = None) -> None:
    """Configure the root logger once for the whole process."""
    handler = logging.StreamHandler(stream or sys.stdout)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(TextFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # telegram logs request URLs, and the Bot API puts the bot token in every URL.
    for noisy in ("httpx", "httpcore", "aiosqlite", "openai", "telegram"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))


def for_download(download_id: str, **fields: Any) -> dict[str, Any]:
    """Build the `extra` mapping for a log line about one download."""
    return {"extra": {"download_id": download_id, **fields}}
