"""The MQTT bridge against a real mosquitto and the real engine (store, worker, commands)."""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from pathlib import Path

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.adapters.store import Store
from jellybit.client import JellybitClient
from jellybit.config import Config
from jellybit.core.states import State
from jellybit.protocol import Command, Topics
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers
from tests.support.bridge import (
    Bus,
    eventually_retained,
    mqtt_config,
    retained,
    start_bridge,
    stop_bridge,
    watching_events,
)
from tests.support.engine import EngineFactory
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent

HASH = "0123456789abcdef0123456789abcdef01234567"


async def test_availability_info_and_summary_are_retained(bus: Bus) -> None:
    assert await retained(bus.config, bus.topics.availability) == b"online"
    info = json.loads(await retained(bus.config, bus.topics.info) or b"{}")
    assert info["protocol"] == 1
    assert info["qbittorrent"]["enabled"] is True
    assert "password" not in json.dumps(info).lower()
    summary = json.loads(await retained(bus.config, bus.topics.summary) or b"{}")
    assert summary["active"] == 0
    assert summary["states"]["queued"] == 0


async def test_add_by_plain_magnet_and_the_download_topic(bus: Bus) -> None:
    response = await bus.client.request(Command.ADD, f"magnet:?xt=urn:btih:{HASH}&dn=Фарго.S02")
    assert response.status == "ok", response.error
    assert response.data.created is True
    download_id = response.data.id
    payload = await eventually_retained(bus.config, bus.topics.download(download_id),
                                        lambda v: v and v["state"] == "queued")
    assert payload["name"] == "Фарго.S02"
    assert payload["infohashes"] == [HASH]
    again = await bus.client.request(Command.ADD, {"source": HASH, "context": "second season"})
    assert (again.data.id, again.data.created, again.data.joined) == (download_id, False, True)
    summary = await eventually_retained(bus.config, bus.topics.summary, lambda v: v and v["active"] == 1)
    assert summary["states"]["queued"] == 1


@pytest.mark.parametrize(
    ("command", "payload", "code"),
    [
        ("apply", b"{not json", "invalid_argument"),
        ("apply", b"[1, 2]", "invalid_argument"),
        ("apply", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "bogus": 1}', "invalid_argument"),
        ("get", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"}', "not_found"),
        ("get", b'{"id": "../../etc"}', "not_found"),
        ("undo", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"}', "not_found"),
        ("frobnicate", b"{}", "unknown_command"),
        ("add", b"magnet:?xt=urn:btih:nothex", "invalid_source"),
        ("add", b"http://127.0.0.1:8080/api/v2/app/shutdown", "invalid_source"),
        ("add", b"magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567&tr=http://[::1]:1883/",
         "invalid_source"),
        ("add", b'{"torrent": "!!!"}', "invalid_argument"),
        ("add", b'{"torrent": "' + b"A" * 64 + b'"}', "invalid_source"),
        ("list", b'{"limit": 0}', "invalid_argument"),
        ("defer", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"}', "invalid_argument"),
    ],
)
async def test_bad_requests_get_an_error_and_change_nothing(bus: Bus, command: str, payload: bytes,
                                                            code: str) -> None:
    before = await bus.engine.store.count_downloads()
    response = await bus.client.request(command, payload)
    assert response.status == "error"
    assert response.error is not None
    assert response.error.code == code, response.error
    assert response.error.message
    assert await bus.engine.store.count_downloads() == before
    assert not bus.task.done()                          # nothing crashed
    ok = await bus.client.request(Command.LIST, {})
    assert ok.status == "ok"


async def test_oversized_payload_is_refused(make_engine: EngineFactory, mosquitto: Broker) -> None:
    engine = await make_engine()
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}", max_payload_bytes=1024)
    bridge, task = await start_bridge(engine, config)
    try:
        async with JellybitClient(config) as client:
            response = await client.request(Command.ADD, {"source": HASH, "context": "x" * 2000})
        assert response.error is not None
        assert response.error.code == "payload_too_large"
        assert await engine.store.count_downloads() == 0
    finally:
        await stop_bridge(bridge, task)


async def test_default_response_topic_echoes_the_transaction(bus: Bus) -> None:
    port = int(bus.config.url.rsplit(":", 1)[1])
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"raw-{uuid.uuid4().hex[:8]}") as raw:
        await raw.subscribe(bus.topics.response(Command.LIST), qos=1)
        await raw.publish(bus.topics.request(Command.LIST), json.dumps({"transaction": "t-42"}), qos=1)
        async with asyncio.timeout(10):
            message = await anext(aiter(raw.messages))
    body = json.loads(message.payload)
    assert body["transaction"] == "t-42"
    assert body["status"] == "ok"
    assert body["data"]["items"] == []
    assert body["data"]["total"] == 0


async def test_mqtt5_response_topic_and_correlation_data_are_honoured(bus: Bus) -> None:
    port = int(bus.config.url.rsplit(":", 1)[1])
    reply = f"{bus.topics.base}/response/script-{uuid.uuid4().hex}"
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"v5-{uuid.uuid4().hex[:8]}",
                              protocol=aiomqtt.ProtocolVersion.V5) as raw:
        await raw.subscribe(reply, qos=1)
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = reply
        props.CorrelationData = b"corr-7"
        await raw.publish(bus.topics.request(Command.GET), b'{"id": "nope"}', qos=1, properties=props)
        async with asyncio.timeout(10):
            message = await anext(aiter(raw.messages))
    assert message.properties.CorrelationData == b"corr-7"
    assert json.loads(message.payload)["error"]["code"] == "not_found"


