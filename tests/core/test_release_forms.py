"""Issue 23's numbering forms and title punctuation: ranges, counted numbers, word parts, an absolute
number beside SxxEyy, a release name's slashes, and titles in several scripts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.cli.parse import to_json
from jellybit.core.release import Release, as_series, parse_release, parse_release_with
from jellybit.core.release_input import NAME_SLASH, is_path, parse_text

CASES: list[tuple[str, dict[str, Any]]] = [
    # listed episodes keep their reading; a gap reports the range as the other reading
    ("Show.S01E01E03.720p.HDTV", {"episodes": [1, 3], "ambiguous_episodes": [1, 2, 3]}),
    ("Show.E1E3.720p.HDTV", {"episodes": [1, 3], "season_assumed": True, "ambiguous_episodes": [1, 2, 3]}),
    ("Show.S01E01E02.720p.HDTV", {"episodes": [1, 2], "ambiguous_episodes": []}),
    ("Show.S01E01-E03.720p.HDTV", {"episodes": [1, 2, 3], "ambiguous_episodes": []}),
    # three counted numbers after a title: a date, or episodes
    ("Show Name 01-02-03", {"title": "Show Name", "air_date": "2003-02-01", "ambiguous_episodes": [1, 2, 3]}),
    ("Show.Name.01-02-03.720p", {"air_date": "2003-02-01", "ambiguous_episodes": [1, 2, 3]}),
    ("Show.Name.03-02-01.720p", {"air_date": "2001-02-03", "ambiguous_episodes": []}),
    ("Show.Name.2019-02-03.720p", {"air_date": "2019-02-03", "ambiguous_episodes": []}),
    # a part in words is an episode marker, as in digits
    ("Show.Name.Part.Two.HDTV", {"title": "Show Name", "episodes": [2], "season": 1, "season_assumed": True}),
    ("Show.Name.Part.2.HDTV", {"title": "Show Name", "episodes": [2], "season": 1, "season_assumed": True}),
    ("Show.Name.Part.Two.720p.WEB-DL", {"media_type": "movie", "part": 2}),   # a series only by context
    ("Dune.Part.Two.2024.1080p", {"title": "Dune Part Two", "media_type": "movie"}),
    # a British broadcaster's `Series 2 Part 11` is a season and its episode
    ("Sea.Monsters.Series.2.Part.11.1080p.HDTV.x264", {"title": "Sea Monsters", "season": 2, "episodes": [11],
                                                       "season_assumed": False}),
    ("Show Series 1 Part Two 1080p WEB", {"title": "Show", "season": 1, "episodes": [2], "part": None}),
    # an absolute number beside SxxEyy is reported beside it, even when it is the same number
    ("Show.Name.S01E05.05.720p", {"season": 1, "episodes": [5], "absolute_episodes": [5]}),
    ("[Grp] Show - S01E05 (05) [1080p]", {"season": 1, "episodes": [5], "absolute_episodes": [5]}),
    ("[Grp] Show - S02E05 (17) [1080p]", {"season": 2, "episodes": [5], "absolute_episodes": [17]}),
    ("Show.S01E05.(2019).720p", {"episodes": [5], "absolute_episodes": [], "year": 2019}),
    # ranges and batches
    ("One Piece Ep1071 - Ep1075 [1080p]", {"episodes": list(range(1071, 1076)), "season_assumed": True}),
    ("Show.1x01-x03.720p", {"season": 1, "episodes": [1, 2, 3]}),
    ("Title 1-24 (Dual Audio)", {"title": "Title", "absolute_episodes": list(range(1, 25)),
                                 "media_type": "season_pack"}),
    ("[Grp] Title 1-24 (Dual Audio) [BD 1080p]", {"title": "Title", "absolute_episodes": list(range(1, 25)),
                                                  "media_type": "season_pack"}),
    ("Title.01-24.[Dual-Audio].1080p", {"title": "Title", "absolute_episodes": list(range(1, 25)),
                                        "media_type": "season_pack"}),
    ("Title - 1-24 (Dual Audio)", {"title": "Title", "alternative_titles": [], "media_type": "season_pack"}),
    ("One Piece Ep 1071 - Ep 1075", {"episodes": list(range(1071, 1076)), "season_assumed": True}),
    ("[Grp] One Piece Ep1071 - Ep1075 [1080p]", {"absolute_episodes": list(range(1071, 1076))}),
    ("Show.1x01-1x03.HDTV", {"season": 1, "episodes": [1, 2, 3]}),
    ("Show 01x01-x03 720p", {"season": 1, "episodes": [1, 2, 3]}),
    ("[Grp] Show S2 - 05 (17) [1080p]", {"season": 2, "episodes": [5], "absolute_episodes": [17]}),
    ("[Grp] Show S2 - 05 (1080p)", {"season": 2, "episodes": [5], "absolute_episodes": []}),
    # a group-led release name's slash is its title's
    ("[VCB-Studio] Fate/stay night [BDRip 1080p]", {"title": "Fate/stay night"}),
    ("[SubGroup] Ranma 1/2 - 03 [WEB-DL 1080p]", {"title": "Ranma 1/2", "absolute_episodes": [3]}),
    ("[Group] 22/7 - 01 [1080p]", {"title": "22/7", "absolute_episodes": [1]}),
    ("Fate／Zero - 01", {"title": "Fate／Zero", "alternative_titles": []}),
    # names in several scripts joined into one title: the Latin one leads
    ("[组名][进击的巨人／Attack on Titan][07]", {"title": "Attack on Titan",
                                            "alternative_titles": ["进击的巨人"]}),
    ("[SweetSub][进击的巨人 _ Attack on Titan][07][1080P]", {"title": "Attack on Titan",
                                                        "alternative_titles": ["进击的巨人"]}),
    ("[xyx98]传颂之物/Utawarerumono/うたわれるもの[BDrip][1920x1080][TV 01-26 Fin]",
     {"title": "Utawarerumono", "alternative_titles": ["传颂之物", "うたわれるもの"]}),
    ("Fate／Zero ／ フェイト／ゼロ - 01", {"title": "Fate／Zero", "alternative_titles": ["フェイト／ゼロ"]}),
]


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_the_forms_are_read(name: str, expected: dict[str, Any]) -> None:
    got = parse_release(name).to_dict()
    assert {key: got[key] for key in expected} == expected


def test_a_path_and_a_name_read_the_same_slash_differently() -> None:
    name = "Fate/stay night - 01"
    assert parse_release(name, path=False).title == "Fate/stay night"
    assert parse_release(name, path=True).title == "stay night"        # a folder `Fate`
    assert parse_release("[Grp] Show [BD]/[Grp] Show - 01 [1080p].mkv").absolute_episodes == (1,)
    assert (is_path("[Grp] Fate/stay night [BD]"), is_path("[Grp] Show/[Grp] Show - 01.mkv")) == (False, True)


def test_a_films_part_in_its_title_is_read_again_as_a_series_episode() -> None:
    film = parse_release("Show.Name.Part.Two.2024.1080p.WEB-DL")
    assert (film.title, film.part) == ("Show Name Part Two", None)
    series = as_series(film)
    assert (series.title, series.part, series.year) == ("Show Name", 2, 2024)
    plain = parse_release("Show.S01E02.1080p")
    assert as_series(plain) is plain


def test_jellybit_parse_shows_both_readings() -> None:
    line = to_json(parse_release("Show.S01E01E03.720p.HDTV"))
    assert '"episodes": [1, 3]' in line
    assert '"ambiguous_episodes": [1, 2, 3]' in line
    assert '"absolute_episodes": [17]' in to_json(parse_release("Show.S02E05.17.720p"))


_PIECES = st.sampled_from([
    "Show", "Fate", "/", "／", " / ", "|", " _ ", "_", "进击的巨人", "Ранма", "1", "2", "22", "7", "01-02-03",
    "E01E03", "S01E01E03", "E1", "E3", "S02E05", "(17)", ".17.", "Part.Two", "Part", "Two", "1x01-x03",
    "Ep1071 - Ep1075", "1-24", "(Dual Audio)", "[Grp]", "【组】", "[", "]", "(", ")", ".", "-", " ", "1080p",
    ".mkv", NAME_SLASH,
])


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=60),
       st.sampled_from([None, True, False]))
def test_the_parser_stays_total_on_names_and_paths(name: str, path: bool | None) -> None:
    release = parse_release_with(name, path=path)
    assert isinstance(release, Release)
    assert release == parse_release_with(name, path=path)
    assert NAME_SLASH not in (release.title or "") + "".join(release.alternative_titles)
    assert all(n >= 0 for n in (*release.episodes, *release.absolute_episodes, *release.ambiguous_episodes))
    # the other reading is never the reading itself
    assert not release.ambiguous_episodes or release.ambiguous_episodes != release.episodes
    again = as_series(release, path)
    assert isinstance(again, Release)
    assert again.part is not None or again is release
    if path is False:
        assert "/" not in parse_text(name, path=False).replace(" / ", "")
