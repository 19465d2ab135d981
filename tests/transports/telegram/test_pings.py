"""Pings and buttons through to the engine's state: review, done, failed, defer, refine, undo."""

from __future__ import annotations

from jellybit import clock
from jellybit.core.jellyfin import Confirmation
from jellybit.core.records import Reason
from jellybit.core.states import Actor, State
from jellybit.engine.events import Event, EventKind
from tests.support.fake_telegram import FakeTelegram
from tests.support.telegram_bot import ANNA, BORIS, POSTER, BotFactory, to_review, walk


async def test_a_review_ping_with_poster_buttons_and_apply(make_bot: BotFactory,
                                                           fake_telegram: FakeTelegram) -> None:
    """Needs review: title, poster, reason in words, buttons; Apply lays it out and the buttons go."""
    bot = await make_bot()
    download_id = await to_review(bot.engine, poster=POSTER)
    card = await bot.card(download_id)
    assert card.method == "sendPhoto"
    assert card.params["photo"] == POSTER
    assert card.text.startswith("Needs review: The Matrix (1999) · movie")
    assert "the runner-up is nearly as good as the best candidate" in card.text
    assert "Context: the 1999 film" in card.text
    labels = [b["text"] for b in card.buttons]
    assert labels[:3] == ["Apply", "Reject", "Defer"]
    assert "The Matrix (1999) · movie · TMDB" in labels
    assert "The Matrix Reloaded (2003) · movie · TMDB" in labels
    assert card.button("Open panel")["url"] == f"https://jellybit.example/download/{download_id}"

    fake_telegram.press(ANNA, card, "Apply")
    await bot.state(download_id, State.DONE)
    answer = await fake_telegram.until(lambda: fake_telegram.answers)
    assert answer[0]["text"].startswith("Applied by Анна")
    await fake_telegram.until(lambda: not card.buttons)
    assert card.edits[-1].get("caption")              # a photo's caption is edited, not its text
    assert "Applied by Анна" in card.text

    done = await bot.card(download_id, "Done")
    recognition = await bot.engine.store.current_recognition(download_id)   # what the apply laid out
    assert done.text.startswith(f"Done: {recognition.title}")
    assert f"In Movies / {recognition.plan.folder}" in done.text
    assert [b["text"] for b in done.buttons] == ["Open panel", "Undo"]


async def test_an_old_button_pressed_again_changes_nothing(make_bot: BotFactory,
                                                           fake_telegram: FakeTelegram) -> None:
    """A second press (an old card, or a double tap) answers why, and the engine is untouched."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    card = await bot.card(download_id)
    stale = dict(card.message)                        # what the phone still shows
    fake_telegram.press(ANNA, card, "Reject")
    await bot.state(download_id, State.CANCELLED)
    await fake_telegram.until(lambda: not card.buttons)
    card.message = stale
    fake_telegram.press(ANNA, card, "Apply")
    answers = await fake_telegram.until(lambda: len(fake_telegram.answers) >= 2 and fake_telegram.answers)
    assert answers[1]["text"] == "Not done: apply is not possible in state cancelled"
    history = [t.to_state for t in await bot.engine.store.transitions(download_id)]
    assert history.count(State.CANCELLED) == 1
    assert history[-1] is State.CANCELLED


async def test_a_close_candidate_button_applies_that_candidate(make_bot: BotFactory,
                                                               fake_telegram: FakeTelegram) -> None:
    """The runner-up's button applies it: it is the chosen candidate of the next recognition."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    card = await bot.card(download_id)
    assert card.method == "sendMessage"                # no poster: a text card
    fake_telegram.press(ANNA, card, "The Matrix Reloaded")
    await bot.state(download_id, State.DONE)
    requests = bot.engine.recognizer.requests
    assert requests[-1].chosen is not None
    assert requests[-1].chosen.provider_id == "604"


