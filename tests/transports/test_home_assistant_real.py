"""A real Home Assistant (2025.4.4) discovers the Jellybit device through mosquitto and drives it.

The bridge runs over the real engine (store, worker, commands) with the discovery extension on the
prefix HA listens to (`homeassistant`). Every check goes through HA's REST API; entity ids are
found from the device's MQTT identifier, never hard-coded.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from jellybit.adapters.storage_watch import StorageWatch
from jellybit.app import publish_storage_fault, storage_components
from jellybit.client import JellybitClient
from jellybit.engine.supervisor import Supervisor
from jellybit.protocol import Command, EventType
from jellybit.transports.homeassistant import ENTITIES
from tests.support.engine import EngineFactory
from tests.support.ha_device import Jellybit, eventually, now
from tests.support.homeassistant import INSTALL_TIMEOUT, HomeAssistant
from tests.support.mosquitto import Broker

# The first use may build the HA venv (about 2 minutes) inside the session fixture.
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT + 120)

HASH_A = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
HASH_B = "b1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
HASH_C = "c1b2c3d4e5f60718293a4b5c6d7e8f9012345678"


@pytest.fixture
async def jellybit(make_engine: EngineFactory, mosquitto: Broker,
                   home_assistant: HomeAssistant) -> AsyncIterator[Jellybit]:
    app = Jellybit.make(await make_engine(), mosquitto, home_assistant)
    await app.start()
    try:
        yield app
    finally:
        await app.remove(mosquitto)


async def _state_is(jellybit: Jellybit, key: str, state: str) -> dict[str, dict[str, Any]] | None:
    found = await jellybit.entities()
    return found if key in found and found[key]["state"] == state else None


async def test_home_assistant_discovers_the_device_and_shows_the_state(jellybit: Jellybit) -> None:
    entities = await jellybit.all_entities()
    # No poll yet: whether qBittorrent answers is not known, and HA says so.
    assert entities["qbittorrent"]["state"] == "unknown"
    await jellybit.engine.worker.poll_once()
    domains = Counter(state["entity_id"].split(".", 1)[0] for state in entities.values())
    assert domains == {"sensor": 7, "binary_sensor": 2, "event": 1, "text": 1}
    # No storage fault: off, once HA has rendered the retained info for it (it may list the entity first).
    storage = await eventually(lambda: _state_is(jellybit, "storage", "off"), what="storage off")
    assert storage["storage"]["attributes"]["device_class"] == "problem"
    # Available is not rendered: HA may show a sensor before it has read the retained state topic.
    active = await eventually(lambda: _state_is(jellybit, "active", "0"), what="sensor active = 0")
    assert active["active"]["attributes"]["unit_of_measurement"] == "downloads"
    queue = await eventually(lambda: _state_is(jellybit, "review_queue", "0"), what="an empty review queue")
    assert queue["review_queue"]["attributes"]["downloads"] == []
    # An empty box to type into, not the word "unknown" (once HA has read the retained state).
    await eventually(lambda: _state_is(jellybit, "add", ""), what="an empty add box")
    # The engine's qBittorrent points at a closed port: once polled, the connectivity sensor is off.
    await eventually(lambda: _state_is(jellybit, "qbittorrent", "off"), what="qBittorrent off")
    assert entities["qbittorrent"]["attributes"]["device_class"] == "connectivity"
    # ... and the diagnostic sensor of service problems names it, with what to do as an attribute.
    problems = await eventually(lambda: _state_is(jellybit, "service_problems", "qbittorrent unreachable"),
                                what="qBittorrent named as a problem")
    assert "start qBittorrent" in problems["service_problems"]["attributes"]["qbittorrent"]["hint"]
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
    assert events["attributes"]["id"] == response.data.id


async def test_the_storage_sensor_shows_a_library_fault_and_its_end(
        make_engine: EngineFactory, mosquitto: Broker, home_assistant: HomeAssistant, tmp_path: Path) -> None:
    engine = await make_engine()
    root = tmp_path / "series-root"
    root.mkdir()
    watch = StorageWatch(engine.store.path, {"series": root},
                         notify=partial(publish_storage_fault, engine.bus))
    watch.opened()
    app = Jellybit.make(engine, mosquitto, home_assistant)
    app.components = storage_components(Supervisor(), watch)
    await app.start()
    try:
        await app.all_entities()
        await eventually(lambda: _state_is(app, "storage", "off"), what="the storage sensor off")
        root.rmdir()                                   # the library's folder is gone (a share not mounted)
        fault = watch.check_library("series")
        assert fault is not None
        assert fault.code == "library_unmounted"
        on = await eventually(lambda: _state_is(app, "storage", "on"), what="the storage sensor on")
        assert on["storage"]["attributes"]["faults"] == [fault.message]
        root.mkdir()
        assert watch.check_library("series") is None
        await eventually(lambda: _state_is(app, "storage", "off"), what="the storage sensor off again")
    finally:
        await app.remove(mosquitto)


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
        # Restarted and not polled yet: unknown, never a false "disconnected".
        found = await jellybit.entities()
        return found.get("active", {}).get("state") == "0" and found["qbittorrent"]["state"] == "unknown"

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
        await eventually(lambda: now(any(t == config_topic for t, _ in seen)), what="the retained config")
        async with home_assistant.client() as rest:
            entries = (await rest.get("/api/config/config_entries/entry")).json()
            entry = next(e["entry_id"] for e in entries if e["domain"] == "mqtt")
            reply = await rest.post(f"/api/config/config_entries/entry/{entry}/reload")
            assert reply.status_code == 200, reply.text

        def resent() -> bool:
            births = [i for i, (t, p) in enumerate(seen) if t == jellybit.topics.ha_status and p == b"online"]
            return bool(births) and any(t == config_topic and p for t, p in seen[births[0] + 1:])

        await eventually(lambda: now(resent()), what="HA's birth message, then the discovery again")
        await jellybit.all_entities()
        await eventually(lambda: _state_is(jellybit, "active", "0"),
                         what="sensor active = 0 after the reload")
    finally:
        observer.cancel()
        await asyncio.gather(observer, return_exceptions=True)




async def test_qbittorrent_not_known_yet_is_unknown_never_off(jellybit: Jellybit, mosquitto: Broker) -> None:
    await jellybit.all_entities()
    info = {"version": "t", "started_at": "2026-01-01T00:00:00Z", "qbittorrent": {"connected": None}}
    async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier=f"info-{jellybit.tag}") as mqtt:
        # What a worker publishes before its first poll: HA must say "unknown", not "disconnected".
        await mqtt.publish(jellybit.topics.info, json.dumps(info).encode(), qos=1, retain=True)
        await eventually(lambda: _state_is(jellybit, "qbittorrent", "unknown"), what="qBittorrent unknown")
        info["qbittorrent"]["connected"] = True
        await mqtt.publish(jellybit.topics.info, json.dumps(info).encode(), qos=1, retain=True)
        await eventually(lambda: _state_is(jellybit, "qbittorrent", "on"), what="qBittorrent on")


async def test_service_problems_name_each_failing_service_with_what_to_do(jellybit: Jellybit,
                                                                         mosquitto: Broker) -> None:
    await jellybit.all_entities()
    ok = {"enabled": True, "connected": True, "state": "ok"}
    info = {"version": "t", "started_at": "2026-01-01T00:00:00Z", "qbittorrent": ok, "llm": ok,
            "jellyfin": ok, "telegram": ok, "metadata": {"tvmaze": ok, "tmdb": ok}}
    async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier=f"info-{jellybit.tag}") as mqtt:
        await mqtt.publish(jellybit.topics.info, json.dumps(info).encode(), qos=1, retain=True)
        await eventually(lambda: _state_is(jellybit, "service_problems", "ok"), what="no problem")
        info["qbittorrent"] = {"connected": False, "state": "unreachable", "hint": "start qBittorrent"}
        info["metadata"]["tmdb"] = {"connected": False, "state": "refused", "hint": "check the key"}
        info["jellyfin"] = {"connected": True, "state": "misconfigured", "hint": "add the root"}   # a root
        await mqtt.publish(jellybit.topics.info, json.dumps(info).encode(), qos=1, retain=True)
        named = "qbittorrent unreachable, jellyfin misconfigured, tmdb refused"
        await eventually(lambda: _state_is(jellybit, "service_problems", named), what="the failing services")
    entity = (await jellybit.all_entities())["service_problems"]
    assert entity["attributes"]["metadata"]["tmdb"]["hint"] == "check the key"
    assert entity["attributes"]["qbittorrent"]["hint"] == "start qBittorrent"


async def test_a_failed_add_from_home_assistant_is_an_error_event(jellybit: Jellybit) -> None:
    await jellybit.all_entities()
    async with jellybit.ha.client() as rest:
        reply = await rest.post("/api/services/mqtt/publish", json={
            "topic": jellybit.topics.request(Command.ADD), "payload": "magnet:?xt=urn:btih:not-a-hash"})
        assert reply.status_code == 200, reply.text
    event = await eventually(lambda: _event_seen(jellybit, "error"), what="the error event")
    assert event["attributes"]["command"] == "add"
    assert event["attributes"]["code"] == "invalid_source"
    assert event["attributes"]["message"].startswith("Add failed: ")
