"""Fixtures shared by the transport tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mosquitto import Broker
from tests.support.worker_process import WorkerProcess, worker_config


@pytest.fixture
def worker(tmp_path: Path, mosquitto: Broker) -> Iterator[WorkerProcess]:
    """A real `jellybit run` process on the test's broker (qBittorrent unreachable), stopped after."""
    process = WorkerProcess(worker_config(tmp_path, mqtt_url=mosquitto.url), tmp_path / "worker.log")
    process.start()
    yield process
    process.close()
