"""The decision rules for numbering and the user's words, end to end in each LLM mode (issue 23).

Real worker, qbittorrent-nox and mosquitto; TMDB, TVDB, TVMaze and the LLM are local fakes with the
real API shapes (`tests/support/decisions.py`). Every case asserts the final state and the exact
library tree, or the review's reason. In mode "llm" the LLM gives the plausible wrong reading where
there is one (a date's month as an episode): the names and the provider's data must still win.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from jellybit.core.states import State
from tests.support.decisions import LLM_MODES, Case, DecisionStack
from tests.support.fake_catalogue import numbering_shows
from tests.support.fake_metadata import Catalogue, FakeTitle
from tests.support.fake_openai import file_entry, llm_answer

pytestmark = pytest.mark.parametrize("decisions", LLM_MODES, indirect=True)

PULP = FakeTitle("movie", "Pulp Fiction", 1994, tmdb_id=680, imdb_id="tt0110912", slug="pulp-fiction",
                 directors=["Quentin Tarantino"], cast=["John Travolta", "Uma Thurman", "Samuel L. Jackson"],
                 network="Miramax", translations={"ru": "Криминальное чтиво"})
TITAN = FakeTitle("series", "Attack on Titan", 2013, original_title="進撃の巨人", original_language="ja",
                  aliases=["Shingeki no Kyojin"], seasons={0: 9, 1: 25, 2: 12, 3: 22, 4: 30}, tmdb_id=1429,
                  tvdb_id=267440, tvmaze_id=919, imdb_id="tt2560140", slug="attack-on-titan", country="JP",
                  translations={"zh": "进击的巨人"}, overview="Humanity fights the Titans.")
FARGO = "series/Fargo (2014) [tvdbid-269613]"


@pytest.fixture
def catalogue(fake_catalogue: Catalogue) -> Catalogue:
    """The default catalogue plus two daily shows, a long show, a film with its director and an anime."""
    for title in (*numbering_shows(), PULP, TITAN):
        fake_catalogue.add(title)
    return fake_catalogue


Numbers = Mapping[str, tuple[int | None, int]]


def answer_with(media_type: str, title: str, year: int, numbers: Numbers | None = None,
                original: str | None = None) -> Any:
    """The LLM's answer: every .mkv a video, numbered by `numbers` (by file name) when given."""
    def answer(listed: Mapping[str, str]) -> dict[str, Any]:
        files = []
        for ref, path in listed.items():
            season, episode = (numbers or {}).get(path.rsplit("/", 1)[-1], (None, None))
            if path.endswith(".mkv"):
                files.append(file_entry(ref, "video", season=season,
                                        episodes=[episode] if episode is not None else []))
        return llm_answer(media_type, title, year, files, original_title=original)
    return answer


@pytest.mark.parametrize("name", ["evening.show.2019.03.11.mkv", "Evening.Show.2019.03.11.720p.HDTV.mkv"])
async def test_a_daily_show_dated_in_folder_and_file_is_laid_out_by_air_date(
        decisions: DecisionStack, catalogue: Catalogue, name: str) -> None:
    # the held-out failure: read as S01E03 (the month as the episode) and laid out at 0.95
    case = Case("Evening.Show.2019.03.11.720p.HDTV", {name: 50_000},
                answer=answer_with("series", "Evening Show", 2015, {name: (1, 3)}))
    outcome = await decisions.run(case)
    assert outcome.state is State.DONE, outcome.reasons
    show = "series/Evening Show (2015) [tvdbid-5502]"
    assert decisions.tree() == [f"{show}/Season 2019/Evening Show 2019-03-11.mkv"]


async def test_a_daily_show_numbered_by_season_takes_that_days_episode(decisions: DecisionStack,
                                                                        catalogue: Catalogue) -> None:
    name = "late.report.2019.03.11.mkv"
    outcome = await decisions.run(Case("Late.Report.2019.03.11.720p.HDTV", {name: 50_000},
                                       answer=answer_with("series", "Late Report", 2017, {name: (1, 3)})))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["series/Late Report (2017) [tvdbid-5602]/Season 03/Late Report S03E10.mkv"]


async def test_a_folder_and_file_numbering_nobody_can_settle_asks_a_human(decisions: DecisionStack,
                                                                          catalogue: Catalogue) -> None:
    # the folder says S01E02, the file's date is S03E10's: both exist, so neither is assumed
    name = "late.report.2019.03.11.mkv"
    outcome = await decisions.run(Case("Late.Report.S01E02.720p.HDTV", {name: 50_000},
                                       answer=answer_with("series", "Late Report", 2017, {name: (1, 2)})))
    assert outcome.state is State.REVIEW
    assert any(r.startswith("numbering_conflict") for r in outcome.reasons), outcome.reasons
    assert decisions.tree() == []


async def test_an_episode_number_beyond_season_one_is_absolute(decisions: DecisionStack,
                                                               catalogue: Catalogue) -> None:
    name = "Long.Saga.E30.German.720p.WEB.x264-GRP"
    answer = answer_with("series", "Long Saga", 2010, {f"{name}.mkv": (None, 30)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 50_000}, answer=answer))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["series/Long Saga (2010) [tvdbid-5702]/Season 03/Long Saga S03E06.mkv"]


