"""Outages around a real worker process: the broker killed mid-command, qBittorrent stopped, both at
once, and the database held by another process. After each: no download failed, no acknowledged
command was lost, nothing was added twice, and a command refused during the outage runs when it
is sent again with the same transaction. `bench/faults.py` repeats these many times."""

from __future__ import annotations

import asyncio
import base64
import random
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jellybit.client import JellybitClient, NoAnswer
from jellybit.protocol import Command
from tests.support.fault_stack import (
    FaultStack,
    Ledger,
    RestartableBroker,
    check_outage_invariants,
    until,
    worker_config,
)
from tests.support.qbittorrent import QbittorrentInstance, magnet, seeded_torrent
from tests.support.worker_process import WorkerProcess, as_json, retained


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


async def connect(stack: FaultStack, within: float = 30.0) -> JellybitClient:
    """A client, once the broker takes connections again."""
    async def attempt() -> JellybitClient | None:
        client = JellybitClient(stack.mqtt, name="faults")
        try:
            return await client.__aenter__()
        except NoAnswer:
            return None

    return await until(attempt, within=within, what="a broker connection")


async def add_some(ledger: Ledger, client: JellybitClient, qbittorrent: QbittorrentInstance,
                   prefix: str) -> tuple[list[str], str]:
    """Three magnets that stay downloading, and one complete torrent that goes to review."""
    magnets = []
    for n in range(3):
        response = await ledger.send(client, Command.ADD, {"source": magnet(name=f"{prefix}.{n}")},
                                     f"{prefix}-{n}")
        assert response is not None
        assert response.status == "ok", response.error
        magnets.append(response.data["id"])
    seeded = seeded_torrent(qbittorrent.data_dir, f"{prefix}.Complete", {"a.mkv": 30_000})
    response = await ledger.send(client, Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()},
                                 f"{prefix}-seeded")
    assert response is not None
    assert response.status == "ok", response.error
    return magnets, response.data["id"]


async def settled(stack: FaultStack, magnets: list[str], complete: str) -> None:
    def ready() -> bool:
        states = stack.states()
        return states.get(complete) == "review" and all(states.get(m) == "downloading" for m in magnets)

    await until(ready, within=60, what="the downloads to settle")


async def qbittorrent_connected(stack: FaultStack, connected: bool) -> None:
    async def probe() -> bool:
        info = as_json(await retained(stack.broker.url, stack.topics.info) or b"")
        return bool(info) and info["qbittorrent"]["connected"] is connected

    await until(probe, within=60, what=f"info to say qBittorrent connected={connected}")


async def test_a_qbittorrent_outage_fails_nothing_and_a_refused_cancel_runs_when_sent_again(
    stack: FaultStack, qbittorrent: QbittorrentInstance,
) -> None:
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "QbtOut")
        await settled(stack, magnets, complete)

        qbittorrent.process.stop()
        await qbittorrent_connected(stack, False)
        cancel = {"id": magnets[0], "delete_data": True, "confirm": True}
        refused = await ledger.send(client, Command.CANCEL, cancel, "cancel-during-outage")
        assert refused is not None
        assert refused.error is not None
        assert refused.error.code == "adapter_error"              # not done, and not remembered
        during = await ledger.send(client, Command.ADD, {"source": magnet(name="Added.During")}, "add-during")
        assert during is not None
        assert during.status == "ok"                               # accepted, queued until it is back
        await asyncio.sleep(3.0)                                    # 15 polls: 5x the miss threshold
        assert "failed" not in stack.states().values()

        qbittorrent.process.start()
        await qbittorrent_connected(stack, True)
        again = await ledger.send(client, Command.CANCEL, cancel, "cancel-during-outage")
        assert again is not None
        assert again.status == "ok", again.error
        assert again.data["state"] == "cancelled"
        await until(lambda: stack.states()[during.data["id"]] == "downloading", what="the queued add")
    finally:
        await client.__aexit__(None, None, None)
    with qbittorrent.process.admin() as admin:
        tags = {t["tags"] for t in admin.get("torrents/info").json()}
    assert not any(magnets[0] in tag for tag in tags)                 # the cancel removed its torrent
    check_outage_invariants(stack, ledger, qbittorrent)


