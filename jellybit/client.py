"""An MQTT client for Jellybit's API (request/response and retained state), used by the CLI and panel.

Speaks only `jellybit.protocol`. Requests carry an MQTT 5 response topic private to this client
(`<base>/response/<broker user name>/<client id>`, readable only by that account under the shipped
ACL) and a correlation id, so concurrent clients never read each other's answers. Each answer is read
once, straight from its JSON, into the command's response model (`Response[ListPage]`, …).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import ssl
import uuid
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.config import MqttConfig
from jellybit.core.backoff import ReconnectPacer
from jellybit.protocol import (
    Command,
    Response,
    Topics,
    private_response_topic,
    response_model,
    response_prefix,
)

__all__ = ["BrokerUnavailable", "JellybitClient", "NoAnswer", "ReconnectPacer", "client_options"]


class NoAnswer(Exception):
    """The worker did not answer in time (offline, or the broker is unreachable)."""


class BrokerUnavailable(NoAnswer):
    """The broker could not be reached at all."""


class _PahoLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """paho's own log lines at most as warnings: its socket errors while a broker goes away are
    expected (every client here reconnects and says so itself). aiomqtt's `exception` calls, which
    carry a traceback, keep their level."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        """Log, an error without a traceback as a warning."""
        if not kwargs.get("exc_info"):
            level = min(level, logging.WARNING)
        super().log(level, msg, *args, **kwargs)


PAHO_LOG = _PahoLog(logging.getLogger("mqtt"), {})


def client_options(config: MqttConfig, identifier: str, will: aiomqtt.Will | None = None) -> dict[str, Any]:
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
        "logger": PAHO_LOG,
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


class JellybitClient:
    """`async with JellybitClient(config) as client: await client.request(Command.LIST, {})`."""

    def __init__(self, config: MqttConfig, *, name: str = "client") -> None:
        self.config = config
        self.topics = Topics(config.base_topic, config.discovery_prefix)
        self.identifier = f"jellybit-{name}-{uuid.uuid4().hex[:12]}"
        # Under the response prefix (the worker answers nowhere else), in this account's own part of
        # it: the shipped ACL lets no other account read `<base>/response/<user name>/…`.
        prefix = response_prefix(config.base_topic, config.response_prefix)
        self.response_topic = private_response_topic(prefix, config.username, self.identifier)
        self._client: aiomqtt.Client | None = None
        self._waiting: dict[bytes, tuple[asyncio.Future[Response[Any]], type[Response[Any]]]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._watchers: list[tuple[tuple[str, ...], asyncio.Queue[tuple[str, bytes, bool]]]] = []

    async def __aenter__(self) -> JellybitClient:
        client = aiomqtt.Client(**client_options(self.config, self.identifier))
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as exc:
            raise BrokerUnavailable(f"cannot reach the MQTT broker at {self.config.url}: {exc}") from exc
        self._client = client
        await client.subscribe(self.response_topic, qos=1)
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
                await self._reader
        if self._client is not None:
            with contextlib.suppress(aiomqtt.MqttError):
                await self._client.__aexit__(None, None, None)
            self._client = None

    async def _read(self) -> None:
        assert self._client is not None
        async for message in self._client.messages:
            topic = str(message.topic)
            payload = message.payload if isinstance(message.payload, bytes) else b""
            if topic == self.response_topic:
                correlation = getattr(message.properties, "CorrelationData", None)
                waiting = self._waiting.pop(bytes(correlation), None) if correlation else None
                if waiting is not None and not waiting[0].done():
                    future, model = waiting
                    try:
                        future.set_result(model.model_validate_json(payload))
                    except ValueError as exc:
                        future.set_exception(NoAnswer(f"unreadable response: {exc}"))
                continue
            for filters, queue in self._watchers:
                if any(message.topic.matches(f) for f in filters):
                    queue.put_nowait((topic, payload, bool(message.retain)))

    async def request(self, command: Command | str, payload: dict[str, Any] | str | bytes,
                      *, timeout: float = 10.0) -> Response[Any]:  # noqa: ASYNC109
        """Send one request and wait for its response, its `data` read into the command's model.

        Raises NoAnswer on timeout, or when the answer does not match the protocol.
        """
        if self._client is None:
            raise RuntimeError("client is not connected")
        if not self.connected:
            raise NoAnswer(f"lost the MQTT connection to {self.config.url}")
        body = payload if isinstance(payload, bytes) else (
            payload.encode("utf-8") if isinstance(payload, str)
            else json.dumps(payload, ensure_ascii=False).encode("utf-8"))
        correlation = uuid.uuid4().bytes
        properties = Properties(PacketTypes.PUBLISH)
        properties.ResponseTopic = self.response_topic
        properties.CorrelationData = correlation
        future: asyncio.Future[Response[Any]] = asyncio.get_running_loop().create_future()
        known = command in Command.__members__.values()
        self._waiting[correlation] = (future, response_model(Command(command)) if known else Response)
        try:
            # One deadline for both: a QoS 1 publish on a dead connection waits for its PUBACK.
            async with asyncio.timeout(timeout):
                await self._client.publish(self.topics.request(command), body, qos=1, properties=properties)
                return await future
        except TimeoutError as exc:
            raise NoAnswer(f"no answer from the Jellybit worker within {timeout:g} s "
                           "(is it running and connected to the broker?)") from exc
        except aiomqtt.MqttError as exc:
            raise NoAnswer(f"lost the MQTT connection: {exc}") from exc
        finally:
            self._waiting.pop(correlation, None)

    @property
    def connected(self) -> bool:
        """Tell whether the broker connection is up (the reader has not stopped)."""
        return self._reader is not None and not self._reader.done()

    async def wait_closed(self) -> None:
        """Return once the broker connection is lost (for a reconnect loop); never raises."""
        if self._reader is not None:
            await asyncio.wait({self._reader})
            if not self._reader.cancelled():
                self._reader.exception()  # retrieved here: the caller reconnects, nothing to log

    async def watch(self, *topics: str) -> AsyncIterator[tuple[str, bytes, bool]]:
        """Subscribe to topics and yield (topic, payload, retained) until the caller stops."""
        if self._client is None:
            raise RuntimeError("client is not connected")
        queue: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue()
        watcher = (topics, queue)
        self._watchers.append(watcher)
        try:
            for topic in topics:
                await self._client.subscribe(topic, qos=1)
            while True:
                yield await queue.get()
        finally:
            self._watchers.remove(watcher)
