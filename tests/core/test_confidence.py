"""Confidence: named, weighted penalties, the recommendation thresholds, and the sentences humans read."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.config import RecognitionConfig
from jellybit.core.confidence import (
    Reading,
    candidate_reasons,
    distance_of,
    margin_reason,
    numbering_reasons,
    reason,
    recommend,
)
from jellybit.core.reasons import PENALTIES
from jellybit.core.records import Candidate, MediaType, PlanItem, Reason, Recommendation, Role
from jellybit.core.title_match import name_distance, normalize_title, titles_distance
from jellybit.core.works import same_work

CONFIG = RecognitionConfig()
FARGO_TV = Candidate(
    "tvdb", "269613", MediaType.SERIES, "Fargo", 2014, details={"seasons": {"1": 10, "2": 10}}
)


def film(title: str, year: int | None, provider_id: str = "1", **details: object) -> Candidate:
    return Candidate("tmdb", provider_id, MediaType.MOVIE, title, year, details=dict(details))


@pytest.mark.parametrize(
    ("weights", "blocking", "confirmed", "expected"),
    [
        ([], False, True, Recommendation.STRONG),
        ([0.10], False, True, Recommendation.STRONG),
        ([0.05, 0.06], False, True, Recommendation.MEDIUM),
        ([0.30], False, True, Recommendation.MEDIUM),
        ([0.31], False, True, Recommendation.LOW),
        ([0.60], False, True, Recommendation.LOW),
        ([0.61], False, True, Recommendation.NONE),
        ([0.0], True, True, Recommendation.MEDIUM),  # a blocker never lets it be strong
        ([0.0], False, False, Recommendation.MEDIUM),  # nor does an unconfirmed match
        ([1.0, 1.0], True, False, Recommendation.NONE),
    ],
)
def test_recommendation_thresholds(
    weights: list[float], blocking: bool, confirmed: bool, expected: Recommendation
) -> None:
    reasons = [Reason(f"r{i}", "x", w, blocking) for i, w in enumerate(weights)]
    distance, recommendation = recommend(reasons, CONFIG, confirmed=confirmed)
    assert recommendation is expected
    assert distance == min(1.0, round(sum(weights), 4))


def test_thresholds_come_from_the_config() -> None:
    strict = RecognitionConfig(strong_distance=0.0, medium_distance=0.05, low_distance=0.1)
    assert recommend([Reason("x", "x", 0.04)], strict, confirmed=True)[1] is Recommendation.MEDIUM
    assert recommend([Reason("x", "x", 0.04)], CONFIG, confirmed=True)[1] is Recommendation.STRONG


@given(st.lists(st.floats(0, 1), max_size=8), st.booleans(), st.booleans())
def test_distance_is_bounded_and_strong_needs_confirmation(
    weights: list[float], block: bool, confirmed: bool
) -> None:
    reasons = [Reason("x", "x", w, block) for w in weights]
    distance, recommendation = recommend(reasons, CONFIG, confirmed=confirmed)
    assert 0.0 <= distance <= 1.0
    if recommendation is Recommendation.STRONG:
        assert confirmed
        assert not (block and weights)


def test_reason_scales_the_weight_and_keeps_blocking() -> None:
    r = reason("title_distance", "m", 0.5)
    assert (r.weight, r.blocking) == (PENALTIES["title_distance"].weight * 0.5, False)
    assert reason("small_margin", "m").blocking
    assert reason("title_distance", "m", 7).weight == PENALTIES["title_distance"].weight


def test_margin_sentence_names_both_candidates() -> None:
    best = replace(film("Fargo", 2014, "1"), distance=0.0)
    runner = replace(film("Fargo", 1996, "2"), distance=0.05)
    found = margin_reason(best, runner, 0.15)
    assert found is not None
    assert found.blocking
    assert found.message == "TMDB's best match 'Fargo' (2014) is only 0.05 ahead of 'Fargo' (1996)"
    assert margin_reason(best, replace(runner, distance=0.5), 0.15) is None
    assert margin_reason(best, None, 0.15) is None


def test_an_exact_title_against_a_longer_one_is_a_clear_winner() -> None:
    reading = Reading(MediaType.MOVIE, ("The Matrix",))
    best = replace(film("The Matrix", 1999, "1"), distance=0.05)
    sequel = replace(film("The Matrix Reloaded", 2003, "2"), distance=0.15)
    assert margin_reason(best, sequel, 0.15) is not None             # by distances alone: too close
    assert margin_reason(best, sequel, 0.15, reading) is None        # the exact title tells them apart
    remake = replace(film("The Matrix", 2031, "3"), distance=0.05)
    assert margin_reason(best, remake, 0.15, reading) is not None    # two exact titles: still a tie


def test_a_series_without_the_season_read_ranks_lower() -> None:
    reading = Reading(MediaType.SERIES, ("House of Cards",), season=2)
    serial = Candidate("tvdb", "76947", MediaType.SERIES, "House of Cards", 1990, details={"seasons": {1: 4}})
    show = Candidate("tvdb", "262980", MediaType.SERIES, "House of Cards", 2013,
                     details={"seasons": {n: 13 for n in range(1, 7)}})
    absent = [r for r in candidate_reasons(reading, serial) if r.code == "season_absent"]
    assert [r.message for r in absent] == ["TVDB's 'House of Cards' (1990) has no season 2 (it has 1 season)"]
    assert not absent[0].blocking
    assert candidate_reasons(reading, show) == ()
    unknown = Candidate("tvdb", "1", MediaType.SERIES, "House of Cards", 1990)     # no counts: no verdict
    assert candidate_reasons(reading, unknown) == ()
    thirteen = Reading(MediaType.SERIES, ("House of Cards",), season=1, last_episodes=((1, 13),))
    short = [r for r in candidate_reasons(thirteen, serial) if r.code == "episodes_absent"]
    assert [r.message for r in short] == ["TVDB's 'House of Cards' (1990) season 1 has 4 episodes "
                                          "(the files go up to 13)"]
    assert candidate_reasons(thirteen, show) == ()


def test_the_year_read_as_a_shows_first_year_is_a_clear_winner() -> None:
    reading = Reading(MediaType.SERIES, ("Shameless",), 2011, season=5)
    us = replace(Candidate("tvdb", "161511", MediaType.SERIES, "Shameless", 2011), distance=0.0)
    uk = replace(Candidate("tvdb", "78887", MediaType.SERIES, "Shameless", 2004), distance=0.03)
    assert margin_reason(us, uk, 0.15) is not None
    assert margin_reason(us, uk, 0.15, reading) is None
    assert margin_reason(us, replace(uk, year=2011), 0.15, reading) is not None   # both from 2011


def test_a_perfect_candidate_has_no_penalties() -> None:
    assert candidate_reasons(Reading(MediaType.MOVIE, ("The Matrix",), 1999), film("The Matrix", 1999)) == ()


def test_candidate_penalties_are_named_and_explained() -> None:
    reading = Reading(MediaType.SERIES, ("The Matrix",), 1999)
    found = {r.code: r for r in candidate_reasons(reading, film("The Matrix Reloaded", 2003))}
    assert set(found) == {"title_distance", "year_distance", "type_mismatch"}
    assert (
        found["year_distance"].message
        == "the release says 1999 but TMDB's 'The Matrix Reloaded' (2003) is from 2003"
    )
    assert "is a movie but this download looks like a series" in found["type_mismatch"].message


def test_cyrillic_and_original_titles_match() -> None:
    method = Candidate("tmdb", "65708", MediaType.SERIES, "Method", 2015, original_title="Метод")
    assert candidate_reasons(Reading(MediaType.SERIES, ("Метод",), 2015), method) == ()
    assert name_distance("Фарго", "Fargo") == 0.0
    assert name_distance("Шерлок", "Sherlock") < 0.1
    assert name_distance("Amélie", "AMELIE") == 0.0
    assert name_distance("Spider-Man: No Way Home", "Spider Man No Way Home") == 0.0
    assert name_distance("Star Wars", "Star Trek") > 0.3
    assert titles_distance(["Во все тяжкие", "Breaking Bad"], ["Breaking Bad"])[0] == 0.0
    assert normalize_title("  Mr. & Mrs.  Smith ") == "mr and mrs smith"


def test_aliases_count_as_names() -> None:
    aka = film("Hayate", 2008, aliases=["Hayate the Combat Butler"])
    assert candidate_reasons(Reading(MediaType.MOVIE, ("Hayate the Combat Butler",), 2008), aka) == ()


def test_series_years_weigh_less_than_film_years() -> None:
    later_season = Reading(MediaType.SERIES, ("Fargo",), 2017, season=2)
    film_reading = Reading(MediaType.MOVIE, ("Fargo",), 2017)
    assert distance_of(candidate_reasons(later_season, FARGO_TV)) < 0.05
    assert (
        distance_of(candidate_reasons(film_reading, film("Fargo", 2014))) == PENALTIES["year_distance"].weight
    )


def test_same_work_across_providers() -> None:
    tmdb = Candidate("tmdb", "60622", MediaType.SERIES, "Fargo", 2014)
    assert same_work(tmdb, FARGO_TV)
    assert not same_work(film("Fargo", 1996), film("Fargo", 2014, "2"))


def _video(source: str, season: int | None, *episodes: int) -> PlanItem:
    return PlanItem(source, 1, Role.VIDEO, season=season, episodes=episodes)


def test_numbering_reasons() -> None:
    items = [
        _video("a.mkv", 1, 1),
        _video("b.mkv", 1, 1),
        _video("c.mkv", 2, 11),
        _video("d.mkv", 7, 1),
        _video("e.mkv", None),
        PlanItem("s.srt", 1, Role.SUBTITLE),
    ]
    found = {r.code: r for r in numbering_reasons(items, FARGO_TV, series=True)}
    assert set(found) == {"unmapped_video", "duplicate_episode", "season_not_found", "episode_not_in_season"}
    assert all(r.blocking for r in found.values())
    assert found["duplicate_episode"].message == "2 files claim S01E01: 'a.mkv', 'b.mkv'"
    assert found["season_not_found"].message == "TVDB's 'Fargo' (2014) has no season 7"
    assert "season 2 has 10 episodes; S02E11 is not among them" in found["episode_not_in_season"].message
    assert "'e.mkv'" in found["unmapped_video"].message


def test_unchecked_numbering_is_a_small_penalty() -> None:
    bare = Candidate("tmdb", "1", MediaType.SERIES, "Show", 2020)
    found = numbering_reasons([_video("a.mkv", 1, 1)], bare, series=True)
    assert [(r.code, r.blocking) for r in found] == [("seasons_unknown", False)]


def test_every_penalty_is_documented() -> None:
    documented = (Path(__file__).parents[2] / "docs" / "recognition.md").read_text(encoding="utf-8")
    for code, penalty in PENALTIES.items():
        assert f"`{code}`" in documented, code
        assert f"{penalty.weight:.2f}" in documented, code


# ---------------------------------------------------------------- country and year pick between works

SHAMELESS_US = Candidate("tvdb", "161511", MediaType.SERIES, "Shameless (US)", 2011, details={
    "country": "US", "countries": ["US"], "network": "Showtime", "last_year": 2021})
SHAMELESS_UK = Candidate("tvdb", "79044", MediaType.SERIES, "Shameless (UK)", 2004, details={
    "country": "GB", "countries": ["GB"], "network": "Channel 4", "last_year": 2013})


def _pick(reading: Reading, *candidates: Candidate) -> tuple[Candidate, Reason | None]:
    """The best candidate and the margin reason, as the matcher decides them."""
    scored = sorted((replace(c, distance=distance_of(candidate_reasons(reading, c))) for c in candidates),
                    key=lambda c: c.distance or 0.0)
    return scored[0], margin_reason(scored[0], scored[1], CONFIG.min_margin)


@pytest.mark.parametrize("country", ["US", "us", "USA"])
def test_the_reading_country_picks_the_us_show(country: str) -> None:
    reading = Reading(MediaType.SERIES, ("Shameless",), country=country)
    best, margin = _pick(reading, SHAMELESS_UK, SHAMELESS_US)
    assert best.provider_id == "161511"
    assert margin is None                                  # a clear winner: ahead by at least min_margin
    (penalty,) = candidate_reasons(Reading(MediaType.SERIES, ("Shameless",), country="US"), SHAMELESS_UK)
    assert (penalty.code, penalty.blocking, penalty.weight) == ("country_mismatch", False, 0.2)
    assert penalty.message == ("TVDB's 'Shameless (UK)' (2004, GB, Channel 4) comes from GB, but the "
                               "download is the US one")


def test_uk_in_a_reading_means_gb() -> None:
    best, margin = _pick(Reading(MediaType.SERIES, ("Shameless",), country="UK"), SHAMELESS_US, SHAMELESS_UK)
    assert (best.provider_id, margin) == ("79044", None)


def test_without_a_country_the_two_shows_stay_tied() -> None:
    best, margin = _pick(Reading(MediaType.SERIES, ("Shameless",)), SHAMELESS_US, SHAMELESS_UK)
    assert best.distance == 0.0
    assert margin is not None
    assert margin.blocking
    # A human reads which is which:
    assert {"'Shameless (US)' (2011, US, Showtime)", "'Shameless (UK)' (2004, GB, Channel 4)"} == {
        part for part in ("'Shameless (US)' (2011, US, Showtime)", "'Shameless (UK)' (2004, GB, Channel 4)")
        if part in margin.message}


@pytest.mark.parametrize(("year", "season", "expected"), [(2011, None, "161511"), (2004, None, "79044"),
                                                          (2011, 1, "161511"), (2004, 1, "79044")])
def test_the_year_in_the_name_picks_the_show(year: int, season: int | None, expected: str) -> None:
    best, margin = _pick(Reading(MediaType.SERIES, ("Shameless",), year, season), SHAMELESS_US, SHAMELESS_UK)
    assert (best.provider_id, margin) == (expected, None)


def test_a_later_season_year_of_a_running_show_costs_little_but_not_after_it_ended() -> None:
    running = Reading(MediaType.SERIES, ("Shameless",), 2012, season=5)
    assert distance_of(candidate_reasons(running, SHAMELESS_UK)) < 0.05
    ended = Reading(MediaType.SERIES, ("Shameless",), 2019, season=5)
    assert distance_of(candidate_reasons(ended, SHAMELESS_UK)) == PENALTIES["year_distance"].weight
    before = Reading(MediaType.SERIES, ("Shameless",), 2004, season=3)      # before the US show began
    assert distance_of(candidate_reasons(before, SHAMELESS_US)) == PENALTIES["year_distance"].weight


@pytest.mark.parametrize("title", ["House of Cards US", "House of Cards (US)", "House of Cards"])
def test_a_country_word_in_the_title_costs_no_title_distance(title: str) -> None:
    cards = Candidate("tmdb", "1425", MediaType.SERIES, "House of Cards", 2013, details={"country": "US"})
    tvdb = Candidate("tvdb", "262980", MediaType.SERIES, "House of Cards (US)", 2013)
    for reading in (Reading(MediaType.SERIES, (title,), country="US"), Reading(MediaType.SERIES, (title,))):
        assert candidate_reasons(reading, cards) == ()
        assert candidate_reasons(reading, tvdb) == ()


def test_a_country_word_in_the_title_stands_for_the_country() -> None:
    uk = Candidate("tmdb", "10134", MediaType.SERIES, "House of Cards", 1990, details={"country": "GB"})
    found = {r.code for r in candidate_reasons(Reading(MediaType.SERIES, ("House of Cards US",)), uk)}
    assert found == {"country_mismatch"}


def test_a_candidate_without_a_country_is_not_penalized() -> None:
    bare = Candidate("tvmaze", "175", MediaType.SERIES, "House of Cards", 2013)
    assert candidate_reasons(Reading(MediaType.SERIES, ("House of Cards",), country="US"), bare) == ()


def test_a_co_production_matches_each_of_its_countries() -> None:
    both = Candidate("tmdb", "1", MediaType.SERIES, "Good Omens", 2019, details={"countries": ["GB", "US"]})
    assert candidate_reasons(Reading(MediaType.SERIES, ("Good Omens",), country="US"), both) == ()
