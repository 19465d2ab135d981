"""The Telegram transport: add from a chat, get pinged, decide from the phone (docs/telegram.md).

A transport beside MQTT on python-telegram-bot's `Bot` (httpx, asyncio): it calls the
same command API, subscribes to the engine's event bus for pings, and persists only its
own rows (ping queue, handled update ids, event cursor). Updates arrive by long polling
(default) or a webhook; each is handled once, in order, and confirmed to Telegram only
after it was handled. Telegram errors, 429s and network loss are waited out with backoff
inside the transport: nothing here ever stops the worker.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from datetime import timedelta
from typing import Any, Protocol

from telegram import Bot, BotCommand, Update
from telegram.error import InvalidToken, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from jellybit import clock
from jellybit.config import Config, TelegramConfig
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus
from jellybit.errors import StorageFault
from jellybit.transports.base import Supervise
from jellybit.transports.telegram.access import Gate
from jellybit.transports.telegram.commands import MENU
from jellybit.transports.telegram.handlers import Settings, UpdateHandler
from jellybit.transports.telegram.pings import Pinger, PingStore
from jellybit.transports.telegram.send import Health, Redactor, best_effort, retry_seconds
from jellybit.transports.telegram.webhook import WebhookReceiver

log = logging.getLogger(__name__)

ALLOWED_UPDATES = ["message", "callback_query"]
MAX_BACKOFF = 60.0
UPDATE_ATTEMPTS = 3                      # a Telegram error while handling one update, before it is given up
UPDATE_MEMORY = timedelta(days=2)        # Telegram keeps an unconfirmed update for 24 hours
HOUSEKEEPING_INTERVAL = 6 * 3600.0


class TelegramStore(PingStore, Protocol):
    """The store methods the transport uses: its ping queue and its handled updates."""

    async def telegram_update_seen(self, update_id: int) -> bool:
        """Tell whether an update was handled before."""

    async def telegram_mark_update(self, update_id: int) -> bool:
        """Remember a handled update."""

    async def telegram_forget_updates(self, older_than: str) -> int:
        """Forget handled update ids older than a time."""


def build_bot(config: TelegramConfig, token: str) -> Bot:
    """A `Bot` pointed at `base_url` (the Bot API, a local Bot API server or a test fake)."""
    base = config.base_url.rstrip("/")
    proxy = config.proxy or None
    return Bot(
        token, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot",
        request=HTTPXRequest(connection_pool_size=8, read_timeout=20.0, write_timeout=20.0,
                             connect_timeout=10.0, pool_timeout=10.0, proxy=proxy),
        get_updates_request=HTTPXRequest(connection_pool_size=1, read_timeout=10.0,
                                         connect_timeout=10.0, proxy=proxy),
    )


class TelegramTransport:
    """The bot: receives updates, hands them to the handler, runs the pinger; stops with the worker.

    A `Transport`: `start` hands `run` to the supervisor as `telegram`; cancelling it is the whole stop.
    """

    name = "telegram"

    def __init__(self, config: TelegramConfig, commands: Commands, bus: EventBus, store: TelegramStore, *,
                 panel_url: str, margin: float, max_torrent_bytes: int,
                 max_backoff: float = MAX_BACKOFF, qbittorrent_url: str = "") -> None:
        if config.token is None:
            raise ValueError("the Telegram transport needs a bot token")
        token = config.token.get_secret_value().strip()
        self.config = config
        self.store = store
        self.redact = Redactor(token)
        self.bot = build_bot(config, token)
        self.max_backoff = max_backoff
        # Subscribed now, before the worker starts, so no state event is missed.
        subscription = bus.subscribe()
        self.pinger = Pinger(self.bot, commands, store, subscription,
                             chats=config.chat_ids or config.allowed_user_ids, panel=panel_url,
                             margin=margin, redact=self.redact)
        self.gate = Gate(config.allowed_user_ids, config.rate_limit_per_minute)
        self.handler = UpdateHandler(self.bot, commands, self.pinger, self.gate,
                                     Settings(panel_url, margin, config.defer_hours, max_torrent_bytes,
                                              qbittorrent_url),
                                     self.redact)
        self.health = Health("polling" if not config.webhook_url else "webhook setup", self.redact)
        self.webhook: WebhookReceiver | None = None
        self._offset: int | None = None
        self._ready = False
        self._failures: dict[int, int] = {}          # update id -> Telegram errors while handling it
        self._lock = asyncio.Lock()

    @classmethod
    def from_config(cls, config: Config, commands: Commands, bus: EventBus, store: Any) -> TelegramTransport:
        """The transport for a configured worker."""
        return cls(config.telegram, commands, bus, store, panel_url=config.panel.base_url,
                   margin=config.recognition.min_margin, max_torrent_bytes=config.worker.max_torrent_bytes,
                   qbittorrent_url=config.qbittorrent.url)

    # ------------------------------------------------------------ lifecycle

    def start(self, supervise: Supervise) -> None:
        """Supervise the bot's one loop under the transport's name."""
        supervise(self.name, self.run)

    async def stop(self) -> None:
        """Nothing to say goodbye with: the loop's own cleanup runs when it is cancelled."""

    async def run(self) -> None:
        """Receive, ping and tidy up until cancelled; Telegram being down never ends this."""
        if not self.config.allowed_user_ids:
            log.warning("telegram bot enabled with an empty telegram.allowed_user_ids: it serves nobody")
        try:
            try:
                await self.pinger.catch_up()
            except Exception:
                log.exception("telegram ping catch-up failed; new events are still pinged")
            async with asyncio.TaskGroup() as group:
                group.create_task(self.pinger.consume(), name="telegram-events")
                group.create_task(self.pinger.run(), name="telegram-pings")
                group.create_task(self.receive(), name="telegram-updates")
                group.create_task(self._housekeeping(), name="telegram-housekeeping")
        finally:
            await self.close()

    async def close(self) -> None:
        """Stop receiving and release the HTTP clients."""
        self.pinger.subscription.close()
        if self.webhook is not None:
            self.webhook.stop()
        try:
            await self.bot.shutdown()
        except Exception:
            log.debug("telegram bot shutdown failed", exc_info=True)

    async def _housekeeping(self) -> None:
        while True:
            try:
                older = clock.format_time(clock.utcnow() - UPDATE_MEMORY)
                await self.store.telegram_forget_updates(older)
            except StorageFault:
                pass                      # the storage watch names the fault once; next round tries again
            except Exception:
                log.exception("telegram housekeeping failed")
            await asyncio.sleep(HOUSEKEEPING_INTERVAL)

    async def _prepare(self) -> None:
        """getMe, then point Telegram at our way of receiving, and publish the command menu."""
        await self.bot.initialize()
        self.handler.bot_username = self.bot.username
        if self.config.webhook_url:
            secret = secrets.token_urlsafe(32)
            path = "/telegram/" + secrets.token_urlsafe(16)
            self.webhook = WebhookReceiver(path, secret, self.process_json, host=self.config.webhook_listen,
                                           port=self.config.webhook_port)
            await self.bot.set_webhook(self.config.webhook_url.rstrip("/") + path, secret_token=secret,
                                       allowed_updates=ALLOWED_UPDATES)
        else:
            await self.bot.delete_webhook()
        try:
            await self.bot.set_my_commands([BotCommand(name, text) for name, text in MENU])
        except TelegramError as exc:
            log.info("telegram command menu not set", extra={"error": self.redact(exc)})
        log.info("telegram bot connected", extra={"bot_username": self.bot.username,
                                                  "mode": "webhook" if self.webhook else "polling"})

    async def receive(self) -> None:
        """Long-poll (or serve the webhook) forever, backing off while Telegram cannot be reached."""
        backoff = 1.0
        while True:
            try:
                if not self._ready:
                    await self._prepare()
                    self._ready = True
                    self.health.ok()
                if self.webhook is not None:
                    await self.webhook.serve()
                    return
                await self.poll_once()
                self.health.ok()
                backoff = 1.0
                continue
            except RetryAfter as exc:
                self.health.failed(exc)
                await asyncio.sleep(retry_seconds(exc))
                continue
            except InvalidToken as exc:
                # PTB raises InvalidToken for any 401 or 404, a missing file included: only getMe can tell.
                refused = await self.token_refused()
                if refused:
                    if self.health.down_since_error is None:
                        log.error("telegram refused the bot token; check telegram.token")
                    backoff = self.max_backoff
                self.health.failed(exc, refused=refused)
            except TelegramError as exc:
                self.health.failed(exc)
            except Exception:
                log.exception("telegram receiving failed; retrying")
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, self.max_backoff)

    async def poll_once(self) -> int:
        """One getUpdates round: handle each update in order, confirm them by moving the offset."""
        updates = await self.bot.get_updates(offset=self._offset, timeout=self.config.poll_timeout,
                                             allowed_updates=ALLOWED_UPDATES)
        for update in updates:
            await self.process(update)
            self._offset = update.update_id + 1
        return len(updates)

    # ------------------------------------------------------------ one update

    async def process(self, update: Update) -> None:
        """Handle an update once: a re-delivered one is skipped; a Telegram error leaves it for a retry."""
        async with self._lock:
            if await self.store.telegram_update_seen(update.update_id):
                log.info("telegram update delivered again; ignored", extra={"update_id": update.update_id})
                return
            try:
                await self.handler.handle(update)
            except RetryAfter:
                raise
            except TelegramError as exc:
                # Retried with the receive loop's backoff, but never for ever: one update that keeps
                # failing (a file Telegram will not hand over) must not hold back every later one.
                failures = self._failures.get(update.update_id, 0) + 1
                if failures < UPDATE_ATTEMPTS:
                    self._failures[update.update_id] = failures
                    raise
                await self._give_up(update, exc)
            except Exception:
                # A bug must not block every later update: log it, remember the update, go on.
                log.exception("a telegram update could not be handled; skipped",
                              extra={"update_id": update.update_id})
            self._failures.pop(update.update_id, None)
            try:
                await self.store.telegram_mark_update(update.update_id)
            except StorageFault:
                # Handled and answered: the next getUpdates confirms it. Handling it again on every
                # retry while the database refuses writes would answer the sender again and again.
                pass

    async def _give_up(self, update: Update, exc: TelegramError) -> None:
        """Log why an update is given up and tell its sender (best effort) to send it again."""
        reason = self.redact(exc)
        log.warning("a telegram update failed %d times; given up", UPDATE_ATTEMPTS,
                    extra={"update_id": update.update_id, "error": reason, "error_type": type(exc).__name__})
        chat = update.effective_chat
        if chat is None:
            return
        text = (f"I could not handle that message ({type(exc).__name__}: {reason}), "
                f"not after {UPDATE_ATTEMPTS} tries. Please send it again later.")
        message = update.effective_message
        reply_to = message.message_id if message is not None and update.callback_query is None else None
        await best_effort(lambda: self.bot.send_message(chat.id, text, reply_to_message_id=reply_to),
                          "give-up notice", self.redact)

    async def token_refused(self) -> bool:
        """True when getMe itself is refused (the token is wrong); False when it works or cannot be asked."""
        try:
            await self.bot.get_me()
        except InvalidToken:
            return True
        except Exception:
            return False
        return False

    async def process_json(self, data: dict[str, Any]) -> bool:
        """Handle an update posted to the webhook; False asks Telegram to deliver it again."""
        try:
            update = Update.de_json(data, self.bot)
        except Exception:
            log.warning("telegram webhook: not an update; ignored")
            return True
        if update is None:
            return True
        try:
            await self.process(update)
        except TelegramError as exc:
            self.health.failed(exc)
            return False
        return True
