"""A running MQTT bridge over the test engine on the session's mosquitto, and retained-topic probes."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
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


