"""The bot keeps its promises when Telegram does not: 429, outages, restarts, refusals, webhooks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import httpx
import pytest

from jellybit.core.pings import PingStatus, TelegramPing
from jellybit.transports.telegram.pings import ASKED, HELD_MAX
from jellybit.transports.telegram.send import REPLY_ATTEMPTS
from jellybit.transports.telegram.transport import UPDATE_ATTEMPTS
from tests.support.fake_telegram import TOKEN, FakeTelegram
from tests.support.qbittorrent import eventually
from tests.support.services import free_port
from tests.support.telegram_bot import ANNA, POSTER, BotFactory, to_review

RETRY_AFTER = {"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 1",
               "parameters": {"retry_after": 1}}


async def ping_rows(bot, download_id: str) -> list:
    """The queued pings of a download."""
    return await bot.engine.store.telegram_pings(download_id)


async def first_ping(bot, download_id: str, check: Callable[[TelegramPing], bool]) -> TelegramPing:
    """Wait until the download's first ping satisfies `check`."""
    async def probe() -> TelegramPing | None:
        rows = await ping_rows(bot, download_id)
        return rows[0] if rows and check(rows[0]) else None

    return await eventually(probe)


async def test_429_is_waited_out_and_the_ping_goes_once(make_bot: BotFactory,
                                                       fake_telegram: FakeTelegram) -> None:
    """Flood control: the ping is sent again after `retry_after`, exactly once."""
    bot = await make_bot()
    fake_telegram.script(429, RETRY_AFTER, path=f"/bot{TOKEN}/sendMessage")
    download_id = await to_review(bot.engine)
    card = await bot.card(download_id)
    tries = fake_telegram.calls(path=f"/bot{TOKEN}/sendMessage")
    assert len(tries) == 2
    assert tries[1].at - tries[0].at >= 1.0            # never earlier than Telegram asked
    row = await first_ping(bot, download_id, lambda p: p.status is PingStatus.SENT)
    assert len(await ping_rows(bot, download_id)) == 1
    assert row.message_id == card.message["message_id"]
    assert row.attempts == 2


async def test_a_network_loss_loses_no_ping_and_no_message(make_bot: BotFactory,
                                                           fake_telegram: FakeTelegram) -> None:
    """Telegram unreachable: the transport keeps running, the ping waits in SQLite, both recover."""
    bot = await make_bot()
    fake_telegram.stop()
    download_id = await to_review(bot.engine)

    row = await first_ping(bot, download_id, lambda p: p.attempts >= 1)
    assert row.status is PingStatus.PENDING
    assert row.last_error
    assert bot.task is not None
    assert not bot.task.done()                          # nothing crashed
    fake_telegram.start()                               # back on the same port
    card = await bot.card(download_id, within=30.0)
    assert card.buttons
    update = fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{'e' * 40}")
    assert "Added:" in (await bot.reply_to(update)).text


