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


def test_an_absolute_number_beside_sxxeyy_is_checked_against_the_providers_seasons() -> None:
    path = "Show.S02E05.17.720p.mkv"
    _, doubts = read_paths([path])
    assert doubts[path].describe() == "the file name says S02E05 or absolute episode 17"
    fits, reasons = settle([_video(path, season=2, episodes=(5,))], doubts, {1: 12, 2: 12}, None, "X")
    assert reasons == []
    assert (fits[0].season, fits[0].episodes) == (2, (5,))
    _, reasons = settle([_video(path, season=2, episodes=(5,))], doubts, {1: 13, 2: 12}, None, "X")
    assert [(r.code, r.blocking) for r in reasons] == [("numbering_conflict", True)]
    assert "S02E05 or absolute episode 17 (X fits both)" in reasons[0].message


def test_a_listed_pair_of_episodes_may_be_a_range_unless_another_file_has_the_gap() -> None:
    alone = "Show.S01E01E03.720p.mkv"
    _, doubts = read_paths([alone])
    assert doubts[alone].describe() == "the file name says S01E01+E03 or S01E01-E03"
    _, reasons = settle([_video(alone, season=1, episodes=(1, 3))], doubts, {1: 10}, None, "X")
    assert [r.code for r in reasons] == ["numbering_conflict"]
    beside = ["Show.S01E01E03.720p.mkv", "Show.S01E02.720p.mkv"]
    assert read_paths(beside)[1] == {}


def test_counted_numbers_read_as_a_date_are_settled_by_the_provider() -> None:
    path = "Show Name 01-02-03.mkv"
    releases, doubts = read_paths([path])
    assert releases[path].air_date == "2003-02-01"
    assert doubts[path].describe() == "the file name says aired 2003-02-01 or S01E01-E03"
    video = _video(path, air_date="2003-02-01")
    episodes, reasons = settle([video], doubts, {1: 8}, {"2003-02-01": ()}, "X")
    assert reasons == []
    assert (episodes[0].season, episodes[0].episodes, episodes[0].air_date) == (1, (1, 2, 3), None)
    dated, reasons = settle([video], doubts, None, {"2003-02-01": ((5, 4),)}, "X")
    assert reasons == []
    assert (dated[0].season, dated[0].episodes) == (5, (4,))
    _, reasons = settle([video], doubts, {1: 8, 5: 10}, {"2003-02-01": ((5, 4),)}, "X")
    assert [r.code for r in reasons] == ["numbering_conflict"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("Show.2019-03_11 S01E02/[]年话 7x"), max_size=40),
                min_size=1, max_size=4))
def test_reading_paths_is_total(paths: list[str]) -> None:
    videos = [p + ".mkv" for p in dict.fromkeys(paths)]
    releases, disagreements = read_paths(videos)
    assert set(releases) == set(videos)
    assert set(disagreements) <= set(videos)


_NAME_PIECES = st.sampled_from(["Show", ".", " ", "S01", "S02", "E01", "E03", "E05", "E1E3", "01-02-03", "17",
                                "(17)", " - ", "05", "2019.03.11", "Part.Two", "1x01-x03", "[Grp]", "720p"])


Aired = dict[str, tuple[tuple[int, int], ...]]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_NAME_PIECES, max_size=8).map("".join), min_size=1, max_size=3),   # all named
       st.none() | st.dictionaries(st.integers(0, 4), st.integers(0, 30), max_size=4),
       st.none() | st.dictionaries(st.sampled_from(["2003-02-01", "2019-03-11"]),
                                   st.lists(st.tuples(st.integers(0, 4), st.integers(1, 30)), max_size=2)
                                   .map(tuple), max_size=2))
def test_a_names_doubts_are_settled_or_asked_never_guessed(names: list[str], counts: dict[int, int] | None,
                                                             aired: Aired | None) -> None:
    videos = [n + ".mkv" for n in dict.fromkeys(names)]
    releases, doubts = read_paths(videos)
    items = [_video(v, season=r.season, episodes=r.episodes, air_date=r.air_date)
             for v, r in ((v, releases[v]) for v in videos)]
    out, reasons = settle(items, doubts, counts, aired, "X")
    conflicts = " ".join(r.message for r in reasons if r.code == "numbering_conflict")
    assert all(r.blocking for r in reasons if r.code == "numbering_conflict")
    for item in out:
        if item.source in doubts and f"'{item.source[:80]}'" not in conflicts:
            # settled: the one place the provider's data gives, never a season by assumption
            assert item.season is not None
            assert item.episodes or item.air_date
