"""The panel's one MQTT connection: a live view of the retained topics, and request/response.

One `Live` per panel process (not per browser tab). It reconnects (soon after a drop, less often as
an outage goes on: the client's `ReconnectPacer`), keeps the retained state in memory, and bumps
`revision` on every change so pages re-render with a timer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from jellybit.client import BrokerUnavailable, JellybitClient, NoAnswer, ReconnectPacer
from jellybit.config import Config
from jellybit.protocol import (
    AVAILABILITY_ONLINE,
    Command,
    DownloadPayload,
    EventPayload,
    InfoPayload,
    ReviewPayload,
    SummaryPayload,
    Topics,
)

log = logging.getLogger(__name__)

# How long after (re)connecting a missing availability message still means "we do not know yet".
SYNC_GRACE = 1.5


class RequestFailed(Exception):
    """A command failed: an error response, no answer, or no broker. `message` is for a human."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Health:
    """What the offline banner says: `level` is ok | connecting | worker_offline | broker_down."""

    level: str
    message: str

    @property
    def ok(self) -> bool:
        """Tell whether the worker can be asked for something right now."""
        return self.level == "ok"


class Live:
    """Retained state of one Jellybit worker, kept current over one reconnecting MQTT client."""

    def __init__(self, config: Config, *, min_backoff: float = 0.1, max_backoff: float = 10.0) -> None:
        self.config = config
        self.topics = Topics(config.mqtt.base_topic, config.mqtt.discovery_prefix)
        self.request_timeout = config.panel.request_timeout
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.pacer = ReconnectPacer(first=min_backoff, longest=max_backoff)
        self.client: JellybitClient | None = None
        self.broker_error: str | None = None
        self.connected_at: float | None = None
        self.availability: str | None = None
        self.info: InfoPayload | None = None
        self.summary: SummaryPayload | None = None
        self.downloads: dict[str, DownloadPayload] = {}
        self.reviews: dict[str, ReviewPayload] = {}
        self.events: deque[EventPayload] = deque(maxlen=100)
        self.revision = 0
        self._download_revisions: dict[str, int] = {}
        self._task: asyncio.Task[None] | None = None
        self._started = time.monotonic()

    # ------------------------------------------------------------ what pages read

    def health(self) -> Health:
        """The connection state in one sentence for the banner."""
        if self.client is None:
            if self.broker_error is None and time.monotonic() - self._started < SYNC_GRACE:
                return Health("connecting", "Connecting to the MQTT broker…")
            detail = f" ({self.broker_error})" if self.broker_error else ""
            return Health("broker_down", f"The MQTT broker at {self.config.mqtt.url} is unreachable"
                                         f"{detail}. Showing the last known state; retrying…")
        if self.availability == AVAILABILITY_ONLINE:
            return Health("ok", "The worker is online.")
        if self.availability is None and self.connected_at is not None \
                and time.monotonic() - self.connected_at < SYNC_GRACE:
            return Health("connecting", "Waiting for the worker's state…")
        if self.availability is None:
            return Health("worker_offline", "The Jellybit worker has never connected to the broker. "
                                            "Start it with `jellybit run`.")
        return Health("worker_offline", "The Jellybit worker is offline. Commands will not be "
                                        "answered until it is back.")

    async def settled(self, within: float = SYNC_GRACE + 0.5) -> Health:
        """Wait (briefly) until the connection state is known, then return it."""
        for _ in range(max(1, int(within / 0.05))):
            if self.health().level != "connecting":
                break
            await asyncio.sleep(0.05)
        return self.health()

    def download_revision(self, download_id: str) -> int:
        """A counter that changes whenever this download's retained state changes."""
        return self._download_revisions.get(download_id, 0)

    # ------------------------------------------------------------ requests

    async def request(self, command: Command, payload: dict[str, Any] | None = None,
                      *, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        """Send one command and return its `data`; raise RequestFailed with a message for a human."""
        client = self.client
        if client is None or not client.connected:
            raise RequestFailed("broker_unavailable", f"Not connected to the MQTT broker at "
                                                      f"{self.config.mqtt.url}; try again when it is back.")
        try:
            response = await client.request(command, payload or {}, timeout=timeout or self.request_timeout)
        except NoAnswer as exc:
            raise RequestFailed("no_answer", str(exc)) from exc
        if response.status == "error":
            error = response.error
            code = error.code if error else "error"
            raise RequestFailed(code, error.message if error else "the worker reported an error")
        return response.data

    # ------------------------------------------------------------ the loop

    def start(self) -> None:
        """Start the connection loop in the running event loop (NiceGUI's startup hook)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name="panel-mqtt")

    async def stop(self) -> None:
        """Stop the connection loop and disconnect."""
        task, self._task = self._task, None
        if task is not None:
            await _cancel(task)     # repeated: a cancellation lost inside aiomqtt would hang the shutdown

    async def run(self) -> None:
        """Connect, follow the retained topics, reconnect with backoff until cancelled."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                async with JellybitClient(self.config.mqtt, name="panel") as client:
                    self.pacer.up(loop.time())
                    await self._follow(client)
            except BrokerUnavailable as exc:
                if self.broker_error is None:
                    log.warning("MQTT broker unreachable; retrying", extra={"error": str(exc)})
                self.broker_error = _short(exc)
            except asyncio.CancelledError:
                self.client = None
                raise
            finally:
                if self.client is not None:
                    log.warning("MQTT connection lost; reconnecting")
                    self.broker_error = self.broker_error or "connection lost"
                self.client = None
                self.connected_at = None
                self._bump()
            self.pacer.down(loop.time())
            await asyncio.sleep(self.pacer.delay(loop.time()))

    async def _follow(self, client: JellybitClient) -> None:
        t = self.topics
        # What the broker retains now replaces what we knew: start clean on every connect.
        self.availability = None
        self.downloads.clear()
        self.reviews.clear()
        consumer = asyncio.create_task(self._consume(client.watch(
            t.availability, t.info, t.summary, t.downloads_wildcard, t.reviews_wildcard, t.events)))
        try:
            if self.broker_error is not None:
                log.info("MQTT connection restored")
            self.client = client
            self.broker_error = None
            self.connected_at = time.monotonic()
            self._bump()
            closed = asyncio.create_task(client.wait_closed())
            await asyncio.wait({consumer, closed}, return_when=asyncio.FIRST_COMPLETED)
            closed.cancel()
            if consumer.done() and not consumer.cancelled() and consumer.exception() is not None:
                log.warning("MQTT subscription failed", extra={"error": str(consumer.exception())})
        finally:
            await _cancel(consumer)

    async def _consume(self, messages: Any) -> None:
        async for topic, payload, _retained in messages:
            self.apply(topic, payload)

    # ------------------------------------------------------------ applying messages

    def apply(self, topic: str, payload: bytes) -> None:
        """Fold one message into the view (an empty payload clears a retained topic)."""
        t = self.topics
        try:
            if topic == t.availability:
                self.availability = payload.decode("utf-8", errors="replace").strip() or None
            elif topic == t.info:
                self.info = _parse(InfoPayload, payload)
            elif topic == t.summary:
                self.summary = _parse(SummaryPayload, payload)
            elif topic == t.events:
                if payload:
                    self.events.appendleft(EventPayload.model_validate_json(payload))
            elif topic.startswith(f"{t.base}/downloads/"):
                self._set(self.downloads, topic, DownloadPayload, payload)
            elif topic.startswith(f"{t.base}/reviews/"):
                self._set(self.reviews, topic, ReviewPayload, payload)
            else:
                return
        except (ValidationError, ValueError) as exc:
            log.warning("ignored an unreadable message", extra={"topic": topic, "error": str(exc)[:300]})
            return
        self._bump()

    def _set(self, table: dict[str, Any], topic: str, model: type[BaseModel], payload: bytes) -> None:
        download_id = self.topics.parse_download_topic(topic)
        if download_id is None:
            return
        if payload:
            table[download_id] = model.model_validate_json(payload)
        else:
            table.pop(download_id, None)
        self._download_revisions[download_id] = self._download_revisions.get(download_id, 0) + 1

    def _bump(self) -> None:
        self.revision += 1


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel a task and wait for it to end, repeating the cancel if it was swallowed.

    Python 3.11's `asyncio.wait_for` (inside aiomqtt's subscribe) can lose a cancellation that
    arrives just as its future completes; the task would then wait forever.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=0.2)
    if not task.cancelled():
        task.exception()  # retrieved: the reconnect loop handles it


def _parse(model: type[Any], payload: bytes) -> Any:
    return model.model_validate_json(payload) if payload else None


def _short(exc: BaseException) -> str:
    text = str(exc.__cause__ or exc)
    return text if len(text) <= 160 else text[:157] + "…"
