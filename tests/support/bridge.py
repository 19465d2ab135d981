"""A running MQTT bridge over the test engine on the session's mosquitto, and retained-topic probes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
import pytest

from jellybit.app import App
from jellybit.client import JellybitClient
from jellybit.config import Config, MqttConfig
from jellybit.protocol import Command, Topics
from jellybit.transports.mqtt import EngineState, Handler, MqttBridge, build_handlers
from tests.support.engine import Engine, EngineFactory
from tests.support.mosquitto import Broker


@dataclass
class Bus:
    """A running bridge plus a client and a raw observer on one unique base topic."""

    engine: Engine
    bridge: MqttBridge
    client: JellybitClient
    topics: Topics
    config: MqttConfig
    task: asyncio.Task[None]


def mqtt_config(broker: Broker, base: str, **extra: Any) -> MqttConfig:
    return MqttConfig(url=broker.url, base_topic=base, client_id=f"worker-{base}", **extra)


def app_bridge(app: App) -> MqttBridge:
    """The MQTT transport of an app `build_app` wired (it must have one)."""
    bridge = app.transport(MqttBridge.name)
    assert isinstance(bridge, MqttBridge), [t.name for t in app.transports]
    return bridge


async def start_bridge(engine: Engine, config: MqttConfig, *, sweep: float = 60.0,
                       handlers: Mapping[Command, Handler] | None = None) -> tuple[MqttBridge, asyncio.Task]:
    """A bridge over the engine (its own handlers, or some replaced by the test), connected."""
    full = Config(mqtt=config)
    state = EngineState(engine.commands, engine.bus, full, sweep_interval=sweep, info_interval=sweep)
    bridge = MqttBridge(config, handlers={**build_handlers(engine.commands), **(handlers or {})}, state=state,
                        results=engine.store, min_backoff=0.05, max_backoff=0.2)
    task = asyncio.create_task(bridge.run())
    await asyncio.wait_for(bridge.connected.wait(), 10)
    return bridge, task


async def stop_bridge(bridge: MqttBridge, task: asyncio.Task) -> None:
    await bridge.stop()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


@pytest.fixture
async def bus(make_engine: EngineFactory, mosquitto: Broker) -> AsyncIterator[Bus]:
    engine = await make_engine()
    base = f"jb-{uuid.uuid4().hex[:10]}"
    config = mqtt_config(mosquitto, base)
    bridge, task = await start_bridge(engine, config)
    async with JellybitClient(config, name="test") as client:
        yield Bus(engine, bridge, client, Topics(base), config, task)
    await stop_bridge(bridge, task)


async def retained(config: MqttConfig, topic: str, *, within: float = 5.0) -> bytes | None:
    """The retained payload of a topic as a fresh subscriber sees it (None when there is none)."""
    async with aiomqtt.Client("127.0.0.1", int(config.url.rsplit(":", 1)[1]),
                              identifier=f"obs-{uuid.uuid4().hex[:8]}") as observer:
        await observer.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(within):
                async for message in observer.messages:
                    if message.retain:
                        return bytes(message.payload)
        except TimeoutError:
            return None
    return None


async def eventually_retained(config: MqttConfig, topic: str, predicate: Any, within: float = 10.0) -> Any:
    deadline = asyncio.get_running_loop().time() + within
    while True:
        raw = await retained(config, topic, within=0.5)
        value = json.loads(raw) if raw else None
        if predicate(value):
            return value
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"{topic} never satisfied the condition; last: {value!r}")
        await asyncio.sleep(0.05)




@dataclass
class SeenEvents:
    """The messages of the `events` topic seen so far, parsed, in order."""

    items: list[dict[str, Any]] = field(default_factory=list)

    async def until(self, predicate: Callable[[list[dict[str, Any]]], bool], within: float = 5.0) -> None:
        """Wait until `predicate(items)` holds; fail with what was seen at the deadline."""
        deadline = asyncio.get_running_loop().time() + within
        while not predicate(self.items):
            if asyncio.get_running_loop().time() > deadline:
                pytest.fail(f"the events never satisfied the condition; seen: {self.items!r}")
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def watching_events(config: MqttConfig) -> AsyncIterator[SeenEvents]:
    """Collect the `events` topic of `config`'s base topic while the block runs (subscribed first)."""
    seen = SeenEvents()
    async with aiomqtt.Client("127.0.0.1", int(config.url.rsplit(":", 1)[1]),
                              identifier=f"ev-{uuid.uuid4().hex[:8]}") as observer:
        await observer.subscribe(Topics(config.base_topic).events, qos=1)

        async def collect() -> None:
            async for message in observer.messages:
                seen.items.append(json.loads(bytes(message.payload)))  # type: ignore[arg-type]

        collector = asyncio.create_task(collect())
        try:
            yield seen
        finally:
            collector.cancel()
            await asyncio.gather(collector, return_exceptions=True)
