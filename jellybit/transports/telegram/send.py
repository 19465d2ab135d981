"""Talking to the Bot API: send a card (with fallbacks), edit one, answer best-effort, log outages once."""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from telegram import Bot, LinkPreviewOptions, Message
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

from jellybit.transports.telegram.render import Card

log = logging.getLogger(__name__)

NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
REPLY_ATTEMPTS = 3
MAX_REPLY_WAIT = 60.0          # a flood wait longer than this drops a reply rather than stall the bot

Render = Callable[[bool, bool], Card]      # (url_buttons, photo) -> the card

# PTB 22 builds every RetryAfter's message through the int form it deprecates; we read both forms.
warnings.filterwarnings("ignore", message=r"Deprecated since version v22\.2: .*`retry_after`",
                        category=PTBDeprecationWarning)


def retry_seconds(exc: RetryAfter) -> float:
    """Seconds Telegram asked us to wait (`parameters.retry_after`)."""
    value: Any = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Redactor:
    """Keeps the bot token out of every message we log or store."""

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, text: object) -> str:
        """The text with the token (and its secret half) replaced."""
        out = str(text)
        if self.token:
            out = out.replace(self.token, "<token>")
            secret = self.token.partition(":")[2]
            if len(secret) >= 8:
                out = out.replace(secret, "<token>")
        return out[:500]


class Health:
    """Log a Telegram outage once when it starts and once when it ends (not on every retry)."""

    def __init__(self, what: str, redact: Redactor) -> None:
        self.what = what
        self.redact = redact
        self.down_since_error: str | None = None
        self.refused = False                # the last failure was Telegram refusing the token
        self.reached = False                # Telegram answered at least once

    def failed(self, exc: BaseException, *, refused: bool = False) -> None:
        """Record a failure; only the first of a run is logged."""
        self.refused = refused
        message = self.redact(exc)
        if self.down_since_error is None:
            log.warning("telegram %s failed; retrying with backoff", self.what,
                        extra={"error": message, "error_type": type(exc).__name__})
        self.down_since_error = message

    def ok(self) -> None:
        """Record a success; logs the recovery after a failure."""
        self.reached, self.refused = True, False
        if self.down_since_error is not None:
            log.info("telegram %s works again", self.what)
            self.down_since_error = None


async def send_card(bot: Bot, chat_id: int, render: Render, *,
                    reply_to: int | None = None) -> tuple[Message, bool]:
    """Send a card; on a refusal retry without the photo, then without URL buttons. (message, as photo)."""
    variants = [(True, True), (True, False), (False, False)]
    last: BadRequest | None = None
    tried: set[tuple[str, bool, str | None]] = set()
    for url_buttons, photo in variants:
        card = render(url_buttons, photo)
        shape = (card.text, card.photo is not None, repr(card.keyboard.to_dict() if card.keyboard else None))
        if shape in tried:
            continue
        tried.add(shape)
        try:
            if card.photo:
                message = await bot.send_photo(chat_id, card.photo, caption=card.text,
                                               parse_mode=ParseMode.HTML, reply_markup=card.keyboard,
                                               reply_to_message_id=reply_to)
                return message, True
            message = await bot.send_message(chat_id, card.text, parse_mode=ParseMode.HTML,
                                             reply_markup=card.keyboard, link_preview_options=NO_PREVIEW,
                                             reply_to_message_id=reply_to)
            return message, False
        except BadRequest as exc:
            # A poster Telegram cannot fetch, or a panel URL it will not take as a button.
            last = exc
            log.info("telegram refused a message; trying a simpler form",
                     extra={"chat_id": chat_id, "error": str(exc)[:200]})
    assert last is not None
    raise last


async def edit_card(bot: Bot, chat_id: int, message_id: int, text: str, *, caption: bool) -> None:
    """Replace a card's text (or caption) and remove its buttons; 'not modified' is fine."""
    try:
        if caption:
            await bot.edit_message_caption(chat_id=chat_id, message_id=message_id, caption=text,
                                           parse_mode=ParseMode.HTML, reply_markup=None)
        else:
            await bot.edit_message_text(text, chat_id=chat_id, message_id=message_id,
                                        parse_mode=ParseMode.HTML, reply_markup=None,
                                        link_preview_options=NO_PREVIEW)
    except BadRequest as exc:
        if "not modified" not in str(exc).lower():
            log.info("telegram could not edit a message", extra={"chat_id": chat_id, "error": str(exc)[:200]})


async def best_effort(call: Callable[[], Any], what: str, redact: Redactor) -> Any:
    """Run one Bot API call a few times (waiting out 429 and short outages); log and give up after."""
    delay = 1.0
    for attempt in range(1, REPLY_ATTEMPTS + 1):
        try:
            return await call()
        except RetryAfter as exc:
            wait = retry_seconds(exc)
            if wait > MAX_REPLY_WAIT:
                log.warning("telegram %s dropped: flood wait too long", what, extra={"retry_after": wait})
                return None
            if attempt == REPLY_ATTEMPTS:
                log.warning("telegram %s dropped: still flood-limited after %d tries", what, attempt,
                            extra={"retry_after": wait, "error": redact(exc)})
                return None
            await asyncio.sleep(wait)
        except (BadRequest, Forbidden) as exc:
            log.warning("telegram %s refused", what, extra={"error": redact(exc)})
            return None
        except (NetworkError, TelegramError) as exc:
            if attempt == REPLY_ATTEMPTS:
                log.warning("telegram %s failed", what, extra={"error": redact(exc)})
                return None
            await asyncio.sleep(delay)
            delay *= 2
    return None
