"""The Telegram bot against a local Bot API: access, ingest of every source kind, re-delivery."""

from __future__ import annotations

import logging

import pytest

from jellybit.core.states import State
from tests.support.engine import EngineFactory, closed_qbittorrent
from tests.support.fake_telegram import FakeTelegram
from tests.support.telegram_bot import ANNA, BORIS, STRANGER, BotFactory
from tests.support.torrents import make_content, make_torrent

HASH_A = "a" * 40
HASH_B = "b" * 40
HASH_V2 = "c" * 64


async def downloads(bot) -> list:
    """Every download, oldest first."""
    page = await bot.engine.commands.list(limit=100)
    return sorted(page.items, key=lambda d: d.created_at)


# ---------------------------------------------------------------- access


async def test_an_empty_allow_list_serves_nobody(make_bot: BotFactory, fake_telegram: FakeTelegram,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """Fail-closed: with no allowed users even a magnet adds nothing; one polite refusal, logged."""
    bot = await make_bot(allowed_user_ids=[])
    caplog.set_level(logging.WARNING, logger="jellybit.transports.telegram.handlers")
    fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{HASH_A} please")
    refusal = await fake_telegram.until(lambda: fake_telegram.outbox(ANNA["id"]))
    assert "private bot" in refusal[0].text
    assert str(ANNA["id"]) in refusal[0].text
    fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{HASH_B}")
    await fake_telegram.until(lambda: fake_telegram.pending == 0 and fake_telegram.confirmed_below > 0)
    await fake_telegram.until(lambda: len([r for r in caplog.records if "allow-list" in r.message]) >= 2)
    assert len(fake_telegram.outbox(ANNA["id"])) == 1          # one refusal, then silence
    assert await downloads(bot) == []
    logged = [r for r in caplog.records if "allow-list" in r.message]
    assert logged[0].telegram_user_id == ANNA["id"]
    assert logged[0].telegram_name == "Анна"


async def test_a_stranger_is_refused_once_while_an_allowed_user_is_served(
        make_bot: BotFactory, fake_telegram: FakeTelegram, caplog: pytest.LogCaptureFixture) -> None:
    """Only allowed ids are served; a stranger's buttons do nothing either."""
    bot = await make_bot()
    caplog.set_level(logging.WARNING, logger="jellybit.transports.telegram.handlers")
    for _ in range(3):
        fake_telegram.send_text(STRANGER, f"magnet:?xt=urn:btih:{HASH_A}")
    served = fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{HASH_B} Фарго, второй сезон")
    answer = await bot.reply_to(served)
    assert answer.text.startswith("Added:")
    assert len(fake_telegram.outbox(STRANGER["id"])) == 1
    names = {r.telegram_name for r in caplog.records if "allow-list" in r.message}
    assert names == {"Mallory Evil"}
    (only,) = await downloads(bot)
    assert only.hashes() == {HASH_B}
    assert only.context == "Фарго, второй сезон"


async def test_a_user_over_the_rate_is_told_once_and_then_ignored(make_bot: BotFactory,
                                                                  fake_telegram: FakeTelegram) -> None:
    """Per-user rate limit: the bucket holds `rate_limit_per_minute` updates."""
    bot = await make_bot(rate_limit_per_minute=2)
    updates = [fake_telegram.send_text(ANNA, "/help") for _ in range(5)]
    await fake_telegram.until(lambda: fake_telegram.confirmed_below > updates[-1]["update_id"]
                              or fake_telegram.pending == 0)
    await fake_telegram.until(lambda: len(fake_telegram.outbox(ANNA["id"])) >= 3)
    texts = [s.text for s in fake_telegram.outbox(ANNA["id"])]
    assert sum("Jellybit puts torrents" in t for t in texts) == 2
    assert sum(t.startswith("Too many messages") for t in texts) == 1
    assert bot.transport.gate.allowed_user(ANNA["id"])


# ---------------------------------------------------------------- ingest


async def test_each_source_kind_becomes_a_download_with_the_rest_as_context(
        make_bot: BotFactory, make_engine: EngineFactory, fake_telegram: FakeTelegram) -> None:
    """A magnet, a .torrent link, bare v1/v2 infohashes and a hidden link: several downloads, one context."""
    # the links point at a tracker of the user's own on this machine, so it is allow-listed
    own_tracker = closed_qbittorrent().model_copy(update={"allow_private_hosts": ["127.0.0.1"]})
    bot = await make_bot(engine=await make_engine(own_tracker, automatic=False))
    text = (f"Смотри: magnet:?xt=urn:btih:{HASH_A}&dn=Fargo.S02 и http://127.0.0.1:9/get/42.torrent, "
            f"ещё {HASH_B.upper()} и {HASH_V2} — второй сезон, датская версия. Link")
    link = {"type": "text_link", "offset": len(text) - 4, "length": 4,
            "url": "http://127.0.0.1:9/dl/43.torrent"}
    update = fake_telegram.send_text(ANNA, text, entities=[link])
    answer = await bot.reply_to(update)
    made = await downloads(bot)
    assert [d.source_type for d in made] == ["magnet", "url", "infohash", "infohash", "url"]
    assert made[0].display_name == "Fargo.S02"
    assert made[2].hashes() == {HASH_B}
    assert made[3].hashes() == {HASH_V2}
    assert {d.context for d in made} == {"Смотри: и, ещё и — второй сезон, датская версия. Link"}
    assert answer.text.count("Added:") == 5
    assert "Context: Смотри" in answer.text


async def test_a_torrent_document_with_a_caption(make_bot: BotFactory, fake_telegram: FakeTelegram,
                                                 tmp_path) -> None:
    """A .torrent file is fetched with getFile + the file path; its caption is the context."""
    bot = await make_bot()
    content = make_content(tmp_path, "Метод.S01.WEB-DL", {"Метод.S01E01.mkv": 2_000})
    torrent = make_torrent(content, "v1")
    update = fake_telegram.send_document(ANNA, torrent, "Metod.torrent",
                                         caption="русский сериал, первый сезон")
    answer = await bot.reply_to(update)
    (download,) = await downloads(bot)
    assert download.source_type == "torrent"
    assert download.display_name == "Метод.S01.WEB-DL"
    assert download.context == "русский сериал, первый сезон"
    assert "Added: Метод.S01.WEB-DL" in answer.text
    assert fake_telegram.calls(path=f"/bot{fake_telegram.token}/getFile")
    assert any(r.path.startswith(f"/file/bot{fake_telegram.token}/documents/") for r in fake_telegram.calls())


async def test_bad_documents_and_sources_are_refused_with_reasons(make_bot: BotFactory,
                                                                  fake_telegram: FakeTelegram) -> None:
    """Not a torrent, too large (never fetched), a malformed magnet: clear answers, nothing added."""
    bot = await make_bot()
    not_torrent = fake_telegram.send_document(ANNA, b"hello", "notes.txt", mime_type="text/plain")
    assert "notes.txt is not a .torrent file" in (await bot.reply_to(not_torrent)).text
    huge = fake_telegram.send_document(ANNA, b"d4:infoe", "huge.torrent", size=10 * 1024 * 1024)
    assert "huge.torrent is larger than" in (await bot.reply_to(huge)).text
    broken = fake_telegram.send_text(ANNA, "magnet:?xt=urn:btih:1234 what is this")
    refused = (await bot.reply_to(broken)).text
    assert "Not added: magnet:?xt=urn:btih:1234: magnet link has a malformed" in refused
    nothing = fake_telegram.send_text(ANNA, "just words")
    assert "found no magnet" in (await bot.reply_to(nothing)).text
    assert not fake_telegram.calls(path=f"/bot{fake_telegram.token}/getFile")
    assert await downloads(bot) == []


async def test_a_forwarded_message_and_a_second_user(make_bot: BotFactory,
                                                     fake_telegram: FakeTelegram) -> None:
    """A forward is read like any message; the same hash from a second allowed user joins the download."""
    bot = await make_bot(allowed_user_ids=[ANNA["id"], BORIS["id"]])
    forwarded = fake_telegram.send_text(ANNA, f"New release {HASH_A} — the 2014 series",
                                        forward_from=FakeTelegram.user(77, "Channel"))
    assert "Added:" in (await bot.reply_to(forwarded)).text
    again = fake_telegram.send_text(BORIS, f"magnet:?xt=urn:btih:{HASH_A}")
    assert "Already here:" in (await bot.reply_to(again, chat=BORIS["id"])).text
    (download,) = await downloads(bot)
    assert download.context == "New release — the 2014 series"


async def test_a_redelivered_update_adds_nothing_twice(make_bot: BotFactory,
                                                       fake_telegram: FakeTelegram) -> None:
    """Telegram re-sends an update (in this run, and to a restarted bot): one download, one answer."""
    bot = await make_bot()
    update = fake_telegram.send_text(ANNA, f"magnet:?xt=urn:btih:{HASH_A} once")
    await bot.reply_to(update)
    fake_telegram.push(update)
    await fake_telegram.until(lambda: fake_telegram.pending == 0)
    await bot.stop()
    await make_bot(engine=bot.engine)
    fake_telegram.push(update)
    fake_telegram.send_text(ANNA, "/help")
    await fake_telegram.until(lambda: any("Jellybit puts" in s.text
                                          for s in fake_telegram.outbox(ANNA["id"])))
    assert len(await downloads(bot)) == 1
    answers = [s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Added:")]
    assert len(answers) == 1
    assert (await downloads(bot))[0].state is State.QUEUED
