"""The bot's slash commands: /list, /review, /status, /undo ID, /help (and /start)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message

from jellybit.engine.commands import Commands
from jellybit.errors import JellybitError
from jellybit.present import states_for
from jellybit.protocol import ACTIVE_STATES, State
from jellybit.transports.telegram import answers, models, render
from jellybit.transports.telegram.pings import ASKED, Pinger
from jellybit.transports.telegram.text import Action, Press, encode_press, parse_command

Say = Callable[..., Awaitable[None]]
MAX_REVIEW_CARDS = 10
UNDO_CHOICES = 5

# The menu Telegram shows next to the text field (setMyCommands).
MENU: tuple[tuple[str, str], ...] = (
    ("list", "Active downloads and those waiting for you"),
    ("review", "Downloads waiting for review, with their buttons"),
    ("status", "qBittorrent and the counts"),
    ("undo", "Remove a download's library files (asks first)"),
    ("help", "What I take and what I can do"),
)


class ChatCommands:
    """Runs one slash command for an allowed user."""

    def __init__(self, commands: Commands, pinger: Pinger, say: Say,
                 ask_undo: Callable[[int, str], Awaitable[None]], *, qbittorrent_url: str = "") -> None:
        self.commands = commands
        self.qbittorrent_url = qbittorrent_url
        self.pinger = pinger
        self.say = say
        self.ask_undo = ask_undo

    async def run(self, message: Message, update_id: int, bot_username: str | None) -> None:
        """Dispatch `/name args`; a command for another bot in a group is ignored."""
        command = parse_command(message.text or "", bot_username)
        if command is None:
            return
        chat = message.chat.id
        handler = {"start": self.help, "help": self.help, "list": self.list, "review": self.review,
                   "status": self.status, "undo": self.undo}.get(command.name)
        if handler is None:
            await self.say(chat, "I do not know that command; /help lists what I can do.")
            return
        try:
            await handler(chat, command.args, update_id)
        except JellybitError as exc:
            await self.say(chat, f"Not done: {render.esc(exc.message, 300)}")

    async def help(self, chat: int, args: str, update_id: int) -> None:
        """/help and /start."""
        await self.say(chat, answers.HELP)

    async def list(self, chat: int, args: str, update_id: int) -> None:
        """/list: active downloads, review first."""
        await self.say(chat, answers.list_text(await models.page(self.commands, ACTIVE_STATES,
                                                                 answers.LIST_LIMIT)))

    async def review(self, chat: int, args: str, update_id: int) -> None:
        """/review: each download waiting for review as a card with its buttons (deferred ones too)."""
        page = await models.page(self.commands, [State.REVIEW], MAX_REVIEW_CARDS)
        if not page.items:
            await self.say(chat, "Nothing is waiting for review.")
            return
        more = ""
        if page.total > len(page.items):
            more = f" (the {MAX_REVIEW_CARDS} newest here, the rest in the panel)"
        await self.say(chat, f"{page.total} waiting for review{more}:")
        for download in reversed(page.items):
            await self.pinger.enqueue(download.id, State.REVIEW.value, f"{ASKED}{update_id}", chats=[chat])

    async def status(self, chat: int, args: str, update_id: int) -> None:
        """/status: qBittorrent as the worker sees it and the counts."""
        version, qbittorrent = await models.status(self.commands, self.qbittorrent_url)
        await self.say(chat, answers.status_text(version, qbittorrent, await models.summary(self.commands)))

    async def undo(self, chat: int, args: str, update_id: int) -> None:
        """/undo ID asks for confirmation; /undo alone offers the latest laid-out downloads."""
        target = args.split()[0] if args.split() else ""
        if target:
            await self.ask_undo(chat, target.lower())
            return
        page = await models.page(self.commands, states_for("undo"), UNDO_CHOICES)
        if not page.items:
            await self.say(chat, "Nothing is laid out, so there is nothing to undo.")
            return
        rows: list[list[Any]] = [[InlineKeyboardButton(
            f"Undo {render.title_of(d)[:50]}",
            callback_data=encode_press(Press(Action.UNDO_ASK, d.id)))] for d in page.items]
        await self.say(chat, "Which one? (or /undo ID)", keyboard=InlineKeyboardMarkup(rows))
