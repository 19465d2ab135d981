"""Planning file by file: overrides read defensively, absolute numbers mapped, films grouped."""

from __future__ import annotations

from jellybit.core.classify import classify
from jellybit.core.numbering import (
    FileOverride,
    Overrides,
    apply_llm_roles,
    apply_roles,
    group_films,
    map_absolute,
    number_series,
    plan_film,
    read_overrides,
)
from jellybit.core.ports import LlmFileAnswer
from jellybit.core.records import PlanItem, Role, SourceFile
from jellybit.core.release import parse_many, parse_release

GB = 1 << 30


def test_overrides_with_odd_values_are_ignored_not_fatal() -> None:
    read = read_overrides(
        {
            "media_type": "podcast",
            "year": "1999",
            "season": 10_000,
            "provider": "imdb",
            "provider_id": "tt0133093",
            "title": "  The   Matrix ",
            "files": {
                "a.mkv": {"season": 2, "episodes": [1, "x", -3, 4], "role": "bogus"},
                "b.mkv": "nonsense",
                7: {},
            },
        }
    )
    assert read.media_type is None
    assert (read.year, read.season, read.provider, read.provider_id) == (None, None, "imdb", "tt0133093")
    assert read.title == "The Matrix"
    assert set(read.files) == {"a.mkv"}
    assert (read.files["a.mkv"].season, read.files["a.mkv"].episodes, read.files["a.mkv"].role) == (
        2,
        (1, 4),
        None,
    )
    assert read_overrides(None) == Overrides()
    assert read_overrides("junk") == Overrides()  # type: ignore[arg-type]