async def test_a_repeated_transaction_runs_once_even_across_restarts(
    make_engine: EngineFactory, mosquitto: Broker, tmp_path: Path
) -> None:
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}")
    request = {"source": HASH, "context": "once", "transaction": "tx-1"}
    engine = await make_engine()
    bridge, task = await start_bridge(engine, config)
    async with JellybitClient(config) as client:
        first = await client.request(Command.ADD, request)
        second = await client.request(Command.ADD, request)
    await stop_bridge(bridge, task)
    assert first.status == "ok"
    assert second.model_dump() == first.model_dump()
    assert await engine.store.count_downloads() == 1

    # A new worker over the same database file answers from the stored result.
    store = Store(engine.store.path)
    await store.open()
    try:
        assert await store.command_result("add", "tx-1") == first.model_dump_json()
    finally:
        await store.close()
    await engine.store.close()
    await engine.store.open()
    bridge, task = await start_bridge(engine, config)
    try:
        async with JellybitClient(config) as client:
            third = await client.request(Command.ADD, request)
        assert third.model_dump() == first.model_dump()
        assert await engine.store.count_downloads() == 1
    finally:
        await stop_bridge(bridge, task)


async def test_review_flow_publishes_review_and_events(
    make_engine: EngineFactory, mosquitto: Broker, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}")
    topics = Topics(config.base_topic)
    bridge, task = await start_bridge(engine, config)
    try:
        async with watching_events(config) as seen, JellybitClient(config) as client:
            seeded = seeded_torrent(qbittorrent.data_dir, "Some.Movie.2001", {"Some.Movie.2001.mkv": 50_000})
            added = await client.request(Command.ADD, {"torrent": base64.b64encode(seeded.torrent).decode()})
            download_id = added.data.id
            await engine.settle(download_id, State.REVIEW)
            review = await eventually_retained(config, topics.review(download_id), lambda v: v is not None)
            assert review["id"] == download_id
            assert review["plan"]
            assert review["candidates"]
            assert review["candidates"][0]["provider"]

            summary = await eventually_retained(config, topics.summary,
                                                lambda v: v and v["review_queue"] == 1)
            assert [item["id"] for item in summary["reviews"]] == [download_id]
            assert summary["reviews"][0]["reason"] == "No confirmed metadata match"
            listed = await eventually_retained(config, topics.download(download_id), lambda v: v is not None)
            assert (listed["seeds"], listed["peers"]) == (0, 0)     # qBittorrent's swarm: nobody

            detail = await client.request(Command.GET, {"id": download_id})
            assert [t.to for t in detail.data.timeline][:3] == ["queued", "downloading", "recognizing"]
            candidate = detail.data.recognition.candidates[0].id
            applied = await client.request(Command.APPLY, {"id": download_id, "candidate_id": candidate,
                                                           "overrides": {"year": 2001}})
            assert applied.status == "ok", applied.error
            await engine.settle(download_id, State.DONE)
            await eventually_retained(config, topics.download(download_id),
                                      lambda v: v and v["state"] == "done")
            # `get` read into its model: the pinned year (as stored), the whole timeline, the state.
            laid = (await client.request(Command.GET, {"id": download_id})).data
            assert laid.overrides.year == 2001
            assert (laid.timeline[-1].from_, laid.timeline[-1].to) == (State.APPLYING, State.DONE)
            assert laid.download.state is State.DONE
            again = await client.request(Command.APPLY, {"id": download_id})
            assert again.status == "error"
            assert await retained(config, topics.review(download_id), within=0.5) is None
            await seen.until(lambda events: {"done", "error"} <= {e["event_type"] for e in events})
        events = seen.items
        kinds = [e["event_type"] for e in events if e["id"] == download_id]
        assert kinds[0] == "added"
        assert "review_requested" in kinds
        assert kinds[-2:] == ["done", "error"]
        asked = next(e for e in events if e["event_type"] == "review_requested")
        assert asked["reason"] == "needs review: no confirmed metadata match"
        assert asked["message"] == "No confirmed metadata match"
        assert asked["title"] == "Test Movie"
        # A command that failed is an `error` event with a sentence (Home Assistant shows it).
        (failed,) = [e for e in events if e["event_type"] == "error"]
        assert (failed["id"], failed["command"], failed["code"]) == (download_id, "apply", "invalid_state")
        assert failed["message"].startswith("Apply failed: ")
        assert failed["message"] == failed["reason"]
        done = next(e for e in events if e["event_type"] == "done")
        assert done["from"] == "applying"
        assert done["to"] == "done"
        assert done["at"].endswith("Z")
    finally:
        await stop_bridge(bridge, task)


