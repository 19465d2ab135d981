"""Small helpers for the panel tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support import polling


async def eventually(predicate: Callable[[], Any], within: float = 15.0, interval: float = 0.05) -> Any:
    """Poll a plain predicate while the event loop runs (pages, timers, MQTT); fail at the deadline."""
    return await polling.until(predicate, within=within, interval=interval)