def test_pinned_roles_win() -> None:
    items = classify([SourceFile("M/Movie.mkv", GB), SourceFile("M/Movie-trailer.mkv", GB // 10)])
    pinned = read_overrides({"files": {"M/Movie-trailer.mkv": {"role": "ignored"}}})
    assert [i.role for i in apply_roles(items, pinned)] == [Role.VIDEO, Role.IGNORED]


def test_map_absolute() -> None:
    counts = {0: 3, 1: 10, 2: 12}
    assert map_absolute([1], counts) == (1, (1,))
    assert map_absolute([11, 12], counts) == (2, (1, 2))
    assert map_absolute([22], counts) == (2, (12,))
    assert map_absolute([23], counts) is None  # beyond the last season
    assert map_absolute([10, 11], counts) is None  # spans two seasons


def _series(paths: list[str], torrent: str, **kw: object):
    items = classify([SourceFile(p, GB) for p in paths])
    releases = dict(zip(paths, parse_many(paths), strict=True))
    return number_series(
        items,
        releases,
        kw.get("llm", {}),
        parse_release(torrent),  # type: ignore[arg-type]
        kw.get("overrides", Overrides()),
        kw.get("counts"),
    )  # type: ignore[arg-type]


def test_number_series_prefers_names_and_notes_llm_disagreement() -> None:
    paths = ["S/Show.S01E01.mkv", "S/Show.S01E02.mkv"]
    llm = {paths[1]: LlmFileAnswer(paths[1], "video", season=1, episodes=(5,))}
    numbering = _series(paths, "Show.S01", llm=llm)
    assert [(i.season, i.episodes) for i in numbering.items] == [(1, (1,)), (1, (2,))]
    assert numbering.disagreements == [paths[1]]


def test_number_series_uses_the_llm_where_names_are_silent() -> None:
    paths = ["S/Pilot.mkv", "S/The Second One.mkv"]
    llm = {p: LlmFileAnswer(p, "video", season=3, episodes=(n,)) for n, p in enumerate(paths, 1)}
    numbering = _series(paths, "Show", llm=llm)
    assert [(i.season, i.episodes) for i in numbering.items] == [(3, (1,)), (3, (2,))]
    assert not numbering.reasons


def test_number_series_assumes_season_one_and_says_so() -> None:
    numbering = _series(["S/Show.E01.mkv", "S/Show.E02.mkv"], "Show")
    assert [i.season for i in numbering.items] == [1, 1]
    assert [r.code for r in numbering.reasons] == ["season_assumed"]


def test_pinned_numbers_and_season_win() -> None:
    paths = ["S/Show.S01E01.mkv", "S/Show.S01E02.mkv"]
    overrides = read_overrides({"season": 4, "files": {paths[1]: {"episodes": [9]}}})
    numbering = _series(paths, "Show.S01", overrides=overrides)
    assert [(i.season, i.episodes) for i in numbering.items] == [(4, (1,)), (4, (9,))]


def test_absolute_numbers_use_the_provider_counts() -> None:
    paths = ["A/[G] Show - 13 [1080p].mkv"]
    numbering = _series(paths, "[G] Show", counts={1: 12, 2: 12})
    assert [(i.season, i.episodes) for i in numbering.items] == [(2, (1,))]
    assert [r.code for r in numbering.reasons] == ["absolute_mapped"]


def test_films_are_grouped_and_parts_and_versions_told_apart() -> None:
    paths = ["P/Heat.1995.1080p.mkv", "P/Heat.1995.2160p.mkv", "P/Alien.1979.CD1.avi", "P/Alien.1979.CD2.avi"]
    items = classify([SourceFile(p, GB) for p in paths])
    releases = dict(zip(paths, parse_many(paths), strict=True))
    films = group_films(items, releases, {})
    assert sorted(films) == [("alien", 1979), ("heat", 1995)]
    heat = plan_film(items, films[("heat", 1995)], releases, {})
    alien = plan_film(items, films[("alien", 1979)], releases, {})
    assert [heat[p].version for p in paths[:2]] == ["1080p", "2160p"]
    assert [alien[p].part for p in paths[2:]] == [1, 2]


def _film(paths: list[str], llm: dict[str, LlmFileAnswer] | None = None) -> dict[str, PlanItem]:
    items = classify([SourceFile(p, GB) for p in paths])
    releases = dict(zip(paths, parse_many(paths), strict=True))
    return plan_film(items, paths, releases, llm or {})


def test_two_indistinguishable_videos_of_one_film_are_unmapped() -> None:
    paths = ["P/Heat.1995.1080p.mkv", "P/Heat.1995.1080p.x265.mkv"]
    planned = _film(paths)
    assert {planned[p].note for p in paths} == {"unmapped"}


def test_an_unlabelled_cut_beside_a_labelled_one_keeps_the_plain_name() -> None:
    paths = ["P/Heat.1995.mkv", "P/Heat.1995.Extended.mkv"]
    planned = _film(paths)
    assert [(planned[p].version, planned[p].note) for p in paths] == [(None, None), ("Extended", None)]


def test_versions_are_labelled_by_edition_first_and_resolution_second() -> None:
    cuts = _film(["F/Blade.Runner.1982.Theatrical.Cut.1080p.mkv",
                  "F/Blade.Runner.1982.The.Final.Cut.1080p.mkv"])
    assert [i.version for i in cuts.values()] == ["Theatrical", "Final Cut"]
    sizes = _film(["F/Heat.1995.1080p.mkv", "F/Heat.1995.2160p.mkv"])
    assert [i.version for i in sizes.values()] == ["1080p", "2160p"]
    both = _film(["F/Heat.1995.Directors.Cut.1080p.mkv", "F/Heat.1995.Directors.Cut.2160p.mkv",
                  "F/Heat.1995.2160p.mkv"])
    assert [i.version for i in both.values()] == ["Directors Cut 1080p", "Directors Cut 2160p", "2160p"]
    russian = _film(["F/Сталкер.1979.Режиссёрская.версия.mkv", "F/Сталкер.1979.Театральная.версия.mkv"])
    assert [i.version for i in russian.values()] == ["Directors Cut", "Theatrical"]


def test_the_llms_edition_fills_in_where_the_names_state_none() -> None:
    paths = ["F/Heat.1995.A.mkv", "F/Heat.1995.B.mkv"]
    llm = {paths[0]: LlmFileAnswer(paths[0], "video", edition="Extended"),
           paths[1]: LlmFileAnswer(paths[1], "video", edition="Theatrical")}
    planned = _film(paths, llm)
    assert [i.version for i in planned.values()] == ["Extended", "Theatrical"]


def test_pinned_track_language_and_flags_are_read_and_normalized() -> None:
    read = read_overrides({"files": {
        "a.srt": {"language": "RUS", "flags": ["sdh", "forced", "loud"]},
        "b.srt": {"language": "pt-br", "flags": []},
        "c.srt": {"language": "tl"},
        "d.srt": {"language": "und", "flags": "forced"},
        "e.srt": {"language": 7},
    }})
    assert read.files["a.srt"] == FileOverride(language="ru", flags=("forced", "sdh"))
    assert read.files["b.srt"] == FileOverride(language="pt-BR", flags=())
    assert read.files["c.srt"].language == "tl"          # a human may pin a code Jellybit has no name for
    assert read.files["d.srt"] == FileOverride()        # "undetermined" and a non-list say nothing
    assert read.files["e.srt"] == FileOverride()


def test_the_llm_role_wins_where_the_classifier_only_judged() -> None:
    files = [SourceFile("Show/Show.S01E01.mkv", 2 * GB), SourceFile("Show/Show.S01E02.mkv", 2 * GB),
             SourceFile("Show/Show.S01E00.Recap.mkv", 20 << 20),           # tiny next to 2 GB: "sample"
             SourceFile("Show/Odd Folder/Director Talks.mkv", GB)]         # a second "video" in an odd folder
    items = classify(files)
    assert [i.role for i in items] == [Role.VIDEO, Role.VIDEO, Role.SAMPLE, Role.VIDEO]
    llm = {"Show/Show.S01E00.Recap.mkv": LlmFileAnswer("Show/Show.S01E00.Recap.mkv", "video"),
           "Show/Odd Folder/Director Talks.mkv": LlmFileAnswer("Show/Odd Folder/Director Talks.mkv", "extra",
                                                                extra_kind="interviews")}
    out, reasons = apply_llm_roles(items, llm, Overrides())
    assert [i.role for i in out] == [Role.VIDEO, Role.VIDEO, Role.VIDEO, Role.EXTRA]
    assert out[3].extra_kind == "interviews"
    assert out[2].note == "role video from the LLM (the classifier said sample)"
    assert out[3].note == "role extra from the LLM (the classifier said video)"
    assert reasons == []


def test_the_llm_role_stays_below_pins_conventions_and_extensions() -> None:
    files = [SourceFile("M/Movie.mkv", 8 * GB), SourceFile("M/Trailers/Teaser.mkv", 90 << 20),
             SourceFile("M/Movie.en.srt", 90_000), SourceFile("M/Movie-trailer.mkv", 80 << 20),
             SourceFile("M/Extra Cut.mkv", 7 * GB)]
    items = classify(files)
    llm = {f.path: LlmFileAnswer(f.path, "video") for f in files}
    llm["M/Extra Cut.mkv"] = LlmFileAnswer("M/Extra Cut.mkv", "extra")
    pinned = read_overrides({"files": {"M/Extra Cut.mkv": {"role": "video"}}})
    out, _ = apply_llm_roles(items, llm, pinned)
    # the Trailers folder and the -trailer suffix are Jellybit's conventions; a .srt is a subtitle;
    # the human pinned the second video
    assert [i.role for i in out] == [i.role for i in items]


def test_the_llm_may_not_leave_no_main_video() -> None:
    items = classify([SourceFile("Movie.2010.mkv", 4 * GB), SourceFile("Movie.2010.en.srt", 50_000)])
    llm = {"Movie.2010.mkv": LlmFileAnswer("Movie.2010.mkv", "ignored")}
    out, reasons = apply_llm_roles(items, llm, Overrides(), source="the previous recognition")
    assert out[0].role is Role.VIDEO
    assert out[0].note == "the previous recognition called it ignored; kept as the main video"
    assert [r.code for r in reasons] == ["llm_role_refused"]
    assert not reasons[0].blocking
    assert reasons[0].weight == 0
