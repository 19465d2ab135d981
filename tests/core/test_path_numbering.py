"""A video's numbering read from its file name, its folder and the whole path, settled by the provider."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.path_numbering import Disagreement, Option, read_paths, settle
from jellybit.core.records import PlanItem, Role

DAILY = "Evening.Show.2019.03.11.720p.HDTV/evening.show.2019.03.11.mkv"


def test_a_dated_file_in_a_dated_folder_keeps_the_date_alone() -> None:
    releases, disagreements = read_paths([DAILY])
    daily = releases[DAILY]
    assert (daily.air_date, daily.episodes, daily.season) == ("2019-03-11", (), None)
    assert disagreements == {}


def test_a_date_against_the_folders_episode_disagrees() -> None:
    path = "Late.Report.S01E02.720p.HDTV/late.report.2019.03.11.mkv"
    _, disagreements = read_paths([path])
    assert disagreements[path].describe() == "the file name says aired 2019-03-11, the folder says S01E02"


def test_two_seasons_disagree_and_a_packs_range_does_not() -> None:
    other = "Show.S02.720p/Show.S03E04.mkv"
    pack = "Show.S02.720p/Show.S02E04.mkv"
    ranged = "Show S2E1-10 of 10 [2015]/Show.S02E04.mkv"
    _, disagreements = read_paths([other, pack, ranged])
    assert disagreements[other].describe() == "the file name says S03E04, the folder says S02E04"
    assert set(disagreements) == {other}


def test_a_file_with_no_folder_is_read_once() -> None:
    assert read_paths(["Show.2019.03.11.mkv"])[1] == {}


def _video(source: str, **fields: object) -> PlanItem:
    return PlanItem(source=source, role=Role.VIDEO, size=1, **fields)  # type: ignore[arg-type]


def test_a_date_the_provider_lists_once_is_its_episode_or_its_date_naming() -> None:
    dated = [_video("a.mkv", air_date="2019-03-11")]
    by_season, _ = settle(dated, {}, {3: 12}, {"2019-03-11": ((3, 10),)}, "X")
    assert (by_season[0].season, by_season[0].episodes, by_season[0].air_date) == (3, (10,), None)
    by_year, _ = settle(dated, {}, {2019: 3}, {"2019-03-11": ((2019, 2),)}, "X")
    assert (by_year[0].season, by_year[0].episodes, by_year[0].air_date) == (2019, (), "2019-03-11")


def test_a_date_listed_never_or_twice_or_not_asked_blocks() -> None:
    for aired in ({"2019-03-11": ()}, {"2019-03-11": ((3, 1), (3, 2))}, None):
        items, reasons = settle([_video("a.mkv", air_date="2019-03-11")], {}, {3: 12}, aired, "TVDB's 'X'")
        assert [(r.code, r.blocking) for r in reasons] == [("air_date_unlisted", True)]
        assert items[0].season is None


def test_a_disagreement_is_settled_only_when_one_reading_fits() -> None:
    split = Disagreement("a.mkv", (Option("the file name", air_date="2019-03-11"),
                                   Option("the folder", season=1, episodes=(2,))))
    _, reasons = settle([_video("a.mkv")], {"a.mkv": split}, {1: 4, 3: 12},
                                {"2019-03-11": ((3, 10),)}, "X")
    assert [r.code for r in reasons] == ["numbering_conflict"]
    assert "(X fits both)" in reasons[0].message
    one_fits, reasons = settle([_video("a.mkv")], {"a.mkv": split}, {3: 12}, {"2019-03-11": ((3, 10),)}, "X")
    assert reasons == []
    assert (one_fits[0].season, one_fits[0].episodes) == (3, (10,))
    _, reasons = settle([_video("a.mkv")], {"a.mkv": split}, None, None, "X")
    assert "fits neither" in reasons[0].message


def test_a_subtitle_follows_its_videos_settled_numbering() -> None:
    items = [_video("a.mkv", air_date="2019-03-11"),
             PlanItem(source="a.srt", role=Role.SUBTITLE, size=1, attached_to="a.mkv", air_date="2019-03-11")]
    out, _ = settle(items, {}, {3: 12}, {"2019-03-11": ((3, 10),)}, "X")
    assert (out[1].season, out[1].episodes) == (3, (10,))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("Show.2019-03_11 S01E02/[]年话 7x"), max_size=40),
                min_size=1, max_size=4))
def test_reading_paths_is_total(paths: list[str]) -> None:
    videos = [p + ".mkv" for p in dict.fromkeys(paths)]
    releases, disagreements = read_paths(videos)
    assert set(releases) == set(videos)
    assert set(disagreements) <= set(videos)
