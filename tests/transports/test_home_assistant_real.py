"""A real Home Assistant (2025.4.4) discovers the Jellybit device through mosquitto and drives it.

The bridge runs over the real engine (store, worker, commands) with the discovery extension on the
prefix HA listens to (`homeassistant`). Every check goes through HA's REST API; entity ids are
found from the device's MQTT identifier, never hard-coded.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiomqtt
import pytest

from jellybit.client import JellybitClient
from jellybit.config import Config, MqttConfig
from jellybit.protocol import Command, EventType, Topics
from jellybit.transports.homeassistant import ENTITIES, HomeAssistantDiscovery
from jellybit.transports.mqtt import MqttBridge
from jellybit.transports.mqtt_engine import EngineState, build_handlers
from tests.support.engine import Engine, EngineFactory
from tests.support.homeassistant import INSTALL_TIMEOUT, HomeAssistant, device_entities
from tests.support.mosquitto import Broker

# The first use may build the HA venv (about 2 minutes) inside the session fixture.
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT + 120)

HASH_A = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
HASH_B = "b1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
HASH_C = "c1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
T = TypeVar("T")


@dataclass
class Jellybit:
    """A running bridge on a unique base topic and device id, seen by the session's Home Assistant."""

    engine: Engine
    config: MqttConfig
    topics: Topics
    node: str
    ha: HomeAssistant
    bridge: MqttBridge | None = None
    task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start (or restart) the bridge with the discovery extension."""
        state = EngineState(self.engine.commands, self.engine.bus, Config(mqtt=self.config))
        discovery = HomeAssistantDiscovery(self.topics, node_id=self.node, max_delay=0.05)
        self.bridge = MqttBridge(self.config, handlers=build_handlers(self.engine.commands), state=state,
                                 results=self.engine.store, extensions=(discovery,), min_backoff=0.05)
        self.task = asyncio.create_task(self.bridge.run())
        await asyncio.wait_for(self.bridge.connected.wait(), 10)

    async def stop(self) -> None:
        """Stop the bridge cleanly (it publishes `offline`)."""
        if self.bridge is not None and self.task is not None:
            await self.bridge.stop()
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        self.bridge = self.task = None

    async def entities(self) -> dict[str, dict[str, Any]]:
        """Entity key (`active`, `qbittorrent`, …) → HA state object, for the entities HA has so far."""
        async with self.ha.client() as rest:
            found = await device_entities(rest, self.node)
        names = {(e.platform, e.name): e.key for e in ENTITIES}
        keyed: dict[str, dict[str, Any]] = {}
        for entity_id, state in found.items():
            domain = entity_id.split(".", 1)[0]
            friendly = state["attributes"].get("friendly_name", "")
            key = next((k for (p, n), k in names.items() if p == domain and friendly.endswith(n)), None)
            if key is not None:
                keyed[key] = state
        return keyed

    async def all_entities(self) -> dict[str, dict[str, Any]]:
        """Wait until HA has every entity of the device, and each is available."""
        return await eventually(lambda: _complete(self.entities()), what="every entity, available")


async def _complete(pending: Awaitable[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]] | None:
    # An entity is `unavailable` from its creation until HA has read the retained availability topic.
    found = await pending
    complete = len(found) == len(ENTITIES) and all(s["state"] != "unavailable" for s in found.values())
    return found if complete else None


async def eventually(probe: Callable[[], Awaitable[T | None]], *, what: str, within: float = 20.0) -> T:
    """Poll `probe` until it returns something truthy; fail the test at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = await probe()
        if value:
            return value
        if loop.time() > deadline:
            pytest.fail(f"Home Assistant: {what} not seen within {within:g} s")
        await asyncio.sleep(0.05)


@pytest.fixture
async def jellybit(make_engine: EngineFactory, mosquitto: Broker,
                   home_assistant: HomeAssistant) -> AsyncIterator[Jellybit]:
    tag = uuid.uuid4().hex[:10]
    config = MqttConfig(url=mosquitto.url, base_topic=f"jb-{tag}", client_id=f"worker-{tag}",
                        discovery_prefix="homeassistant")
    topics = Topics(config.base_topic, config.discovery_prefix)
    app = Jellybit(await make_engine(), config, topics, f"jb_{tag}", home_assistant)
    await app.start()
    try:
        yield app
    finally:
        await app.stop()
        # An empty retained config removes the device from HA (and from the session broker).
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier=f"cleanup-{tag}") as mqtt:
            await mqtt.publish(topics.ha_device_config(app.node), b"", qos=1, retain=True)


