"""The MQTT bridge: retained state, the event stream, and request/response over aiomqtt 2.x.

Thin by design: a request becomes a call on the command handlers, the result becomes a response.
Requests wait in a bounded, fair queue (`request_queue.py`) and are answered only under the
response prefix (`requests.py`); a retained request is refused and cleared. The state it
publishes comes from a `StateSource`; it publishes on change only and re-publishes everything
after every reconnect, in case the broker lost retained messages. A lost broker is tried again
soon, then less often as the outage goes on (`core/backoff.py`'s `ReconnectPacer`).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.subscribeoptions import SubscribeOptions

from jellybit.client import client_options
from jellybit.config import MqttConfig
from jellybit.core.backoff import ReconnectPacer
from jellybit.protocol import AVAILABILITY_OFFLINE, AVAILABILITY_ONLINE, Command, Topics
from jellybit.transports.base import Supervise
from jellybit.transports.mqtt.failures import failure_event
from jellybit.transports.mqtt.request_queue import RequestQueue
from jellybit.transports.mqtt.requests import (
    Body,
    Handler,
    Reply,
    Requests,
    ResultStore,
    Route,
    peek,
    safe_json,
    shown,
)
from jellybit.transports.mqtt.uploads import Dropped, Uploads, admitting_queue

log = logging.getLogger(__name__)

MQTT, MQTT_UPDATES = "mqtt", "mqtt-updates"       # the supervised loops (`info.components` names them)
REQUEST_WORKERS = 4
BUSY_LOG_INTERVAL = 10.0


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
    """Serialize a payload as compact UTF-8 JSON (a lone surrogate from a request becomes U+FFFD)."""
    if hasattr(data, "model_dump"):
        data = data.model_dump(mode="json", by_alias=True)
    return safe_json(data)


class MqttBridge:
    """Runs the connection loop; serves requests; publishes state, events and availability.

    A `Transport`: `start` hands the connection (`mqtt`) and the forwarder (`mqtt-updates`) to the
    supervisor, `stop` publishes `offline`.
    """

    name = MQTT

    def __init__(
        self,
        config: MqttConfig,
        *,
        handlers: Mapping[Command, Handler],
        state: StateSource,
        results: ResultStore,
        extensions: tuple[Extension, ...] = (),
        min_backoff: float = 0.1,
        max_backoff: float = 30.0,
    ) -> None:
        self.config = config
        self.topics = Topics(config.base_topic, config.discovery_prefix)
        self.requests = Requests(config, handlers, results)
        self.queue = RequestQueue(workers=REQUEST_WORKERS, per_key=config.queue_per_client,
                                  total=config.queue_total)
        self.state = state
        self.extensions = extensions
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.pacer = ReconnectPacer(first=min_backoff, longest=max_backoff)
        self._client: aiomqtt.Client | None = None
        self._published: dict[str, bytes] = {}   # retained topic -> last payload (publish on change)
        self.connected = asyncio.Event()
        # Events that could not be sent while disconnected (bounded; oldest dropped first).
        self._events: deque[Message] = deque(maxlen=1000)
        self._busy = 0
        self._busy_logged = float("-inf")
        self.uploads = Uploads()                 # large requests: bounded as they are read
        self._replies: set[asyncio.Task[None]] = set()   # busy answers on their way

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

    async def _answer(self, topic: str, payload: bytes | Body, route: Route) -> None:
        download_id = peek(payload, "id") if isinstance(payload, bytes) else None
        try:
            reply = await self.requests.answer(topic, payload, route)
        except Exception:  # answer() handles its own errors; this keeps a bug from going unseen
            log.exception("a request could not be answered", extra={"topic": shown(topic)})
            return
        await self._send(reply)
        failure = failure_event(self.topics.parse_request_topic(topic) or "", download_id, reply.body)
        if failure is not None:
            await self.publish(Message(self.topics.events, encode(failure.wire()), retain=False))

    async def _send(self, reply: Reply) -> None:
        props = None
        if reply.correlation is not None:
            props = Properties(PacketTypes.PUBLISH)
            props.CorrelationData = reply.correlation
        client = self._client
        if client is None:
            log.warning("could not send a response: not connected", extra={"topic": shown(reply.topic)})
            return
        try:
            await client.publish(reply.topic, reply.body, qos=1, retain=False, properties=props)
        except aiomqtt.MqttError as exc:
            log.warning("could not send a response: %s", exc, extra={"topic": shown(reply.topic)})
        except Exception:  # a topic paho refuses; the route check should have caught it
            log.exception("could not send a response", extra={"topic": shown(reply.topic)})

    async def _on_request(self, topic: str, payload: bytes, properties: Properties | None,
                          retained: bool) -> None:
        """Queue a request, or answer at once: `busy` past the queue's bounds, or a retained request."""
        route = self.requests.route(topic, properties)
        if retained:
            await self._refuse_retained(topic, payload, route)
            return
        size = len(payload)
        large = self.uploads.large(size)
        job = (partial(self._answer_large, topic, Body(payload), route, size) if large
               else partial(self._answer, topic, payload, route))
        queued = self.queue.submit(route.key, job)
        self.uploads.taken(size, queued=queued)
        if not queued:
            self._refuse_busy(route, "the worker has too many requests waiting from this client; try "
                              "again in a moment", payload)

    def _admit(self, message: aiomqtt.Message) -> aiomqtt.Message | Dropped:
        """As paho reads a message: a large request past the uploads' budget is dropped right here."""
        payload = message.payload
        size = len(payload) if isinstance(payload, bytes | bytearray) else 0
        topic = str(message.topic)
        if (not self.uploads.large(size) or message.retain
                or self.topics.parse_request_topic(topic) is None or self.uploads.admit(size)):
            return message
        return Dropped(topic, message.properties, size)

    def _refuse_busy(self, route: Route, message: str, payload: bytes) -> None:
        """Answer `busy` without holding up the read loop.

        Awaiting the answer's PUBACK here would make paho read every message the broker queued
        before it first (twenty 8 MiB uploads in memory at once); the refused payload is dropped now.
        """
        self._note_busy(route.key)
        task = asyncio.create_task(self._send(self.requests.refusal(route, "busy", message, payload)))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)

    async def _answer_large(self, topic: str, body: Body, route: Route, size: int) -> None:
        """Answer a large request once no other is running."""
        await self.uploads.run(size, partial(self._answer, topic, body, route))

    def _note_busy(self, key: str) -> None:
        """Log `busy` answers once per burst (a flood would otherwise log every one of them)."""
        self._busy += 1
        now = asyncio.get_running_loop().time()
        if now - self._busy_logged >= BUSY_LOG_INTERVAL:
            log.warning("too many requests waiting; answered busy %d time(s)", self._busy,
                        extra={"queue": shown(key)})
            self._busy, self._busy_logged = 0, now

    async def _refuse_retained(self, topic: str, payload: bytes, route: Route) -> None:
        """A retained request would run again on every reconnect: clear it and never run it."""
        client = self._client
        if client is not None:
            try:
                await client.publish(topic, b"", qos=1, retain=True)
            except aiomqtt.MqttError:
                pass      # cleared on the next connection, when the broker sends it again
        if not payload:
            return        # the empty message that clears a retained one: nothing to answer
        log.warning("ignored and cleared a retained request", extra={"topic": shown(topic)})
        await self._send(self.requests.refusal(route, "retained_request", "requests must not be retained "
                                               "(it would run again on every reconnect); it was cleared, "
                                               "send it without the retain flag", payload))

    async def _respond(self, name: str, payload: bytes) -> str:
        """The response JSON for a command name and payload (the request path without MQTT)."""
        return await self.requests.respond(name, payload)

    # ------------------------------------------------------------ the loop

    async def run(self) -> None:
        """Connect, serve and reconnect with backoff until cancelled (the connection and the forwarder).

        The app supervises `connection()` and `forward()` separately; this runs both for callers
        without a supervisor, and ends with the error of whichever of them failed.
        """
        tasks = [asyncio.create_task(self.connection(), name=MQTT),
                 asyncio.create_task(self.forward(), name=MQTT_UPDATES)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def start(self, supervise: Supervise) -> None:
        """Supervise the connection and the forwarder separately (one may restart without the other)."""
        supervise(MQTT, self.connection)
        supervise(MQTT_UPDATES, self.forward)

    async def connection(self) -> None:
        """The broker connection: connect, subscribe, publish state, serve; reconnect with backoff."""
        self.queue.start()
        try:
            await self._connection_loop()
        finally:
            await self.queue.stop()

    async def forward(self) -> None:
        """Publish the engine's state changes and events as they happen."""
        await self._forward_updates()

    async def _subscribe(self, client: aiomqtt.Client) -> None:
        # Requests: retain-as-published shows a retained request as one (it is refused, never
        # run); no_local hides the empty message the worker sends to clear it.
        await client.subscribe(self.topics.requests_wildcard,
                               options=SubscribeOptions(qos=1, noLocal=True, retainAsPublished=True))
        for extension in self.extensions:
            for topic in extension.subscriptions:
                await client.subscribe(topic, qos=1)

    async def _connection_loop(self) -> None:
        loop = asyncio.get_running_loop()
        failing = False
        will = aiomqtt.Will(self.topics.availability, AVAILABILITY_OFFLINE.encode(), qos=1, retain=True)
        options = client_options(self.config, self.config.client_id, will)
        options["queue_type"] = admitting_queue(self._admit)
        while True:
            try:
                self.uploads.reconnected()
                async with aiomqtt.Client(**options) as client:
                    await self._subscribe(client)
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
                    self.pacer.up(loop.time())
                    self.connected.set()
                    await self._serve(client)
            except aiomqtt.MqttError as exc:
                if not failing:
                    log.warning("MQTT connection lost; retrying", extra={"error": str(exc)})
                    failing = True
            finally:
                self._client = None
                self.connected.clear()
            # Soon after a drop, less often as an outage goes on (a broker restart costs ~0.3 s).
            self.pacer.down(loop.time())
            await asyncio.sleep(self.pacer.delay(loop.time()))

    async def _serve(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            await self._dispatch(message)
            del message     # not kept while waiting for the next one (an upload is megabytes)

    async def _dispatch(self, message: aiomqtt.Message | Dropped) -> None:
        if isinstance(message, Dropped):
            self._refuse_busy(self.requests.route(message.topic, message.properties),
                              "the worker is reading other large requests (.torrent files) right now; "
                              "try again in a moment", b"")
            return
        topic = str(message.topic)
        payload = _payload_bytes(message.payload)
        if self.topics.parse_request_topic(topic) is not None:
            await self._on_request(topic, payload, message.properties, bool(message.retain))
        elif self.topics.parse_download_topic(topic) is not None:
            if payload and topic not in self._published:
                await self.publish(Message(topic, None))
        elif not self.queue.submit(f"ext:{topic}", partial(self._dispatch_extension, topic, payload)):
            log.warning("too many extension messages waiting; one dropped", extra={"topic": shown(topic)})

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

