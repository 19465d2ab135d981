"""Small helpers for the panel tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest


async def eventually(predicate: Callable[[], Any], within: float = 15.0, interval: float = 0.05) -> Any:
    """Poll a plain predicate while the event loop runs (pages, timers, MQTT); fail at the deadline."""
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {within} s")
        await asyncio.sleep(interval)
