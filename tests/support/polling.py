"""Waiting in tests, written once: poll a probe until it holds, and fail the test at the deadline
with what was awaited. The fakes and helpers (`qbittorrent.eventually`, `wait_for`, `FakeTelegram.until`,
`ha_device.eventually`, `fault_stack.until`, the panel's `eventually`) are these with their own words."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable
from typing import Any

import pytest

What = str | Callable[[], str]      # what is awaited, or a function that says it at the deadline


def _failed(what: What, within: float) -> None:
    said = what() if callable(what) else what
    pytest.fail(f"{said} not met within {within:g} s")


async def until(probe: Callable[[], Any], *, within: float = 15.0, interval: float = 0.05,
                what: What = "condition") -> Any:
    """Poll `probe()` (plain or awaitable) while the event loop runs, until it returns something
    truthy, and return that; fail the test at the deadline, naming `what`."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() > deadline:
            _failed(what, within)
        await asyncio.sleep(interval)


def wait_for(probe: Callable[[], Any], *, within: float = 15.0, interval: float = 0.05,
             what: What = "condition") -> Any:
    """`until` for code without an event loop: the thread sleeps between polls."""
    deadline = time.monotonic() + within
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            _failed(what, within)
        time.sleep(interval)