async def test_a_reply_to_a_review_card_is_a_hint(make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """Refine from the phone: the reply's text is stored as a hint and recognition runs again."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    card = await bot.card(download_id)
    reply = fake_telegram.send_text(ANNA, "это фильм 1999 года, не сиквел", reply_to=card.message)
    answer = await bot.reply_to(reply)
    assert answer.text.startswith("Hint added")
    hints = [h.text for h in await bot.engine.store.hints(download_id)]
    assert hints == ["это фильм 1999 года, не сиквел"]
    history = await bot.engine.store.transitions(download_id)
    assert (history[-1].from_state, history[-1].to_state) == (State.REVIEW, State.RECOGNIZING)
    assert history[-1].reason == "refine: hint added"
    other = fake_telegram.send_text(ANNA, "and this?", reply_to=answer.message)   # not a review card
    assert "found no magnet" in (await bot.reply_to(other)).text


async def test_defer_postpones_and_reminds(make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """Defer keeps it in review, sets defer_until and queues one reminder for that time."""
    bot = await make_bot(defer_hours=5)
    download_id = await to_review(bot.engine)
    card = await bot.card(download_id)
    fake_telegram.press(ANNA, card, "Defer")
    await fake_telegram.until(lambda: fake_telegram.answers)
    download = await bot.engine.store.get_download(download_id)
    assert download.state is State.REVIEW
    assert download.defer_until is not None
    hours = (clock.parse_time(download.defer_until) - clock.utcnow()).total_seconds() / 3600
    assert 4.9 < hours <= 5.0
    assert fake_telegram.answers[0]["text"].startswith("Deferred by Анна until")
    pings = await bot.engine.store.telegram_pings(download_id)
    reminder = [p for p in pings if p.dedupe_key == f"review@defer:{download.defer_until}"]
    assert len(reminder) == 1
    assert reminder[0].status == "pending"
    assert reminder[0].next_attempt_at == download.defer_until


async def test_a_failed_download_pings_with_retry(make_bot: BotFactory, fake_telegram: FakeTelegram) -> None:
    """Failed: why in words, and Retry puts it back where it stopped."""
    bot = await make_bot()
    added = await bot.engine.commands.add(source=f"magnet:?xt=urn:btih:{'d' * 40}&dn=Broken")
    download_id = added.download.id
    await walk(bot.engine, download_id, State.DOWNLOADING)
    await bot.engine.worker.serial.change(
        download_id, State.FAILED, reason="stalled", actor=Actor.WORKER,
        fields={"error_code": "stalled", "error_msg": "no progress for 6 hours"})
    card = await bot.card(download_id, "Failed")
    assert "Why: no progress for 6 hours (stalled)" in card.text
    fake_telegram.press(ANNA, card, "Retry")
    await bot.state(download_id, State.QUEUED)
    await fake_telegram.until(lambda: not card.buttons)
    assert "Retried by Анна" in card.text


async def test_pings_go_to_every_allowed_user_or_the_configured_chats(make_bot: BotFactory,
                                                                       fake_telegram: FakeTelegram) -> None:
    """Recipients: `chat_ids` when set, else each allowed user's private chat."""
    bot = await make_bot(allowed_user_ids=[ANNA["id"], BORIS["id"]])
    download_id = await to_review(bot.engine)
    await bot.card(download_id, chat=ANNA["id"])
    await bot.card(download_id, chat=BORIS["id"])
    await bot.stop()
    group = -100123
    other = await make_bot(engine=bot.engine, chat_ids=[group])
    second = await to_review(other.engine, "Other.Film.2001")
    await other.card(second, chat=group)
    assert not [s for s in fake_telegram.outbox(ANNA["id"]) if second in str(s.message)]


async def test_a_better_copy_review_offers_keep_both_replace_skip(make_bot: BotFactory,
                                                                  fake_telegram: FakeTelegram) -> None:
    """The film is already in the library: the card says what is there; Replace answers the question."""
    bot = await make_bot()
    held = ("already in your library as 1080p WEB-DL by NTb from The.Matrix.1999.1080p.WEB-DL-NTb, laid out "
            "2026-11-05; this copy is 2160p Remux by FGT: better")
    download_id = await to_review(bot.engine, "The.Matrix.1999.2160p.BluRay.REMUX-FGT",
                                  reasons=(Reason("better_copy", held, blocking=True),), held=held)
    card = await bot.card(download_id)
    assert "already in your library as 1080p WEB-DL by NTb" in card.text
    assert [b["text"] for b in card.buttons][:5] == ["Keep both", "Replace", "Skip", "Reject", "Defer"]
    fake_telegram.press(ANNA, card, "Replace")
    answer = await fake_telegram.until(lambda: fake_telegram.answers)
    assert answer[0]["text"].startswith("Replacing the library's copy (undo brings it back) by Анна")
    assert (await bot.engine.store.overrides(download_id))["upgrade"] == "replace"
    history = await bot.engine.store.transitions(download_id)
    assert any(t.reason == "upgrade: replace" and t.actor is Actor.HUMAN for t in history)


async def test_jellyfins_answer_follows_the_done_ping(make_bot: BotFactory,
                                                      fake_telegram: FakeTelegram) -> None:
    """Done, then "In Jellyfin" with the item's link once the confirmation finds it (a second ping)."""
    bot = await make_bot()
    download_id = await to_review(bot.engine)
    await bot.apply_by_button(download_id)
    store = bot.engine.store
    assert await store.jellyfin_track(download_id) is not None
    url = f"http://jellyfin.lan:8096/web/#/details?id={'a' * 32}"
    download, changed = await store.jellyfin_record(download_id, Confirmation.FOUND, item_id="a" * 32,
                                                    url=url)
    assert changed
    bot.engine.bus.publish(Event(EventKind.JELLYFIN, download_id, name=download.display_name, reason="found",
                                 data={"url": url, "note": None}))
    found = await bot.card(download_id, "In Jellyfin")
    assert f"Open in Jellyfin: {url}" in found.text
    assert [b["text"] for b in found.buttons] == ["Open panel", "Undo"]
    done = await bot.card(download_id, "Done")          # the first ping is kept, whenever it went out
    assert done.message["message_id"] != found.message["message_id"]