async def test_queued_pings_survive_a_restart(make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """Pings queued while Telegram was down are sent by the next run of the bot."""
    bot = await make_bot()
    fake_telegram.stop()
    download_id = await to_review(bot.engine)
    await asyncio.sleep(0.05)
    await bot.stop()
    fake_telegram.start()
    again = await make_bot(engine=bot.engine)
    await again.card(download_id)
    assert len([s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")]) == 1


async def test_a_state_reached_while_the_bot_was_not_listening_is_pinged_after_restart(
        make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """An event lost between the commit and the queue (a crash) is found again from the cursor."""
    bot = await make_bot()
    await fake_telegram.until(lambda: fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
    await bot.stop()                                   # no subscriber: the event below is lost
    download_id = await to_review(bot.engine)
    again = await make_bot(engine=bot.engine)
    card = await again.card(download_id)
    assert card.buttons


async def test_a_ping_about_a_state_already_left_is_superseded(make_bot: BotFactory,
                                                               fake_telegram: FakeTelegram) -> None:
    """Decided elsewhere (the panel) while Telegram was down: the stale review ping is not sent."""
    bot = await make_bot()
    fake_telegram.stop()
    download_id = await to_review(bot.engine)
    await first_ping(bot, download_id, lambda p: p.attempts >= 1)     # tried while Telegram was down
    await bot.engine.commands.reject(download_id, reason="from the panel")
    fake_telegram.start()
    fake_telegram.send_text(ANNA, "/help")               # the bot is back and working
    await fake_telegram.until(lambda: any("Jellybit puts" in s.text for s in fake_telegram.outbox()))
    await first_ping(bot, download_id, lambda p: p.status is PingStatus.SUPERSEDED)
    assert not [s for s in fake_telegram.outbox() if s.text.startswith("Needs review")]


async def test_refused_poster_and_url_button_fall_back(make_bot: BotFactory,
                                                       fake_telegram: FakeTelegram) -> None:
    """A poster Telegram cannot fetch and a panel URL it will not take still give a working card."""
    bot = await make_bot(panel="http://localhost:8099")
    fake_telegram.unreachable_photos.add(POSTER)
    download_id = await to_review(bot.engine, poster=POSTER)
    card = await bot.card(download_id)
    assert card.method == "sendMessage"
    assert f"Panel: http://localhost:8099/download/{download_id}" in card.text
    assert [b["text"] for b in card.buttons][:3] == ["Apply", "Reject", "Defer"]
    assert not [b for b in card.buttons if "url" in b]


async def test_a_blocked_chat_keeps_its_ping_pending(make_bot: BotFactory,
                                                     fake_telegram: FakeTelegram) -> None:
    """403 (the user never pressed Start): the ping waits and is not dropped."""
    bot = await make_bot()
    fake_telegram.blocked_chats.add(ANNA["id"])
    download_id = await to_review(bot.engine)
    row = await first_ping(bot, download_id, lambda p: p.attempts >= 1)
    assert row.status is PingStatus.PENDING
    assert "blocked" in (row.last_error or "")


async def test_a_wrong_token_never_stops_the_worker(make_bot: BotFactory,
                                                    fake_telegram: FakeTelegram) -> None:
    """401 from getMe: logged, retried with backoff, the task keeps running."""
    bot = await make_bot(token="1:wrong-token-value")
    await fake_telegram.until(lambda: len(fake_telegram.calls(path="/bot1:wrong-token-value/getMe")) >= 2)
    assert bot.task is not None
    assert not bot.task.done()


async def test_the_webhook_receives_updates_only_with_the_secret(make_bot: BotFactory,
                                                                 fake_telegram: FakeTelegram) -> None:
    """Webhook mode: setWebhook with a secret token; a request without it is refused."""
    port = free_port()
    bot = await make_bot(webhook_url="https://bot.example/hook", webhook_port=port)
    hook = await fake_telegram.until(lambda: fake_telegram.webhook)
    assert hook["url"].startswith("https://bot.example/hook/telegram/")
    path = hook["url"].removeprefix("https://bot.example/hook")
    update = {"update_id": 9001, "message": {
        "message_id": 5, "date": 1, "chat": {"id": ANNA["id"], "type": "private", "first_name": "Анна"},
        "from": ANNA, "text": f"magnet:?xt=urn:btih:{'f' * 40} вебхук"}}
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        for _ in range(200):
            try:
                refused = await client.post(path, json=update,
                                            headers={"X-Telegram-Bot-Api-Secret-Token": "x"})
                break
            except httpx.TransportError:
                await asyncio.sleep(0.05)
        assert refused.status_code == 403
        ok = await client.post(path, json=update,
                               headers={"X-Telegram-Bot-Api-Secret-Token": hook["secret_token"]})
        assert ok.status_code == 200
        again = await client.post(path, json=update,
                                  headers={"X-Telegram-Bot-Api-Secret-Token": hook["secret_token"]})
        assert again.status_code == 200
    page = await bot.engine.commands.list(limit=10)
    assert [d.context for d in page.items] == ["вебхук"]
    assert not fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates")


@pytest.mark.parametrize(("status", "body"), [
    (500, {"ok": False, "error_code": 500, "description": "Internal Server Error"}),
    (404, {"ok": False, "error_code": 404, "description": "Not Found"}),     # PTB calls this InvalidToken
])
async def test_an_update_that_keeps_failing_does_not_hold_back_later_ones(
        make_bot: BotFactory, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture,
        status: int, body: dict) -> None:
    """A .torrent Telegram never hands over: tried a bounded number of times, the sender told, then on."""
    caplog.set_level(logging.INFO, logger="jellybit.transports")
    bot = await make_bot()
    fake_telegram.script(status, body, times=1000, path=f"/file/bot{TOKEN}/")
    stuck = fake_telegram.send_document(ANNA, b"d4:infod4:name1:xee", "Stuck.torrent")
    later = fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{'c' * 40}")

    notice = await bot.reply_to(stuck)
    assert "could not handle that message" in notice.text
    assert f"{UPDATE_ATTEMPTS} tries" in notice.text
    assert "Added:" in (await bot.reply_to(later)).text
    downloads = [d for d in await bot.engine.store.list_downloads() if d.source_type == "magnet"]
    assert len(downloads) == 1
    fetches = [r for r in fake_telegram.calls() if r.path.startswith(f"/file/bot{TOKEN}/")]
    assert len(fetches) == UPDATE_ATTEMPTS
    await fake_telegram.until(lambda: fake_telegram.pending == 0)           # both confirmed
    assert await bot.engine.store.telegram_update_seen(stuck["update_id"])
    given_up = [r for r in caplog.records if "given up" in r.getMessage()]
    assert len(given_up) == 1
    assert not [r for r in caplog.records if "refused the bot token" in r.getMessage()]
    assert bot.task is not None
    assert not bot.task.done()


async def test_a_wrong_token_is_still_named_as_one(make_bot: BotFactory, fake_telegram: FakeTelegram,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """getMe answering 401 is what makes the bot say the token is refused."""
    caplog.set_level(logging.INFO, logger="jellybit.transports")
    await make_bot(token="1:wrong-token-value")
    await fake_telegram.until(lambda: [r for r in caplog.records if "refused the bot token" in r.message])
    assert len(fake_telegram.calls(path="/bot1:wrong-token-value/getMe")) >= 2        # asked again to be sure


async def test_an_answer_dropped_after_flood_control_is_logged_with_its_reason(
        make_bot: BotFactory, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    """Three 429s in a row on one answer: it is dropped, and the log says so and why."""
    caplog.set_level(logging.INFO, logger="jellybit.transports")
    bot = await make_bot()
    fake_telegram.script(429, RETRY_AFTER, times=REPLY_ATTEMPTS, path=f"/bot{TOKEN}/sendMessage")
    fake_telegram.send_text(ANNA, "/help")
    await fake_telegram.until(lambda: [r for r in caplog.records if "flood-limited" in r.getMessage()],
                              within=20.0)
    (record,) = [r for r in caplog.records if "flood-limited" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "Flood control exceeded" in record.error
    assert len(fake_telegram.calls(path=f"/bot{TOKEN}/sendMessage")) == REPLY_ATTEMPTS
    fake_telegram.send_text(ANNA, "/help")                                 # the next answer goes out
    await fake_telegram.until(lambda: any("Jellybit puts" in s.text for s in fake_telegram.outbox()))
    assert bot.task is not None


async def test_a_database_refusing_writes_keeps_the_ping_and_sends_it_after(
        make_bot: BotFactory, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    """A download reaches review, then the database refuses writes (SQLite's own read-only refusal,
    a `storage_read_only` fault) before the ping is queued: the ping waits in memory with one log
    line and no traceback, and is queued and sent once the database takes writes again."""
    bot = await make_bot(start=False)
    pinger = bot.transport.pinger
    await pinger.catch_up()                              # the cursor, as the first start sets it
    download_id = await to_review(bot.engine)            # its event waits in the bot's subscription
    store = bot.engine.store
    await store.conn.execute("PRAGMA query_only = ON")
    caplog.set_level(logging.INFO, logger="jellybit.transports")
    await bot.start()

    async def held() -> bool:
        return pinger.held >= 1
    await eventually(held)
    await fake_telegram.until(lambda: fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
    await asyncio.sleep(0.3)                             # the event, a retry: still no traceback
    assert await ping_rows(bot, download_id) == []
    assert not [s for s in fake_telegram.outbox() if s.text.startswith("Needs review")]
    assert not [r for r in caplog.records if r.exc_info]
    waiting = [r for r in caplog.records if "wait in memory" in r.getMessage()]
    assert len(waiting) == 1
    assert "the database is read-only" in waiting[0].getMessage()

    await store.conn.execute("PRAGMA query_only = OFF")
    card = await bot.card(download_id, within=30.0)
    assert card.buttons
    await first_ping(bot, download_id, lambda p: p.status is PingStatus.SENT)
    assert pinger.held == 0
    await asyncio.sleep(0.3)
    assert len([s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")]) == 1
    assert [r for r in caplog.records if "queued after the database fault" in r.getMessage()]
    assert not [r for r in caplog.records if r.exc_info]


async def test_pings_past_the_memory_bound_are_found_again_by_a_catch_up(make_bot: BotFactory) -> None:
    """More pings than memory holds while the database refuses writes: the oldest leave memory, and
    once writes get through the catch-up from the cursor (which stayed put) queues the state again."""
    bot = await make_bot(start=False)
    pinger = bot.transport.pinger
    await pinger.catch_up()
    download_id = await to_review(bot.engine)
    store = bot.engine.store
    await store.conn.execute("PRAGMA query_only = ON")
    for n in range(HELD_MAX + 1):
        assert await pinger.enqueue(download_id, "review", f"{ASKED}{n}") == 0
    assert pinger.held == HELD_MAX
    assert await pinger.flush_held() == 0                # still refused: nothing leaves memory
    assert pinger.held == HELD_MAX
    await store.conn.execute("PRAGMA query_only = OFF")
    assert await pinger.flush_held() == HELD_MAX + 1     # the held ones and the transition caught up
    keys = {row.dedupe_key for row in await ping_rows(bot, download_id)}
    assert f"review@{ASKED}0" not in keys
    assert f"review@{ASKED}{HELD_MAX}" in keys
    transition = [t for t in (await bot.engine.commands.get(download_id)).transitions
                  if t.to_state.value == "review"][-1]
    assert f"review@{transition.created_at}" in keys


async def test_a_message_during_a_database_fault_is_answered_once(
        make_bot: BotFactory, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    """The database refuses writes: a message is answered once, not again on every retry of the
    update's bookkeeping, and without a traceback."""
    bot = await make_bot()
    await fake_telegram.until(lambda: fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
    await bot.engine.store.conn.execute("PRAGMA query_only = ON")
    caplog.set_level(logging.INFO, logger="jellybit.transports")
    fake_telegram.send_text(ANNA, "/help")

    def answers() -> list:
        return [s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Jellybit puts")]
    await fake_telegram.until(answers)
    polls = len(fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates"))
    await fake_telegram.until(lambda: len(fake_telegram.calls(path=f"/bot{TOKEN}/getUpdates")) >= polls + 3)
    assert len(answers()) == 1
    assert not [r for r in caplog.records if r.exc_info]
    await bot.engine.store.conn.execute("PRAGMA query_only = OFF")
