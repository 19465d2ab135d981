"""A real worker process and the panel's connection through three broker restarts on a real
mosquitto (stopped, down 10 s the first time and 1 s after, started again with nothing retained):
each time both come back by themselves, the worker republishes its retained state and `online`,
and what was acknowledged before is still there. How fast they come back is measured by
`bench/reconnect.py` (no timing is asserted here: the machine is shared)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from jellybit.client import JellybitClient
from jellybit.config import load_config
from jellybit.protocol import Command, Topics
from tests.support.fault_stack import RestartableBroker, until
from tests.support.qbittorrent import magnet
from tests.support.worker_process import WorkerProcess, as_json, eventually_retained, retained, worker_config
from ui.live import Live

# The first outage is the one issue 28 names (a broker restart or update, down 10 s); the next two
# are short: they prove the coming back repeats (state republished, nothing acknowledged lost),
# which a long wait each time would only make slower.
DOWN_FOR = (10.0, 1.0, 1.0)
OUTAGES = len(DOWN_FOR)


async def test_three_broker_restarts_the_worker_and_the_panel_come_back_and_republish(tmp_path: Path) -> None:
    broker = RestartableBroker(tmp_path / "broker")
    broker.directory.mkdir()
    broker.start()
    config_file = worker_config(tmp_path, mqtt_url=broker.url)
    config = load_config(config_file)
    topics = Topics(config.mqtt.base_topic)
    worker = WorkerProcess(config_file, tmp_path / "worker.log")
    worker.start()
    panel = Live(config)
    panel.start()
    try:
        await eventually_retained(broker.url, topics.availability, lambda p: p == b"online")
        async with JellybitClient(config.mqtt, name="before") as client:
            added = await client.request(Command.ADD, {"source": magnet(name="Restart.Proof"),
                                                       "transaction": "tx-restart"})
        assert added.status == "ok", added.error
        download_id = added.data.id
        await until(lambda: panel.health().ok and download_id in panel.downloads, what="the panel's view")

        for down_for in DOWN_FOR:
            broker.stop()
            await until(lambda: not panel.health().ok, what="the panel noticing the outage")
            await asyncio.sleep(down_for)
            assert worker.alive
            broker.start()       # same port, no persistence: every retained message is gone
            await eventually_retained(broker.url, topics.availability, lambda p: p == b"online")
            state = as_json(await eventually_retained(broker.url, topics.download(download_id), bool))
            assert state["id"] == download_id
            assert as_json(await eventually_retained(broker.url, topics.summary, bool))["active"] == 1
            await until(lambda: panel.health().ok and download_id in panel.downloads,
                        what="the panel back with the worker's state")

        async with JellybitClient(config.mqtt, name="after") as client:
            again = await client.request(Command.ADD, {"source": magnet(name="Restart.Proof"),
                                                       "transaction": "tx-restart"})
            assert again.model_dump() == added.model_dump()      # the acknowledged add, not run twice
            listed = await client.request(Command.LIST, {})
            assert [item.id for item in listed.data.items] == [download_id]
        assert await retained(broker.url, topics.availability) == b"online"
        assert worker.output().count("MQTT connection restored") == OUTAGES
    finally:
        await panel.stop()
        worker.close()
        broker.close()
