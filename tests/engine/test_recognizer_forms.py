"""Numbering forms a name reads two ways, settled by the provider's data or asked; a name's slashes.

The recognizer runs with the real TMDB/TVDB/TVMaze adapters against their local fakes, no LLM.
"""

from __future__ import annotations

from typing import Any

import pytest

from jellybit.adapters.llm import OpenAiLlm
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


async def recognize(providers: list[Any], name: str, paths: list[str], **extra: Any) -> RecognitionDraft:
    return await recognizer(None, providers).recognize(request(name, [(p, GB) for p in paths], **extra))


async def test_an_absolute_number_the_providers_seasons_agree_with_is_laid_out(
        providers: list[Any], shows: Catalogue) -> None:
    # Long Saga's seasons have 12, 12 and 24 episodes: absolute 17 is S02E05
    path = "Long.Saga.S02E05.17.720p.mkv"
    draft = await recognize(providers, path, [path])
    assert (item(draft, path).season, item(draft, path).episodes) == (2, (5,)), draft.reasons
    assert "numbering_conflict" not in codes(draft)
    assert draft.automatic, draft.reasons


async def test_an_absolute_number_against_sxxeyy_is_a_conflict(providers: list[Any],
                                                               shows: Catalogue) -> None:
    path = "Long.Saga.S02E05.20.720p.mkv"          # absolute 20 is S02E08
    draft = await recognize(providers, path, [path])
    assert "numbering_conflict" in blocking(draft), draft.reasons
    message = next(r.message for r in draft.reasons if r.code == "numbering_conflict")
    assert "S02E05 or absolute episode 20" in message
    assert not draft.automatic


async def test_a_listed_pair_is_asked_unless_another_file_has_the_episode_between(
        providers: list[Any], shows: Catalogue) -> None:
    alone = "Long.Saga.S01E01E03.720p.mkv"
    draft = await recognize(providers, alone, [alone])
    assert "numbering_conflict" in blocking(draft), draft.reasons
    message = next(r.message for r in draft.reasons if r.code == "numbering_conflict")
    assert "S01E01+E03 or S01E01-E03" in message
    pack = ["Long.Saga.S01.720p/Long.Saga.S01E01E03.720p.mkv", "Long.Saga.S01.720p/Long.Saga.S01E02.720p.mkv"]
    draft = await recognize(providers, "Long.Saga.S01.720p", pack)
    assert "numbering_conflict" not in codes(draft), draft.reasons
    assert [item(draft, p).episodes for p in pack] == [(1, 3), (2,)]


async def test_counted_numbers_no_episode_aired_on_are_episodes(providers: list[Any],
                                                                shows: Catalogue) -> None:
    path = "Long Saga 01-02-03.mkv"          # read as 2003-02-01, before the show began
    draft = await recognize(providers, path, [path])
    video = item(draft, path)
    assert (video.season, video.episodes, video.air_date) == (1, (1, 2, 3), None), draft.reasons
    assert "air_date_unlisted" not in codes(draft)


QUIET = FakeTitle("series", "Quiet Coast", 2019, seasons={1: 3}, tmdb_id=5801, tvdb_id=5802, tvmaze_id=5803,
                  imdb_id="tt5800001", slug="quiet-coast", network="BBC One", country="GB")
PART_TWO = "Quiet.Coast.Part.Two.720p.WEB-DL.x264-GRP.mkv"


async def test_a_word_part_of_a_mini_series_is_its_episode(providers: list[Any],
                                                           fake_catalogue: Catalogue) -> None:
    fake_catalogue.add(QUIET)
    draft = await recognize(providers, PART_TWO, [PART_TWO], context="mini-series")
    assert (item(draft, PART_TWO).season, item(draft, PART_TWO).episodes) == (1, (2,)), draft.reasons
    assert draft.provider_id == "5802"


async def test_a_mini_series_part_before_a_year_is_its_episode_when_the_user_says_series(
        providers: list[Any], fake_catalogue: Catalogue) -> None:
    fake_catalogue.add(QUIET)
    path = "Quiet.Coast.Part.Two.2019.1080p.WEB-DL.x264-GRP.mkv"      # alone, a film `Quiet Coast Part Two`
    draft = await recognize(providers, path, [path], context="mini-series")
    assert (item(draft, path).season, item(draft, path).episodes) == (1, (2,)), draft.reasons
    assert draft.provider_id == "5802"


async def test_the_llm_agreeing_with_the_users_type_is_no_disagreement(
        llm: OpenAiLlm, providers: list[Any], fake_catalogue: Catalogue, fake_openai: FakeOpenAI) -> None:
    fake_catalogue.add(QUIET)
    answering(fake_openai, "series", "Quiet Coast", 2019, {PART_TWO: {"role": "video", "season": 1,
                                                                      "episodes": [2]}})
    engine = recognizer(llm, providers)
    told = await engine.recognize(request(PART_TWO, [(PART_TWO, GB)], context="mini-series"))
    assert "llm_type" not in codes(told), told.reasons
    assert told.automatic, told.reasons
    untold = await engine.recognize(request(PART_TWO, [(PART_TWO, GB)]))
    assert "llm_type" in codes(untold)      # the parser's film part against the LLM's series: a doubt


async def test_a_torrent_names_slash_is_its_titles(providers: list[Any], fake_catalogue: Catalogue) -> None:
    fake_catalogue.add(FakeTitle("series", "Fate/stay night", 2006, seasons={1: 24}, tmdb_id=5901,
                                 tvdb_id=5902, tvmaze_id=5903, imdb_id="tt5900001", slug="fate-stay-night",
                                 network="CBC", country="JP"))
    name = "Fate/stay night - 07 [1080p]"
    path = "Fate stay night - 07 [1080p].mkv"
    draft = await recognize(providers, name, [path])
    assert draft.title == "Fate/stay night", draft.reasons
    assert (item(draft, path).season, item(draft, path).episodes) == (1, (7,))
