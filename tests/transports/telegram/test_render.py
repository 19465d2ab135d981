"""The bot's cards: valid Telegram HTML within Telegram's limits whatever the names say."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.models import Download
from jellybit.core.records import (
    Candidate,
    Film,
    MediaType,
    Plan,
    PlanItem,
    Reason,
    Recognition,
    Recommendation,
    Role,
)
from jellybit.core.states import State
from jellybit.engine.results import DownloadDetail
from jellybit.protocol import DownloadDetail as DetailModel
from jellybit.transports.payloads import detail_payload
from jellybit.transports.telegram.render import (
    CAPTION_LIMIT,
    TEXT_LIMIT,
    close_candidates,
    done_card,
    failed_card,
    review_card,
    units,
)
from tests.support.fake_telegram import plain_text

ID = "01jbz9x8k4m3n2p1q0r9s8t7v6"
UNTRUSTED = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=3000)


def download(name: str = "Fargo.S02", context: str = "", state: State = State.REVIEW, **fields) -> Download:
    """A download record as the store returns it."""
    return Download(id=ID, source_type="magnet", source_ref="magnet:?xt=urn:btih:" + "a" * 40,
                    display_name=name, context=context, state=state, qbt_tag="jellybit-x",
                    created_at="2026-01-01T00:00:00.000000Z", updated_at="2026-01-01T00:00:00.000000Z",
                    **fields)


def recognition(title: str = "Fargo", reasons: tuple[Reason, ...] = (), poster: str | None = None,
                distances: tuple[float | None, ...] = (0.1, 0.3),
                provider_id: str | None = None) -> Recognition:
    """A stored recognition with two candidates."""
    candidates = tuple(
        Candidate("tvdb", str(n), MediaType.SERIES, f"{title} {n}", 2014, poster_url=poster, distance=d,
                  id=f"01jbz9x8k4m3n2p1q0r9s8t7{n:02d}")
        for n, d in enumerate(distances))
    plan = Plan((PlanItem("a.mkv", 1, Role.VIDEO, library="series"),), folder=f"{title} (2014) [tvdbid-1]")
    return Recognition(MediaType.SERIES, title, 2014, plan,
                       provider="tvdb" if provider_id else None, provider_id=provider_id, confidence=0.42,
                       reasons=reasons, candidates=candidates, id="r", download_id=ID)


def as_sent(record: Download, found: Recognition | None = None) -> DetailModel:
    """What the bot renders: the download as the MQTT `get` answer carries it (the same payload code)."""
    return DetailModel.model_validate(detail_payload(DownloadDetail(record, (), found, ())))


@given(UNTRUSTED, UNTRUSTED, UNTRUSTED, st.lists(UNTRUSTED, max_size=8), st.booleans())
def test_a_review_card_is_valid_html_within_the_limit(name: str, context: str, title: str, reasons: list[str],
                                                      poster: bool) -> None:
    """Names, contexts, titles and reasons of any length and alphabet: Telegram accepts the card."""
    card = review_card(as_sent(download(name, context), recognition(
        title, tuple(Reason("x", r, blocking=True) for r in reasons),
        "https://image.example/p.jpg" if poster else None)), panel="https://p.example", margin=0.15)
    shown = plain_text(card.text, "HTML")
    assert units(shown) <= (CAPTION_LIMIT if card.photo else TEXT_LIMIT)
    assert shown.startswith("Needs review:")
    for row in card.keyboard.inline_keyboard:
        for button in row:
            assert button.url or len(button.callback_data.encode()) <= 64


def test_a_review_asked_while_it_downloads_says_how_far() -> None:
    card = review_card(as_sent(download(awaiting_files=True, progress=0.37), recognition()), panel="",
                       margin=0.15)
    shown = plain_text(card.text, "HTML")
    assert "Still downloading, 37%: a decision is applied when the files arrive." in shown
    again = review_card(as_sent(download(progress=1.0), recognition()), panel="", margin=0.15)
    assert "Still downloading" not in plain_text(again.text, "HTML")


@given(UNTRUSTED, UNTRUSTED)
def test_done_and_failed_cards_are_valid_html(name: str, why: str) -> None:
    """The other cards take the same care."""
    done = done_card(as_sent(download(name, state=State.DONE), recognition(name)), panel="https://p.example")
    assert plain_text(done.text, "HTML").startswith("Done:")
    failed = failed_card(as_sent(download(name, state=State.FAILED, error_code="stalled", error_msg=why)),
                         panel="https://p.example")
    assert plain_text(failed.text, "HTML").startswith("Failed:")


def test_where_a_done_download_went() -> None:
    """Done names the library and the folder."""
    card = done_card(as_sent(download(state=State.DONE), recognition("Фарго")), panel="https://p.example")
    assert "In Shows / Фарго (2014) [tvdbid-1]" in plain_text(card.text, "HTML")


def test_candidate_buttons_only_when_a_human_must_choose() -> None:
    """Close distances, a small-margin reason, or no match: the top candidates; a clear winner: none."""
    def offered(found: Recognition) -> int:
        sent = as_sent(download(), found).recognition
        assert sent is not None
        return len(close_candidates(sent, 0.15))

    assert offered(recognition(distances=(0.1, 0.12))) == 2
    assert offered(recognition(distances=(0.05, 0.6), provider_id="0")) == 0
    small = (Reason("small_margin", "close", blocking=True),)
    assert offered(recognition(reasons=small, distances=(0.05, 0.6), provider_id="0")) == 2
    assert offered(recognition(distances=(0.1, 0.9, 0.95, 0.99))) == 3


def test_a_movie_pack_card_shows_each_film_and_offers_only_the_unsure_ones_candidates() -> None:
    solaris = [Candidate("tmdb", pid, MediaType.MOVIE, "Solaris", year, distance=d,
                         details={"film": "T/Solaris.mkv"}, id=f"01jbz9x8k4m3n2p1q0r9s8t7{n:02d}")
               for n, (pid, year, d) in enumerate((("593", 1972, 0.2), ("2103", 2002, 0.19)))]
    stalker = Candidate("tmdb", "1398", MediaType.MOVIE, "Stalker", 1979, distance=0.0, chosen=True,
                        details={"film": "T/Stalker.mkv"}, id="01jbz9x8k4m3n2p1q0r9s8t799")
    films = (Film("T/Solaris.mkv", "Solaris", None, ("T/Solaris.mkv",), "tmdb", "2103", "Solaris", 2002, 0.85,
                  Recommendation.MEDIUM),
             Film("T/Stalker.mkv", "Stalker", 1979, ("T/Stalker.mkv",), "tmdb", "1398", "Stalker", 1979, 1.0,
                  Recommendation.STRONG))
    pack = Recognition(MediaType.MOVIE, "Tarkovsky Duology", None, Plan(films=films), confidence=0.85,
                       reasons=(Reason("film_uncertain", "1 of 2 films need a human", blocking=True),),
                       candidates=(*solaris, stalker), id="r", download_id=ID)
    card = review_card(as_sent(download("Tarkovsky.Duology"), pack), panel="https://p.example", margin=0.15)
    shown = plain_text(card.text, "HTML")
    assert "? Solaris → Solaris (2002) — needs you" in shown
    assert "✓ Stalker (1979) → Stalker (1979)" in shown
    labels = [b.text for row in card.keyboard.inline_keyboard for b in row]
    assert "Solaris (2002) · movie · TMDB" in labels
    assert "Solaris (1972) · movie · TMDB" in labels
    assert not any(label.startswith("Stalker") for label in labels)
