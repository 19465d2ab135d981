"""One Telegram update -> the gate -> one command-API call -> an answer. No state of its own.

Messages carry sources (ingest), commands (/list …), or reply to a review card (refine).
Button presses decide a review, retry, or undo with a confirmation; every press is answered
with its result and the card it sat on is edited to the download's state without buttons.
A Telegram or network error propagates only before a side effect (fetching a .torrent), so
the caller retries the whole update; answers after a side effect are best-effort.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from telegram import Bot, CallbackQuery, Message, MessageEntity, Update, User
from telegram.constants import ParseMode
from telegram.error import BadRequest

from jellybit.engine.commands import Commands
from jellybit.errors import JellybitError
from jellybit.logs import for_download
from jellybit.present import allowed
from jellybit.protocol import AddResult, State
from jellybit.transports.telegram import answers, models, render
from jellybit.transports.telegram.access import Gate, Verdict
from jellybit.transports.telegram.commands import ChatCommands
from jellybit.transports.telegram.pings import Pinger
from jellybit.transports.telegram.send import NO_PREVIEW, Redactor, best_effort, edit_card
from jellybit.transports.telegram.text import MAX_SOURCES, Action, Press, decode_press, extract

log = logging.getLogger(__name__)

TELEGRAM_FILE_LIMIT = 20 * 1024 * 1024     # the Bot API's getFile limit
TORRENT_MIME = "application/x-bittorrent"
# The better-copy buttons: the `upgrade` command's choice, and what the answer says.
UPGRADE_PRESSES = {Action.KEEP_BOTH: ("keep_both", "Kept both"),
                   Action.REPLACE: ("replace", "Replacing the library's copy (undo brings it back)"),
                   Action.SKIP: ("skip", "Skipped")}


@dataclass
class Settings:
    """What the handlers need from the configuration."""

    panel: str
    margin: float
    defer_hours: float
    max_torrent_bytes: int
    qbittorrent_url: str = ""          # named by /status


def who(user: User | None) -> dict[str, Any]:
    """A user for a log line: id, name and @username (untrusted text, bounded)."""
    if user is None:
        return {"telegram_user_id": None}
    return {"telegram_user_id": user.id, "telegram_name": (user.full_name or "")[:100],
            "telegram_username": (user.username or "")[:64]}


class UpdateHandler:
    """Serves allowed users; refuses strangers once; keeps everyone within the rate."""

    def __init__(self, bot: Bot, commands: Commands, pinger: Pinger, gate: Gate, settings: Settings,
                 redact: Redactor) -> None:
        self.bot = bot
        self.commands = commands
        self.pinger = pinger
        self.gate = gate
        self.settings = settings
        self.redact = redact
        self.chat = ChatCommands(commands, pinger, self.say, self.ask_undo,
                                 qbittorrent_url=settings.qbittorrent_url)
        self.bot_username: str | None = None

    async def say(self, chat_id: int, text: str, *, reply_to: int | None = None,
                  keyboard: Any = None) -> None:
        """Send an HTML text answer, best-effort."""
        await best_effort(lambda: self.bot.send_message(
            chat_id, text, parse_mode=ParseMode.HTML, reply_markup=keyboard, link_preview_options=NO_PREVIEW,
            reply_to_message_id=reply_to), "answer", self.redact)

    # ------------------------------------------------------------ entry

    async def handle(self, update: Update) -> None:
        """Handle one update (a message or a button press); other kinds are ignored."""
        message = update.message
        query = update.callback_query
        if message is None and query is None:
            return
        user = update.effective_user
        verdict = self.gate.check(user.id if user else None)
        if verdict is Verdict.DROP:
            return
        if verdict in (Verdict.REFUSE, Verdict.DENY):
            log.warning("telegram: a user not on the allow-list was refused", extra=who(user))
            if query is not None:
                await best_effort(lambda: query.answer("Not allowed."), "refusal", self.redact)
            elif verdict is Verdict.REFUSE and message is not None:
                await self.say(message.chat.id, (
                    "Sorry, this is a private bot. Your Telegram user id is "
                    f"<code>{user.id if user else '?'}</code>; its owner can add it to "
                    "<code>telegram.allowed_user_ids</code>."))
            return
        if verdict is Verdict.SLOW_DOWN:
            if query is not None:
                await best_effort(lambda: query.answer("Too many presses; wait a minute."), "answer",
                                  self.redact)
            elif message is not None:
                await self.say(message.chat.id, "Too many messages; wait a minute, then send it again.")
            return
        if query is not None:
            await self.on_press(query)
        elif message is not None:
            await self.on_message(message, update.update_id)

    # ------------------------------------------------------------ messages

    async def on_message(self, message: Message, update_id: int) -> None:
        """A command, a reply to a review card (a hint), or sources to add."""
        text = message.text or message.caption or ""
        if message.text and message.text.startswith("/"):
            await self.chat.run(message, update_id, self.bot_username)
            return
        original = message.reply_to_message
        if original is not None and text.strip():
            ping = await self.pinger.store.telegram_message_ping(message.chat.id, original.message_id)
            if ping is not None and ping.kind == State.REVIEW.value:
                await self.refine(message, ping.download_id, text)
                return
        await self.ingest(message, text)

    async def refine(self, message: Message, download_id: str, hint: str) -> None:
        """A reply to a review card: the text is a hint, and recognition runs again."""
        try:
            download = await self.commands.refine(download_id, hint=hint)
        except JellybitError as exc:
            await self.say(message.chat.id, f"Not refined: {render.esc(exc.message, 300)}",
                           reply_to=message.message_id)
            return
        log.info("telegram: hint added", **for_download(download.id, **who(message.from_user)))
        shown = await models.download(self.commands, download)
        await self.say(message.chat.id, f"Hint added; recognizing <b>{render.esc(shown.name)}</b> "
                       "again. I will ping you with the result.", reply_to=message.message_id)

    def _links(self, message: Message) -> list[str]:
        entities = (message.entities or ()) + (message.caption_entities or ())
        return [e.url for e in entities if e.type == MessageEntity.TEXT_LINK and e.url]

    async def _torrent_bytes(self, message: Message) -> tuple[bytes | None, str | None]:
        """The .torrent a message carries, or why it is refused (Telegram errors propagate)."""
        document = message.document
        if document is None:
            return None, None
        name = document.file_name or "the file"
        if not (name.lower().endswith(".torrent") or document.mime_type == TORRENT_MIME):
            return None, f"{name} is not a .torrent file"
        limit = min(self.settings.max_torrent_bytes, TELEGRAM_FILE_LIMIT)
        if document.file_size and document.file_size > limit:
            return None, f"{name} is larger than {limit} bytes"
        try:
            file = await self.bot.get_file(document.file_id)
            if file.file_size and file.file_size > limit:
                return None, f"{name} is larger than {limit} bytes"
            data = bytes(await file.download_as_bytearray())
        except BadRequest as exc:
            return None, f"Telegram would not hand over {name}: {self.redact(exc)}"
        if len(data) > limit:
            return None, f"{name} is larger than {limit} bytes"
        return data, None

    async def ingest(self, message: Message, text: str) -> None:
        """Add every source of a message (and its .torrent) with the rest of the text as context."""
        found = extract(text, self._links(message))
        torrent, refused = await self._torrent_bytes(message)
        if not found.sources and torrent is None and refused is None:
            if message.chat.type != "private":
                return    # chatter in a group is not addressed to the bot
            await self.say(message.chat.id, "I found no magnet link, .torrent link, infohash or .torrent "
                           "file in that. /help says what I take.", reply_to=message.message_id)
            return
        if len(found.sources) > MAX_SOURCES:
            await self.say(message.chat.id, f"That is more than {MAX_SOURCES} torrents in one message; "
                           "send them in smaller batches.", reply_to=message.message_id)
            return
        results: list[AddResult] = []
        errors: list[str] = [refused] if refused else []
        jobs: list[dict[str, Any]] = [{"torrent": torrent}] if torrent is not None else []
        jobs += [{"source": source} for source in found.sources]
        for job in jobs:
            try:
                result = await self.commands.add(**job, context=found.context)
            except JellybitError as exc:
                shown = job.get("source") or (message.document.file_name if message.document else "")
                errors.append(f"{str(shown)[:80]}: {exc.message}")
                continue
            results.append(await models.added(self.commands, result))
            log.info("telegram: torrent added" if result.created else "telegram: joined an active download",
                     **for_download(result.download.id, **who(message.from_user)))
        await self.say(message.chat.id, answers.added_text(results, errors, panel=self.settings.panel),
                       reply_to=message.message_id)

    # ------------------------------------------------------------ buttons

    async def on_press(self, query: CallbackQuery) -> None:
        """Run the button's command, answer with the result and take the buttons off its card."""
        press = decode_press(query.data)
        if press is None:
            await best_effort(lambda: query.answer("This button is no longer valid."), "answer", self.redact)
            return
        message = query.message if isinstance(query.message, Message) else None
        name = query.from_user.full_name if query.from_user else "someone"
        try:
            outcome, edit = await self._run_press(press, name, query)
        except JellybitError as exc:
            outcome, edit = f"Not done: {exc.message}", True
        await best_effort(lambda: query.answer(outcome[:200]), "answer", self.redact)
        if edit and message is not None:
            await self._show_state(message, press.download_id, outcome)

    async def _show_state(self, message: Message, download_id: str, outcome: str) -> None:
        try:
            detail = await models.detail(self.commands, download_id)
        except JellybitError:
            return
        caption = bool(message.photo)
        text = render.state_card(detail.download, outcome, caption=caption)
        await best_effort(lambda: edit_card(self.bot, message.chat.id, message.message_id, text,
                                            caption=caption), "edit", self.redact)

    async def _run_press(self, press: Press, name: str, query: CallbackQuery) -> tuple[str, bool]:
        """The press's command; (what to answer, whether to edit the card it sat on)."""
        target = press.download_id
        if press.action is Action.APPLY:
            await self.commands.apply(target)
            return f"Applied by {name}; laying it out.", True
        if press.action is Action.CANDIDATE:
            await self.commands.apply(target, candidate_id=press.candidate_id)
            return f"Applied by {name} with the chosen match; laying it out.", True
        if press.action in UPGRADE_PRESSES:
            choice, words = UPGRADE_PRESSES[press.action]
            await self.commands.upgrade(target, choice=choice)
            return f"{words} by {name}; laying it out.", True
        if press.action is Action.REJECT:
            await self.commands.reject(target, reason=f"rejected in Telegram by {name}")
            return f"Rejected by {name}; nothing is laid out.", True
        if press.action is Action.DEFER:
            download = await self.commands.defer(target, hours=self.settings.defer_hours)
            until = download.defer_until or ""
            await self.pinger.enqueue(download.id, State.REVIEW.value, f"defer:{until}", due_at=until)
            return f"Deferred by {name} until {until[:16].replace('T', ' ')} UTC; I will remind you.", True
        if press.action is Action.RETRY:
            download = await self.commands.retry(target)
            return f"Retried by {name}; now {render.state_words(download.state)}.", True
        if press.action is Action.UNDO_ASK:
            await self.ask_undo(query.message.chat.id if query.message else query.from_user.id, target)
            return "Confirm below.", False
        if press.action is Action.UNDO:
            outcome = await self.commands.undo(target)
            text = f"Undone by {name}: {len(outcome.removed)} library file(s) removed."
            if outcome.refused:
                text += f" {len(outcome.refused)} kept: {outcome.refused[0][1]}"
            return text, True
        return "Kept; nothing was undone.", True

    async def ask_undo(self, chat_id: int, download_id: str) -> None:
        """Send the undo confirmation for one download (refuses states that cannot be undone)."""
        detail = await models.detail(self.commands, download_id)
        download = detail.download
        if not allowed("undo", download.state):
            await self.say(chat_id, f"{render.esc(render.title_of(download))} is "
                           f"{render.state_words(download.state)}; only laid-out downloads can be undone.")
            return
        card = render.undo_confirm_card(detail)
        await self.say(chat_id, card.text, keyboard=card.keyboard)
