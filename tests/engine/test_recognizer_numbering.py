"""Numbering that must never be confidently wrong: dates, folders that disagree, seasonless episodes.

The recognizer runs with the real TMDB/TVDB/TVMaze adapters against their local fakes, no LLM.
"""

from __future__ import annotations

from typing import Any

import pytest

from jellybit.core.records import RecognitionDraft
from tests.engine.test_recognizer import GB, answering, blocking, codes, item, recognizer, request
from tests.support.fake_catalogue import numbering_shows
from tests.support.fake_metadata import Catalogue, FakeTitle
from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def shows(fake_catalogue: Catalogue) -> Catalogue:
    for title in numbering_shows():
        fake_catalogue.add(title)
    return fake_catalogue


async def recognize(providers: list[Any], name: str, paths: list[str]) -> RecognitionDraft:
    return await recognizer(None, providers).recognize(request(name, [(p, GB) for p in paths]))


@pytest.mark.parametrize("path", [
    "Evening.Show.2019.03.11.720p.HDTV/evening.show.2019.03.11.mkv",      # the held-out failure
    "Evening.Show.2019.03.11.720p.HDTV/Evening.Show.2019.03.11.720p.HDTV.mkv",
    "evening.show.2019.03.11.mkv",
])
async def test_a_dated_daily_show_is_numbered_by_the_providers_air_dates(
        providers: list[Any], shows: Catalogue, path: str) -> None:
    draft = await recognize(providers, path.split("/")[0], [path])
    video = item(draft, path)
    # the provider numbers by year: Jellyfin's date naming, never S01E03
    assert (video.season, video.episodes, video.air_date) == (2019, (), "2019-03-11"), draft.reasons
    assert draft.automatic, draft.reasons


async def test_a_daily_show_numbered_by_season_takes_the_episode_of_that_day(
        providers: list[Any], shows: Catalogue) -> None:
    path = "Late.Report.2019.03.11.720p.HDTV/late.report.2019.03.11.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    assert (item(draft, path).season, item(draft, path).episodes) == (3, (10,)), draft.reasons
    assert draft.automatic, draft.reasons


async def test_a_date_the_provider_does_not_list_goes_to_review(providers: list[Any],
                                                                shows: Catalogue) -> None:
    path = "Evening.Show.2019.03.09.720p.HDTV/evening.show.2019.03.09.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    assert "air_date_unlisted" in blocking(draft), draft.reasons
    assert not draft.automatic
    assert item(draft, path).season != 1


async def test_a_folder_and_file_numbering_the_provider_cannot_settle_is_a_conflict(
        providers: list[Any], shows: Catalogue) -> None:
    # the folder says S01E02, the file's date is S03E10: both exist at the provider
    path = "Late.Report.S01E02.720p.HDTV/late.report.2019.03.11.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    assert "numbering_conflict" in blocking(draft), draft.reasons
    assert not draft.automatic
    message = next(r.message for r in draft.reasons if r.code == "numbering_conflict")
    assert "aired 2019-03-11" in message
    assert "S01E02" in message


async def test_a_conflict_the_provider_settles_is_laid_out(providers: list[Any], shows: Catalogue) -> None:
    # the folder says S03E10 and the file's date is S03E10's: one reading fits
    path = "Late.Report.S03E10.720p.HDTV/late.report.2019.03.11.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    assert "numbering_conflict" not in codes(draft), draft.reasons
    assert (item(draft, path).season, item(draft, path).episodes) == (3, (10,))


async def test_two_seasons_in_folder_and_file_that_both_fit_are_a_conflict(
        providers: list[Any], shows: Catalogue) -> None:
    path = "Long.Saga.S02.720p.HDTV/Long.Saga.S03E04.720p.mkv"
    draft = await recognize(providers, "Long.Saga.S02.720p.HDTV", [path])
    assert "numbering_conflict" in blocking(draft), draft.reasons


async def test_two_seasons_of_which_one_does_not_fit_are_settled(providers: list[Any],
                                                                 shows: Catalogue) -> None:
    # season 2 has 12 episodes: only S03E20 fits
    path = "Long.Saga.S02.720p.HDTV/Long.Saga.S03E20.720p.mkv"
    draft = await recognize(providers, "Long.Saga.S02.720p.HDTV", [path])
    assert "numbering_conflict" not in codes(draft), draft.reasons
    assert (item(draft, path).season, item(draft, path).episodes) == (3, (20,))