async def test_home_assistant_discovers_the_device_and_shows_the_state(jellybit: Jellybit) -> None:
    entities = await jellybit.all_entities()
    domains = Counter(state["entity_id"].split(".", 1)[0] for state in entities.values())
    assert domains == {"sensor": 5, "binary_sensor": 1, "event": 1, "text": 1}
    assert entities["active"]["state"] == "0"
    assert entities["active"]["attributes"]["unit_of_measurement"] == "downloads"
    # The engine's qBittorrent points at a closed port: the connectivity sensor is off.
    assert entities["qbittorrent"]["state"] == "off"
    assert entities["qbittorrent"]["attributes"]["device_class"] == "connectivity"
    assert entities["events"]["attributes"]["event_types"] == [e.value for e in EventType]
    assert entities["add"]["attributes"]["max"] == 255

    async with JellybitClient(jellybit.config, name="ha-test") as client:
        response = await client.request(Command.ADD, HASH_A)
    assert response.status == "ok", response

    async def one_active() -> dict[str, dict[str, Any]] | None:
        now = await jellybit.entities()
        return now if now["active"]["state"] == "1" else None

    await eventually(one_active, what="sensor active = 1")
    # The `added` event reached HA's event entity.
    events = await eventually(lambda: _event_seen(jellybit, "added"), what="the added event")
    assert events["attributes"]["id"] == response.data["id"]


async def _event_seen(jellybit: Jellybit, event_type: str) -> dict[str, Any] | None:
    state = (await jellybit.entities()).get("events")
    return state if state and state["attributes"].get("event_type") == event_type else None


async def test_offline_makes_the_entities_unavailable_and_a_restart_brings_them_back(
        jellybit: Jellybit) -> None:
    assert len(await jellybit.all_entities()) == len(ENTITIES)
    await jellybit.stop()

    async def all_unavailable() -> bool:
        return all(s["state"] == "unavailable" for s in (await jellybit.entities()).values())

    await eventually(all_unavailable, what="every entity unavailable")
    await jellybit.start()

    async def back() -> bool:
        now = await jellybit.entities()
        return now.get("active", {}).get("state") == "0" and now["qbittorrent"]["state"] == "off"

    await eventually(back, what="the entities available again")


async def test_mqtt_publish_from_home_assistant_adds_a_download(jellybit: Jellybit) -> None:
    await jellybit.all_entities()
    store = jellybit.engine.store
    assert await store.find_active_by_hashes([HASH_B]) is None
    async with jellybit.ha.client() as rest:
        reply = await rest.post("/api/services/mqtt/publish",
                                json={"topic": jellybit.topics.request(Command.ADD), "payload": HASH_B})
        assert reply.status_code == 200, reply.text
    download = await eventually(lambda: store.find_active_by_hashes([HASH_B]), what="the download")
    assert download.hashes() == {HASH_B}


async def test_the_text_entity_adds_a_torrent_from_a_short_magnet(jellybit: Jellybit) -> None:
    text = (await jellybit.all_entities())["add"]
    store = jellybit.engine.store
    magnet = f"magnet:?xt=urn:btih:{HASH_C}&dn=Фарго.S02"
    assert len(magnet) <= 255
    async with jellybit.ha.client() as rest:
        reply = await rest.post("/api/services/text/set_value",
                                json={"entity_id": text["entity_id"], "value": magnet})
        assert reply.status_code == 200, reply.text
    download = await eventually(lambda: store.find_active_by_hashes([HASH_C]), what="the download")
    assert download.display_name


async def test_home_assistant_coming_online_gets_the_discovery_again(
        jellybit: Jellybit, home_assistant: HomeAssistant, mosquitto: Broker) -> None:
    await jellybit.all_entities()
    config_topic = jellybit.topics.ha_device_config(jellybit.node)
    seen: list[tuple[str, bytes]] = []

    async def observe() -> None:
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier=f"obs-{jellybit.node}") as mqtt:
            await mqtt.subscribe(jellybit.topics.ha_status, qos=1)
            await mqtt.subscribe(config_topic, qos=1)
            async for message in mqtt.messages:
                seen.append((str(message.topic), bytes(message.payload)))

    observer = asyncio.create_task(observe())
    try:
        await eventually(lambda: _async(any(t == config_topic for t, _ in seen)), what="the retained config")
        async with home_assistant.client() as rest:
            entries = (await rest.get("/api/config/config_entries/entry")).json()
            entry = next(e["entry_id"] for e in entries if e["domain"] == "mqtt")
            reply = await rest.post(f"/api/config/config_entries/entry/{entry}/reload")
            assert reply.status_code == 200, reply.text

        def resent() -> bool:
            births = [i for i, (t, p) in enumerate(seen) if t == jellybit.topics.ha_status and p == b"online"]
            return bool(births) and any(t == config_topic and p for t, p in seen[births[0] + 1:])

        await eventually(lambda: _async(resent()), what="HA's birth message, then the discovery again")
        again = await jellybit.all_entities()
        assert again["active"]["state"] == "0"
    finally:
        observer.cancel()
        await asyncio.gather(observer, return_exceptions=True)


async def _async(value: T) -> T:
    return value
