"""File classification: roles from the rule table, tracks attached to their video, language and flags."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.classify import classify, episode_key
from jellybit.core.languages import read_track
from jellybit.core.records import PlanItem, Role, SourceFile

GB = 1 << 30
MB = 1 << 20


def by_source(files: list[SourceFile]) -> dict[str, PlanItem]:
    return {item.source: item for item in classify(files)}


@pytest.mark.parametrize(
    ("path", "size", "role", "kind"),
    [
        ("Movie (2010)/Movie.2010.1080p.mkv", 8 * GB, Role.VIDEO, None),
        ("Movie (2010)/Movie.2010.1080p.en.srt", 90_000, Role.SUBTITLE, None),
        ("Movie (2010)/Movie.2010.1080p.rus.ac3", 400 * MB, Role.AUDIO, None),
        ("Movie (2010)/Movie.2010.1080p.nfo", 3_000, Role.IGNORED, None),
        ("Movie (2010)/Movie.2010.1080p.jpg", 300_000, Role.IGNORED, None),
        ("Movie (2010)/RARBG.txt", 30, Role.IGNORED, None),
        ("Movie (2010)/Get more movies.url", 30, Role.IGNORED, None),
        ("Movie (2010)/setup.exe", 3 * MB, Role.IGNORED, None),
        ("Movie (2010)/.hidden.mkv", 3 * MB, Role.IGNORED, None),
        ("Movie (2010)/__MACOSX/Movie.2010.1080p.mkv", 3 * MB, Role.IGNORED, None),
        ("Movie (2010)/Sample/movie-sample.mkv", 60 * MB, Role.SAMPLE, None),
        ("Movie (2010)/movie.2010.sample.mkv", 60 * MB, Role.SAMPLE, None),
        ("Movie (2010)/Trailers/Teaser 1.mkv", 90 * MB, Role.EXTRA, "trailers"),
        ("Movie (2010)/Movie-trailer.mkv", 90 * MB, Role.EXTRA, "trailers"),
        ("Movie (2010)/Extras/Making Of.mkv", 400 * MB, Role.EXTRA, "extras"),
        ("Movie (2010)/Featurettes/Cast.mkv", 400 * MB, Role.EXTRA, "featurettes"),
        ("Movie (2010)/Behind The Scenes/Day 1.mp4", 400 * MB, Role.EXTRA, "behind the scenes"),
        ("Movie (2010)/Deleted Scenes/Alt ending.mkv", 100 * MB, Role.EXTRA, "deleted scenes"),
        ("Movie (2010)/Interviews/Director.mkv", 100 * MB, Role.EXTRA, "interviews"),
        ("Movie (2010)/Shorts/Short film.mkv", 100 * MB, Role.EXTRA, "shorts"),
        ("Movie (2010)/Bonus/Gag reel.mkv", 100 * MB, Role.EXTRA, "extras"),
        ("Movie (2010)/Movie.2010.Official.Trailer.mkv", 90 * MB, Role.EXTRA, "trailers"),
        ("Movie (2010)/Movie-deleted.mkv", 90 * MB, Role.EXTRA, "deleted scenes"),
        ("Movie (2010)/tiny.mkv", 5 * MB, Role.SAMPLE, None),
        ("Movie (2010)/OST/01 Theme.mp3", 5 * MB, Role.IGNORED, None),
        ("Movie (2010)/Movie.2010.1080p.part1.rar", 5 * MB, Role.IGNORED, None),
    ],
)
def test_every_kind_of_file_gets_its_role(path: str, size: int, role: Role, kind: str | None) -> None:
    files = [SourceFile("Movie (2010)/Movie.2010.1080p.mkv", 8 * GB), SourceFile(path, size)]
    item = by_source(files)[path]
    assert item.role is role
    assert item.extra_kind == kind


def test_a_file_named_sample_that_is_a_whole_film_is_a_video() -> None:
    items = by_source([SourceFile("Free.Sample.2019.1080p.mkv", 6 * GB)])
    assert items["Free.Sample.2019.1080p.mkv"].role is Role.VIDEO


def test_a_single_video_is_never_an_extra_or_a_sample() -> None:
    for name in ("The.Interview.2014.mkv", "Trailer.Park.Boys.S01E01.mkv", "Clip-short.mkv"):
        assert by_source([SourceFile(name, 40 * MB)])[name].role is Role.VIDEO


def test_an_episode_called_interview_is_not_an_extra() -> None:
    files = [SourceFile(f"Show/Show.S01E0{n}.mkv", GB) for n in range(1, 4)]
    files.append(SourceFile("Show/Show.S01E04.The.Interview.mkv", GB))
    assert by_source(files)["Show/Show.S01E04.The.Interview.mkv"].role is Role.VIDEO


def test_creditless_openings_are_extras_not_episodes() -> None:
    files = [SourceFile(f"[Grp] Show/[Grp] Show - 0{n} [1080p].mkv", 1400 * MB) for n in range(1, 4)]
    files.append(SourceFile("[Grp] Show/[Grp] Show - NCOP1 [1080p].mkv", 90 * MB))
    assert by_source(files)["[Grp] Show/[Grp] Show - NCOP1 [1080p].mkv"].extra_kind == "other"


def test_subtitles_in_per_episode_subfolders_follow_their_episode() -> None:
    root = "Show.S01.1080p.WEB-DL"
    files = [
        SourceFile(f"{root}/Show.S01E01.1080p.WEB-DL.mkv", GB),
        SourceFile(f"{root}/Show.S01E02.1080p.WEB-DL.mkv", GB),
        SourceFile(f"{root}/Subs/Show.S01E01.1080p.WEB-DL/2_English.srt", 50_000),
        SourceFile(f"{root}/Subs/Show.S01E01.1080p.WEB-DL/3_English.srt", 50_000),
        SourceFile(f"{root}/Subs/Show.S01E01.1080p.WEB-DL/4_Russian.srt", 50_000),
        SourceFile(f"{root}/Subs/Show.S01E02.1080p.WEB-DL/2_English.srt", 50_000),
    ]
    items = by_source(files)
    first, second, russian, other = (items[f.path] for f in files[2:])
    assert first.attached_to == second.attached_to == russian.attached_to == files[0].path
    assert other.attached_to == files[1].path
    assert (first.language, second.language, russian.language) == ("en", "en", "ru")
    # two English subtitles on one video are kept apart; a lone one needs no title
    assert first.track_title
    assert second.track_title
    assert first.track_title != second.track_title
    assert russian.track_title is None
    assert other.track_title is None


def test_subtitles_in_a_subs_folder_match_by_stem_or_by_episode_number() -> None:
    files = [
        SourceFile("Pack/Show.S02E01.mkv", GB),
        SourceFile("Pack/Show.S02E02.mkv", GB),
        SourceFile("Pack/Subs/Show.S02E01.eng.srt", 1000),
        SourceFile("Pack/Subs/English/S02E02.srt", 1000),
        SourceFile("Pack/Subs/Show - 2x02 - Rus.srt", 1000),
    ]
    items = by_source(files)
    assert items["Pack/Subs/Show.S02E01.eng.srt"].attached_to == "Pack/Show.S02E01.mkv"
    assert items["Pack/Subs/English/S02E02.srt"].attached_to == "Pack/Show.S02E02.mkv"
    assert items["Pack/Subs/English/S02E02.srt"].language == "en"
    assert items["Pack/Subs/Show - 2x02 - Rus.srt"].attached_to == "Pack/Show.S02E02.mkv"
    assert items["Pack/Subs/Show - 2x02 - Rus.srt"].language == "ru"


def test_a_single_video_torrent_gets_every_subtitle() -> None:
    files = [
        SourceFile("Film/Film.2019.BDRip.mkv", 4 * GB),
        SourceFile("Film/Subs/Русские.srt", 1000),
        SourceFile("Film/Subs/English.srt", 1000),
        SourceFile("Film/Subs/English SDH.srt", 1000),
        SourceFile("Film/Sound/Rus.ac3", 1000),
    ]
    items = by_source(files)
    tracks = ("Film/Subs/Русские.srt", "Film/Subs/English.srt", "Film/Subs/English SDH.srt",
              "Film/Sound/Rus.ac3")
    for path in tracks:
        assert items[path].attached_to == "Film/Film.2019.BDRip.mkv"
    assert items["Film/Subs/Русские.srt"].language == "ru"
    assert items["Film/Subs/English SDH.srt"].flags == ("sdh",)
    assert items["Film/Sound/Rus.ac3"].language == "ru"


def test_subtitles_of_a_movie_pack_follow_each_film() -> None:
    files = [
        SourceFile("Trilogy/Part.One.2001.mkv", 4 * GB),
        SourceFile("Trilogy/Part.Two.2003.mkv", 4 * GB),
        SourceFile("Trilogy/Subs/Part.Two.2003.en.forced.srt", 1000),
        SourceFile("Trilogy/Subs/Part.One.2001.en.srt", 1000),
        SourceFile("Trilogy/Subs/Unrelated.srt", 1000),
    ]
    items = by_source(files)
    assert items["Trilogy/Subs/Part.Two.2003.en.forced.srt"].attached_to == "Trilogy/Part.Two.2003.mkv"
    assert items["Trilogy/Subs/Part.Two.2003.en.forced.srt"].flags == ("forced",)
    assert items["Trilogy/Subs/Part.One.2001.en.srt"].attached_to == "Trilogy/Part.One.2001.mkv"
    unrelated = items["Trilogy/Subs/Unrelated.srt"]
    assert unrelated.attached_to is None
    assert unrelated.note == "no matching video"


def test_external_audio_from_studio_folders_gets_the_studio_as_title() -> None:
    files = [
        SourceFile("S/Show.S01E01.mkv", GB),
        SourceFile("S/Show.S01E02.mkv", GB),
        SourceFile("S/Rus Sound/LostFilm/Show.S01E01.mka", 1000),
        SourceFile("S/Rus Sound/NewStudio/Show.S01E01.mka", 1000),
    ]
    items = by_source(files)
    lost, new = items["S/Rus Sound/LostFilm/Show.S01E01.mka"], items["S/Rus Sound/NewStudio/Show.S01E01.mka"]
    assert lost.attached_to == new.attached_to == "S/Show.S01E01.mkv"
    assert lost.language == new.language == "ru"
    assert (lost.track_title, new.track_title) == ("LostFilm", "NewStudio")


def test_audio_without_any_video_is_ignored() -> None:
    items = by_source([SourceFile("Album/01.flac", 30 * MB), SourceFile("Album/02.flac", 30 * MB)])
    assert {i.role for i in items.values()} == {Role.IGNORED}


def test_same_language_tracks_with_identical_names_still_differ() -> None:
    files = [
        SourceFile("M/Movie.mkv", GB),
        SourceFile("M/Subs/A/English.srt", 1),
        SourceFile("M/Subs/B/English.srt", 1),
        SourceFile("M/Subs/English.srt", 1),
    ]
    titles = [i.track_title for i in classify(files) if i.role is Role.SUBTITLE]
    assert len(set(titles)) == 3
    assert None not in titles


@pytest.mark.parametrize(
    ("name", "language", "flags"),
    [
        ("en", "en", ()),
        ("eng", "en", ()),
        ("English", "en", ()),
        ("rus", "ru", ()),
        ("Русские", "ru", ()),
        ("Russian.Forced", "ru", ("forced",)),
        ("hi", "hi", ()),
        ("en.hi", "en", ("sdh",)),
        ("en.sdh", "en", ("sdh",)),
        ("en.cc", "en", ("sdh",)),
        ("default.en.forced", "en", ("default", "forced")),
        ("fre.foreign", "fr", ("forced",)),
        ("pt-BR", "pt", ()),
        ("zh-Hans", "zh", ()),
        ("chs", "zh", ()),
        ("简体", "zh", ()),
        ("日本語", "ja", ()),
        ("2_English", "en", ()),
        ("English (Forced)", "en", ("forced",)),
        ("Show.S01E01.ukr", "uk", ()),
        ("It.2017", None, ()),
        ("Ice.Age.2002", None, ()),
        ("Movie.Title.1080p", None, ()),
    ],
)
def test_language_and_flags_from_a_name(name: str, language: str | None, flags: tuple[str, ...]) -> None:
    info = read_track(name)
    assert (info.language, info.flags) == (language, flags)


def test_variants_are_read_from_qualified_codes() -> None:
    assert read_track("zh-Hant").variant == "Traditional"
    assert read_track("pt-BR").variant == "Brazilian"


def test_two_letter_codes_in_a_multi_word_folder_do_not_count() -> None:
    assert read_track("It Is What", folder=True).language is None
    assert read_track("en", folder=True).language == "en"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Show.S01E02.1080p", (1, 2)),
        ("Show 1x02", (1, 2)),
        ("Show.E02", (None, 2)),
        ("[Grp] Show - 02 [1080p]", (None, 2)),
        ("[Grp] Show - 1071 [1080p]", (None, 1071)),
        ("02", (None, 2)),
        ("Movie.2010.1080p", None),
    ],
)
def test_episode_key_for_attaching(text: str, key: tuple[int | None, int] | None) -> None:
    assert episode_key(text) == key


def test_source_order_and_paths_are_kept() -> None:
    files = [SourceFile(f"P/{n}.mkv", GB) for n in ("b", "a", "c")]
    assert [i.source for i in classify(files)] == [f.path for f in files]


def test_hostile_names_are_classified_not_obeyed() -> None:
    files = [
        SourceFile("../../etc/passwd.mkv", GB),
        SourceFile("x/\x00evil.srt", 10),
        SourceFile("a" * 4096 + ".mkv", GB),
        SourceFile("", 0),
        SourceFile("/", -5),
    ]
    items = classify(files)
    assert [i.source for i in items] == [f.path for f in files]
    assert items[0].role is Role.VIDEO
    assert items[-1].role is Role.IGNORED


_names = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("/._- []()SE0123"),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_names, st.sampled_from(["", ".mkv", ".srt", ".ass", ".mka", ".nfo"]),
                          st.integers(-1, 10 * GB)), max_size=12))
def test_classify_never_raises_and_is_deterministic(entries: list[tuple[str, str, int]]) -> None:
    files = [SourceFile(name + ext, size) for name, ext, size in entries]
    first = classify(files)
    assert first == classify(files)
    assert [i.source for i in first] == [f.path for f in files]
    paths = {f.path for f in files}
    for item in first:
        assert item.attached_to is None or item.attached_to in paths


def test_a_subtitle_named_without_the_quality_tags_follows_its_film() -> None:
    files = [
        SourceFile("Pack/The.Matrix.1999.1080p.mkv", 8 * GB),
        SourceFile("Pack/The.Matrix.Reloaded.2003.1080p.mkv", 8 * GB),
        SourceFile("Pack/The.Matrix.1999.en.srt", 1000),
        SourceFile("Pack/The.Matrix.rus.srt", 1000),
    ]
    items = by_source(files)
    assert items["Pack/The.Matrix.1999.en.srt"].attached_to == "Pack/The.Matrix.1999.1080p.mkv"
    assert items["Pack/The.Matrix.1999.en.srt"].language == "en"
    assert items["Pack/The.Matrix.rus.srt"].attached_to is None     # "The Matrix" starts both names
