"""Requests on the bus: where the answer may go, what it says, and which answers are remembered.

Every request gets an answer on a topic under the response prefix (`<base>/response/` unless
configured), or — when even that is impossible — a log line saying why. An MQTT 5 response
topic outside the prefix (or with wildcards) is refused: the worker publishes only where its
contract says, whatever a requester asks. Answers of state-changing commands with a
`transaction` are stored only when final; a transient failure (an unreachable adapter, a busy
worker) is not, so a retry with the same transaction runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from pydantic_core import PydanticSerializationError

from jellybit.config import MqttConfig
from jellybit.errors import JellybitError
from jellybit.protocol import READ_ONLY_COMMANDS, Command, Request, Response, Topics, parse_request
from jellybit.protocol import response_prefix as protocol_response_prefix

log = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Any]]
MAX_TOPIC_BYTES = 512           # a response topic longer than this is not a client's private topic
MAX_CORRELATION_BYTES = 1024
LOGGED_CHARS = 120


class ResultStore(Protocol):
    """Where responses are kept for transaction de-duplication (the SQLite store)."""

    async def command_result(self, command: str, transaction_id: str) -> str | None:
        """Return a stored response."""

    async def save_command_result(self, command: str, transaction_id: str, response: str) -> bool:
        """Store a response."""


@dataclass(frozen=True)
class Route:
    """Where one request's answer goes; `refused` says why the requested topic was not used."""

    topic: str
    correlation: bytes | None = None
    refused: str | None = None
    asked: str | None = None    # the response topic the request named (kept for the log)
    key: str = ""               # the queue this request waits in (one per client or per topic)


class Body:
    """A payload handed down by reference: the request path takes the bytes out once it reads them,
    so no caller keeps a megabytes-large upload alive while its `.torrent` is being read."""

    __slots__ = ("_data",)

    def __init__(self, data: bytes) -> None:
        self._data = data

    def take(self) -> bytes:
        """The bytes, once; afterwards the body is empty."""
        data, self._data = self._data, b""
        return data


def _bytes(payload: bytes | Body) -> bytes:
    """The bytes of a payload that is only looked at (a body not yet taken looks empty)."""
    return payload if isinstance(payload, bytes) else b""


@dataclass(frozen=True)
class Reply:
    """One answer ready to publish."""

    topic: str
    body: bytes
    correlation: bytes | None = None


def response_prefix(config: MqttConfig) -> str:
    """The topic prefix every response must start with (`<base>/response/` by default)."""
    return protocol_response_prefix(config.base_topic, config.response_prefix)


def topic_problem(topic: object, prefix: str) -> str | None:
    """Why a requested response topic may not be used (None = it may)."""
    if not isinstance(topic, str) or not topic:
        return "it is empty"
    if any(c in topic for c in "+#\0"):
        return "it contains a wildcard or NUL"
    if len(topic.encode("utf-8", "surrogatepass")) > MAX_TOPIC_BYTES:
        return f"it is longer than {MAX_TOPIC_BYTES} bytes"
    if not topic.startswith(prefix) or topic == prefix:
        return f"it is outside {prefix}"
    if any(0xD800 <= ord(c) <= 0xDFFF for c in topic):
        return "it is not valid UTF-8"
    return None


def shown(value: object) -> str:
    """A value safe and short enough for a log line."""
    text = repr(value)
    return text if len(text) <= LOGGED_CHARS else text[: LOGGED_CHARS - 1] + "…"


def is_final(response: Response, error: BaseException | None) -> bool:
    """Tell whether a response may be remembered for its transaction (not a transient failure)."""
    if response.status == "ok":
        return True
    if error is None or not isinstance(error, JellybitError):
        return False                     # internal errors are not an outcome: a retry may work
    return not error.transient


