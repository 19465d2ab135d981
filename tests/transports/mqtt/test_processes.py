"""The worker as a real process on a real mosquitto: the broker dies, the worker dies, nothing is lost."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jellybit.client import BrokerUnavailable, JellybitClient, NoAnswer
from jellybit.config import MqttConfig, load_config
from jellybit.protocol import Command, Topics
from tests.support.mosquitto import Broker, start_mosquitto
from tests.support.qbittorrent import magnet
from tests.support.services import free_port
from tests.support.worker_process import (
    WorkerProcess,
    as_json,
    eventually_retained,
    retained,
    worker_config,
)


class OwnBroker:
    """A mosquitto of this test alone, killable and restartable on the same port (no persistence)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc, _ = start_mosquitto(self.directory, self.port)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[OwnBroker]:
    own = OwnBroker(tmp_path)
    own.start()
    yield own
    own.close()


def start_worker(tmp_path: Path, mqtt_url: str) -> tuple[WorkerProcess, MqttConfig, Topics]:
    config_file = worker_config(tmp_path, mqtt_url=mqtt_url)
    mqtt = load_config(config_file).mqtt
    worker = WorkerProcess(config_file, tmp_path / "worker.log")
    worker.start()
    return worker, mqtt, Topics(mqtt.base_topic)


@pytest.fixture
def cleanup() -> Iterator[list[WorkerProcess]]:
    workers: list[WorkerProcess] = []
    yield workers
    for worker in workers:
        worker.close()


async def online(url: str, topics: Topics) -> None:
    await eventually_retained(url, topics.availability, lambda p: p == b"online")


async def test_broker_killed_and_restarted_the_worker_republishes_and_loses_nothing(
    tmp_path: Path, broker: OwnBroker, cleanup: list[WorkerProcess]
) -> None:
    worker, mqtt, topics = start_worker(tmp_path, broker.url)
    cleanup.append(worker)
    await online(broker.url, topics)

    source = magnet(name="First")
    async with JellybitClient(mqtt, name="before") as before:
        first = await before.request(Command.ADD, {"source": source, "transaction": "tx-first"})
        second = await before.request(Command.ADD, magnet(name="Второй"))
        assert first.status == second.status == "ok"
        ids = [first.data.id, second.data.id]
        await eventually_retained(broker.url, topics.download(ids[1]), lambda p: bool(p))

        broker.kill()
        # A request on the dead connection: a clear NoAnswer, no hang and no crash.
        with pytest.raises(NoAnswer):
            await before.request(Command.GET, {"id": ids[0]}, timeout=1.0)
    # A client that connects while the broker is down is told so at once.
    with pytest.raises(BrokerUnavailable, match="cannot reach the MQTT broker"):
        async with JellybitClient(mqtt, name="during"):
            pass
    assert worker.alive

    broker.start()              # same port, persistence off: every retained message is gone
    await online(broker.url, topics)
    for download_id in ids:
        state = as_json(await eventually_retained(broker.url, topics.download(download_id), bool))
        assert state["id"] == download_id
        assert state["state"] == "queued"          # qBittorrent is unreachable in this test
    assert as_json(await eventually_retained(broker.url, topics.info, bool))["version"]
    summary = as_json(await eventually_retained(broker.url, topics.summary, bool))
    assert summary["active"] == 2

    async with JellybitClient(mqtt, name="after") as after:
        for download_id in ids:
            got = await after.request(Command.GET, {"id": download_id})
            assert got.status == "ok", got.error
            assert got.data.download.id == download_id
        # The client's retry of the first add is answered from the stored result, not run again.
        again = await after.request(Command.ADD, {"source": source, "transaction": "tx-first"})
        assert again.model_dump() == first.model_dump()
        listed = await after.request(Command.LIST, {})
        assert listed.data.total == 2

    assert worker.alive
    assert worker.signal(signal.SIGTERM) == 0
    assert "MQTT connection restored" in worker.output()


async def test_worker_killed_the_last_will_says_offline_and_a_restart_brings_state_back(
    tmp_path: Path, mosquitto: Broker, cleanup: list[WorkerProcess]
) -> None:
    worker, mqtt, topics = start_worker(tmp_path, mosquitto.url)
    cleanup.append(worker)
    await online(mosquitto.url, topics)
    source = magnet(name="Survivor")
    async with JellybitClient(mqtt, name="test") as client:
        added = await client.request(Command.ADD, {"source": source, "transaction": "tx-1"})
        assert added.status == "ok"
        download_id = added.data.id
        await eventually_retained(mosquitto.url, topics.download(download_id), bool)

        assert worker.kill() == -signal.SIGKILL
        assert await retained(mosquitto.url, topics.availability) == b"offline"
        # Wipe what the dead worker had retained: the restarted one must publish it again.
        for topic in (topics.download(download_id), topics.summary, topics.info):
            await client._client.publish(topic, b"", qos=1, retain=True)  # type: ignore[union-attr]
        assert await retained(mosquitto.url, topics.download(download_id)) is None
        with pytest.raises(NoAnswer):
            await client.request(Command.LIST, {}, timeout=0.5)

        worker.start()
        await online(mosquitto.url, topics)
        state = as_json(await eventually_retained(mosquitto.url, topics.download(download_id), bool))
        assert (state["id"], state["state"]) == (download_id, "queued")
        summary = as_json(await eventually_retained(mosquitto.url, topics.summary, bool))
        assert summary["active"] == 1
        assert as_json(await eventually_retained(mosquitto.url, topics.info, bool))["version"]

        repeat = await client.request(Command.ADD, {"source": source, "transaction": "tx-1"})
        assert repeat.model_dump() == added.model_dump()     # answered from the store, across restarts
        assert (await client.request(Command.LIST, {})).data.total == 1

    assert worker.signal(signal.SIGTERM) == 0
    assert await retained(mosquitto.url, topics.availability) == b"offline"
