"""The request path obeys the contract, whatever a requester asks: response topics only under the
prefix, retained requests never run, a bounded queue that answers `busy`, and transactions that
remember only final outcomes. Real mosquitto, the real bridge, the real engine and store."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import aiomqtt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.client import JellybitClient
from jellybit.errors import AdapterError
from jellybit.protocol import Command, Request, Response, Topics
from jellybit.transports.mqtt.requests import response_json
from tests.support.bridge import Bus, mqtt_config, retained, start_bridge, stop_bridge
from tests.support.engine import EngineFactory
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import magnet

HASH = "89abcdef0123456789abcdef0123456789abcdef"


def port_of(bus: Bus) -> int:
    return int(bus.config.url.rsplit(":", 1)[1])


async def raw_client(bus: Bus, name: str) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", port_of(bus), identifier=f"{name}-{uuid.uuid4().hex[:8]}",
                          protocol=aiomqtt.ProtocolVersion.V5)


async def collect(client: aiomqtt.Client, into: list[tuple[str, bytes, bool]]) -> None:
    async for message in client.messages:
        into.append((str(message.topic), bytes(message.payload), bool(message.retain)))  # type: ignore[arg-type]


async def wait_for_message(seen: list[tuple[str, bytes, bool]], topic: str, within: float = 10.0) -> bytes:
    async with asyncio.timeout(within):
        while True:
            for got, payload, _retain in seen:
                if got == topic:
                    return payload
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("asked", [
    "{base}/availability",
    "{base}/downloads/01jfzzzzzzzzzzzzzzzzzzzzzz",
    "homeassistant/device/jellybit/config",
    "{base}/response",
    "{base}/response/",
    "elsewhere/{base}/response/x",
])
async def test_a_response_topic_outside_the_prefix_is_refused_and_nothing_runs(bus: Bus,
                                                                                asked: str) -> None:
    hostile = asked.format(base=bus.topics.base)
    seen: list[tuple[str, bytes, bool]] = []
    async with await raw_client(bus, "hostile") as raw:
        await raw.subscribe(hostile, qos=1)
        await raw.subscribe(bus.topics.response(Command.ADD), qos=1)
        reader = asyncio.create_task(collect(raw, seen))
        await asyncio.sleep(0.3)                 # retained state of the topic, if any, arrives first
        seen.clear()
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = hostile
        props.CorrelationData = b"c-1"
        await raw.publish(bus.topics.request(Command.ADD), json.dumps({"source": HASH}), qos=1,
                          properties=props)
        body = json.loads(await wait_for_message(seen, bus.topics.response(Command.ADD)))
        await asyncio.sleep(0.3)
        reader.cancel()
    assert body["status"] == "error"
    assert body["error"]["code"] == "invalid_response_topic"
    assert [topic for topic, _, _ in seen if topic == hostile] == []
    assert await bus.engine.store.count_downloads() == 0
    ok = await bus.client.request(Command.LIST, {})
    assert ok.status == "ok"


async def test_a_private_topic_under_the_prefix_gets_the_answer_with_its_correlation(bus: Bus) -> None:
    reply = f"{bus.topics.base}/response/Скрипт/{uuid.uuid4().hex}"
    seen: list[tuple[str, bytes, bool]] = []
    async with await raw_client(bus, "script") as raw:
        await raw.subscribe(reply, qos=1)
        reader = asyncio.create_task(collect(raw, seen))
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = reply
        props.CorrelationData = bytes(range(256)) * 2
        await raw.publish(bus.topics.request(Command.LIST), b"{}", qos=1, properties=props)
        body = json.loads(await wait_for_message(seen, reply))
        reader.cancel()
    assert body["status"] == "ok"


async def test_a_configured_prefix_replaces_the_default(make_engine: EngineFactory,
                                                        mosquitto: Broker) -> None:
    engine = await make_engine()
    base = f"jb-{uuid.uuid4().hex[:10]}"
    config = mqtt_config(mosquitto, base, response_prefix=f"replies/{base}/")
    bridge, task = await start_bridge(engine, config)
    try:
        default = Topics(base).response(Command.LIST)
        route = bridge.requests.route(Topics(base).request(Command.LIST), _props(default))
        assert route.refused is not None                # <base>/response/ is not the prefix any more
        allowed = bridge.requests.route(Topics(base).request(Command.LIST), _props(f"replies/{base}/me"))
        assert (allowed.topic, allowed.refused) == (f"replies/{base}/me", None)
        plain = bridge.requests.route(Topics(base).request(Command.LIST), None)
        assert plain.topic == f"replies/{base}/list"    # the default answer is under the prefix too
        async with JellybitClient(config) as client:    # clients pick their private topic under it
            assert client.response_topic.startswith(f"replies/{base}/")
            assert (await client.request(Command.LIST, {})).status == "ok"
    finally:
        await stop_bridge(bridge, task)


def _props(topic: str) -> Properties:
    props = Properties(PacketTypes.PUBLISH)
    props.ResponseTopic = topic
    return props


async def test_a_retained_request_is_refused_cleared_and_never_runs(make_engine: EngineFactory,
                                                                    mosquitto: Broker) -> None:
    engine = await make_engine()
    base = f"jb-{uuid.uuid4().hex[:10]}"
    config = mqtt_config(mosquitto, base)
    topics = Topics(base)
    port = int(config.url.rsplit(":", 1)[1])
    # Left on the broker while no worker ran (a `mosquitto_pub -r` by mistake).
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"early-{uuid.uuid4().hex[:8]}") as early:
        await early.publish(topics.request(Command.ADD), json.dumps({"source": magnet(name="Old")}), qos=1,
                            retain=True)
    seen: list[tuple[str, bytes, bool]] = []
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"obs-{uuid.uuid4().hex[:8]}") as observer:
        await observer.subscribe(topics.response(Command.ADD), qos=1)
        reader = asyncio.create_task(collect(observer, seen))
        for _restart in range(3):                 # the report: a new download at each of three restarts
            bridge, task = await start_bridge(engine, config)
            await asyncio.sleep(0.5)
            await stop_bridge(bridge, task)
        # And one published retained while the worker runs is refused too, not run once.
        bridge, task = await start_bridge(engine, config)
        try:
            async with aiomqtt.Client("127.0.0.1", port, identifier=f"late-{uuid.uuid4().hex[:8]}") as late:
                await late.publish(topics.request(Command.ADD), json.dumps({"source": HASH}), qos=1,
                                   retain=True)
            await wait_until(lambda: len(seen) >= 2)
        finally:
            await stop_bridge(bridge, task)
        reader.cancel()
    assert await engine.store.count_downloads() == 0
    codes = [json.loads(payload)["error"]["code"] for _topic, payload, _retain in seen]
    assert codes == ["retained_request", "retained_request"]
    assert await retained(config, topics.request(Command.ADD), within=0.5) is None


async def wait_until(predicate, within: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def test_past_its_queue_a_client_is_answered_busy_and_others_still_get_through(
    make_engine: EngineFactory, mosquitto: Broker
) -> None:
    engine = await make_engine()
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}", queue_per_client=3, queue_total=50)
    gate = asyncio.Event()
    real_list = None

    async def held_list(request: Request) -> Any:
        await gate.wait()
        assert real_list is not None
        return await real_list(request)

    from jellybit.transports.mqtt import build_handlers
    real_list = build_handlers(engine.commands)[Command.LIST]
    bridge, task = await start_bridge(engine, config, handlers={Command.LIST: held_list})
    try:
        async with JellybitClient(config, name="flood") as flood, \
                JellybitClient(config, name="other") as other:
            burst = [asyncio.create_task(flood.request(Command.LIST, {}, timeout=20)) for _ in range(12)]
            await asyncio.sleep(1.0)
            quick = await other.request(Command.GET, {"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"})
            assert quick.error is not None
            assert quick.error.code == "not_found"              # not held up by the flood
            busy = [t.result() for t in burst if t.done()]
            assert len(busy) == 9
            assert {r.error.code for r in busy if r.error} == {"busy"}
            gate.set()
            answered = await asyncio.gather(*burst)
        assert sum(r.status == "ok" for r in answered) == 3
    finally:
        gate.set()
        await stop_bridge(bridge, task)


async def test_a_transient_failure_is_not_remembered_so_the_same_transaction_runs_again(
    make_engine: EngineFactory, mosquitto: Broker
) -> None:
    engine = await make_engine()
    config = mqtt_config(mosquitto, f"jb-{uuid.uuid4().hex[:10]}")
    calls: list[str] = []

    async def flaky_relink(request: Request) -> Any:
        calls.append("relink")
        if len(calls) == 1:
            raise AdapterError("qbittorrent", "cannot connect to http://127.0.0.1:1")
        return {"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "name": f"ran {len(calls)}", "state": "applying",
                "created_at": "2026-12-03T07:20:44Z", "updated_at": "2026-12-03T07:20:44Z"}

    bridge, task = await start_bridge(engine, config, handlers={Command.RELINK: flaky_relink})
    try:
        async with JellybitClient(config) as client:
            body = {"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "transaction": "tx-outage"}
            first = await client.request(Command.RELINK, body)
            second = await client.request(Command.RELINK, body)
            third = await client.request(Command.RELINK, body)
    finally:
        await stop_bridge(bridge, task)
    assert first.error is not None
    assert first.error.code == "adapter_error"
    assert second.status == "ok"
    assert second.data is not None
    assert second.data.name == "ran 2"
    assert third.model_dump() == second.model_dump()          # a final outcome is remembered
    assert calls == ["relink", "relink"]
    stored = await engine.store.command_result("relink", "tx-outage")
    assert stored == second.model_dump_json(exclude_unset=True)      # the wire, read back exactly


@pytest.mark.parametrize(("command", "payload"), [
    ("list", b"[" * 100_000 + b"]" * 100_000),
    ("list", b'{"text": ' + b'{"a": ' * 40 + b"1" + b"}" * 40 + b"}"),
    ("list", b'{"offset": 10000000000000000000}'),
    ("list", b'{"offset": 1e400}'),
    ("list", b'{"limit": 9' + b"9" * 5000 + b"}"),
    ("apply", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "overrides": {"files": {"a.mkv": {"episodes": [-1]}}}}'),
    ("defer", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "hours": NaN}'),
    ("upgrade", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz", "choice": "overwrite"}'),
    ("upgrade", b'{"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"}'),
    ("add", b"\xff\xfe not utf-8"),
])
async def test_hostile_payloads_get_a_structured_error_and_no_task_dies(bus: Bus, command: str,
                                                                        payload: bytes) -> None:
    response = await bus.client.request(command, payload)
    assert response.status == "error"
    assert response.error is not None
    assert response.error.code == "invalid_argument", response.error
    assert not bus.task.done()
    assert (await bus.client.request(Command.LIST, {})).status == "ok"


UNICODE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)))
JSON_DATA = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | UNICODE,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(UNICODE, inner, max_size=4),
    max_leaves=30)


@settings(max_examples=500, deadline=None)
@given(JSON_DATA, st.none() | UNICODE)
def test_an_answer_encoded_straight_is_the_bytes_pydantic_writes(data: Any, transaction: str | None) -> None:
    """orjson writes a handler's data; pydantic's envelope would write the same bytes (NaN as null, non-ASCII
    as itself, integers past 64 bits through pydantic)."""
    response = Response.ok(data, transaction)
    assert response_json(response) == response.model_dump_json().encode("utf-8")
    failed = Response.fail("not_found", "unknown download id 'x'", transaction)
    assert response_json(failed) == failed.model_dump_json().encode("utf-8")
