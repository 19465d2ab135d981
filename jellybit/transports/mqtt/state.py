"""The state the worker publishes over MQTT: `EngineState` turns the event bus into retained topics
(`info`, `summary`, one per download) and the `events` stream.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from datetime import timedelta

from jellybit import __version__, clock
from jellybit.config import Config
from jellybit.core.models import Download
from jellybit.core.providers import searched
from jellybit.core.states import ACTIVE_STATES, SETTLED_STATES, State
from jellybit.engine.commands import Commands
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.results import DownloadView
from jellybit.engine.supervisor import ComponentHealth
from jellybit.protocol import (
    MAX_LIST_LIMIT,
    ComponentStatus,
    InfoPayload,
    ReconcileStatus,
    SystemStatus,
    Topics,
)
from jellybit.protocol import (
    EventType as WireEventType,
)
from jellybit.transports import service_health as health
from jellybit.transports.mqtt.bridge import Message, encode
from jellybit.transports.payloads import (
    download_row,
    event_payload,
    review_payload,
    summary_payload,
)

log = logging.getLogger(__name__)

WIRE_EVENTS = frozenset(e.value for e in WireEventType)
PAGE = MAX_LIST_LIMIT    # the biggest page `list` takes
QUEUE_SHOWN = 20         # reviews listed in `summary` (HA records attributes only up to 16 KiB)
UNKNOWN_RECHECK = 0.5    # seconds between `info` refreshes while qBittorrent's status is not known yet


class EngineState:
    """Retained state and events from the engine; settled downloads expire after the retention window."""

    def __init__(self, commands: Commands, bus: EventBus, config: Config, *,
                 started_at: str | None = None, statuses: Mapping[str, Callable[[], Awaitable[SystemStatus]]]
                 | None = None, sweep_interval: float = 60.0, info_interval: float = 15.0,
                 probe_interval: float = 300.0,
                 components: Callable[[], Mapping[str, ComponentHealth]] | None = None,
                 live: Mapping[str, Callable[[], SystemStatus]] | None = None) -> None:
        self.commands = commands
        self.bus = bus
        self.config = config
        self.topics = Topics(config.mqtt.base_topic, config.mqtt.discovery_prefix)
        self.started_at = started_at or clock.now()
        self.statuses = dict(statuses or {})
        self.components = components
        self.live = dict(live or {})        # statuses known locally (the bot's), read on every refresh
        self.sweep_interval = sweep_interval
        self.info_interval = info_interval
        self.retention = timedelta(hours=config.mqtt.retention_hours)
        self.probe_interval = probe_interval
        self._probed: dict[str, tuple[float, SystemStatus]] = {}
        self._retained: dict[str, str | None] = {}   # download id -> settled_at (None = active)
        self._reviews: set[str] = set()

    # ------------------------------------------------------------ messages

    async def info(self) -> Message:
        """The `info` message (qBittorrent as the worker sees it; outside systems by their pings)."""
        status = await self.commands.status()
        qbt = status.qbittorrent
        payload = InfoPayload(
            version=__version__, started_at=self.started_at, panel_url=self.config.panel.base_url,
            qbittorrent=health.qbittorrent_status(self.config, qbt.reachable, qbt.error, qbt.version),
            llm=health.llm_status(self.config, ok=None, message=""),
            metadata={name: health.provider_status(self.config, name, None)
                      for name in searched()},
            jellyfin=health.jellyfin_status(self.config, None),
            telegram=health.telegram_status(self.config, running=False, error=None, refused=False),
            components={name: ComponentStatus(running=h.running, restarts=h.restarts, error=h.error,
                                              failed_at=h.failed_at, code=h.code)
                         for name, h in sorted((self.components() if self.components else {}).items())},
        )
        if status.reconcile is not None:
            payload.reconcile = ReconcileStatus(**dataclasses.asdict(status.reconcile))
        for key in self.statuses:
            result = await self._probe(key)
            if key.startswith("metadata."):
                payload.metadata[key.split(".", 1)[1]] = result
            else:
                setattr(payload, key, result)
        for key, read in self.live.items():
            setattr(payload, key, read())
        return Message(self.topics.info, encode(payload))

    async def _probe(self, key: str) -> SystemStatus:
        # Outside services (TMDB, an LLM server) are asked rarely, not on every info refresh.
        now = asyncio.get_running_loop().time()
        cached = self._probed.get(key)
        if cached is not None and now - cached[0] < self.probe_interval:
            return cached[1]
        try:
            result = await self.statuses[key]()
        except Exception as exc:  # a status probe must never break publishing
            result = SystemStatus(enabled=True, connected=False, detail=str(exc)[:200])
        self._probed[key] = (now, result)
        return result

    async def summary(self) -> Message:
        """The `summary` message: counts, the last download laid out, and who waits for a human."""
        summary = await self.commands.summary(waiting=QUEUE_SHOWN)
        return Message(self.topics.summary, encode(summary_payload(
            summary, summary.last_done, list(summary.waiting), self.config.panel.base_url)))

    def _expired(self, download: Download) -> bool:
        if download.state in ACTIVE_STATES or not download.settled_at:
            return False
        return clock.parse_time(download.settled_at) < clock.utcnow() - self.retention

    async def download_messages(self, download: Download) -> list[Message]:
        """The retained download topic and the review topic (set, or cleared when not in review)."""
        view = await self.commands.view(download.id)
        return self._view_messages(view or DownloadView(download, None))

    def _view_messages(self, view: DownloadView) -> list[Message]:
        download, recognition = view.download, view.recognition
        messages: list[Message] = []
        if self._expired(download):
            self._retained.pop(download.id, None)
            messages.append(Message(self.topics.download(download.id), None))
        else:
            self._retained[download.id] = download.settled_at
            messages.append(Message(self.topics.download(download.id),
                                    encode(download_row(download, recognition))))
        if download.state is State.REVIEW:
            self._reviews.add(download.id)
            messages.append(Message(self.topics.review(download.id), encode(review_payload(
                download, recognition, list(view.hints), view.review_requested_at))))
        elif download.id in self._reviews:
            self._reviews.discard(download.id)
            messages.append(Message(self.topics.review(download.id), None))
        return messages

    async def snapshot(self) -> list[Message]:
        """Everything retained: info, summary, live downloads and their reviews."""
        messages = [await self.info(), await self.summary()]
        self._reviews.clear()
        for states in (ACTIVE_STATES, SETTLED_STATES):
            after = None
            while True:
                page = await self.commands.list(states=[s.value for s in states], limit=PAGE, after=after)
                for download in page.items:
                    if self._expired(download):
                        continue
                    if download.state is State.REVIEW:      # its review topic needs the whole plan
                        messages.extend(await self.download_messages(download))
                    else:
                        messages.extend(self._view_messages(DownloadView(download,
                                                                         page.headlines.get(download.id))))
                after = page.items[-1].id if page.items else None
                if len(page.items) < PAGE or (states is SETTLED_STATES and page.items and self._expired(
                        page.items[-1])):
                    break
        return messages

    async def _on_event(self, event: Event) -> list[Message]:
        messages: list[Message] = []
        if event.event_type is EventKind.FAULT:          # about the worker itself, not a download
            return [Message(self.topics.events, encode(event_payload(event).wire()), retain=False),
                    await self.info()]
        view = await self.commands.view(event.download_id)
        if view is None:
            return messages
        messages.extend(self._view_messages(view))
        if event.event_type is not EventKind.PROGRESS:
            messages.append(await self.summary())
        if event.event_type.value in WIRE_EVENTS:
            # The view's recognition is complete in review (a review request names its candidate);
            # elsewhere the event shows only the headline's title, year and poster.
            wire = event_payload(event, view.recognition, self.config.panel.base_url).wire()
            messages.append(Message(self.topics.events, encode(wire), retain=False))
        return messages

    async def _sweep(self) -> list[Message]:
        """Clear settled downloads past the retention window; refresh info (published on change)."""
        messages = [await self.info()]
        cutoff = clock.utcnow() - self.retention
        for download_id, settled_at in list(self._retained.items()):
            if settled_at and clock.parse_time(settled_at) < cutoff:
                self._retained.pop(download_id, None)
                messages.append(Message(self.topics.download(download_id), None))
        return messages

    def _next_interval(self) -> float:
        # Until the first poll says whether qBittorrent answers, look again soon: "not known yet" must
        # not stand for minutes (Home Assistant shows it as unknown, never as disconnected).
        regular = min(self.sweep_interval, self.info_interval)
        return min(regular, UNKNOWN_RECHECK) if self.commands.qbittorrent_reachable() is None else regular

    async def updates(self) -> AsyncIterator[list[Message]]:
        """Batches to publish as the engine changes, plus a periodic sweep."""
        subscription = self.bus.subscribe()
        loop = asyncio.get_running_loop()
        next_sweep = loop.time() + self._next_interval()
        sweep_failing = False
        try:
            while True:
                timeout = max(0.0, next_sweep - loop.time())
                try:
                    # asyncio.timeout, not wait_for: Python 3.11's wait_for can swallow a cancellation
                    # that arrives with an event, and the bridge would then never stop
                    async with asyncio.timeout(timeout):
                        event = await subscription.get()
                except TimeoutError:
                    next_sweep = loop.time() + self._next_interval()
                    try:
                        swept = await self._sweep()
                    except Exception as exc:    # the database is locked or gone: try at the next sweep
                        if not sweep_failing:
                            log.error("could not refresh the retained state", exc_info=exc)
                        sweep_failing = True
                        continue
                    if sweep_failing:
                        log.info("the retained state refreshes again")
                        sweep_failing = False
                    yield swept
                    continue
                except StopAsyncIteration:
                    return
                try:
                    batch = await self._on_event(event)
                except Exception:
                    log.exception("could not build MQTT state for an event",
                                  extra={"download_id": event.download_id})
                    continue
                if batch:
                    yield batch
        finally:
            subscription.close()