async def test_an_episode_number_beyond_season_one_is_absolute(providers: list[Any],
                                                               shows: Catalogue) -> None:
    path = "Long.Saga.E30.German.720p.WEB.mkv"
    draft = await recognize(providers, path, [path])
    assert (item(draft, path).season, item(draft, path).episodes) == (3, (6,)), draft.reasons
    assert "absolute_mapped" in codes(draft)
    assert "episode_not_in_season" not in codes(draft)


async def test_an_episode_number_within_season_one_keeps_its_assumption_visible(
        providers: list[Any], shows: Catalogue) -> None:
    path = "Long Saga Episode 9 720p.mkv"
    draft = await recognize(providers, path, [path])
    assert (item(draft, path).season, item(draft, path).episodes) == (1, (9,)), draft.reasons
    assumed = next(r for r in draft.reasons if r.code == "season_assumed")
    assert not assumed.blocking


async def test_a_folder_naming_the_packs_range_holds_its_files(providers: list[Any]) -> None:
    name = "Фарго | Fargo | S2E1-10 of 10 [2015, WEB-DL 1080p]"
    paths = [f"{name}/Fargo.S02E{e:02d}.1080p.WEB-DL.mkv" for e in range(1, 11)]
    draft = await recognize(providers, name, paths)
    assert "numbering_conflict" not in codes(draft), draft.reasons
    assert [(v.season, v.episodes) for v in draft.plan.videos()] == [(2, (e,)) for e in range(1, 11)]


async def test_a_later_seasons_year_against_the_llms_show_year_is_no_disagreement(
        llm: Any, providers: list[Any], fake_openai: FakeOpenAI) -> None:
    name = "Fargo.S02.2015.1080p.WEB-DL"
    paths = [f"{name}/Fargo.S02E{e:02d}.mkv" for e in (1, 2)]
    answering(fake_openai, "series", "Fargo", 2014, {p: {"role": "video", "season": 2, "episodes": [e]}
                                                     for e, p in enumerate(paths, 1)})
    draft = await recognizer(llm, providers).recognize(request(name, [(p, GB) for p in paths]))
    assert "llm_year" not in codes(draft), draft.reasons
    assert draft.automatic, draft.reasons


@pytest.mark.parametrize("name", ["[组名][进击的巨人／Attack on Titan][07][1080P][简体]",
                                  "[SweetSub][进击的巨人 _ Attack on Titan][07][1080P][简体]"])
async def test_a_bilingual_fansub_title_is_searched_by_each_of_its_names(providers: list[Any],
                                                                         fake_catalogue: Catalogue,
                                                                         name: str) -> None:
    fake_catalogue.add(FakeTitle("series", "Attack on Titan", 2013, original_title="進撃の巨人",
                                 original_language="ja", seasons={1: 25, 2: 12}, tmdb_id=1429, tvdb_id=267440,
                                 tvmaze_id=919, country="JP", translations={"zh": "进击的巨人"}))
    path = f"{name}.mkv"
    draft = await recognize(providers, path, [path])
    assert (draft.provider_id, item(draft, path).season, item(draft, path).episodes) == ("267440", 1, (7,))
    assert draft.automatic, draft.reasons


async def test_two_dates_are_settled_by_the_one_the_provider_lists(providers: list[Any],
                                                                   shows: Catalogue) -> None:
    # the file's 190311 is read day-month-year (2011-03-19); the folder's 2019-03-11 is the listed one
    path = "Evening.Show.2019.03.11.720p.HDTV/evening.show.190311.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    video = item(draft, path)
    assert (video.season, video.episodes, video.air_date) == (2019, (), "2019-03-11"), draft.reasons
    assert draft.automatic, draft.reasons


async def test_a_dated_folder_against_the_files_episode_is_settled_by_the_date(providers: list[Any],
                                                                             shows: Catalogue) -> None:
    path = "Late.Report.2019.03.11.720p.HDTV/Late.Report.S03E10.720p.mkv"
    draft = await recognize(providers, path.split("/")[0], [path])
    assert (item(draft, path).season, item(draft, path).episodes) == (3, (10,)), draft.reasons
    assert draft.automatic, draft.reasons
