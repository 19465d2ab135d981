"""The Jellybit device as the session's real Home Assistant sees it: a bridge over the real engine.

Shared by the real-HA tests (tests/transports/test_home_assistant_*.py). Entity ids are found from
the device's MQTT identifier, never hard-coded.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import aiomqtt

from jellybit.config import Config, MqttConfig, PanelConfig
from jellybit.protocol import Topics
from jellybit.transports.homeassistant import ENTITIES, HomeAssistantDiscovery
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers
from tests.support import polling
from tests.support.engine import Engine
from tests.support.homeassistant import HomeAssistant, device_entities
from tests.support.mosquitto import Broker

T = TypeVar("T")
PANEL_URL = "http://panel.test:8099"


@dataclass
class Jellybit:
    """A running bridge on a unique base topic and device id, seen by the session's Home Assistant."""

    engine: Engine
    config: MqttConfig
    topics: Topics
    node: str
    ha: HomeAssistant
    panel_url: str = PANEL_URL
    events_entity: str = ""          # its event entity's id, once a test looked it up
    bridge: MqttBridge | None = None
    task: asyncio.Task[None] | None = None
    components: Any = None           # what `info.components` shows (the app's storage_components)

    @classmethod
    def make(cls, engine: Engine, broker: Broker, ha: HomeAssistant, *, panel_url: str = PANEL_URL
             ) -> Jellybit:
        """One on a fresh base topic and node id."""
        tag = uuid.uuid4().hex[:10]
        config = MqttConfig(url=broker.url, base_topic=f"jb-{tag}", client_id=f"worker-{tag}",
                            discovery_prefix="homeassistant")
        return cls(engine, config, Topics(config.base_topic, config.discovery_prefix), f"jb_{tag}", ha,
                   panel_url)

    @property
    def tag(self) -> str:
        """The unique part of the base topic and node id."""
        return self.node.removeprefix("jb_")

    async def start(self) -> None:
        """Start (or restart) the bridge with the discovery extension."""
        full = Config(mqtt=self.config, panel=PanelConfig(base_url=self.panel_url))
        state = EngineState(self.engine.commands, self.engine.bus, full, components=self.components)
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

    async def remove(self, broker: Broker) -> None:
        """Stop, then remove the device from HA (and from the session broker) with an empty config."""
        await self.stop()
        async with aiomqtt.Client(broker.host, broker.port, identifier=f"cleanup-{self.tag}") as mqtt:
            await mqtt.publish(self.topics.ha_device_config(self.node), b"", qos=1, retain=True)

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
    return await polling.until(probe, within=within, what=f"Home Assistant: {what}")


async def now(value: T) -> T:
    """A plain value as an awaitable, for `eventually` over state kept in the test."""
    return value
