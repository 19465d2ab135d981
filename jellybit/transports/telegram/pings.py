"""Pings: engine events -> a queue in SQLite -> Telegram, when Telegram can be reached.

A state event (needs review, done, failed) queues one ping per chat, keyed by the state and
the time of the transition, so the same transition never pings twice. A ping is rendered
when it is sent, from the download as it is then: one whose download has left that state
meanwhile is superseded instead of sent, and a review ping waits out a defer. Failures
reschedule with backoff (429: exactly `retry_after`, and the whole sender pauses), so no
ping is lost to an outage; a restart re-checks the transitions since the event cursor.
While the database refuses writes (a `StorageFault`: full, read-only, locked), new pings wait in
memory (at most `HELD_MAX`) and are queued, in order, once a write gets through; the cursor stays
before them, and pings beyond the bound are found again by a catch-up from that cursor. A ping that
went out but could not be marked sent is remembered with its message and recorded once a write
gets through, and not sent again meanwhile: within one process a ping goes once. (A restart
during the fault forgets it, and the still pending ping goes again: at least once, never lost.)
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Iterable
from datetime import timedelta
from functools import partial
from typing import Protocol

from telegram import Bot
from telegram.error import BadRequest, Forbidden, RetryAfter, TelegramError

from jellybit import clock
from jellybit.core.pings import PingStatus, TelegramPing
from jellybit.core.states import State
from jellybit.engine.commands import Commands
from jellybit.engine.events import Event, EventKind, Subscription
from jellybit.errors import NotFound, StorageFault
from jellybit.logs import for_download
from jellybit.protocol import DownloadDetail
from jellybit.transports.telegram import models
from jellybit.transports.telegram.render import Card, card
from jellybit.transports.telegram.send import Health, Redactor, retry_seconds, send_card

log = logging.getLogger(__name__)

KINDS: dict[EventKind, State] = {
    EventKind.REVIEW_REQUESTED: State.REVIEW, EventKind.DONE: State.DONE, EventKind.FAILED: State.FAILED,
}
JELLYFIN_PINGS = frozenset({"found", "missing", "unreachable"})   # `jellyfin` event reasons worth a ping
CURSOR = "event_cursor"
CURSOR_SLACK = timedelta(minutes=1)   # events of different downloads may arrive slightly out of order
MAX_BACKOFF = 300.0
FORBIDDEN_BACKOFF = 3600.0            # the user blocked the bot or never pressed Start
IDLE_WAKE = 60.0
ASKED = "asked:"                      # key prefix of review cards a user asked for (/review)
HELD_MAX = 256                        # pings kept in memory while the database refuses writes
HELD_RETRY = 2.0                      # seconds between tries to queue them (or record sent ones)


class PingStore(Protocol):
    """The store methods the pinger uses (adapters/store/telegram.py)."""

    async def telegram_enqueue(self, download_id: str, chat_id: int, kind: str, dedupe_key: str,
                               due_at: str | None = None) -> bool:
        """Queue a ping once per (download, chat, key)."""

    async def telegram_due_pings(self, now: str, limit: int = 50) -> list[TelegramPing]:
        """Pending pings whose time has come."""

    async def telegram_next_due(self) -> str | None:
        """When the earliest pending ping is due."""

    async def telegram_mark_sent(self, ping_id: str, message_id: int, *, has_photo: bool) -> None:
        """Record the message a ping became."""

    async def telegram_reschedule(self, ping_id: str, due_at: str, *, error: str | None = None,
                                  attempted: bool = True) -> None:
        """Keep a ping pending until a later time."""

    async def telegram_close_ping(self, ping_id: str, status: PingStatus,
                                  error: str | None = None) -> None:
        """Settle a pending ping as superseded or dropped."""

    async def telegram_supersede(self, download_id: str, chat_id: int, kind: str, *, keep: str) -> int:
        """Supersede the other pending pings of a kind."""

    async def telegram_message_ping(self, chat_id: int, message_id: int) -> TelegramPing | None:
        """The sent ping that became a message."""

    async def telegram_value(self, key: str) -> str | None:
        """A named value."""

    async def telegram_set_value(self, key: str, value: str) -> None:
        """Set a named value."""


def _later(seconds: float) -> str:
    return clock.format_time(clock.utcnow() + timedelta(seconds=seconds))


class Pinger:
    """Queues pings from engine events and sends them to the configured chats."""

    def __init__(self, bot: Bot, commands: Commands, store: PingStore, subscription: Subscription, *,
                 chats: Iterable[int], panel: str, margin: float, redact: Redactor) -> None:
        self.bot = bot
        self.commands = commands
        self.store = store
        self.subscription = subscription
        self.chats = tuple(dict.fromkeys(chats))
        self.panel = panel
        self.margin = margin
        self.redact = redact
        self.health = Health("sending", redact)
        self._wake = asyncio.Event()
        self._paused_until = 0.0
        # (download, chat, kind, dedupe key, due) of pings the database refused, oldest first
        self._held: deque[tuple[str, int, str, str, str | None]] = deque()
        self._owed = False                # pings were dropped from memory: a catch-up finds them
        # ping id -> (ping, message id, has photo): sent, but the database refused to record it
        self._unrecorded: dict[str, tuple[TelegramPing, int, bool]] = {}

    # ------------------------------------------------------------ queueing

    async def enqueue(self, download_id: str, kind: str, key: str, *, due_at: str | None = None,
                      chats: Iterable[int] | None = None) -> int:
        """Queue a ping for every chat (or the given ones); returns how many were new."""
        added = 0
        for chat in (self.chats if chats is None else chats):
            ping = (download_id, chat, kind, f"{kind}@{key}", due_at)
            if self._held:                # keep the order: behind the pings already waiting
                self._hold(ping)
                continue
            try:
                added += await self.store.telegram_enqueue(*ping)
            except StorageFault as fault:
                self._hold(ping, fault)
        if added:
            self._wake.set()
        return added

    def _hold(self, ping: tuple[str, int, str, str, str | None], fault: StorageFault | None = None) -> None:
        if fault is not None:
            # One line per fault, not a traceback per event (the storage watch names the fault).
            log.warning("telegram pings wait in memory until the database takes writes again: %s",
                        fault.message, extra={"code": fault.code})
        if len(self._held) >= HELD_MAX:
            self._held.popleft()
            self._owed = True
        self._held.append(ping)

    @property
    def held(self) -> int:
        """How many pings wait in memory for the database to take writes again."""
        return len(self._held)

    async def flush_held(self) -> int:
        """Queue the pings held during a database fault, oldest first; stops at the first refusal."""
        added = flushed = 0
        while self._held:
            try:
                added += await self.store.telegram_enqueue(*self._held[0])
            except StorageFault:
                return added
            self._held.popleft()
            flushed += 1
        if flushed:
            log.info("telegram pings queued after the database fault", extra={"pings": flushed})
        if self._owed:
            self._owed = False
            added += await self.catch_up()
        if added:
            self._wake.set()
        return added

    async def on_event(self, event: Event) -> None:
        """Queue the pings one engine event asks for, then move the cursor past it."""
        if self._held:
            await self.flush_held()
        if event.event_type is EventKind.JELLYFIN and event.reason in JELLYFIN_PINGS:
            # Jellyfin's answer re-renders the done card: "In Jellyfin" with the link, or what to check
            await self.enqueue(event.download_id, State.DONE.value, f"jellyfin-{event.reason}@{event.at}")
            return
        state = KINDS.get(event.event_type)
        if state is None:
            return
        await self.enqueue(event.download_id, state.value, event.at)
        if self._held:
            return                        # the cursor stays before the pings not queued yet
        cursor = await self.store.telegram_value(CURSOR)
        if cursor is None or event.at > cursor:
            try:
                await self.store.telegram_set_value(CURSOR, event.at)
            except StorageFault:
                pass                      # the ping is queued; a restart re-checks from the older cursor

    async def catch_up(self) -> int:
        """Queue what a crash between an event and its queueing lost; the first start sets the cursor."""
        cursor = await self.store.telegram_value(CURSOR)
        if cursor is None:
            try:
                await self.store.telegram_set_value(CURSOR, clock.now())
            except StorageFault:
                pass                      # the first event queued sets it
            return 0
        since = clock.format_time(clock.parse_time(cursor) - CURSOR_SLACK)
        added = 0
        for state in KINDS.values():
            offset = 0
            while True:
                page = await self.commands.list(states=[state.value], limit=500, offset=offset)
                for download in page.items:
                    if download.updated_at < since:
                        continue
                    history = (await self.commands.get(download.id)).transitions
                    into = [t for t in history if t.to_state is state and t.created_at >= since]
                    if into:
                        added += await self.enqueue(download.id, state.value, into[-1].created_at)
                offset += len(page.items)
                if len(page.items) < 500:
                    break
        if added:
            log.info("telegram pings queued after a restart", extra={"pings": added})
        return added

    async def consume(self) -> None:
        """Turn engine events into queued pings until the subscription closes."""
        async for event in self.subscription:
            try:
                await self.on_event(event)
            except Exception:
                log.exception("could not queue a telegram ping", **for_download(event.download_id))

    # ------------------------------------------------------------ sending

    def wake(self) -> None:
        """Look at the queue now (something was queued)."""
        self._wake.set()

    @property
    def unrecorded(self) -> int:
        """How many sent pings wait in memory for the database to record them."""
        return len(self._unrecorded)

    async def record_unrecorded(self) -> int:
        """Record the pings sent during a database fault, oldest first; stops at the first refusal."""
        recorded = 0
        for ping_id, (ping, message_id, photo) in list(self._unrecorded.items()):
            try:
                await self._record(ping, message_id, photo)
            except StorageFault:
                return recorded
            del self._unrecorded[ping_id]
            recorded += 1
        if recorded:
            log.info("sent telegram pings recorded after the database fault", extra={"pings": recorded})
        return recorded

    async def send_due(self) -> int:
        """Send every ping that is due (stops early while Telegram asks us to wait); returns how many went."""
        sent = 0
        loop = asyncio.get_running_loop()
        for ping in await self.store.telegram_due_pings(clock.now()):
            if loop.time() < self._paused_until:
                break
            if ping.id in self._unrecorded:
                continue                  # it went out; only its record waits for the database
            sent += await self.deliver(ping)
        return sent

    async def run(self) -> None:
        """Send due pings forever; wake on a new ping, at the next due time, or every minute."""
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()
            try:
                if self._held:
                    await self.flush_held()
                if self._unrecorded:
                    await self.record_unrecorded()
                await self.send_due()
                due = await self.store.telegram_next_due()
            except StorageFault:
                due = None                # the storage watch names the fault once
            except Exception:
                log.exception("telegram ping sender failed; retrying")
                due = None
            wait = HELD_RETRY if self._held or self._unrecorded else IDLE_WAKE
            if due is not None and not self._unrecorded:      # an unrecorded ping is due, not owed
                wait = min(wait, max(0.0, (clock.parse_time(due) - clock.utcnow()).total_seconds()))
            wait = max(wait, self._paused_until - loop.time(), 0.05)
            try:
                async with asyncio.timeout(wait):       # not wait_for: it can swallow a cancellation (3.11)
                    await self._wake.wait()
            except TimeoutError:
                pass

    def _render(self, detail: DownloadDetail, url_buttons: bool, photo: bool) -> Card:
        return card(detail, panel=self.panel, margin=self.margin, url_buttons=url_buttons, photo=photo)

    async def deliver(self, ping: TelegramPing) -> int:
        """Send one ping (or supersede, postpone, reschedule it); 1 when a message went out."""
        try:
            detail = await models.detail(self.commands, ping.download_id)
        except NotFound:
            await self.store.telegram_close_ping(ping.id, PingStatus.DROPPED, "the download is gone")
            return 0
        download = detail.download
        if download.state.value != ping.kind:
            await self.store.telegram_close_ping(ping.id, PingStatus.SUPERSEDED)
            return 0
        asked = ping.dedupe_key.startswith(f"{ping.kind}@{ASKED}")
        if ping.kind == State.REVIEW.value and not asked and download.defer_until \
                and download.defer_until > clock.now():
            await self.store.telegram_reschedule(ping.id, download.defer_until, attempted=False)
            return 0
        try:
            message, photo = await send_card(self.bot, ping.chat_id, partial(self._render, detail))
        except RetryAfter as exc:
            wait = retry_seconds(exc)
            self._paused_until = asyncio.get_running_loop().time() + wait
            await self.store.telegram_reschedule(ping.id, _later(wait), error=f"429: retry after {wait:g} s")
            self.health.failed(exc)
            return 0
        except Forbidden as exc:
            await self.store.telegram_reschedule(ping.id, _later(FORBIDDEN_BACKOFF), error=self.redact(exc))
            log.warning("telegram chat refuses the bot's messages (open the bot and press Start)",
                        extra={"chat_id": ping.chat_id, "error": self.redact(exc)})
            return 0
        except BadRequest as exc:
            await self.store.telegram_close_ping(ping.id, PingStatus.DROPPED, self.redact(exc))
            log.error("telegram refused a ping for good", **for_download(
                ping.download_id, chat_id=ping.chat_id, error=self.redact(exc)))
            return 0
        except TelegramError as exc:
            backoff = min(MAX_BACKOFF, 2.0 ** min(ping.attempts, 16))
            await self.store.telegram_reschedule(ping.id, _later(backoff), error=self.redact(exc))
            self.health.failed(exc)
            return 0
        self.health.ok()
        log.info("telegram ping sent", **for_download(ping.download_id, chat_id=ping.chat_id, kind=ping.kind))
        try:
            await self._record(ping, message.message_id, photo)
        except StorageFault as fault:
            # Sent, not recorded: still pending in the database, so remember it here rather than
            # send it again on the next round (or after the fault).
            if not self._unrecorded:
                log.warning("sent telegram pings wait in memory to be recorded until the database takes "
                            "writes again: %s", fault.message, extra={"code": fault.code})
            self._unrecorded[ping.id] = (ping, message.message_id, photo)
        return 1

    async def _record(self, ping: TelegramPing, message_id: int, photo: bool) -> None:
        """Mark a ping sent as this message; a review card supersedes the older ones of its chat."""
        await self.store.telegram_mark_sent(ping.id, message_id, has_photo=photo)
        if ping.kind == State.REVIEW.value and not ping.dedupe_key.startswith(f"{ping.kind}@{ASKED}"):
            await self.store.telegram_supersede(ping.download_id, ping.chat_id, ping.kind, keep=ping.id)
