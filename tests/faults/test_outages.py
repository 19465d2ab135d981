"""Outages around a real worker process: the broker killed mid-command, qBittorrent stopped, both at
once, and the database held by another process. After each: no download failed, no acknowledged
command was lost, nothing was added twice, and a command refused during the outage runs when it
is sent again with the same transaction (the scenarios: tests/support/fault_scenarios.py).
`bench/faults.py` repeats them many times."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support import fault_scenarios
from tests.support.fault_stack import FaultStack, RestartableBroker, worker_config
from tests.support.qbittorrent import QbittorrentInstance
from tests.support.worker_process import WorkerProcess


@pytest.fixture
async def stack(tmp_path: Path, qbittorrent: QbittorrentInstance) -> AsyncIterator[FaultStack]:
    broker = RestartableBroker(tmp_path)
    broker.start()
    config = worker_config(tmp_path, broker, qbittorrent)
    worker = WorkerProcess(config, tmp_path / "worker.log")
    worker.start()
    running = FaultStack(config, worker, broker)
    try:
        await running.online()
        yield running
    finally:
        worker.close()
        broker.close()


async def test_a_qbittorrent_outage_fails_nothing_and_a_refused_cancel_runs_when_sent_again(
    stack: FaultStack, qbittorrent: QbittorrentInstance,
) -> None:
    figures = await fault_scenarios.qbittorrent_outage(stack, qbittorrent)
    assert figures["refused"] == 1


async def test_broker_outages_mid_command_lose_nothing_acknowledged_and_add_nothing_twice(
    stack: FaultStack, qbittorrent: QbittorrentInstance,
) -> None:
    figures = await fault_scenarios.broker_outages(stack, qbittorrent, random.Random(1515))
    assert figures["unanswered"] > 0             # the outages did cut commands off mid-way


async def test_broker_and_qbittorrent_down_at_once(stack: FaultStack,
                                                   qbittorrent: QbittorrentInstance) -> None:
    await fault_scenarios.both_outages(stack, qbittorrent)


async def test_the_database_held_by_another_process(stack: FaultStack,
                                                    qbittorrent: QbittorrentInstance) -> None:
    figures = await fault_scenarios.database_held(stack, qbittorrent)
    assert figures["refused"] == 2
