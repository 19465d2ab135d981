"""The matcher against the local TMDB/TVDB/TVMaze fakes: one candidate per work, country and year pick."""

from __future__ import annotations

from typing import Any

import pytest

from jellybit.adapters.store import Store
from jellybit.config import RecognitionConfig
from jellybit.core.confidence import Reading
from jellybit.core.models import NewDownload
from jellybit.core.records import Candidate, MediaType, Plan, RecognitionDraft
from jellybit.engine.metadata_match import Match, Matcher
from jellybit.transports.payloads import candidate_rows
from tests.engine.test_recognizer import GB, recognizer, request

SERIES = MediaType.SERIES
CONFIG = RecognitionConfig()


def matcher(providers: list[Any]) -> Matcher:
    return Matcher(providers, low_distance=CONFIG.low_distance, medium_distance=CONFIG.medium_distance,
                   min_margin=CONFIG.min_margin)


async def match(providers: list[Any], title: str, **reading: Any) -> Match:
    return await matcher(providers).match(Reading(SERIES, (title,), **reading), SERIES)


def ids(candidate: Candidate) -> dict[str, str]:
    return candidate.details["ids"]


async def test_the_same_show_from_three_providers_is_one_candidate(providers: list[Any]) -> None:
    outcome = await match(providers, "Fargo", year=2014)
    (fargo,) = [c for c in outcome.candidates if c.media_type is SERIES]
    assert (fargo.provider, fargo.provider_id, fargo.title) == ("tvdb", "269613", "Fargo")
    assert ids(fargo) == {"tmdb": "60622", "tvdb": "269613", "tvmaze": "1006", "imdb": "tt2802850"}
    assert fargo.details["links"] == {
        "tmdb": "https://www.themoviedb.org/tv/60622", "tvdb": "https://thetvdb.com/series/fargo",
        "tvmaze": "https://www.tvmaze.com/shows/1006/fargo", "imdb": "https://www.imdb.com/title/tt2802850/"}
    assert (fargo.details["country"], fargo.details["network"]) == ("US", "FX")
    assert fargo.details["season_count"] == 5
    assert outcome.pick == fargo
    assert outcome.confirmed


@pytest.mark.parametrize(("title", "us", "uk"), [
    ("Shameless", ("161511", "Showtime", 2011), ("79044", "Channel 4", 2004)),
    ("The Office", ("73244", "NBC", 2005), ("78107", "BBC Two", 2001)),
    ("House of Cards", ("262980", "Netflix", 2013), ("76947", "BBC One", 1990)),
])
async def test_a_us_and_a_uk_show_are_two_candidates_a_human_can_tell_apart(
    providers: list[Any], title: str, us: tuple[str, str, int], uk: tuple[str, str, int],
) -> None:
    outcome = await match(providers, title)
    shown = {(c.provider_id, c.details["network"], c.year, c.details["country"]) for c in outcome.candidates}
    assert shown == {(*us, "US"), (*uk, "GB")}
    assert all(len(ids(c)) == 4 for c in outcome.candidates)          # tmdb, tvdb, tvmaze, imdb each
    assert all(c.overview for c in outcome.candidates)
    (margin,) = [r for r in outcome.reasons if r.code == "small_margin"]
    assert f"({us[2]}, US, {us[1]})" in margin.message or f"({uk[2]}, GB, {uk[1]})" in margin.message
    assert not outcome.confirmed                                       # without a country or year: review


@pytest.mark.parametrize(("title", "country", "expected"), [
    ("Shameless", "US", "161511"), ("Shameless", "GB", "79044"), ("Shameless", "UK", "79044"),
    ("The Office", "US", "73244"), ("The Office", "GB", "78107"),
    ("House of Cards", "US", "262980"), ("House of Cards", "GB", "76947"),
])
async def test_the_reading_country_confirms_one_show(
    providers: list[Any], title: str, country: str, expected: str,
) -> None:
    outcome = await match(providers, title, country=country)
    assert outcome.pick is not None
    assert outcome.pick.provider_id == expected
    assert outcome.confirmed, outcome.reasons
    assert outcome.pick.distance == 0.0
    assert outcome.candidates[1].distance is not None
    assert outcome.candidates[1].distance >= CONFIG.min_margin


@pytest.mark.parametrize(("name", "expected"), [
    ("House of Cards US", "262980"), ("The Office (US)", "73244"), ("The Office UK", "78107"),
])
async def test_a_country_tag_in_the_name_confirms_one_show(
    providers: list[Any], name: str, expected: str,
) -> None:
    outcome = await match(providers, name)
    assert outcome.pick is not None
    assert (outcome.pick.provider_id, outcome.confirmed) == (expected, True)


@pytest.mark.parametrize(("year", "expected"), [(2011, "161511"), (2004, "79044")])
async def test_the_year_in_the_name_confirms_one_show(providers: list[Any], year: int, expected: str) -> None:
    outcome = await match(providers, "Shameless", year=year, season=1)
    assert outcome.pick is not None
    assert (outcome.pick.provider_id, outcome.confirmed) == (expected, True)


