"""Fuzzing the request path: any payload on any topic under `request/` gets a well-formed answer.

Runs the bridge's real request handling over the real engine (built by `app.build_app`) and a
real SQLite file; qBittorrent points at a closed port, so nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import tempfile
import uuid
from pathlib import Path

import aiomqtt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.app import build_app
from jellybit.protocol import Command, EventPayload, NotifyRequest, Response, parse_request
from tests.support.app_config import loopback_config
from tests.support.bridge import Bus, app_bridge

COMMANDS = [c.value for c in Command] + ["", "nope", "add/extra", "add/", "/add", "ädd"]
ID = "01jfzzzzzzzzzzzzzzzzzzzzzz"

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
# Text with lone surrogates: `json.dumps` writes them as `\\ud800` escapes, which `json.loads`
# turns back into strings UTF-8 cannot carry (the answer and the `error` event once failed on them).
lone = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF, categories=["Cs"])
surrogate_text = st.lists(st.one_of(lone, st.characters()), min_size=1, max_size=12).map("".join)
keys = st.sampled_from(["id", "source", "torrent", "context", "hint", "candidate_id", "overrides", "until",
                        "hours", "delete_data", "confirm", "provider", "provider_id", "states", "limit",
                        "offset", "text", "transaction", "reason", "hash"])
objects = st.dictionaries(keys, json_values | st.just(ID), max_size=5).map(
    lambda d: json.dumps(d).encode())
broken_text = st.dictionaries(keys | surrogate_text, surrogate_text | json_values | st.just(ID), min_size=1,
                              max_size=4).map(lambda d: json.dumps(d).encode())


def _nest(value: object, shape: list[bool]) -> object:
    for as_list in shape:
        value = [value] if as_list else {"overrides": value}
    return value


# Deep chains of arrays and objects around a real request, far past the 32-level limit and up to
# where the JSON decoder itself gives up; and numbers at and beyond every range.
deep = st.builds(_nest, objects.map(json.loads), st.lists(st.booleans(), min_size=20, max_size=120)).map(
    lambda d: json.dumps(d).encode())
brackets = st.integers(min_value=1, max_value=200_000).map(lambda n: b"[" * n + b"]" * n)
numbers = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True),
                    st.sampled_from(["1e400", "-1e400", "NaN", "Infinity", "9" * 5000]))
numeric = st.tuples(st.sampled_from(["limit", "offset", "hours"]), numbers).map(
    lambda kv: f'{{"{kv[0]}": {kv[1] if isinstance(kv[1], str) else json.dumps(kv[1])}}}'.encode())
payloads = st.one_of(st.binary(max_size=300), objects, st.text(max_size=200).map(str.encode), deep, brackets,
                     numeric, broken_text)


@given(command=st.sampled_from(list(Command)), payload=payloads)
def test_parse_request_only_raises_value_errors(command: Command, payload: bytes) -> None:
    try:
        parse_request(command, payload)
    except (ValueError, UnicodeDecodeError):
        pass


@given(text=st.text(max_size=80))
def test_a_bare_notify_payload_is_the_hash(text: str) -> None:
    bare = text.strip()
    if not bare or bare.startswith("{"):
        return
    try:
        request = parse_request(Command.NOTIFY, text.encode())
    except ValueError:
        assert len(bare) > 64                         # only a too-long "hash" is refused
        return
    assert isinstance(request, NotifyRequest)
    assert request.hash == bare                       # what `mosquitto_pub -m %I` sends


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(st.sampled_from(COMMANDS), payloads), min_size=1, max_size=8))
def test_any_request_gets_a_well_formed_answer_and_bad_ones_change_nothing(
    batch: list[tuple[str, bytes]],
) -> None:
    async def scenario(root: Path) -> None:
        app = build_app(loopback_config(root))
        await app.store.open()
        try:
            for name, payload in batch:
                before = await app.store.count_downloads()
                body = await app_bridge(app)._respond(name, payload)
                response = Response.model_validate_json(body)
                if response.status == "error":
                    assert response.error is not None
                    assert response.error.code
                    assert response.error.message
                    assert response.error.code != "internal_error", response.error
                    assert await app.store.count_downloads() == before
                else:
                    assert name in {c.value for c in Command}
        finally:
            await app.client.close()
            await app.store.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp)))


# ---------------------------------------------------------------- MQTT 5 properties

PREFIX = "jb-fuzz/response/"
topics_asked = st.one_of(
    st.none(),
    st.text(max_size=80),
    st.text(max_size=40).map(lambda t: PREFIX + t),
    st.sampled_from(["jb-fuzz/availability", "homeassistant/device/jellybit/config", PREFIX, PREFIX + "#",
                     PREFIX + "a/+/b", PREFIX + "x\x00y", PREFIX + "я" * 600, "jb-fuzz/response"]),
)
correlations = st.one_of(st.none(), st.binary(max_size=2048), st.text(max_size=20), st.integers())


class _Props:
    """What paho hands the bridge: attributes, any of them missing or of any type."""

    def __init__(self, topic: object, correlation: object) -> None:
        if topic is not None:
            self.ResponseTopic = topic
        if correlation is not None:
            self.CorrelationData = correlation


@given(command=st.sampled_from(COMMANDS), asked=topics_asked, correlation=correlations,
       with_props=st.booleans())
def test_any_mqtt5_properties_route_the_answer_under_the_prefix(command: str, asked: object,
                                                                 correlation: object,
                                                                 with_props: bool) -> None:
    from jellybit.config import MqttConfig
    from jellybit.transports.mqtt.requests import Requests

    requests = Requests(MqttConfig(base_topic="jb-fuzz"), {}, results=None)  # type: ignore[arg-type]
    route = requests.route(f"jb-fuzz/request/{command}", _Props(asked, correlation) if with_props else None)
    assert route.topic.startswith(PREFIX)
    assert not any(c in route.topic for c in "+#\x00")
    assert len(route.topic.encode("utf-8", "surrogatepass")) <= 512 + len(command.encode()) + 32
    assert route.key
    assert route.correlation is None or isinstance(route.correlation, bytes)
    if asked is not None and with_props and route.refused is None:
        assert route.topic == asked


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(batch=st.lists(st.tuples(st.sampled_from(COMMANDS), payloads, topics_asked, correlations),
                      min_size=1, max_size=6))
def test_any_request_with_any_properties_is_answered_under_the_prefix(
    batch: list[tuple[str, bytes, object, object]],
) -> None:
    async def scenario(root: Path) -> None:
        config = loopback_config(root)
        config = config.model_copy(update={"mqtt": config.mqtt.model_copy(update={"base_topic": "jb-fuzz"})})
        app = build_app(config)
        await app.store.open()
        try:
            for name, payload, asked, correlation in batch:
                before = await app.store.count_downloads()
                topic = f"jb-fuzz/request/{name}"
                route = app_bridge(app).requests.route(topic, _Props(asked, correlation))
                reply = await app_bridge(app).requests.answer(topic, payload, route)
                assert reply.topic.startswith(PREFIX)
                response = Response.model_validate_json(reply.body)
                if route.refused is not None:
                    assert response.error is not None
                    assert response.error.code == "invalid_response_topic"
                    assert await app.store.count_downloads() == before
                elif response.status == "error":
                    assert response.error is not None
                    assert response.error.code != "internal_error", response.error
        finally:
            await app.client.close()
            await app.store.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(scenario(Path(tmp)))


@given(payload=broken_text)
def test_text_that_is_not_valid_unicode_is_refused_by_name(payload: bytes) -> None:
    data = json.loads(payload)
    broken = any(isinstance(t, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in t)
                 for t in [*data.keys(), *data.values()])
    try:
        parse_request(Command.APPLY, payload)
    except ValueError as exc:
        str(exc).encode("utf-8")                     # the message itself can be answered
        if broken:
            return
    assert not broken, "a lone surrogate got through"


# ---------------------------------------------------------------- the same over a real broker

# (topic under <base>/, payload, the code of the answer). Sent as they are by a raw MQTT client.
CORPUS = [
    ("request/", b"{}", "unknown_command"),
    ("request/", b'{"id": "\\ud800"}', "unknown_command"),
    ("request/add/x", b"magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567", "unknown_command"),
    ("request/add/", b"{}", "unknown_command"),
    ("request//", b"{}", "unknown_command"),
    ("request/apply", b'{"id": "\\ud800", "transaction": "\\udc00tx"}', "invalid_argument"),
    ("request/cancel", b'{"id": "' + ID.encode() + b'", "transaction": "a\\ud83d"}', "invalid_argument"),
    ("request/add", b'{"source": "magnet:?xt=urn:btih:0123456789abcdef0123456789abcdef01234567", '
                    b'"context": "\\udfff"}', "invalid_argument"),
    ("request/refine", b'{"id": "' + ID.encode() + b'", "hint": "\\ud800\\ud800"}', "invalid_argument"),
    ("request/add", b"\xed\xa0\x80", "invalid_argument"),                  # a surrogate as raw bytes
    ("request/get", b'{"id": "\\udc00"}', "invalid_argument"),
    ("request/undo", b'{"\\ud800": 1}', "invalid_argument"),
]


async def test_the_corpus_over_a_real_broker_is_answered_and_every_error_event_is_readable(
    bus: Bus, caplog: pytest.LogCaptureFixture,
) -> None:
    """Every request is answered in valid UTF-8 JSON the protocol models read (a lone surrogate
    shown as U+FFFD), a failed command that would change something also gets its `error` event,
    nothing is logged as an error, and nothing changes."""
    port = int(bus.config.url.rsplit(":", 1)[1])
    base = bus.topics.base
    async with aiomqtt.Client("127.0.0.1", port, identifier=f"fuzz-{uuid.uuid4().hex[:8]}",
                              protocol=aiomqtt.ProtocolVersion.V5) as raw:
        await raw.subscribe(f"{base}/response/#", qos=1)
        await raw.subscribe(bus.topics.events, qos=1)
        for n, (suffix, payload, code) in enumerate(CORPUS):
            props = Properties(PacketTypes.PUBLISH)
            props.CorrelationData = b"\xed\xa0\x80" + bytes([n])    # any bytes come back as they went
            with_topic = n % 2 == 0
            if with_topic:
                props.ResponseTopic = f"{base}/response/fuzz/{n}"
            await raw.publish(f"{base}/{suffix}", payload, qos=1, properties=props)
            wants_event = suffix.removeprefix("request/") not in {"get", "list", "titles", "notify"}
            answer: Response | None = None
            event: EventPayload | None = None
            async with asyncio.timeout(10):
                async for message in raw.messages:
                    body = bytes(message.payload)  # type: ignore[arg-type]
                    body.decode("utf-8")                        # strict: valid UTF-8
                    if str(message.topic) == bus.topics.events:
                        event = EventPayload.model_validate_json(body)
                    else:
                        answer = Response.model_validate_json(body)
                        assert message.properties.CorrelationData == props.CorrelationData
                        if with_topic:
                            assert str(message.topic) == f"{base}/response/fuzz/{n}"
                    if answer is not None and (event is not None or not wants_event):
                        break
            assert answer.error is not None, (suffix, payload)
            assert answer.error.code == code, (suffix, payload, answer.error)
            if code == "unknown_command":
                assert f"{base}/request/<command>" in answer.error.message
            if b"tx" in payload:
                assert answer.transaction == "\ufffdtx"
            if event is not None:
                assert event.event_type == "error"
                assert event.code == code
    assert await bus.engine.store.count_downloads() == 0
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
