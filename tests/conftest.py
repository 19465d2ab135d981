"""Root fixtures: each tests/support module registers its fixtures here."""

from __future__ import annotations

from pathlib import Path

import pytest

from jellybit.adapters.store import Store

pytest_plugins = [
    "tests.support.mosquitto",
    "tests.support.homeassistant",
    "tests.support.fake_metadata",
    "tests.support.fake_openai",
    "tests.support.qbittorrent",
    "tests.support.media",
    "tests.support.engine",
]


@pytest.fixture
async def store(tmp_path: Path):
    """A migrated store in a real SQLite file."""
    s = Store(tmp_path / "jellybit.db")
    await s.open()
    try:
        yield s
    finally:
        await s.close()