async def test_merged_names_from_every_provider_count_as_aliases(providers: list[Any]) -> None:
    outcome = await match(providers, "Бесстыжие", country="US")
    assert outcome.pick is not None
    assert outcome.pick.provider_id == "161511"
    assert {"Shameless", "Бесстыжие"} <= set(outcome.pick.details["aliases"])


async def test_a_merged_candidate_survives_the_store_and_a_human_choice(
    providers: list[Any], store: Store,
) -> None:
    """Stored, reloaded, chosen by a human: the recognition lays it out with every id intact."""
    files = [(f"Shameless.S02/Shameless.S02E0{n}.1080p.mkv", GB) for n in (1, 2)]
    first = await recognizer(None, providers).recognize(request("Shameless.S02.1080p", files))
    assert not first.automatic                                         # US or UK: a human decides
    created = await store.create_download_if_no_active(NewDownload("magnet", "Shameless.S02.1080p", "m", ""))
    saved = await store.save_recognition(created.download.id, first)
    uk = next(c for c in saved.candidates if c.provider_id == "79044")
    chosen = await store.choose_candidate(created.download.id, uk.id or "")
    assert chosen.details["ids"] == {"tmdb": "1906", "tvdb": "79044", "tvmaze": "1222", "imdb": "tt0377260"}
    assert "Shameless" in chosen.details["aliases"]
    again = await recognizer(None, providers).recognize(request("Shameless.S02.1080p", files, chosen=chosen))
    assert (again.provider, again.provider_id) == ("tvdb", "79044")
    assert again.automatic, again.reasons
    assert [(v.season, v.episodes) for v in again.plan.videos()] == [(2, (1,)), (2, (2,))]
    kept = next(c for c in again.candidates if c.chosen)
    assert kept.details["ids"] == chosen.details["ids"]


async def test_a_pinned_id_of_any_provider_finds_the_work(providers: list[Any]) -> None:
    files = [(f"The.Office.S03/The.Office.S03E0{n}.mkv", GB) for n in (1, 2)]
    overrides = {"provider": "tmdb", "provider_id": "2316", "media_type": "series"}
    draft = await recognizer(None, providers).recognize(request("The.Office.S03", files, overrides=overrides))
    assert (draft.provider, draft.provider_id) == ("tmdb", "2316")        # the folder names what was pinned
    assert draft.automatic, draft.reasons
    chosen = next(c for c in draft.candidates if c.chosen)
    assert chosen.details["ids"]["tvdb"] == "73244"
    assert chosen.url == "https://www.themoviedb.org/tv/2316"
    assert chosen.details["network"] == "NBC"


def _draft(*candidates: Candidate) -> RecognitionDraft:
    return RecognitionDraft(SERIES, "x", None, Plan(()), candidates=candidates)


async def test_reloaded_details_round_trip_and_reach_the_review_payload(
    providers: list[Any], store: Store,
) -> None:
    outcome = await match(providers, "The Office")
    created = await store.create_download_if_no_active(NewDownload("magnet", "The Office", "m", ""))
    saved = await store.save_recognition(created.download.id, _draft(*outcome.candidates))
    assert [c.details for c in saved.candidates] == [c.details for c in outcome.candidates]
    rows = {row.provider_id: row for row in candidate_rows(saved)}
    us, uk = rows["73244"], rows["78107"]
    assert (us.country, us.network, us.first_year, us.last_year, us.season_count) == (
        "US", "NBC", 2005, 2013, 9)
    assert (uk.country, uk.network, uk.first_year, uk.last_year, uk.season_count) == (
        "GB", "BBC Two", 2001, 2003, 2)
    assert uk.links["imdb"] == "https://www.imdb.com/title/tt0290978/"
    assert set(uk.links) == {"tmdb", "tvdb", "tvmaze", "imdb"}


@pytest.mark.parametrize(("name", "expected"), [("Shameless.2011.S01E01.720p.HDTV", "161511"),
                                                 ("Shameless.2004.S01E01.DVDRip", "79044")])
async def test_a_year_in_the_release_name_lays_the_right_show_out(
    providers: list[Any], name: str, expected: str,
) -> None:
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", GB)]))
    assert (draft.provider, draft.provider_id) == ("tvdb", expected)
    assert draft.automatic, draft.reasons


async def test_without_year_or_country_the_review_names_both_shows(providers: list[Any]) -> None:
    name = "Shameless.S05E03.720p.HDTV"
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", GB)]))
    assert not draft.automatic
    (margin,) = [r for r in draft.reasons if r.code == "small_margin"]
    assert "(2011, US, Showtime)" in margin.message
    assert "(2004, GB, Channel 4)" in margin.message
    assert len(draft.candidates) == 2


@pytest.mark.parametrize(("context", "expected"), [("the American version", "161511"),
                                                   ("британская версия", "79044")])
async def test_the_country_in_the_users_context_lays_the_right_show_out(
    providers: list[Any], context: str, expected: str,
) -> None:
    name = "Shameless.S05E03.720p.HDTV"
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", GB)], context=context))
    assert (draft.provider, draft.provider_id) == ("tvdb", expected)
    assert draft.automatic, draft.reasons