async def test_a_cyrillic_context_naming_the_director_confirms_the_film(decisions: DecisionStack,
                                                                       catalogue: Catalogue) -> None:
    name = "Pulp.Fiction.1994.1080p.BluRay.x264-GRP"
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 90_000}, context="фильм Тарантино",
                                       answer=answer_with("movie", "Pulp Fiction", 1994)))
    assert outcome.state is State.DONE, outcome.reasons
    assert not any(r.startswith("context_unused") for r in outcome.reasons)
    folder = "movies/Pulp Fiction (1994) [tmdbid-680]"
    assert decisions.tree() == [f"{folder}/Pulp Fiction (1994) [tmdbid-680].mkv"]


# A file name cannot hold `/`: a bilingual bracket uses the full-width `／` (or ` _ `).
@pytest.mark.parametrize("name", ["[组名][进击的巨人][07][1080P][简体]",
                                  "[组名][进击的巨人／Attack on Titan][07][1080P][简体]"])
async def test_an_east_asian_fansub_episode(decisions: DecisionStack, catalogue: Catalogue,
                                            name: str) -> None:
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 60_000},
                                       answer=answer_with("series", "Attack on Titan", 2013,
                                                          {f"{name}.mkv": (1, 7)}, original="進撃の巨人")))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [
        "series/Attack on Titan (2013) [tvdbid-267440]/Season 01/Attack on Titan S01E07.mkv"]


def _fargo_two(name: str, context: str = "") -> Case:
    files: dict[str, int | bytes] = {f"Fargo.S02E{e:02d}.1080p.WEB-DL.mkv": 40_000 + e for e in range(1, 11)}
    numbers = {n: (2, e) for e, n in enumerate(files, 1)}
    return Case(name, files, context=context, answer=answer_with("series", "Fargo", 2014, numbers))


@pytest.mark.parametrize(("name", "context"), [
    ("Фарго | Fargo | S2E1-10 of 10 [2015, WEB-DL 1080p]", ""),
    # the tracker's topic title pasted as the context of a torrent named the scene way
    ("Fargo.S02.1080p.WEB-DL.Rus", "Фарго / Fargo / S2E1-10 of 10 [2015, WEB-DL 1080p]"),
])
async def test_a_tracker_style_season_pack(decisions: DecisionStack, name: str, context: str) -> None:
    outcome = await decisions.run(_fargo_two(name, context))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{FARGO}/Season 02/Fargo S02E{e:02d}.mkv" for e in range(1, 11)]


async def test_an_absolute_number_the_providers_seasons_confirm_is_laid_out(decisions: DecisionStack,
                                                                            catalogue: Catalogue) -> None:
    # Long Saga's seasons have 12, 12 and 24 episodes: absolute 17 is S02E05, as the name says
    name = "Long.Saga.S02E05.17.720p.WEB.x264-GRP"
    answer = answer_with("series", "Long Saga", 2010, {f"{name}.mkv": (2, 5)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 50_000}, answer=answer))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["series/Long Saga (2010) [tvdbid-5702]/Season 02/Long Saga S02E05.mkv"]


async def test_an_absolute_number_against_sxxeyy_asks_a_human(decisions: DecisionStack,
                                                              catalogue: Catalogue) -> None:
    name = "Long.Saga.S02E05.20.720p.WEB.x264-GRP"          # absolute 20 is S02E08
    answer = answer_with("series", "Long Saga", 2010, {f"{name}.mkv": (2, 5)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 50_000}, answer=answer))
    assert outcome.state is State.REVIEW
    assert any(r.startswith("numbering_conflict") for r in outcome.reasons), outcome.reasons
    assert decisions.tree() == []


async def test_a_listed_pair_that_may_be_a_range_asks_a_human(decisions: DecisionStack,
                                                              catalogue: Catalogue) -> None:
    name = "Long.Saga.S01E01E03.720p.WEB.x264-GRP"          # episodes 1 and 3, or a file of 1 to 3
    answer = answer_with("series", "Long Saga", 2010, {f"{name}.mkv": (1, 1)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 50_000}, answer=answer))
    assert outcome.state is State.REVIEW
    assert any(r.startswith("numbering_conflict") for r in outcome.reasons), outcome.reasons
    assert decisions.tree() == []


async def test_a_mini_series_part_in_words_is_its_episode(decisions: DecisionStack,
                                                         catalogue: Catalogue) -> None:
    catalogue.add(FakeTitle("series", "Quiet Coast", 2019, seasons={1: 3}, tmdb_id=5801, tvdb_id=5802,
                            tvmaze_id=5803, imdb_id="tt5800001", slug="quiet-coast", network="BBC One",
                            country="GB"))
    name = "Quiet.Coast.Part.Two.720p.WEB-DL.x264-GRP"
    answer = answer_with("series", "Quiet Coast", 2019, {f"{name}.mkv": (1, 2)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 50_000}, context="mini-series", answer=answer))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["series/Quiet Coast (2019) [tvdbid-5802]/Season 01/Quiet Coast S01E02.mkv"]