async def test_info_reports_outside_services_from_their_probes(
    make_engine: EngineFactory, mosquitto: Broker, fake_jellyfin
) -> None:
    from jellybit.adapters.jellyfin import JellyfinRefresher
    from jellybit.app import _probes

    engine = await make_engine()
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}")
    refresher = JellyfinRefresher(fake_jellyfin.config())
    full = Config(mqtt=config, jellyfin=fake_jellyfin.config())
    state = EngineState(engine.commands, engine.bus, full, statuses=_probes(full, None, [], refresher))
    bridge = MqttBridge(config, handlers=build_handlers(engine.commands), state=state, results=engine.store)
    task = asyncio.create_task(bridge.run())
    try:
        await asyncio.wait_for(bridge.connected.wait(), 10)
        info = await eventually_retained(config, Topics(config.base_topic).info, lambda v: v is not None)
        assert info["jellyfin"]["enabled"] is True
        assert info["jellyfin"]["connected"] is True
        assert info["jellyfin"]["state"] == "ok"
        assert info["llm"]["enabled"] is False
        assert info["llm"]["state"] == "not configured"
        assert "llm.enabled = true" in info["llm"]["hint"]
    finally:
        await stop_bridge(bridge, task)
        await refresher.close()


async def test_jellyfins_answer_is_on_the_download_topic_and_an_event(
    make_engine: EngineFactory, mosquitto: Broker, fake_jellyfin, tmp_path: Path
) -> None:
    """The confirmation over MQTT: `jellyfin` on the retained download (pending, then the note) and a
    `jellyfin` event with the note as `message`. Here no Jellyfin library holds the download's folder."""
    from jellybit.adapters.jellyfin_library import JellyfinLibraries
    from jellybit.config import PathsConfig
    from jellybit.core.states import Actor
    from jellybit.engine.jellyfin_confirm import JellyfinConfirmer

    engine = await make_engine()
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}")
    topics = Topics(config.base_topic)
    fake_jellyfin.add_library("Shows", "tvshows", "/media/series")
    paths = PathsConfig(downloads=tmp_path, movies=tmp_path / "movies", series=tmp_path / "series")
    jellyfin = fake_jellyfin.config(path_map=[{"jellyfin": "/media", "local": str(tmp_path)}])
    lookup = JellyfinLibraries(jellyfin, paths)
    confirmer = JellyfinConfirmer(engine.store, engine.bus, lookup, jellyfin, paths)
    bridge, task = await start_bridge(engine, config)
    try:
        async with watching_events(config) as seen:
            added = await engine.commands.add(source=f"magnet:?xt=urn:btih:{'e' * 40}&dn=Heat.1995")
            download_id = added.download.id
            for state in (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE):
                await engine.worker.serial.change(download_id, state, reason="test", actor=Actor.WORKER)
            await confirmer.track(await engine.store.get_download(download_id))
            await eventually_retained(config, topics.download(download_id),
                                      lambda v: v and (v.get("jellyfin") or {}).get("status") == "pending")
            await confirmer.confirm_due()
            laid = await eventually_retained(
                config, topics.download(download_id),
                lambda v: v and (v.get("jellyfin") or {}).get("status") == "missing")
            assert laid["state"] == "done"
            assert "No Jellyfin library holds" in laid["jellyfin"]["note"]
            await seen.until(lambda events: any(e["event_type"] == "jellyfin" for e in events))
        events = seen.items
        (told,) = [e for e in events if e["event_type"] == "jellyfin" and e["reason"] == "missing"]
        assert told["id"] == download_id
        assert told["message"] == laid["jellyfin"]["note"]
    finally:
        await stop_bridge(bridge, task)
        await confirmer.lookup.close()
