"""The naming cultures of issue 23: East-Asian fansub names, broadcast dates, tracker and language
conventions, numbering forms, titles with numbers; and the parser stays total on mixed scripts."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.release import Release, parse_release, parse_release_with

RANGE_24 = list(range(1, 25))

CASES: list[tuple[str, dict[str, Any]]] = [
    # East-Asian fansub and web names
    ("【某字幕组】★10月新番[中文标题/English Title][07][1080P][简体]",
     {"title": "English Title", "alternative_titles": ["中文标题"], "absolute_episodes": [7]}),
    ("[组名][中文标题][第12话][BIG5]",
     {"title": "中文标题", "alternative_titles": [], "absolute_episodes": [12]}),
    ("[组名][中文标题][01-24完][1080P]", {"title": "中文标题", "absolute_episodes": RANGE_24}),
    ("[组名][中文标题][全24集][1080P]", {"title": "中文标题", "absolute_episodes": RANGE_24,
                                         "media_type": "season_pack"}),
    ("제목 <부제>.E120.240101.1080p-GRP", {"title": "제목", "alternative_titles": ["부제"], "episodes": [120],
                                       "air_date": "2024-01-01", "season_assumed": True}),
    ("230415 Show Name ep12.mp4", {"title": "Show Name", "air_date": "2023-04-15", "episodes": [12]}),
    # tracker and language conventions
    ("Название / Original Title / S2E1-10 of 10 [2023, WEB-DL 1080p] + Original",
     {"title": "Название", "alternative_titles": ["Original Title"], "season": 2,
      "episodes": list(range(1, 11))}),
    ("Show Name Temporada 3 [HDTV][Cap.305]", {"season": 3, "episodes": [5]}),
    ("Show Name [HDTV][Cap.1207]", {"season": 12, "episodes": [7], "absolute_episodes": []}),
    ("Show 45. Bölüm (12.03.2023)", {"title": "Show", "episodes": [45], "season_assumed": True}),
    ("Show.45.BLM.1080p", {"title": "Show", "episodes": [45], "season_assumed": True}),
    ("Show Se.2 afl.5", {"title": "Show", "season": 2, "episodes": [5], "season_assumed": False}),
    ("Show afl.6-7", {"title": "Show", "episodes": [6, 7], "season_assumed": True}),
    ("Title (2023/S02E03/WEB-DL/1080p/ITA/SUBS) GRP", {"title": "Title", "year": 2023, "season": 2,
                                                        "episodes": [3]}),
    # numbering forms
    ("Show Ep1071 - Ep1075", {"episodes": list(range(1071, 1076)), "season_assumed": True}),
    ("Show 1x01-x03", {"season": 1, "episodes": [1, 2, 3]}),
    ("Title 1-24 (Dual Audio)", {"title": "Title", "absolute_episodes": RANGE_24}),
    # dates
    ("Title.190311.720p", {"title": "Title", "air_date": "2019-03-11"}),
    ("Title.2019.24.05.720p", {"title": "Title", "air_date": "2019-05-24", "absolute_episodes": []}),
    ("1923.Evening.Show.2019.03.11", {"title": "1923 Evening Show", "air_date": "2019-03-11", "year": None,
                                      "media_type": "episode"}),
    ("Show.2019.03.11/Show.2019.03.11.720p.mkv", {"air_date": "2019-03-11", "episodes": [], "year": None}),
    # titles with numbers and punctuation
    ("(T)Raumschiff.Surprise.2004.German", {"title": "(T)Raumschiff Surprise", "year": 2004}),
    ("S.W.A.T.2017.S01E01.720p", {"season": 1, "episodes": [1], "year": 2017}),
    ("9-1-1.S02E03.720p", {"title": "9-1-1", "season": 2, "episodes": [3]}),
    ("Ghost in the Shell 2.0 (2008)", {"title": "Ghost in the Shell 2.0", "year": 2008}),
    ("Film.3.DIRECTORS.CUT.2011.1080p", {"title": "Film 3", "year": 2011, "media_type": "movie"}),
    # an episode without a season: ambiguous, the number kept for the recognizer
    ("Show.E0987.German.720p", {"episodes": [987], "season": 1, "season_assumed": True}),
    ("Show Episode 41", {"episodes": [41], "season_assumed": True}),
    ("Show EP09", {"episodes": [9], "season_assumed": True}),
    # a path read through its folder
    ("Show - 7x04 - Title/704 - Title.mkv", {"title": "Show", "season": 7, "episodes": [4]}),
]


@pytest.mark.parametrize(("name", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_the_issue_classes_are_read(name: str, expected: dict[str, Any]) -> None:
    got = parse_release(name).to_dict()
    assert {key: got[key] for key in expected} == expected


def test_a_slash_inside_brackets_separates_titles_not_folders() -> None:
    spaced = parse_release("[Grp] 中文 / English [05][1080p]")
    packed = parse_release("[Grp][中文/English][05][1080p]")
    assert (packed.title, packed.alternative_titles, packed.absolute_episodes) == ("English", ("中文",), (5,))
    assert spaced.absolute_episodes == (5,)



_PIECES = st.sampled_from([
    "Show", "Name", "Сериал", "Сезон 2", "серия 5", "中文标题", "第12话", "全24集", "01-24完", "★10月新番★",
    "제목", "<제목>", "시즌2", "E120", "230415", "190311", "2019.24.05", "2019.03.11", "12.03.2023", "1923",
    "S01E05", "1x01-x03", "Ep1071", "Cap.1207", "45. Bölüm", "afl.6-7", "Se.2", "Part.Two", "+ Original",
    "【", "】", "［", "］", "[", "]", "(", ")", "/", " / ", "_", ".", "-", " ", "1080p", "WEB-DL", "x264-GRP",
])


@settings(max_examples=150, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=60))
def test_the_parser_stays_total_on_mixed_scripts_brackets_and_dates(name: str) -> None:
    release = parse_release_with(name)
    assert isinstance(release, Release)
    assert release == parse_release_with(name)
    assert all(isinstance(n, int) and n >= 0 for n in (*release.episodes, *release.absolute_episodes))
    assert release.air_date is None or len(release.air_date) == 10
    assert not release.season_assumed or release.season is not None
