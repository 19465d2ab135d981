"""Home Assistant discovery: the golden payload, and its life on a real broker."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from jellybit import __version__
from jellybit.config import Config, MqttConfig, PanelConfig
from jellybit.core.models import NewDownload
from jellybit.core.reasons import reason
from jellybit.core.records import MediaType, Plan, RecognitionDraft
from jellybit.core.states import Actor, State
from jellybit.protocol import EventType, SummaryPayload, Topics
from jellybit.transports.homeassistant import ENTITIES, HomeAssistantDiscovery, discovery_payload
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers
from tests.support.engine import EngineFactory
from tests.support.mosquitto import Broker

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "ha_discovery.json"


def test_discovery_payload_matches_the_golden_file() -> None:
    payload = discovery_payload(Topics("jellybit", "homeassistant"), "jellybit",
                                panel_url="http://127.0.0.1:8099")
    text = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False).replace(__version__, "<version>")
    assert json.loads(text) == json.loads(GOLDEN.read_text(encoding="utf-8"))


def test_every_entity_has_a_unique_id_a_platform_and_the_device() -> None:
    payload = discovery_payload(Topics("jb", "ha"), "node", panel_url=None)
    assert set(payload) >= {"dev", "o", "cmps", "avty"}
    assert {"name", "sw", "url"} <= set(payload["o"])
    ids = [c["unique_id"] for c in payload["cmps"].values()]
    assert len(ids) == len(set(ids)) == len(ENTITIES)
    assert all(c["p"] in {"sensor", "binary_sensor", "event", "text"} for c in payload["cmps"].values())
    assert all(c["default_entity_id"].startswith(c["p"] + ".") for c in payload["cmps"].values())
    assert "object_id" not in json.dumps(payload)
    assert payload["cmps"]["events"]["evt_typ"] == [e.value for e in EventType]
    assert payload["cmps"]["add"]["cmd_t"] == "jb/request/add"
    assert payload["cmps"]["add"]["max"] == 255


async def _observe(port: int, topic: str, into: list[tuple[str, bytes, bool]]) -> None:
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"ha-obs-{uuid.uuid4().hex[:8]}") as observer:
        await observer.subscribe(topic, qos=1)
        async for message in observer.messages:
            into.append((str(message.topic), bytes(message.payload), bool(message.retain)))


@pytest.fixture
async def ha_bus(make_engine: EngineFactory, mosquitto: Broker) -> AsyncIterator[dict[str, Any]]:
    prefix = f"ha-{uuid.uuid4().hex[:8]}"
    config = MqttConfig(url=mosquitto.url, base_topic=f"jb-{uuid.uuid4().hex[:8]}", discovery_prefix=prefix)
    topics = Topics(config.base_topic, prefix)
    return {"config": config, "topics": topics, "port": mosquitto.port, "make_engine": make_engine}


async def _start(ha_bus: dict[str, Any]) -> tuple[MqttBridge, asyncio.Task]:
    engine = await ha_bus["make_engine"]()
    config = ha_bus["config"]
    state = EngineState(engine.commands, engine.bus, Config(mqtt=config))
    discovery = HomeAssistantDiscovery(ha_bus["topics"], node_id="jellybit", max_delay=0.05)
    bridge = MqttBridge(config, handlers=build_handlers(engine.commands), state=state, results=engine.store,
                        extensions=(discovery,), min_backoff=0.05)
    task = asyncio.create_task(bridge.run())
    await asyncio.wait_for(bridge.connected.wait(), 10)
    return bridge, task


async def _wait(seen: list[tuple[str, bytes, bool]], predicate: Any, within: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + within
    while not predicate(seen):
        assert asyncio.get_running_loop().time() < deadline, seen
        await asyncio.sleep(0.02)


async def test_discovery_is_resent_when_home_assistant_comes_online(ha_bus: dict[str, Any]) -> None:
    topics: Topics = ha_bus["topics"]
    config_topic = topics.ha_device_config("jellybit")
    seen: list[tuple[str, bytes, bool]] = []
    observer = asyncio.create_task(_observe(ha_bus["port"], config_topic, seen))
    bridge, task = await _start(ha_bus)
    try:
        await _wait(seen, lambda s: len(s) >= 1)
        first = json.loads(seen[-1][1])
        assert first["dev"]["name"] == "Jellybit"
        count = len(seen)
        async with aiomqtt.Client("127.0.0.1", ha_bus["port"], identifier="fake-ha") as ha:
            await ha.publish(topics.ha_status, b"online", qos=1)
        await _wait(seen, lambda s: len(s) > count)
        assert json.loads(seen[-1][1]) == first
    finally:
        await bridge.stop()
        task.cancel()
        observer.cancel()
        await asyncio.gather(task, observer, return_exceptions=True)


async def test_entities_that_no_longer_exist_are_removed(ha_bus: dict[str, Any]) -> None:
    topics: Topics = ha_bus["topics"]
    config_topic = topics.ha_device_config("jellybit")
    old = discovery_payload(topics, "jellybit", panel_url=None)
    old["cmps"]["retired"] = {"p": "sensor", "unique_id": "jellybit_retired", "stat_t": topics.summary}
    async with aiomqtt.Client("127.0.0.1", ha_bus["port"], identifier="old-worker") as earlier:
        await earlier.publish(config_topic, json.dumps(old).encode(), qos=1, retain=True)
    seen: list[tuple[str, bytes, bool]] = []
    observer = asyncio.create_task(_observe(ha_bus["port"], config_topic, seen))
    await _wait(seen, lambda s: len(s) >= 1)        # the old retained config
    bridge, task = await _start(ha_bus)
    try:
        def removed(s: list[tuple[str, bytes, bool]]) -> bool:
            bodies = [json.loads(b) for _, b, _ in s[1:]]
            return any(b["cmps"].get("retired") == {"p": "sensor"} for b in bodies) and \
                "retired" not in bodies[-1]["cmps"]
        await _wait(seen, removed)
    finally:
        await bridge.stop()
        task.cancel()
        observer.cancel()
        await asyncio.gather(task, observer, return_exceptions=True)


async def _to(engine: Any, download_id: str, *states: State) -> None:
    for state in states:
        await engine.store.transition(download_id, state, reason="test", actor=Actor.WORKER)


async def test_last_completed_is_the_last_to_reach_done_and_the_queue_lists_who_waits(
        make_engine: EngineFactory) -> None:
    engine = await make_engine()
    store = engine.store
    made = [(await store.create_download_if_no_active(NewDownload("magnet", f"Release.{n}", f"m{n}", "")))
            .download.id for n in range(3)]
    older, newer, waiting = made
    # The newer download is laid out first, the older one after it: "last completed" is the older.
    await _to(engine, newer, State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE)
    await asyncio.sleep(0.002)
    await _to(engine, older, State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE)
    await _to(engine, waiting, State.DOWNLOADING, State.RECOGNIZING, State.REVIEW)
    await store.save_recognition(waiting, RecognitionDraft(
        MediaType.MOVIE, "The Matrix", 1999, Plan(()), reasons=(
            reason("year_unknown", "the release gives no year"),
            reason("small_margin", "TMDB's best match 'The Matrix' is only 0.02 ahead of 'The Matrix "
                   "Reloaded'"))))
    config = Config(mqtt=MqttConfig(base_topic="jb"), panel=PanelConfig(base_url="http://panel.lan:8099/"))
    state = EngineState(engine.commands, engine.bus, config)
    summary = SummaryPayload.model_validate_json((await state.summary()).payload or b"")
    assert summary.last_completed is not None
    assert summary.last_completed.id == older
    assert summary.review_queue == 1
    (item,) = summary.reviews
    assert (item.id, item.title, item.year) == (waiting, "The Matrix", 1999)
    # The blocking reason's own sentence, not a code, and the panel page to decide on.
    assert item.reason == "TMDB's best match 'The Matrix' is only 0.02 ahead of 'The Matrix Reloaded'"
    assert item.url == f"http://panel.lan:8099/download/{waiting}"


def test_the_review_queue_sensor_and_an_unknown_connection() -> None:
    payload = discovery_payload(Topics("jb", "ha"), "node", panel_url=None)
    queue = payload["cmps"]["review_queue"]
    assert (queue["stat_t"], queue["json_attr_t"]) == ("jb/summary", "jb/summary")
    link = payload["cmps"]["qbittorrent"]["val_tpl"]
    assert "'None' if value_json.qbittorrent.connected is none" in link


async def test_the_text_entity_state_is_an_empty_string(ha_bus: dict[str, Any]) -> None:
    topics: Topics = ha_bus["topics"]
    seen: list[tuple[str, bytes, bool]] = []
    observer = asyncio.create_task(_observe(ha_bus["port"], topics.ha_text_state(), seen))
    bridge, task = await _start(ha_bus)
    try:
        await _wait(seen, lambda s: len(s) >= 1)
        assert seen[0][1] == b'""'
    finally:
        await bridge.stop()
        task.cancel()
        observer.cancel()
        await asyncio.gather(task, observer, return_exceptions=True)
