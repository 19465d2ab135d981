"""The bot's slash commands through the real engine: /list, /review, /status, /undo, /help."""

from __future__ import annotations

from jellybit import __version__
from jellybit.cli.health import service_checks
from jellybit.core.states import State
from jellybit.protocol import InfoPayload
from jellybit.transports import service_health
from tests.support.engine import EngineFactory, closed_qbittorrent
from tests.support.fake_telegram import FakeTelegram, Sent
from tests.support.telegram_bot import ANNA, BotFactory, to_review, walk


async def answer_after(fake: FakeTelegram, count: int) -> Sent:
    """The bot's message number `count + 1` to Anna (commands answer without quoting)."""
    messages = await fake.until(lambda: len(fake.outbox(ANNA["id"])) > count and fake.outbox(ANNA["id"]))
    return messages[count]


async def test_list_shows_active_downloads_review_first(make_bot: BotFactory,
                                                        fake_telegram: FakeTelegram) -> None:
    """/list: the review one (by its recognized title) before the queued one, with a count."""
    bot = await make_bot()
    await bot.engine.commands.add(source=f"magnet:?xt=urn:btih:{'1' * 40}&dn=Queued.Thing")
    review = await to_review(bot.engine)
    await bot.card(review)
    before = len(fake_telegram.outbox(ANNA["id"]))
    fake_telegram.send_text(ANNA, "/list")
    text = (await answer_after(fake_telegram, before)).text
    lines = text.splitlines()
    assert lines[0] == "Active: 2"
    assert lines[1] == "• The Matrix (1999) — needs review"      # every face's name of the state
    assert lines[2] == "• Queued.Thing — queued"


def healthcheck_words(url: str, reachable: bool | None, error: str | None) -> str:
    """What `jellybit healthcheck` says of qBittorrent for the worker's `info` with this poll."""
    info = InfoPayload(version=__version__, started_at="2026-01-01T00:00:00.000000Z",
                       qbittorrent=service_health.qbittorrent_health(url, reachable, error))
    (check,) = [c for c in service_checks(info) if c.name == "qbittorrent"]
    return check.detail


async def test_status_and_help(make_engine: EngineFactory, make_bot: BotFactory,
                               fake_telegram: FakeTelegram) -> None:
    """/status names qBittorrent in the words `info` gives the panel and `healthcheck` (state, detail,
    what to do); /help and /start explain; an unknown command is named."""
    qbt = closed_qbittorrent()
    engine = await make_engine(qbt)
    bot = await make_bot(engine=engine, qbittorrent_url=qbt.url)
    fake_telegram.send_text(ANNA, "/status")
    lines = (await answer_after(fake_telegram, 0)).text.splitlines()
    assert lines[0] == f"Jellybit {__version__}"
    assert lines[1] == "qBittorrent: starting: not polled yet"
    assert "in review: 0" in lines[2]

    await engine.worker.poll_once()                     # nothing listens there: unreachable
    health = engine.worker.health
    assert health.reachable is False
    fake_telegram.send_text(ANNA, "/status")
    lines = (await answer_after(fake_telegram, 1)).text.splitlines()
    assert lines[1] == f"qBittorrent: {healthcheck_words(qbt.url, False, health.error)}"
    assert lines[1].startswith("qBittorrent: unreachable: ")
    assert f"set qbittorrent.url (now {qbt.url})" in lines[1]

    fake_telegram.send_text(ANNA, "/start")
    assert "Send a magnet link" in (await answer_after(fake_telegram, 2)).text
    fake_telegram.send_text(ANNA, "/frobnicate")
    assert "do not know that command" in (await answer_after(fake_telegram, 3)).text
    fake_telegram.send_text(ANNA, "/list@some_other_bot")     # in a group, for another bot: ignored
    fake_telegram.send_text(ANNA, "/help@jellybit_test_bot")
    assert "Send a magnet link" in (await answer_after(fake_telegram, 4)).text
    assert [c["command"] for c in fake_telegram.commands] == ["list", "review", "status", "undo", "help"]
    assert bot.transport.handler.bot_username == "jellybit_test_bot"


async def test_review_resends_the_cards_even_when_deferred(make_bot: BotFactory,
                                                           fake_telegram: FakeTelegram) -> None:
    """/review: one card per waiting download, with working buttons."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    first = await bot.card(download_id)
    fake_telegram.press(ANNA, first, "Defer")
    await fake_telegram.until(lambda: not first.buttons)
    fake_telegram.send_text(ANNA, "/review")
    again = await bot.card(download_id)              # the first card lost its buttons to the Defer
    assert [b["text"] for b in again.buttons][:3] == ["Apply", "Reject", "Defer"]
    assert any(s.text == "1 waiting for review:" for s in fake_telegram.outbox(ANNA["id"]))
    fake_telegram.press(ANNA, again, "Apply")
    await bot.state(download_id, State.DONE)


async def test_undo_asks_first_and_then_removes_the_links(make_bot: BotFactory,
                                                          fake_telegram: FakeTelegram) -> None:
    """/undo ID sends a confirmation; 'Keep it' changes nothing; 'Yes, undo' reverts."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    await bot.apply_by_button(download_id)
    done = await bot.card(download_id, "Done")

    fake_telegram.press(ANNA, done, "Undo")
    ask = await bot.card(download_id, "Undo ")
    assert "the download stays in qBittorrent" in ask.text
    fake_telegram.press(ANNA, ask, "Keep it")
    await fake_telegram.until(lambda: not ask.buttons)
    assert (await bot.engine.store.get_download(download_id)).state is State.DONE
    assert bot.engine.layouter.undone == []

    fake_telegram.send_text(ANNA, f"/undo {download_id.upper()}")
    confirm = await bot.card(download_id, "Undo ")   # the first confirmation has no buttons left
    fake_telegram.press(ANNA, confirm, "Yes, undo")
    await bot.state(download_id, State.REVERTED)
    await fake_telegram.until(lambda: not confirm.buttons)
    assert "Undone by Анна: 1 library file(s) removed." in confirm.text
    assert bot.engine.layouter.undone == [download_id]


async def test_undo_refuses_what_cannot_be_undone(make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """/undo of an unknown id or of a download that is not laid out says why."""
    bot = await make_bot()
    fake_telegram.send_text(ANNA, "/undo 01jbz9x8k4m3n2p1q0r9s8t7v6")
    assert (await answer_after(fake_telegram, 0)).text.startswith("Not done: ")
    fake_telegram.send_text(ANNA, "/undo")
    assert "Nothing is laid out" in (await answer_after(fake_telegram, 1)).text
    added = await bot.engine.commands.add(source=f"magnet:?xt=urn:btih:{'2' * 40}&dn=Still.Queued")
    fake_telegram.send_text(ANNA, f"/undo {added.download.id}")
    assert "only laid-out downloads can be undone" in (await answer_after(fake_telegram, 2)).text


async def test_undo_without_an_id_offers_the_latest(make_bot: BotFactory,
                                                    fake_telegram: FakeTelegram) -> None:
    """/undo alone lists the laid-out downloads as buttons that ask for confirmation."""
    bot = await make_bot()
    added = await bot.engine.commands.add(source=f"magnet:?xt=urn:btih:{'3' * 40}&dn=Laid.Out")
    await walk(bot.engine, added.download.id, State.DOWNLOADING, State.RECOGNIZING, State.APPLYING,
               State.DONE)
    fake_telegram.send_text(ANNA, "/undo")
    offer = await fake_telegram.until(
        lambda: [s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Which one?")])
    fake_telegram.press(ANNA, offer[0], "Undo Laid.Out")
    await bot.card(added.download.id, "Undo ")
