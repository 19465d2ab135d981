"""`jellybit recognize`: a dry run through the real recognizer and providers against local fakes."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from jellybit.cli.recognize import read_file_list, run_recognize
from jellybit.config import Config, MetadataConfig, TvmazeConfig
from jellybit.errors import InvalidArgument
from tests.support.torrents import make_content, make_torrent

# No provider at all (TVMaze is on by default and would reach api.tvmaze.com).
NO_PROVIDERS = Config(metadata=MetadataConfig(tvmaze=TvmazeConfig(enabled=False)))


def args(**values: object) -> argparse.Namespace:
    base = {"name": None, "torrent": None, "files": None, "context": "", "hint": None, "json": True}
    return argparse.Namespace(**{**base, **values})


def run(config: Config, **values: object) -> dict:
    out = io.StringIO()
    assert run_recognize(args(**values), config, out) == 0
    return json.loads(out.getvalue())


@pytest.fixture
def config(fake_tmdb, fake_tvdb, fake_tvmaze) -> Config:
    return Config(metadata=MetadataConfig(tmdb=fake_tmdb.config(), tvdb=fake_tvdb.config(),
                                          tvmaze=fake_tvmaze.config()))


def test_a_clean_movie_is_matched_and_would_be_automatic(config: Config) -> None:
    result = run(config, name="The.Matrix.1999.1080p.BluRay.x264-GROUP")
    assert (result["media_type"], result["title"], result["year"]) == ("movie", "The Matrix", 1999)
    assert (result["provider"], result["provider_id"]) == ("tmdb", "603")
    assert result["automatic"] is True
    (video,) = [i for i in result["plan"] if i["role"] == "video"]
    assert video["target"] == "The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv"


def test_a_season_from_a_torrent_file_is_planned_per_episode(config: Config, tmp_path: Path) -> None:
    content = make_content(tmp_path, "Fargo.S02.1080p.WEB-DL", {
        f"Fargo.S02E{n:02d}.1080p.WEB-DL.mkv": 2000 for n in range(1, 4)})
    torrent = tmp_path / "fargo.torrent"
    torrent.write_bytes(make_torrent(content))
    result = run(config, torrent=str(torrent), context="the 2014 series")
    assert result["media_type"] == "series"
    assert result["year"] == 2014
    videos = [i for i in result["plan"] if i["role"] == "video"]
    assert [(v["season"], v["episodes"]) for v in videos] == [(2, [1]), (2, [2]), (2, [3])]
    assert all("Season 02" in v["target"] for v in videos)


def test_human_output_names_the_decision(config: Config) -> None:
    out = io.StringIO()
    run_recognize(args(name="Fargo.1996.720p", json=False), config, out)
    text = out.getvalue()
    assert "reading: movie" in text
    assert "->" in text


@pytest.mark.parametrize(("name", "file"), [
    ("The.Matrix.1999.1080p.BluRay.x264", "The.Matrix.1999.1080p.BluRay.x264.mkv"),
    ("Fargo.S02E01.1080p.WEB-DL.mkv", "Fargo.S02E01.1080p.WEB-DL.mkv"),
    ("Фарго.S01E01.720p.MP4", "Фарго.S01E01.720p.MP4"),
    ("Some.Film.2001.en.srt", "Some.Film.2001.en.srt"),
    ("Fargo.S02.1080p.WEB-DL", "Fargo.S02.1080p.WEB-DL.mkv"),
])
def test_a_bare_name_stands_for_one_file(name: str, file: str) -> None:
    result = run(NO_PROVIDERS, name=name)
    assert result["assumed_file"] == file
    assert [i["source"] for i in result["plan"]] == [file]


def test_the_assumed_file_is_said_and_a_given_list_is_not(config: Config, tmp_path: Path) -> None:
    name = "The.Matrix.1999.1080p.BluRay.x264"
    out = io.StringIO()
    run_recognize(args(name=name, json=False), config, out)
    assert f"files: none given, so the name stands for one file, '{name}.mkv'" in out.getvalue()
    (video,) = run(config, name=name)["plan"]
    assert video["role"] == "video"
    assert video["target"] == "The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv"
    listing = tmp_path / "files.txt"
    listing.write_text(f"5000\t{name}/movie.mkv\n", encoding="utf-8")
    listed = run(config, name=name, files=str(listing))
    assert listed["assumed_file"] is None
    assert [i["source"] for i in listed["plan"]] == [f"{name}/movie.mkv"]
    out = io.StringIO()
    run_recognize(args(name=name, files=str(listing), json=False), config, out)
    assert "files: none given" not in out.getvalue()


def test_without_providers_everything_goes_to_review() -> None:
    result = run(NO_PROVIDERS, name="Some.Show.S01E01.mkv")
    assert result["automatic"] is False
    assert any(r["blocking"] for r in result["reasons"])


def test_a_name_is_required() -> None:
    with pytest.raises(InvalidArgument):
        run_recognize(args(), NO_PROVIDERS, io.StringIO())


def test_file_lists_take_sizes_or_bare_paths() -> None:
    files = read_file_list("100\tA/b.mkv\nA/c.srt\n\n")
    assert [(f.path, f.size) for f in files] == [("A/b.mkv", 100), ("A/c.srt", 1 << 30)]


@pytest.mark.parametrize("with_tvmaze", [False, True])
def test_a_film_without_a_tmdb_key_says_what_films_need(fake_tvmaze, with_tvmaze: bool) -> None:
    """Not "no metadata provider answered": the reason names the key and where to get it, whether
    no provider is on or only TVMaze (shows only) is."""
    config = Config(metadata=MetadataConfig(tvmaze=fake_tvmaze.config() if with_tvmaze else
                                            TvmazeConfig(enabled=False)))
    result = run(config, name="The.Matrix.1999.1080p.BluRay.x264-GROUP")
    messages = [r["message"] for r in result["reasons"]]
    assert any(m.startswith("films need a TMDB key: get one at https://www.themoviedb.org/settings/api")
               for m in messages), messages
    assert not any("no metadata provider answered" in m for m in messages)
    out = io.StringIO()
    run_recognize(args(name="The.Matrix.1999.1080p.BluRay.x264-GROUP", json=False), config, out)
    assert "films need a TMDB key" in out.getvalue()


def test_a_show_without_a_tmdb_key_is_not_told_about_films(fake_tvmaze) -> None:
    config = Config(metadata=MetadataConfig(tvmaze=TvmazeConfig(enabled=False)))
    result = run(config, name="Fargo.S02E01.1080p.WEB-DL")
    assert not any("films need" in r["message"] for r in result["reasons"])


def test_a_movie_pack_is_shown_film_by_film(config: Config, tmp_path: Path) -> None:
    listing = tmp_path / "files.txt"
    listing.write_text("Matrix Pack/The.Matrix.1999.1080p.mkv\n"
                       "Matrix Pack/The.Matrix.Reloaded.2003.1080p.mkv\n", encoding="utf-8")
    result = run(config, name="Matrix Pack 1999-2003", files=str(listing))
    assert [(f["provider_id"], f["confirmed"]) for f in result["films"]] == [("603", True), ("604", True)]
    assert result["automatic"]
    out = io.StringIO()
    run_recognize(args(name="Matrix Pack 1999-2003", files=str(listing), json=False), config, out)
    assert "film  The Matrix (1999) -> tmdb:603 The Matrix (1999); sure" in out.getvalue()