async def test_broker_outages_mid_command_lose_nothing_acknowledged_and_add_nothing_twice(
    stack: FaultStack, qbittorrent: QbittorrentInstance,
) -> None:
    rng = random.Random(1515)
    ledger = Ledger()
    for cycle in range(3):
        client = await connect(stack)
        killer = asyncio.get_running_loop().call_later(rng.uniform(0.05, 0.6), stack.broker.kill)
        try:
            for n in range(12):
                await ledger.send(client, Command.ADD, {"source": magnet(name=f"Bus.{cycle}.{n}")},
                                  f"bus-{cycle}-{n}", within=2.0)
        finally:
            killer.cancel()
            stack.broker.kill()
            await client.__aexit__(None, None, None)
        stack.broker.start()
        await stack.online()
    assert ledger.unanswered                     # the outages did cut commands off mid-way
    # A client that got no answer sends again with the same transaction: each runs exactly once.
    client = await connect(stack)
    try:
        for transaction, (command, body) in list(ledger.sent.items()):
            answer = await client.request(command, body)
            assert answer.status == "ok", answer.error
            first = ledger.acknowledged.get(transaction)
            if first is not None:
                assert answer.data["id"] == first.data["id"]
            ledger.acknowledged.setdefault(transaction, answer)
    finally:
        await client.__aexit__(None, None, None)
    assert len(stack.states()) == len(ledger.sent)
    check_outage_invariants(stack, ledger, qbittorrent)


async def test_broker_and_qbittorrent_down_at_once(stack: FaultStack,
                                                   qbittorrent: QbittorrentInstance) -> None:
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "Both")
        await settled(stack, magnets, complete)
    finally:
        await client.__aexit__(None, None, None)
    stack.broker.kill()
    qbittorrent.process.stop()
    await asyncio.sleep(3.0)
    assert stack.worker.alive
    qbittorrent.process.start()
    stack.broker.start()
    await stack.online()
    await settled(stack, magnets, complete)
    client = await connect(stack)
    try:
        late = await ledger.send(client, Command.ADD, {"source": magnet(name="Both.After")}, "both-after")
        assert late is not None
        assert late.status == "ok"
        await until(lambda: stack.states()[late.data["id"]] == "downloading",
                    what="an add after both outages")
    finally:
        await client.__aexit__(None, None, None)
    check_outage_invariants(stack, ledger, qbittorrent)


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("ROLLBACK")
"""


async def test_the_database_held_by_another_process(stack: FaultStack,
                                                    qbittorrent: QbittorrentInstance) -> None:
    ledger = Ledger()
    client = await connect(stack)
    try:
        magnets, complete = await add_some(ledger, client, qbittorrent, "Locked")
        await settled(stack, magnets, complete)
        # Held for longer than two writes wait for it (the store's busy timeout is 5 s each).
        locker = await asyncio.create_subprocess_exec(sys.executable, "-c", LOCKER, str(stack.database), "14",
                                                      stdout=asyncio.subprocess.PIPE)
        try:
            assert locker.stdout is not None
            assert await locker.stdout.readline() == b"locked\n"
            refused = await ledger.send(client, Command.ADD, {"source": magnet(name="While.Locked")},
                                        "add-while-locked", within=30)
            rejected = await ledger.send(client, Command.REJECT, {"id": complete}, "reject-while-locked",
                                         within=30)
        finally:
            await asyncio.wait_for(locker.wait(), 30)
        for response in (refused, rejected):
            assert response is not None
            assert response.error is not None
            assert response.error.code == "adapter_error", response.error
            assert "busy" in response.error.message
        # Nothing was remembered: sent again, both run now.
        added = await client.request(Command.ADD, ledger.sent["add-while-locked"][1])
        assert added.status == "ok", added.error
        ledger.acknowledged["add-while-locked"] = added
        again = await client.request(Command.REJECT, ledger.sent["reject-while-locked"][1])
        assert again.status == "ok", again.error
        assert again.data["state"] == "cancelled"
    finally:
        await client.__aexit__(None, None, None)
    assert stack.worker.alive
    check_outage_invariants(stack, ledger, qbittorrent)
