"""Telegram end to end, as `build_app` wires it: a .torrent sent to the bot is downloaded by a real
qBittorrent, recognized against the local TMDB fake, ends in review with a ping and its buttons, and
pressing Apply lays it out as hardlinks; then the done ping says where it went."""

from __future__ import annotations

import os
from pathlib import Path

from jellybit.app import build_app
from jellybit.config import (
    MetadataConfig,
    PanelConfig,
    TvmazeConfig,
)
from jellybit.core.states import State
from tests.support.app_config import whole_config
from tests.support.fake_telegram import FakeTelegram
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent
from tests.support.telegram_bot import ANNA, telegram_config

# Words that could change the decision ("the second part": a sequel, not this film) and that no
# reader settles (no LLM is set up), so the download waits for a human even though TMDB confirms
# the film. (Words that could not change it, "with grandma at the dacha", are only a note.)
CONTEXT = "смотреть с бабушкой вторую часть"


async def test_a_torrent_sent_to_the_bot_ends_in_review_and_apply_lays_it_out(
        qbittorrent: QbittorrentInstance, fake_tmdb, fake_telegram: FakeTelegram, tmp_path: Path) -> None:
    metadata = MetadataConfig(tmdb=fake_tmdb.config(), tvmaze=TvmazeConfig(enabled=False))
    config = whole_config(tmp_path, qbittorrent, metadata=metadata, telegram=telegram_config(fake_telegram),
                          panel=PanelConfig(base_url="https://jellybit.example"))
    paths = config.paths
    app = build_app(config, mqtt=False)
    assert app.transport("telegram") is not None
    await app.start()
    try:
        movie = seeded_torrent(qbittorrent.data_dir, "The.Matrix.1999.1080p.BluRay.x264", {
            "The.Matrix.1999.1080p.BluRay.x264.mkv": 150_000})
        sent = fake_telegram.send_document(ANNA, movie.torrent, "The.Matrix.1999.torrent", caption=CONTEXT)
        answer = await fake_telegram.until(lambda: [
            s for s in fake_telegram.outbox(ANNA["id"])
            if (s.params.get("reply_parameters") or {}).get("message_id") == sent["message"]["message_id"]])
        assert answer[0].text.startswith("Added: The.Matrix.1999.1080p.BluRay.x264 (queued)")
        (download,) = (await app.commands.list(limit=5)).items
        assert download.context == CONTEXT

        cards = await fake_telegram.until(lambda: [
            s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Needs review")], within=60.0)
        card = cards[0]
        assert card.text.startswith("Needs review: The Matrix (1999) · movie")
        assert [b["text"] for b in card.buttons][:3] == ["Apply", "Reject", "Defer"]
        assert card.button("Open panel")["url"] == f"https://jellybit.example/download/{download.id}"
        assert (await app.store.get_download(download.id)).state is State.REVIEW

        fake_telegram.press(ANNA, card, "Apply")
        done = (await fake_telegram.until(lambda: [
            s for s in fake_telegram.outbox(ANNA["id"]) if s.text.startswith("Done:")], within=60.0))[0]
        assert (await app.store.get_download(download.id)).state is State.DONE
        folder = paths.movies / "The Matrix (1999) [tmdbid-603]"
        video = folder / "The Matrix (1999) [tmdbid-603].mkv"
        source = movie.content / "The.Matrix.1999.1080p.BluRay.x264.mkv"
        assert os.stat(video).st_ino == os.stat(source).st_ino
        assert "In Movies / The Matrix (1999) [tmdbid-603]" in done.text
        assert "1 file in the library" in done.text
        await fake_telegram.until(lambda: not card.buttons)     # the pressed card was edited
        assert fake_telegram.answers[0]["text"].startswith("Applied by Анна")
    finally:
        await app.stop()
