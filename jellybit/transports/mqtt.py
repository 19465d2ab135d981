"""The MQTT transport: retained state, the event stream, and request/response over aiomqtt 2.x.

Thin by design: a request becomes a call on the command handlers, the result becomes a response.
The state it publishes comes from a `StateSource`; it publishes on change only and re-publishes
everything after every reconnect, in case the broker lost retained messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from jellybit.config import MqttConfig
from jellybit.errors import JellybitError
from jellybit.protocol import (
    AVAILABILITY_OFFLINE,
    AVAILABILITY_ONLINE,
    READ_ONLY_COMMANDS,
    Command,
    Request,
    Response,
    Topics,
    parse_request,
)
from jellybit.transports.failures import failure_event

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Any]]


class ResultStore(Protocol):
    """Where responses are kept for transaction de-duplication (the SQLite store)."""

    async def command_result(self, command: str, transaction_id: str) -> str | None:
        """Return a stored response."""

    async def save_command_result(self, command: str, transaction_id: str, response: str) -> bool:
        """Store a response."""


@dataclass(frozen=True)
class Message:
    """One message to publish; `payload=None` clears a retained topic."""

    topic: str
    payload: bytes | None
    retain: bool = True
    qos: int = 1
    force: bool = False      # publish even if the retained payload did not change


class StateSource(Protocol):
    """What the bridge publishes: a full snapshot on connect, then updates as things change."""

    def snapshot(self) -> Awaitable[list[Message]]:
        """Every retained message that should exist now (availability excluded)."""

    def updates(self) -> AsyncIterator[list[Message]]:
        """Batches of messages to publish as state changes (retained state and events)."""


class Extension(Protocol):
    """A feature on the bus with its own subscriptions (Zigbee2MQTT style), e.g. HA discovery."""

    subscriptions: tuple[str, ...]

    async def on_connect(self, publish: Callable[[Message], Awaitable[None]]) -> None:
        """Publish what the extension owns after (re)connecting."""

    async def on_message(self, topic: str, payload: bytes,
                         publish: Callable[[Message], Awaitable[None]]) -> None:
        """Handle a message on one of its subscriptions."""


def encode(data: Any) -> bytes:
    """Serialize a payload as compact UTF-8 JSON."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json", by_alias=True)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str).encode("utf-8")


def client_options(config: MqttConfig, identifier: str, will: aiomqtt.Will | None) -> dict[str, Any]:
    """aiomqtt.Client keyword arguments from the config (TCP_NODELAY, v5, TLS, credentials)."""
    url = urlsplit(config.url)
    secure = url.scheme == "mqtts"
    options: dict[str, Any] = {
        "hostname": url.hostname or "127.0.0.1",
        "port": url.port or (8883 if secure else 1883),
        "identifier": identifier,
        "protocol": aiomqtt.ProtocolVersion.V5,
        "keepalive": config.keepalive,
        "timeout": 10,
        "will": will,
        # Without NODELAY, QoS 1 request/response pays Nagle + delayed ACK (~90 ms each).
        "socket_options": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        "clean_start": True,
    }
    if config.username:
        options["username"] = config.username
        options["password"] = config.password.get_secret_value() if config.password else None
    if secure:
        context = ssl.create_default_context(cafile=str(config.tls.ca_file) if config.tls.ca_file else None)
        if config.tls.cert_file:
            context.load_cert_chain(str(config.tls.cert_file),
                                    str(config.tls.key_file) if config.tls.key_file else None)
        if config.tls.insecure:
            context.check_hostname = False
        options["tls_context"] = context
        options["tls_insecure"] = config.tls.insecure
    return options


