"""A running Telegram transport over the real engine, pointed at the fake Bot API.

Fixture `make_bot` (registered in tests/conftest.py): `await make_bot(**telegram_config_overrides)`
builds an engine (or takes `engine=`), starts the transport as the app does, and stops it after.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from jellybit.config import TelegramConfig
from jellybit.core.records import Candidate, MediaType, Plan, PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.states import Actor, State, is_reactivation
from jellybit.transports.telegram.transport import TelegramTransport
from tests.support.engine import Engine, EngineFactory
from tests.support.fake_telegram import TOKEN, FakeTelegram, Sent
from tests.support.qbittorrent import magnet

ANNA = FakeTelegram.user(1001, "Анна", "anna")
BORIS = FakeTelegram.user(1002, "Boris", "boris")
STRANGER = FakeTelegram.user(666, "Mallory", "mallory", last_name="Evil")
PANEL = "https://jellybit.example"
POSTER = "https://image.example/t/p/w342/matrix.jpg"


def telegram_config(fake: FakeTelegram, **overrides: Any) -> TelegramConfig:
    """An enabled bot config pointed at the fake, serving Anna."""
    values: dict[str, Any] = {"enabled": True, "token": TOKEN, "allowed_user_ids": [ANNA["id"]],
                              "base_url": fake.origin, "poll_timeout": 1, **overrides}
    return TelegramConfig(**values)


@dataclass
class Bot:
    """The engine, the running transport and the fake it talks to."""

    engine: Engine
    fake: FakeTelegram
    transport: TelegramTransport
    task: asyncio.Task[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    async def start(self) -> None:
        """Run the transport as the app does."""
        self.task = asyncio.create_task(self.transport.run(), name="telegram")

    async def stop(self) -> None:
        """Cancel the transport task (as App.stop does) and wait for it."""
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None

    async def reply_to(self, update: dict[str, Any], chat: int = ANNA["id"]) -> Sent:
        """The bot's answer to a message update."""
        message_id = update["message"]["message_id"]

        def answered() -> Sent | None:
            for sent in self.fake.outbox(chat):
                reply = sent.params.get("reply_parameters") or {}
                if reply.get("message_id") == message_id:
                    return sent
            return None

        return await self.fake.until(answered)

    async def card(self, download_id: str, kind: str = "Needs review", chat: int = ANNA["id"],
                   count: int = 1, within: float = 15.0) -> Sent:
        """The `count`-th card of a kind the bot sent about a download."""
        def found() -> Sent | None:
            cards = [s for s in self.fake.outbox(chat) if s.text.startswith(kind)
                     and any(download_id in str(b) for b in s.message.get("reply_markup", {}).values())]
            return cards[count - 1] if len(cards) >= count else None

        return await self.fake.until(found, within)

    async def apply_by_button(self, download_id: str) -> Sent:
        """Press Apply on the download's review card (as Anna) and wait until it is done; the card."""
        card = await self.card(download_id)
        self.fake.press(ANNA, card, "Apply")
        await self.state(download_id, State.DONE)
        return card

    async def state(self, download_id: str, *states: State, within: float = 15.0) -> None:
        """Wait until the download is in one of the states."""
        async def probe() -> bool:
            return (await self.engine.store.get_download(download_id)).state in states

        deadline = asyncio.get_running_loop().time() + within
        while not await probe():
            if asyncio.get_running_loop().time() > deadline:
                current = (await self.engine.store.get_download(download_id)).state
                pytest.fail(f"download is {current}, never {[s.value for s in states]}")
            await asyncio.sleep(0.02)


BotFactory = Callable[..., Awaitable[Bot]]


@pytest.fixture
async def make_bot(make_engine: EngineFactory, fake_telegram: FakeTelegram) -> AsyncIterator[BotFactory]:
    """Build and start bots: `await make_bot(allowed_user_ids=[...], automatic=False, ...)`."""
    bots: list[Bot] = []

    async def build(*, engine: Engine | None = None, start: bool = True, automatic: bool = False,
                    margin: float = 0.15, panel: str = PANEL, qbittorrent_url: str = "",
                    **overrides: Any) -> Bot:
        engine = engine or await make_engine(automatic=automatic)
        config = telegram_config(fake_telegram, **overrides)
        transport = TelegramTransport(config, engine.commands, engine.bus, engine.store, panel_url=panel,
                                      margin=margin, max_torrent_bytes=64 * 1024, max_backoff=0.3,
                                      qbittorrent_url=qbittorrent_url)
        bot = Bot(engine, fake_telegram, transport)
        bots.append(bot)
        if start:
            await bot.start()
        return bot

    yield build
    for bot in bots:
        await bot.stop()


async def walk(engine: Engine, download_id: str, *states: State) -> None:
    """Move a download through states with the real state machine (as the worker would)."""
    for state in states:
        current = (await engine.store.get_download(download_id)).state
        await engine.worker.serial.change(download_id, state, reason="test", actor=Actor.WORKER,
                                          reactivate=is_reactivation(current, state))


async def to_review(engine: Engine, name: str = "The.Matrix.1999.1080p", *, poster: str | None = None,
                    reasons: tuple[Reason, ...] | None = None, held: str | None = None) -> str:
    """A download in review (as the worker leaves it) with two candidates stored; `held`: its video is
    a better copy of a film already in the library (the preview's note)."""
    download_id = (await engine.commands.add(source=magnet(name=name), context="the 1999 film")).download.id
    await walk(engine, download_id, State.DOWNLOADING, State.RECOGNIZING)
    draft = RecognitionDraft(
        MediaType.MOVIE, "The Matrix", 1999, Plan((PlanItem(
            f"{name}/film.mkv", 100, Role.VIDEO, library="movies" if held else None,
            target="The Matrix (1999)/The Matrix (1999).mkv" if held else None,
            status="held" if held else None, note=held),)),
        confidence=0.55,
        reasons=reasons or (Reason("small_margin", "the runner-up is nearly as good as the best candidate",
                                   0.15, blocking=True),),
        candidates=(Candidate("tmdb", "603", MediaType.MOVIE, "The Matrix", 1999, poster_url=poster,
                              distance=0.05),
                    Candidate("tmdb", "604", MediaType.MOVIE, "The Matrix Reloaded", 2003, distance=0.12)),
    )
    await engine.store.save_recognition(download_id, draft)
    await walk(engine, download_id, State.REVIEW)
    return download_id
