"""Jellyfin naming: documented forms, read back with transcriptions of Jellyfin's own parsers."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from jellybit.core.names import episode_code, extras_folder, id_tag, season_folder, version_label
from jellybit.core.records import MediaType, Plan, PlanItem, Role, Work
from jellybit.core.sidecars import normalize_flags, normalize_language, track_title
from jellybit.core.targets import layout_reasons, layout_targets, parse_title_folder, title_folder
from tests.support import jellyfin_oracle as jf

MOVIE = Work(MediaType.MOVIE, "Film", 2010, "tmdb", "65567")
SHOW = Work(MediaType.SERIES, "Series Name", 2018, "tvdb", "79168")


def video(source: str, **kw) -> PlanItem:
    return PlanItem(source, 100, Role.VIDEO, **kw)


def sub(source: str, **kw) -> PlanItem:
    return PlanItem(source, 1, Role.SUBTITLE, **kw)


def targets(plan: Plan) -> list[str | None]:
    return [i.target for i in plan.items]


def by_source(plan: Plan) -> dict[str, PlanItem]:
    return {i.source: i for i in plan.items}


# ---------------------------------------------------------------------------- title folders


@pytest.mark.parametrize(
    ("work", "expected"),
    [
        # docs metadata/identifiers: "Best_Movie_Ever (1994) [tmdbid-680]", "Movie (2021) [imdbid-tt12801262]"
        (Work(MediaType.MOVIE, "Best_Movie_Ever", 1994, "tmdb", "680"),
         "Best_Movie_Ever (1994) [tmdbid-680]"),
        (Work(MediaType.MOVIE, "Movie", 2021, "imdb", "tt12801262"), "Movie (2021) [imdbid-tt12801262]"),
        (Work(MediaType.MOVIE, "Movie", 2021, "imdb", "12801262"), "Movie (2021) [imdbid-tt12801262]"),
        # identifiers: TVDB is "Shows Only"; MovieResolver reads only tmdbid and imdbid.
        (Work(MediaType.MOVIE, "Movie", 2021, "tvdb", "5"), "Movie (2021)"),
        (Work(MediaType.MOVIE, "Movie", 2021, "tvmaze", "5"), "Movie (2021)"),
        # docs media/shows: "Series Name (year) [metadata provider id]"; SeriesResolver reads all four.
        (Work(MediaType.SERIES, "Series Name", 2018, "tvdb", "79168"), "Series Name (2018) [tvdbid-79168]"),
        (Work(MediaType.SERIES, "Series Name", 2018, "tmdb", "1399"), "Series Name (2018) [tmdbid-1399]"),
        (Work(MediaType.SERIES, "Series Name", 2018, "imdb", "tt0944947"),
         "Series Name (2018) [imdbid-tt0944947]"),
        (Work(MediaType.SERIES, "Series Name", 2018, "tvmaze", "82"), "Series Name (2018) [tvmazeid-82]"),
        # year and id are optional (docs media/shows "Naming")
        (Work(MediaType.MOVIE, "Film", None, "tmdb", "1"), "Film [tmdbid-1]"),
        (Work(MediaType.MOVIE, "Film", 1990), "Film (1990)"),
        (Work(MediaType.MOVIE, "Film"), "Film"),
        (Work(MediaType.MOVIE, "Film", 2010, "tmdb", None), "Film (2010)"),
        (Work(MediaType.MOVIE, "Film", 2010, "anidb", "5"), "Film (2010)"),
        # characters Jellyfin says break things are replaced
        (Work(MediaType.MOVIE, "Mission: Impossible", 1996, "tmdb", "954"),
         "Mission - Impossible (1996) [tmdbid-954]"),
        (Work(MediaType.SERIES, "Бригада", 2002, "tvdb", "77208"), "Бригада (2002) [tvdbid-77208]"),
        (Work(MediaType.MOVIE, "千と千尋の神隠し", 2001, "tmdb", "129"),
         "千と千尋の神隠し (2001) [tmdbid-129]"),
        # the year is not said twice; forged tags and bad ids are neutralized
        (Work(MediaType.MOVIE, "Dune (2021)", 2021, "tmdb", "438631"), "Dune (2021) [tmdbid-438631]"),
        (Work(MediaType.MOVIE, "X [tmdbid-666]", 2000, "tmdb", "1"), "X (tmdbid-666) (2000) [tmdbid-1]"),
        (Work(MediaType.MOVIE, "X", 2000, "tmdb", "1] [tmdbid-666"), "X (2000)"),
        (Work(MediaType.MOVIE, "X", 2000, "imdb", "nm123"), "X (2000)"),
        (Work(MediaType.MOVIE, "../..", 2000, "tmdb", "1"), "Untitled (2000) [tmdbid-1]"),
        (Work(MediaType.MOVIE, "", None), "Untitled"),
        (Work(MediaType.MOVIE, "Film", 20000), "Film"),
        # names Jellyfin's IgnorePatterns would skip get a suffix
        (Work(MediaType.MOVIE, "Metadata"), "Metadata_"),
        (Work(MediaType.MOVIE, "Sample"), "Sample_"),
    ],
)
def test_title_folder(work: Work, expected: str) -> None:
    assert title_folder(work) == expected


def test_title_folder_tag_is_what_jellyfin_reads() -> None:
    name = title_folder(Work(MediaType.MOVIE, "X [tmdbid-666] [imdbid-tt1]", 2000, "tmdb", "42"))
    assert jf.get_attribute_value(name, "tmdbid") == "42"
    assert jf.get_attribute_value(name, "imdbid") is None
    name = title_folder(Work(MediaType.SERIES, "Show", 2000, "tvmaze", "82"))
    assert jf.get_attribute_value(name, "tvmazeid") == "82"


def test_long_titles_leave_room_for_files() -> None:
    folder = title_folder(Work(MediaType.MOVIE, "Очень длинное название " * 30, 2020, "tmdb", "123456789"))
    assert len(folder.encode()) <= 120 + len(" (2020) [tmdbid-123456789]")
    assert folder.endswith(" (2020) [tmdbid-123456789]")


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Best_Movie_Ever (1994) [tmdbid-680] [imdbid-1234]",
         ("Best_Movie_Ever", 1994, {"tmdb": "680", "imdb": "1234"})),
        ("Series Name (2018) [tvdbid-79168]", ("Series Name", 2018, {"tvdb": "79168"})),
        ("Show [tvmazeid=82]", ("Show", None, {"tvmaze": "82"})),          # PathExtensions accepts '='
        ("Film (2010)", ("Film", 2010, {})),
        ("Film", ("Film", None, {})),
        ("Blade Runner 2049 (2017) [TMDBID-335984]", ("Blade Runner 2049", 2017, {"tmdb": "335984"})),
        ("Metadata_", ("Metadata", None, {})),
    ],
)
def test_parse_title_folder(name: str, expected: tuple) -> None:
    assert parse_title_folder(name) == expected


@pytest.mark.parametrize(
    "work",
    [
        MOVIE, SHOW, Work(MediaType.SERIES, "Бригада", 2002, "tvdb", "77208"),
        Work(MediaType.MOVIE, "Movie", 2021, "imdb", "tt12801262"), Work(MediaType.MOVIE, "No Year"),
    ],
)
def test_parse_title_folder_inverts_title_folder(work: Work) -> None:
    title, year, ids = parse_title_folder(title_folder(work))
    assert (title, year) == (work.title, work.year)
    assert ids == ({work.provider: work.provider_id} if work.provider else {})


def test_small_pieces() -> None:
    assert season_folder(1) == "Season 01"
    assert season_folder(0) == "Season 00"
    assert season_folder(123) == "Season 123"
    assert episode_code(1, (2,)) == "S01E02"
    assert episode_code(1, (2, 1)) == "S01E01-E02"
    assert episode_code(1, (1, 2, 3)) == "S01E01-E03"
    assert episode_code(2, (100,)) == "S02E100"
    assert version_label("Extended, Remastered 5.1") == "Extended Remastered 5 1"   # no periods or commas
    assert version_label("[Directors Cut]") == "Directors Cut"
    assert version_label("...") is None
    assert extras_folder("Behind The Scenes") == "behind the scenes"
    assert extras_folder("deleted") == "deleted scenes"
    assert extras_folder("theme song") == "theme-music"
    assert extras_folder("../../etc") == "extras"
    assert extras_folder(None) == "extras"
    assert id_tag(Work(MediaType.SERIES, "S", provider="TVDB", provider_id=" 81189 ")) == "[tvdbid-81189]"


# ---------------------------------------------------------------------------- movies


def test_movie_file_named_like_its_folder() -> None:
    # docs media/movies + metadata/identifiers: "Film (2010) [tmdbid-65567]/Film (2010) [tmdbid-65567].mkv"
    plan = layout_targets(Plan(items=(video("Film.2010.1080p.BluRay/Film.2010.1080p.BluRay.MKV"),)), MOVIE)
    item = plan.items[0]
    assert (item.library, item.status) == ("movies", "planned")
    assert item.target == "Film (2010) [tmdbid-65567]/Film (2010) [tmdbid-65567].mkv"
    assert plan.folder == "Film (2010) [tmdbid-65567]"


def test_movie_versions() -> None:
    # docs media/movies "Multiple Versions": "<folder> - 2160p.mp4", "<folder> - Directors Cut.mp4"
    plan = layout_targets(
        Plan(items=(video("a.mkv", version="2160p"), video("b.mkv", version="1080p"),
                    video("c.mkv", version="Director's Cut"), video("d.mkv"))),
        MOVIE,
    )
    folder = "Film (2010) [tmdbid-65567]"
    assert targets(plan) == [
        f"{folder}/{folder} - 2160p.mkv", f"{folder}/{folder} - 1080p.mkv",
        f"{folder}/{folder} - Director's Cut.mkv", f"{folder}/{folder}.mkv",
    ]
    for t in targets(plan):
        assert jf.eligible_for_multi_version(folder, PurePosixPath(t).stem)


def test_movie_parts_stack() -> None:
    # docs media/movies "Multiple Parts": "<name><sep><parttype><sep><number>"; NamingOptions stacking rule.
    plan = layout_targets(
        Plan(items=(video("cd1.avi", part=1), video("cd2.avi", part=2),
                    sub("cd1.srt", language="en", attached_to="cd1.avi"))),
        MOVIE,
    )
    folder = "Film (2010) [tmdbid-65567]"
    assert targets(plan) == [f"{folder}/{folder}-part1.avi", f"{folder}/{folder}-part2.avi",
                             f"{folder}/{folder}-part1.en.srt"]
    for number, target in zip((1, 2), targets(plan)[:2], strict=True):
        match = jf.STACKING.match(PurePosixPath(target).name)
        assert match
        assert match["filename"] == folder
        assert int(match["number"]) == number


def test_version_with_part_is_unique_and_noted() -> None:
    plan = layout_targets(Plan(items=(video("a.mkv", version="1080p", part=1),)), MOVIE)
    assert plan.items[0].target.endswith(" - 1080p-part1.mkv")
    assert "versions with parts" in plan.items[0].note


def test_movie_pack_each_film_in_its_own_folder() -> None:
    other = Work(MediaType.MOVIE, "Film 2", 2012, "tmdb", "777")
    plan = layout_targets(
        Plan(items=(video("one.mkv"), video("two.mkv", work=other), sub("two.en.srt", language="en"),
                    PlanItem("two-trailer.mkv", 1, Role.EXTRA, extra_kind="trailer", work=other))),
        MOVIE,
    )
    assert targets(plan) == [
        "Film (2010) [tmdbid-65567]/Film (2010) [tmdbid-65567].mkv",
        "Film 2 (2012) [tmdbid-777]/Film 2 (2012) [tmdbid-777].mkv",
        "Film 2 (2012) [tmdbid-777]/Film 2 (2012) [tmdbid-777].en.srt",
        "Film 2 (2012) [tmdbid-777]/trailers/two-trailer.mkv",
    ]
    assert plan.folder == "Film (2010) [tmdbid-65567]"


def test_movie_pack_without_a_plan_work() -> None:
    a, b = Work(MediaType.MOVIE, "A", 2000), Work(MediaType.MOVIE, "B", 2001)
    plan = layout_targets(Plan(items=(video("a.mkv", work=a), video("b.mkv", work=b), video("c.mkv"))), None)
    assert targets(plan) == ["A (2000)/A (2000).mkv", "B (2001)/B (2001).mkv", None]
    assert plan.items[2].status == "skipped"
    assert plan.folder is None
    assert [r.code for r in layout_reasons(plan)] == ["unplaced_file"]


def test_inherited_folder_replaces_the_computed_one() -> None:
    folder = "Фильм (2010) [tmdbid-65567]"
    plan = layout_targets(Plan(items=(video("a.mkv"), video("b.mkv", version="720p"))), MOVIE, folder=folder)
    assert targets(plan) == [f"{folder}/{folder}.mkv", f"{folder}/{folder} - 720p.mkv"]
    assert plan.folder == folder


# ---------------------------------------------------------------------------- series


def test_series_episodes_specials_and_multi_episode() -> None:
    # docs media/shows "Organization": Season 00 specials, "S01E01-E02" multi-episode files.
    plan = layout_targets(
        Plan(items=(video("e1.mkv", season=1, episodes=(1,)), video("e23.mkv", season=1, episodes=(2, 3)),
                    video("sp.mkv", season=0, episodes=(1,)), video("s2.mkv", season=2, episodes=(10,)))),
        SHOW,
    )
    root = "Series Name (2018) [tvdbid-79168]"
    assert targets(plan) == [
        f"{root}/Season 01/Series Name S01E01.mkv",
        f"{root}/Season 01/Series Name S01E02-E03.mkv",
        f"{root}/Season 00/Series Name S00E01.mkv",
        f"{root}/Season 02/Series Name S02E10.mkv",
    ]
    assert {i.library for i in plan.items} == {"series"}
    one = jf.EPISODE.match("/" + targets(plan)[0])
    assert one
    assert one["seriesname"].strip() == "Series Name"
    assert (one["seasonnumber"], one["epnumber"]) == ("01", "01")
    multi = jf.MULTI_EPISODE.match("/" + targets(plan)[1])
    assert multi
    assert (multi["seasonnumber"], multi["epnumber"], multi["endingepnumber"]) == ("01", "02", "03")
    for t in targets(plan):
        assert jf.SEASON_FOLDER.match(PurePosixPath(t).parent.name)


def test_series_title_comes_from_an_inherited_folder() -> None:
    plan = layout_targets(Plan(items=(video("x.mkv", season=2, episodes=(1,)),)),
                          Work(MediaType.SERIES, "Broen", 2011, "tvdb", "252019"),
                          folder="The Bridge (2011) [tvdbid-252019]")
    assert targets(plan) == ["The Bridge (2011) [tvdbid-252019]/Season 02/The Bridge S02E01.mkv"]


def test_absolute_numbers_go_to_season_one() -> None:
    anime = Work(MediaType.SERIES, "One Piece", 1999, "tvdb", "81797")
    plan = layout_targets(Plan(items=(video("op150.mkv", absolute_episodes=(150,)),)), anime)
    assert targets(plan) == ["One Piece (1999) [tvdbid-81797]/Season 01/One Piece S01E150.mkv"]
    assert "absolute" in plan.items[0].note


def test_daily_show_by_air_date() -> None:
    # Emby.Naming EpisodeExpressions: "yyyy-MM-dd" in the name makes a by-date episode.
    daily = Work(MediaType.SERIES, "The Daily Show", 1996, "tvdb", "71256")
    plan = layout_targets(Plan(items=(video("tds.mkv", air_date="2024-03-05"),
                                      video("bad.mkv", air_date="2024-13-45"))), daily)
    assert plan.items[0].target == (
        "The Daily Show (1996) [tvdbid-71256]/Season 2024/The Daily Show 2024-03-05.mkv"
    )
    assert jf.BY_DATE.search(PurePosixPath(plan.items[0].target).name)
    assert plan.items[1].status == "skipped"
    assert plan.items[1].target is None


def test_episode_without_season_assumes_one_and_unnumbered_is_skipped() -> None:
    plan = layout_targets(Plan(items=(video("e.mkv", episodes=(4,)), video("x.mkv"),
                                      video("n.mkv", season=-1, episodes=(1,)))), SHOW)
    assert plan.items[0].target.endswith("Season 01/Series Name S01E04.mkv")
    assert plan.items[1].target is None
    assert plan.items[1].status == "skipped"
    assert plan.items[2].target is None
    codes = [(r.code, r.blocking) for r in layout_reasons(plan)]
    assert codes == [("unplaced_file", True), ("unplaced_file", True)]


def test_duplicate_episode_is_a_collision_and_its_subtitle_steals_nothing() -> None:
    plan = layout_targets(
        Plan(items=(video("a/e1.mkv", season=1, episodes=(1,)), video("b/e1.mkv", season=1, episodes=(1,)),
                    sub("b/e1.en.srt", language="en", attached_to="b/e1.mkv"),
                    sub("a/e1.en.srt", language="en", attached_to="a/e1.mkv"))),
        SHOW,
    )
    items = by_source(plan)
    assert items["b/e1.mkv"].status == "collision"
    assert "a/e1.mkv" in items["b/e1.mkv"].note
    assert items["b/e1.en.srt"].status == "collision"
    # the real video's subtitle keeps the plain name: the colliding follower took nothing
    assert items["a/e1.en.srt"].target.endswith("Series Name S01E01.en.srt")
    assert items["a/e1.en.srt"].status == "planned"
    assert {r.code for r in layout_reasons(plan)} == {"target_collision"}


def test_collisions_are_case_insensitive() -> None:
    # SMB shares fold case: "Trailer.mkv" and "trailer.mkv" are one file there.
    extras = (PlanItem("x/Trailer.mkv", 1, Role.EXTRA, extra_kind="trailer"),
              PlanItem("y/trailer.mkv", 1, Role.EXTRA, extra_kind="trailers"))
    plan = layout_targets(Plan(items=extras), MOVIE)
    assert [PurePosixPath(t).name for t in targets(plan)] == ["Trailer.mkv", "trailer (2).mkv"]


# ---------------------------------------------------------------------------- subtitles and audio


def parsed(plan: Plan, source: str, host_source: str) -> jf.External:
    items = by_source(plan)
    host_stem = PurePosixPath(items[host_source].target).stem
    extra = jf.match_external(host_stem, PurePosixPath(items[source].target).name)
    assert extra is not None, "Jellyfin would not attach it to its video"
    return jf.parse_external(extra)


def test_subtitle_flags_in_jellyfin_spelling() -> None:
    # docs media/external-files "Naming Flags": default; forced|foreign; sdh|cc|hi.
    plan = layout_targets(
        Plan(items=(video("m.mkv"),
                    sub("1.srt", language="en", flags=("forced", "default"), attached_to="m.mkv"),
                    sub("2.srt", language="en", flags=("cc",), attached_to="m.mkv"),
                    sub("3.ass", language="ru", flags=("foreign",), attached_to="m.mkv"),
                    sub("4.srt", language="hi", attached_to="m.mkv"),
                    sub("5.srt", language="hi", flags=("sdh",), attached_to="m.mkv"),
                    PlanItem("6.mka", 1, Role.AUDIO, language="en", track_title="English Commentary",
                             attached_to="m.mkv"))),
        MOVIE,
    )
    stem = "Film (2010) [tmdbid-65567]"
    assert [PurePosixPath(t).name for t in targets(plan)[1:]] == [
        f"{stem}.en.default.forced.srt",
        f"{stem}.en.sdh.srt",
        f"{stem}.ru.forced.ass",
        f"{stem}.hin.srt",
        f"{stem}.hin.sdh.srt",
        f"{stem}.English Commentary.en.mka",
    ]
    one = parsed(plan, "1.srt", "m.mkv")
    assert (one.language, one.is_default, one.is_forced) == ("eng", True, True)
    assert not one.is_hearing_impaired
    two = parsed(plan, "2.srt", "m.mkv")
    assert (two.language, two.is_hearing_impaired, two.is_forced) == ("eng", True, False)
    assert parsed(plan, "4.srt", "m.mkv").language == "hin"
    five = parsed(plan, "5.srt", "m.mkv")
    assert (five.language, five.is_hearing_impaired) == ("hin", True)
    six = parsed(plan, "6.mka", "m.mkv")
    assert (six.language, six.title) == ("eng", "English Commentary")


def test_same_language_subtitles_never_collide() -> None:
    plan = layout_targets(
        Plan(items=(video("m.mkv"),
                    *(sub(f"Subs/{n}_English.srt", language="en", attached_to="m.mkv") for n in range(3)),
                    sub("Subs/x.srt", attached_to="m.mkv"), sub("Subs/y.srt", attached_to="m.mkv"))),
        MOVIE,
    )
    names = [PurePosixPath(t).name for t in targets(plan)[1:]]
    stem = "Film (2010) [tmdbid-65567]"
    assert names == [f"{stem}.en.srt", f"{stem}.Track 2.en.srt", f"{stem}.Track 3.en.srt",
                     f"{stem}.srt", f"{stem}.Track 2.srt"]
    second = parsed(plan, "Subs/1_English.srt", "m.mkv")
    assert (second.language, second.title) == ("eng", "Track 2")      # Jellyfin: unknown text = title
    no_lang = parsed(plan, "Subs/y.srt", "m.mkv")
    assert (no_lang.language, no_lang.title) == (None, "Track 2")
    assert "same-language" in plan.items[2].note


def test_vobsub_pairs_stay_paired_whatever_the_order() -> None:
    # 'x.idx' + 'x.sub' are one stream: both halves of the second pair get the same number.
    order = ("B/x.idx", "A/x.idx", "A/x.sub", "B/x.sub")
    items = (video("m.mkv"), *(sub(s, language="en", attached_to="m.mkv") for s in order))
    plan = by_source(layout_targets(Plan(items=items), MOVIE))
    names = {s: PurePosixPath(plan[s].target).name.removeprefix("Film (2010) [tmdbid-65567]")
             for s in ("A/x.idx", "A/x.sub", "B/x.idx", "B/x.sub")}
    assert names == {"B/x.idx": ".en.idx", "B/x.sub": ".en.sub",
                     "A/x.idx": ".Track 2.en.idx", "A/x.sub": ".Track 2.en.sub"}


def test_track_title_is_kept_and_disambiguated() -> None:
    plan = layout_targets(
        Plan(items=(video("m.mkv"),
                    sub("a.srt", language="ru", track_title="Full. Director's notes", attached_to="m.mkv"),
                    sub("b.srt", language="ru", track_title="Full. Director's notes", attached_to="m.mkv"),
                    sub("c.srt", language="ru", track_title="Forced Narrative", attached_to="m.mkv"),
                    sub("d.srt", track_title="English", attached_to="m.mkv"))),
        MOVIE,
    )
    names = [PurePosixPath(t).name.removeprefix("Film (2010) [tmdbid-65567]") for t in targets(plan)[1:]]
    assert names == [".Full Director's notes.ru.srt", ".Full Director's notes 2.ru.srt",
                     ".Narrative.ru.srt", ".English track.srt"]
    c = parsed(plan, "c.srt", "m.mkv")
    assert (c.is_forced, c.title) == (False, "Narrative")   # 'Forced' in a title would set the flag
    d = parsed(plan, "d.srt", "m.mkv")
    assert (d.language, d.title) == (None, "English track")


def test_subtitles_follow_episodes_and_find_their_video_by_name() -> None:
    plan = layout_targets(
        Plan(items=(video("S/Show.S01E01.mkv", season=1, episodes=(1,)),
                    video("S/Show.S01E02.mkv", season=1, episodes=(2,)),
                    sub("S/Show.S01E02.rus.srt", language="ru"),
                    sub("S/Subs/Show.S01E01/2_Eng.srt", language="en"),
                    sub("S/other.srt", language="de", season=1, episodes=(1,)),
                    sub("S/lost.srt", language="fr"))),
        SHOW,
    )
    items = by_source(plan)
    root = "Series Name (2018) [tvdbid-79168]/Season 01"
    assert items["S/Show.S01E02.rus.srt"].target == f"{root}/Series Name S01E02.ru.srt"
    assert items["S/Subs/Show.S01E01/2_Eng.srt"].target == f"{root}/Series Name S01E01.en.srt"
    assert items["S/other.srt"].target == f"{root}/Series Name S01E01.de.srt"
    assert items["S/lost.srt"].target is None
    assert items["S/lost.srt"].status == "skipped"
    lost = [r for r in layout_reasons(plan) if "lost.srt" in r.message]
    assert lost
    assert not lost[0].blocking


def test_subtitle_of_a_single_video_needs_no_link() -> None:
    items = (video("x/movie.mkv"), sub("x/Subs/whatever.srt", language="uk"))
    plan = layout_targets(Plan(items=items), MOVIE)
    assert plan.items[1].target == "Film (2010) [tmdbid-65567]/Film (2010) [tmdbid-65567].uk.srt"


def test_language_and_flag_normalization() -> None:
    assert normalize_language("EN") == "en"
    assert normalize_language("pt_br") == "pt-BR"
    assert normalize_language("zh-Hant") == "zh-Hant"
    assert normalize_language("Russian") == "Russian"
    assert normalize_language("hi") == "hin"
    assert normalize_language("sdh") is None
    assert normalize_language("../../etc") is None
    assert normalize_language("Forcedish") is None
    assert normalize_flags(("SDH", "foreign", "default", "bogus", "hi")) == ("default", "forced", "sdh")
    assert track_title("sdh", "en") == "sdh track"
    assert track_title("Sample", "en") == "Sample track"
    assert track_title("a.b.c", "en") == "a b c"
    assert track_title("default", "en") is None


# ---------------------------------------------------------------------------- extras and the rest


def test_movie_extras_go_to_jellyfin_folders() -> None:
    # docs media/movies "Extras Folders"
    kinds = ["trailer", "featurette", "behind the scenes", "deleted scenes", "interview", "scene",
             "short", "clip", "other", "extras", "weird kind", None]
    plan = layout_targets(
        Plan(items=tuple(PlanItem(f"Extras/{n}.mkv", 1, Role.EXTRA, extra_kind=k)
                         for n, k in enumerate(kinds))),
        MOVIE,
    )
    folders = [PurePosixPath(t).parent.name for t in targets(plan)]
    assert folders == ["trailers", "featurettes", "behind the scenes", "deleted scenes", "interviews",
                       "scenes", "shorts", "clips", "other", "extras", "extras", "extras"]
    assert all(PurePosixPath(t).parent.parent.name == "Film (2010) [tmdbid-65567]" for t in targets(plan))


def test_series_extras_in_series_or_season_folder() -> None:
    # docs media/shows "Extras": extras folders in the series folder or a season folder.
    plan = layout_targets(
        Plan(items=(PlanItem("Making of.mkv", 1, Role.EXTRA, extra_kind="behind the scenes"),
                    PlanItem("S2 trailer.mkv", 1, Role.EXTRA, extra_kind="trailer", season=2))),
        SHOW,
    )
    assert targets(plan) == [
        "Series Name (2018) [tvdbid-79168]/behind the scenes/Making of.mkv",
        "Series Name (2018) [tvdbid-79168]/Season 02/trailers/S2 trailer.mkv",
    ]


def test_ignored_and_samples_get_no_target_and_relayout_is_stable() -> None:
    plan = Plan(items=(video("m.mkv"),
                       PlanItem("sample.mkv", 1, Role.SAMPLE, target="stale", library="movies"),
                       PlanItem("x.nfo", 1, Role.IGNORED, note="release info"),
                       sub("m.en.srt", language="en"), sub("m.en2.srt", language="en", attached_to="m.mkv")))
    once = layout_targets(plan, MOVIE)
    assert [(i.library, i.target, i.status) for i in once.items[1:3]] == [(None, None, None)] * 2
    assert once.items[2].note == "release info"
    twice = layout_targets(once, MOVIE)
    assert twice == once
    assert Plan.from_json(once.to_json()) == once


def test_notes_of_others_survive_relayout_once() -> None:
    plan = Plan(items=(video("a.mkv", season=1, episodes=(1, 3), note="from review"),))
    once = layout_targets(plan, SHOW)
    assert once.items[0].note == "from review | layout: episodes [1, 3] are not contiguous; named as a range"
    assert layout_targets(once, SHOW) == once


def test_unnumbered_special_keeps_a_descriptive_name() -> None:
    # docs media/shows "Show Specials": "Season 00/Some Special.mkv"
    plan = layout_targets(Plan(items=(video("x/Some Special.mkv", season=0),
                                      sub("x/Some Special.en.srt", language="en"))), SHOW)
    assert targets(plan) == ["Series Name (2018) [tvdbid-79168]/Season 00/Some Special.mkv",
                             "Series Name (2018) [tvdbid-79168]/Season 00/Some Special.en.srt"]


def test_no_work_at_all_places_nothing() -> None:
    plan = layout_targets(Plan(items=(video("m.mkv"), sub("m.srt"))), None)
    assert targets(plan) == [None, None]
    assert [i.status for i in plan.items] == ["skipped", "skipped"]


# ---------------------------------------------------------------------------- properties

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from jellybit.adapters.library.roots import resolve_target  # noqa: E402
from jellybit.core.sanitize import is_sanitized, is_within  # noqa: E402
from tests.support.path_props import assert_safe_component, tricky_text  # noqa: E402

LIBRARY = PurePosixPath("/srv/media")
texts = st.one_of(tricky_text, st.text(min_size=100, max_size=600),
                  st.sampled_from(["..", "/", "\x00", "CON", "Season 01", "trailers"]))
exts = st.sampled_from(["", ".mkv", ".MKV", ".srt", ".ass", ".mka", ".ac3", ".idx", ".sub", ".m2ts",
                        ".x/y", ". ."])
ids = st.one_of(st.none(), st.integers(0, 10**9).map(str), texts)
works = st.builds(
    Work,
    media_type=st.sampled_from(list(MediaType)),
    title=texts,
    year=st.one_of(st.none(), st.integers(-10, 20000)),
    provider=st.sampled_from([None, "tmdb", "tvdb", "imdb", "tvmaze", "TMDB", "anidb", "../x"]),
    provider_id=ids,
    original_title=st.one_of(st.none(), texts),
)
small = st.one_of(st.none(), st.integers(-2, 3000))
numbers = st.lists(st.integers(-1, 3000), max_size=3).map(tuple)
flag_lists = st.lists(st.one_of(st.sampled_from(["default", "forced", "foreign", "sdh", "cc", "hi"]), texts),
                      max_size=4).map(tuple)


@st.composite
def plans(draw):
    count = draw(st.integers(1, 10))
    items = []
    for n in range(count):
        source = f"{n}/" + draw(texts) + draw(exts)
        items.append(PlanItem(
            source=source,
            size=1,
            role=draw(st.sampled_from(list(Role))),
            season=draw(small),
            episodes=draw(numbers),
            absolute_episodes=draw(numbers),
            air_date=draw(st.one_of(st.none(), st.dates().map(str), texts)),
            part=draw(small),
            version=draw(st.one_of(st.none(), texts)),
            extra_kind=draw(st.one_of(st.none(), st.sampled_from(["trailer", "featurettes", "bts"]), texts)),
            language=draw(st.one_of(st.none(), st.sampled_from(["en", "ru", "hi", "pt-BR", "Russian"]),
                                    texts)),
            flags=draw(flag_lists),
            track_title=draw(st.one_of(st.none(), texts)),
            work=draw(st.one_of(st.none(), works)),
        ))
    sources = [i.source for i in items]
    items = [i.with_(attached_to=draw(st.one_of(st.none(), st.sampled_from(sources), texts)))
             if i.role in (Role.SUBTITLE, Role.AUDIO) else i for i in items]
    return Plan(items=tuple(items))


@pytest.fixture(scope="module")
def library_root(tmp_path_factory) -> PurePosixPath:
    root = tmp_path_factory.mktemp("library")
    (root / "movies").mkdir()
    (root / "series").mkdir()
    return root


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plans(), st.one_of(st.none(), works), st.one_of(st.none(), texts))
def test_no_input_produces_an_unsafe_or_clashing_target(library_root, plan, work, folder) -> None:
    laid = layout_targets(plan, work, folder=folder)
    assert len(laid.items) == len(plan.items)
    seen: set[str] = set()
    for before, item in zip(plan.items, laid.items, strict=True):
        assert item.source == before.source
        assert item.role == before.role
        if item.role in (Role.IGNORED, Role.SAMPLE) or item.target is None:
            assert item.target is None
            assert item.library is None
            continue
        assert item.library in ("movies", "series")
        assert item.status in ("planned", "collision")
        parts = item.target.split("/")
        for part in parts:
            assert_safe_component(part)
            assert is_sanitized(part)
        assert is_within(LIBRARY / item.library, LIBRARY / item.library / item.target)
        # the real gate agrees, on a real directory
        resolved = resolve_target(library_root / item.library, item.target)
        assert resolved.is_relative_to(library_root / item.library)
        if item.status == "planned":
            key = f"{item.library}/{item.target}".casefold()
            assert key not in seen, f"two items share {item.target}"
            seen.add(key)
    if laid.folder is not None:
        assert_safe_component(laid.folder)


@settings(max_examples=150, deadline=None)
@given(works)
def test_title_folder_is_one_safe_component_jellyfin_reads_back(work) -> None:
    name = title_folder(work)
    assert_safe_component(name)
    assert len(name.encode()) <= 120 + len(" (9999) [tvmazeid-") + 33
    tag = id_tag(work)
    if tag:
        key, value = tag[1:-1].split("-", 1)
        # Jellyfin's GetAttributeValue wants 3+ characters after the name: a one-character id in
        # the last tag is not read (documented in docs/naming.md); ours still is.
        if len(value) > 1:
            assert jf.get_attribute_value(name, key) == value
        assert parse_title_folder(name)[2] == {key.removesuffix("id"): value}
    else:
        for key in ("tmdbid", "imdbid", "tvdbid", "tvmazeid"):
            assert jf.get_attribute_value(name, key) is None


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([None, "en", "ru", "rus", "de", "ja", "hi", "hin", "pt-BR", "English", "sdh", "x.y"]),
    flag_lists,
    st.one_of(st.none(), texts),
    st.integers(1, 4),
)
def test_sidecar_names_parse_back_as_intended(language, flags, title, copies) -> None:
    items = [video("m.mkv")] + [
        sub(f"s{n}.srt", language=language, flags=flags, track_title=title, attached_to="m.mkv")
        for n in range(copies)
    ]
    plan = layout_targets(Plan(items=tuple(items)), MOVIE)
    wanted = normalize_flags(flags)
    code = normalize_language(language)
    expected_language = jf.LANGUAGES.get(code.lower()) if code else None
    titles = set()
    for n in range(copies):
        got = parsed(plan, f"s{n}.srt", "m.mkv")
        assert got.language == expected_language
        assert got.is_default == ("default" in wanted)
        assert got.is_forced == ("forced" in wanted)
        assert got.is_hearing_impaired == ("sdh" in wanted)
        base = track_title(title, code)
        if n == 0 and base is None:
            assert got.title is None
        else:
            assert got.title is not None
        titles.add(got.title)
    assert len(titles) == copies          # every copy is a distinct stream to Jellyfin


_path_texts = st.lists(st.sampled_from(["a", "b.c", ".", "..", "", "/", ".x", "y.", "d.e.f", "ё.Mkv", " "]),
                       max_size=6).map("".join)


@given(st.one_of(_path_texts, texts))
def test_source_name_pieces_are_what_pathlib_says(source) -> None:
    from jellybit.core.names import name_suffix, source_name, source_without_suffix

    path = PurePosixPath(source)
    assert source_name(source) == path.name
    assert name_suffix(path.name) == path.suffix
    if path.name:
        assert source_without_suffix(source) == str(path.with_suffix(""))