class MqttBridge:
    """Runs the connection loop; serves requests; publishes state, events and availability."""

    def __init__(
        self,
        config: MqttConfig,
        *,
        handlers: Mapping[Command, Handler],
        state: StateSource,
        results: ResultStore,
        extensions: tuple[Extension, ...] = (),
        min_backoff: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        self.config = config
        self.topics = Topics(config.base_topic, config.discovery_prefix)
        self.handlers = dict(handlers)
        self.state = state
        self.results = results
        self.extensions = extensions
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self._client: aiomqtt.Client | None = None
        self._published: dict[str, bytes] = {}   # retained topic -> last payload (publish on change)
        self.connected = asyncio.Event()
        # Events that could not be sent while disconnected (bounded; oldest dropped first).
        self._events: deque[Message] = deque(maxlen=1000)
        self._tx_locks: dict[tuple[str, str], asyncio.Lock] = {}

    # ------------------------------------------------------------ publishing

    async def publish(self, message: Message) -> None:
        """Publish now; retained messages only on change. Disconnected: events wait, state is re-sent."""
        body = message.payload or b""
        if message.retain and body and not message.force and self._published.get(message.topic) == body:
            return
        client = self._client
        if client is None:
            if not message.retain:
                self._events.append(message)
            return
        try:
            await client.publish(message.topic, body, qos=message.qos, retain=message.retain)
        except aiomqtt.MqttError:
            if not message.retain:
                self._events.append(message)
            raise
        if message.retain:
            if body:
                self._published[message.topic] = body
            else:
                self._published.pop(message.topic, None)

    async def _publish_all(self) -> None:
        self._published.clear()
        for message in await self.state.snapshot():
            await self.publish(message)
        for extension in self.extensions:
            await extension.on_connect(self.publish)
        # Like Frigate: "online" only once the initial state is out.
        await self.publish(Message(self.topics.availability, AVAILABILITY_ONLINE.encode()))

    # ------------------------------------------------------------ requests

    async def handle_request(self, topic: str, payload: bytes, properties: Properties | None) -> None:
        """Answer one request; never raises (a failing handler yields an error response)."""
        name = self.topics.parse_request_topic(topic) or ""
        response_topic = self.topics.response(name or "unknown")
        correlation = None
        if properties is not None:
            response_topic = getattr(properties, "ResponseTopic", None) or response_topic
            correlation = getattr(properties, "CorrelationData", None)
        response = await self._respond(name, payload)
        failure = failure_event(name, _peek(payload, "id"), response)
        if failure is not None:
            await self.publish(Message(self.topics.events, encode(failure.wire()), retain=False))
        props = None
        if correlation is not None:
            props = Properties(PacketTypes.PUBLISH)
            props.CorrelationData = correlation
        client = self._client
        if client is not None:
            try:
                await client.publish(response_topic, response.encode("utf-8"), qos=1, retain=False,
                                     properties=props)
            except aiomqtt.MqttError:
                log.warning("could not send a response", extra={"command": name})

    async def _respond(self, name: str, payload: bytes) -> str:
        try:
            command = Command(name)
        except ValueError:
            return Response.fail("unknown_command", f"unknown command {name[:64]!r}").model_dump_json()
        if len(payload) > self.config.max_payload_bytes:
            return Response.fail(
                "payload_too_large",
                f"payload of {len(payload)} bytes is over the {self.config.max_payload_bytes}-byte limit",
            ).model_dump_json()
        transaction = _peek_transaction(payload)
        try:
            request = parse_request(command, payload)
        except (ValueError, UnicodeDecodeError) as exc:
            return Response.fail("invalid_argument", str(exc), transaction).model_dump_json()
        transaction = request.transaction
        dedup = transaction is not None and command not in READ_ONLY_COMMANDS
        if dedup:
            stored = await self.results.command_result(command.value, transaction)
            if stored is not None:
                return stored
        lock = self._tx_locks.setdefault((command.value, transaction), asyncio.Lock()) if dedup else None
        async with lock or contextlib.nullcontext():
            if dedup:
                stored = await self.results.command_result(command.value, transaction)
                if stored is not None:
                    return stored
            try:
                data = await self.handlers[command](request)
                body = Response.ok(data, transaction).model_dump_json()
            except JellybitError as exc:
                body = Response.fail(exc.code, exc.message, transaction).model_dump_json()
            except Exception:
                log.exception("command failed", extra={"command": command.value})
                body = Response.fail("internal_error", "the worker failed to run this command; see its log",
                                     transaction).model_dump_json()
            if dedup:
                await self.results.save_command_result(command.value, transaction, body)
                self._tx_locks.pop((command.value, transaction), None)
        return body

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Connect, serve and reconnect with backoff until cancelled."""
        forwarder = asyncio.create_task(self._forward_updates(), name="mqtt-updates")
        try:
            await self._connection_loop()
        finally:
            forwarder.cancel()
            await asyncio.gather(forwarder, return_exceptions=True)

    async def _connection_loop(self) -> None:
        backoff = self.min_backoff
        failing = False
        will = aiomqtt.Will(self.topics.availability, AVAILABILITY_OFFLINE.encode(), qos=1, retain=True)
        options = client_options(self.config, self.config.client_id, will)
        while True:
            try:
                async with aiomqtt.Client(**options) as client:
                    await client.subscribe(self.topics.requests_wildcard, qos=1)
                    for extension in self.extensions:
                        for topic in extension.subscriptions:
                            await client.subscribe(topic, qos=1)
                    self._client = client
                    await self._publish_all()
                    await self._flush_events()
                    # Learn what the broker still retains from earlier runs and clear what is stale;
                    # no_local keeps our own publications from echoing back.
                    for wildcard in (self.topics.downloads_wildcard, self.topics.reviews_wildcard):
                        await client.subscribe(wildcard, options=SubscribeOptions(qos=1, noLocal=True))
                    log.info("MQTT connection restored" if failing else "connected to MQTT",
                             extra={"broker": self.config.url})
                    failing = False
                    backoff = self.min_backoff
                    self.connected.set()
                    await self._serve(client)
            except aiomqtt.MqttError as exc:
                if not failing:
                    log.warning("MQTT connection lost; retrying", extra={"error": str(exc)})
                    failing = True
            finally:
                self._client = None
                self.connected.clear()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)

    async def _serve(self, client: aiomqtt.Client) -> None:
        tasks: set[asyncio.Task[None]] = set()
        try:
            async for message in client.messages:
                topic = str(message.topic)
                payload = _payload_bytes(message.payload)
                if self.topics.parse_request_topic(topic) is not None:
                    coro = self.handle_request(topic, payload, message.properties)
                elif self.topics.parse_download_topic(topic) is not None:
                    if payload and topic not in self._published:
                        await self.publish(Message(topic, None))
                    continue
                else:
                    coro = self._dispatch_extension(topic, payload)
                task = asyncio.create_task(coro)
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _dispatch_extension(self, topic: str, payload: bytes) -> None:
        for extension in self.extensions:
            if any(aiomqtt.Topic(topic).matches(sub) for sub in extension.subscriptions):
                try:
                    await extension.on_message(topic, payload, self.publish)
                except aiomqtt.MqttError:
                    pass
                except Exception:
                    log.exception("extension failed on a message", extra={"topic": topic})

    async def _forward_updates(self) -> None:
        async for batch in self.state.updates():
            for message in batch:
                try:
                    await self.publish(message)
                except aiomqtt.MqttError:
                    pass  # kept for the reconnect (retained) or buffered (events)

    async def _flush_events(self) -> None:
        while self._events:
            message = self._events[0]
            await self.publish(message)
            self._events.popleft()

    async def stop(self) -> None:
        """Publish `offline` (a clean stop does not fire the Last Will)."""
        client = self._client
        if client is not None:
            try:
                await client.publish(self.topics.availability, AVAILABILITY_OFFLINE.encode(), qos=1,
                                     retain=True)
            except aiomqtt.MqttError:
                pass


def _payload_bytes(value: object) -> bytes:
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return b"" if value is None else str(value).encode()


def _peek_transaction(payload: bytes) -> str | None:
    """Best effort: the transaction of a payload that failed validation, to echo it back."""
    return _peek(payload, "transaction")


def _peek(payload: bytes, key: str) -> str | None:
    """Best effort: one string field of a JSON object payload (bounded), else None."""
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    return value[:128] if isinstance(value, str) else None
