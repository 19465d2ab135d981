"""The worker never dies quietly: 2,000 failed polls, a failing poll cycle shown on `info`, and an
exit status that tells a supervisor something went wrong.

The app is the real one (`build_app`): a real SQLite file, a real mosquitto, and qBittorrent on a
closed port, so every poll fails exactly as it does during an outage.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jellybit.app import App, build_app
from jellybit.client import JellybitClient
from jellybit.config import (
    Config,
    MqttConfig,
    WorkerConfig,
)
from jellybit.protocol import Command, Topics
from tests.adapters.test_offload import pack
from tests.support.app_config import loopback_config
from tests.support.bridge import app_bridge
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import magnet
from tests.support.services import free_port
from tests.support.worker_process import CLI, as_json, eventually_retained, process_env


def app_config(root: Path, broker: Broker, **worker: float) -> Config:
    base = f"jb-{uuid.uuid4().hex[:10]}"
    return loopback_config(
        root, mqtt=MqttConfig(url=broker.url, base_topic=base, client_id=f"worker-{base}", discovery=False),
        worker=WorkerConfig(**worker))


@pytest.fixture
async def running(tmp_path: Path, mosquitto: Broker) -> AsyncIterator[App]:
    # Polls as fast as the loop can go: 2,000 failed polls take seconds, not the ~17 h of a real outage.
    app = build_app(app_config(tmp_path, mosquitto, poll_interval=0.0005, retry_max_backoff=0.001))
    await app.start()
    try:
        # Requests sent before the worker subscribed would be lost (the fast failing polls make
        # that window longer): wait until it serves, as a client watching `availability` would.
        await asyncio.wait_for(app_bridge(app).connected.wait(), 30)
        yield app
    finally:
        await app.stop()


async def test_2000_failed_polls_and_the_worker_still_answers(running: App) -> None:
    app = running
    config = app.config.mqtt
    async with JellybitClient(config, name="test") as client:
        for n in range(5):
            response = await client.request(Command.ADD, {"source": magnet(name=f"Outage.{n}")})
            assert response.status == "ok", response.error
        # It answers all along, while the failed polls pile up (an add wakes the loop, as in the report).
        answered = 0
        while app.worker.failed_polls < 2_000:
            command = Command.LIST if answered % 2 else Command.GET
            body = {"limit": 1} if command is Command.LIST else {"id": response.data.id}
            reply = await client.request(command, body, timeout=30)
            assert reply.status == "ok", reply.error
            answered += 1
            app.worker.wake()
            await asyncio.sleep(0.05)
        poll = app.supervisor.task("poll")
        assert poll is not None
        assert not poll.done()
        assert app.supervisor.status()["poll"].restarts == 0
        assert app.worker._backoff() == app.config.worker.retry_max_backoff

        late = await client.request(Command.ADD, {"source": magnet(name="After.2000.Failures")})
        assert late.status == "ok", late.error
        listed = await client.request(Command.LIST, {"limit": 500})
        assert listed.status == "ok", listed.error
        assert listed.data.total == 6
        assert {item.state for item in listed.data.items} == {"queued"}   # nothing failed
    info = as_json(await eventually_retained(config.url, Topics(config.base_topic).info,
                                             lambda p: b'"connected":false' in p))
    assert info["qbittorrent"]["connected"] is False
    assert info["components"]["poll"]["running"] is True


async def test_a_failing_poll_cycle_shows_on_info_and_as_an_event_then_recovers(running: App) -> None:
    app = running
    config = app.config.mqtt
    topics = Topics(config.base_topic)
    async with JellybitClient(config, name="events") as client:
        events = client.watch(topics.events)
        first = asyncio.ensure_future(anext(events))
        await asyncio.sleep(0.2)
        # The database goes away under the worker, and the worker has to read it: it reads every
        # active download again (as after a full answer from qBittorrent, or on its safety-net
        # timer), and every poll cycle fails at that first query until the database is back.
        await app.store.close()
        app.worker.active.reload()
        _topic, payload, _retained = await asyncio.wait_for(first, 30)
        event = json.loads(payload)
        assert event["event_type"] == "fault"
        assert event["id"] == "poll"
        assert any(word in event["reason"].lower() for word in ("connection", "closed", "not open"))
        info = as_json(await eventually_retained(
            config.url, topics.info, lambda p: (as_json(p) or {}).get("components", {}).get("poll", {}).get(
                "error") is not None))
        assert info["components"]["poll"]["running"] is True     # the loop survives its failing cycles
        await app.store.open()
        await eventually_retained(config.url, topics.info, lambda p: as_json(p)["components"]["poll"]["error"]
                                  is None)
        async with asyncio.timeout(30):
            async for _topic, payload, _retained in events:
                later = json.loads(payload)
                assert (later["event_type"], later["id"]) == ("fault", "poll")
                if later["reason"] == "recovered":
                    break
        await events.aclose()


async def test_a_flood_of_large_uploads_leaves_the_worker_answering_others(running: App) -> None:
    """Twenty .torrent uploads at once delayed another client's `list` by 57 s when they were read on
    the event loop; now they are read in child processes and take at most half the request workers."""
    app = running
    config = app.config.mqtt
    torrents = [base64.b64encode(pack(8_000 + n)).decode() for n in range(20)]
    finished: list[str] = []
    async with JellybitClient(config, name="uploader") as uploader, \
            JellybitClient(config, name="bystander") as bystander:
        async def upload(body: str) -> str:
            response = await uploader.request(Command.ADD, {"torrent": body}, timeout=300)
            finished.append("upload")
            return response.status if response.error is None else response.error.code

        uploads = [asyncio.create_task(upload(body)) for body in torrents]
        await asyncio.sleep(0.5)
        listed = await bystander.request(Command.LIST, {}, timeout=300)
        finished.append("list")
        outcomes = await asyncio.gather(*uploads)
    assert listed.status == "ok", listed.error
    assert finished.index("list") < len(finished) - 1           # answered before the uploads were done
    assert set(outcomes) <= {"ok", "busy"}
    assert outcomes.count("ok") >= 4
    assert await app.store.count_downloads() == outcomes.count("ok")


def test_a_component_that_keeps_crashing_ends_the_process_with_status_1(tmp_path: Path,
                                                                         mosquitto: Broker) -> None:
    """A broker config the MQTT loop cannot use (a CA file that is not there) crashes it on every
    start; after `max_restarts` the worker exits non-zero instead of running on half-dead."""
    config = tmp_path / "jellybit.toml"
    config.write_text(f"""
[qbittorrent]
url = "http://127.0.0.1:{free_port()}"

[paths]
downloads = "{tmp_path / 'dl'}"
movies = "{tmp_path / 'movies'}"
series = "{tmp_path / 'series'}"

[storage]
database = "{tmp_path / 'jellybit.db'}"

[mqtt]
url = "mqtts://127.0.0.1:{free_port()}"

[mqtt.tls]
ca_file = "{tmp_path / 'missing-ca.pem'}"

[metadata.tvmaze]
enabled = false

[worker]
restart_backoff_max = 0.05
max_restarts = 3
""", encoding="utf-8")
    done = subprocess.run([*CLI, "--config", str(config), "run"], capture_output=True, text=True,
                          env=process_env(), stdin=subprocess.DEVNULL, timeout=120, check=False)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "mqtt crashed 3 times in a row; giving up" in done.stderr
    assert "jellybit stopped" in done.stderr