class Requests:
    """Turns one request message into one reply, honouring only response topics under the prefix."""

    def __init__(self, config: MqttConfig, handlers: Mapping[Command, Handler], results: ResultStore) -> None:
        self.config = config
        self.topics = Topics(config.base_topic, config.discovery_prefix)
        self.prefix = response_prefix(config)
        self.handlers = dict(handlers)
        self.results = results
        self._tx_locks: dict[tuple[str, str], tuple[asyncio.Lock, int]] = {}

    # ------------------------------------------------------------ routing

    def route(self, topic: str, properties: object | None) -> Route:
        """Where the answer to a request on `topic` goes (MQTT 5 properties honoured when allowed)."""
        name = self.topics.parse_request_topic(topic) or "unknown"
        default = f"{self.prefix}{name}"        # <base>/response/<command> unless configured
        wanted = getattr(properties, "ResponseTopic", None) if properties is not None else None
        correlation = getattr(properties, "CorrelationData", None) if properties is not None else None
        if not isinstance(correlation, bytes | bytearray) or len(correlation) > MAX_CORRELATION_BYTES:
            correlation = None
        else:
            correlation = bytes(correlation)
        if wanted is None:
            return Route(default, correlation, key=f"topic:{default}")
        problem = topic_problem(wanted, self.prefix)
        if problem is not None:
            return Route(default, correlation, refused=problem, asked=str(wanted), key=f"topic:{default}")
        return Route(wanted, correlation, key=f"client:{wanted}")

    def refusal(self, route: Route, code: str, message: str, payload: bytes = b"") -> Reply:
        """An error reply that needs no handler (busy, a refused response topic, a retained request)."""
        body = _failed(Response.fail(code, message, _peek_transaction(payload)))
        return Reply(route.topic, body, route.correlation)

    # ------------------------------------------------------------ answering

    async def answer(self, topic: str, payload: bytes | Body, route: Route) -> Reply:
        """Run the request (unless its response topic was refused) and build the reply."""
        name = self.topics.parse_request_topic(topic) or ""
        if route.refused is not None:
            log.warning("refused a request: its response topic is not allowed (%s)", route.refused,
                        extra={"command": name[:64], "response_topic": shown(route.asked)})
            return self.refusal(route, "invalid_response_topic",
                                f"the response topic is not allowed: {route.refused}", _bytes(payload))
        return Reply(route.topic, await self.respond_bytes(name, payload), route.correlation)

    async def respond(self, name: str, payload: bytes) -> str:
        """The response JSON for a command name and payload; never raises."""
        return (await self.respond_bytes(name, payload)).decode("utf-8")

    async def respond_bytes(self, name: str, body: bytes | Body) -> bytes:
        """`respond` as the UTF-8 bytes that are published (a 33 KB page is not decoded and encoded again)."""
        payload = body.take() if isinstance(body, Body) else body
        del body
        try:
            command = Command(name)
        except ValueError:
            return _failed(Response.fail("unknown_command", self._unknown(name), _peek_transaction(payload)))
        if len(payload) > self.config.max_payload_bytes:
            return _failed(Response.fail(
                "payload_too_large",
                f"payload of {len(payload)} bytes is over the {self.config.max_payload_bytes}-byte limit",
                _peek_transaction(payload),
            ))
        try:
            request = parse_request(command, payload)
        except (ValueError, UnicodeDecodeError) as exc:
            return _failed(Response.fail("invalid_argument", str(exc), _peek_transaction(payload)))
        del payload     # read: a body's bytes are let go before the command runs
        transaction = request.transaction
        if transaction is None or command in READ_ONLY_COMMANDS:
            body, _final = await self._run(command, request)
            return body
        key = (command.value, transaction)
        lock, users = self._tx_locks.get(key, (asyncio.Lock(), 0))
        self._tx_locks[key] = (lock, users + 1)
        try:
            async with lock:
                stored = await self.results.command_result(command.value, transaction)
                if stored is not None:
                    return stored.encode("utf-8")
                body, final = await self._run(command, request)
                if final:
                    await self.results.save_command_result(command.value, transaction, body.decode("utf-8"))
                return body
        finally:
            lock, users = self._tx_locks[key]
            if users <= 1:
                del self._tx_locks[key]
            else:
                self._tx_locks[key] = (lock, users - 1)

    def _unknown(self, name: str) -> str:
        """Why a request topic names no command, in words."""
        where = f"publish to {self.topics.request('<command>')}, one of: {', '.join(Command)}"
        if not name:
            return f"the request topic names no command; {where}"
        if "/" in name:
            return f"commands are one topic level ({name[:64]!r} has more); {where}"
        return f"unknown command {name[:64]!r}; {where}"

    async def _run(self, command: Command, request: Request) -> tuple[bytes, bool]:
        transaction = request.transaction
        error: BaseException | None = None
        try:
            response = Response.ok(await self.handlers[command](request), transaction)
        except JellybitError as exc:
            error = exc
            response = Response.fail(exc.code, exc.message, transaction)
        except Exception as exc:
            error = exc
            log.exception("command failed", extra={"command": command.value})
            response = Response.fail("internal_error", "the worker failed to run this command; see its log",
                                     transaction)
        try:
            body = response_json(response)
        except Exception:  # a handler returned something JSON cannot carry
            log.exception("could not encode a response", extra={"command": command.value})
            body = _failed(Response.fail(
                "internal_error", "the worker could not encode its answer; see its log", transaction))
            return body, False
        return body, is_final(response, error)


def _failed(response: Response[Any]) -> bytes:
    try:
        return response.model_dump_json().encode("utf-8")
    except PydanticSerializationError:     # text that is not valid Unicode (a lone surrogate)
        return safe_json(response.model_dump(mode="json"))


_SURROGATE = re.compile("[\ud800-\udfff]")


def safe_json(data: Any) -> bytes:
    """Compact UTF-8 JSON of any text: a lone surrogate (which UTF-8 cannot carry) becomes U+FFFD.

    Escaping it as `\\ud800` would be valid JSON too, but strict readers (pydantic's among them,
    so the panel's) refuse such escapes; the replacement character reads everywhere.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def response_json(response: Response[Any]) -> bytes:
    """A response as JSON: what `model_dump_json()` writes, a successful one's plain data encoded by orjson.

    Handlers return JSON-ready data (`payloads.py`), so serializing it through the envelope's untyped
    `data` only made pydantic infer every value's type again: a `list` page's 33 KB took 0.12 ms, orjson
    0.03 ms. The bytes are the same (tests/transports/mqtt/test_requests.py); data orjson refuses (a
    model, an integer over 64 bits) goes through pydantic as before.
    """
    if response.status == "ok" and response.error is None:
        with contextlib.suppress(TypeError):
            return orjson.dumps({"transaction": response.transaction, "status": "ok", "data": response.data,
                                 "error": None})
    return _failed(response)


def _peek_transaction(payload: bytes) -> str | None:
    """Best effort: the transaction of a payload that failed validation, to echo it back."""
    return peek(payload, "transaction")


def peek(payload: bytes, key: str) -> str | None:
    """Best effort: one string field of a JSON object payload (bounded), else None."""
    if not payload or len(payload) > 1_000_000:
        return None
    with contextlib.suppress(ValueError, UnicodeDecodeError, RecursionError):
        data = json.loads(payload)
        value = data.get(key) if isinstance(data, dict) else None
        return value[:128] if isinstance(value, str) else None
    return None
