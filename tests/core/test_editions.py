"""Editions: read from release names (several languages), normalized, and labelled as Jellyfin expects."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.editions import edition_label, find_edition, normalize_edition
from jellybit.core.release import parse_release


@pytest.mark.parametrize(("name", "edition"), [
    ("Blade.Runner.1982.The.Final.Cut.1080p.BluRay.x264-GRP.mkv", "Final Cut"),
    ("Film.2001.Directors.Cut.1080p.BluRay.mkv", "Director's Cut"),
    ("Film.2001.Director's.Cut.1080p.mkv", "Director's Cut"),
    ("Film.2001.Theatrical.Cut.1080p.mkv", "Theatrical"),
    ("Aliens.1986.Special.Edition.2160p.mkv", "Special Edition"),
    ("Avatar.2009.Extended.Collectors.Edition.1080p.mkv", "Extended"),
    ("Film.2001.IMAX.2160p.mkv", "IMAX"),
    ("Film.2001.3D.HSBS.1080p.mkv", "3D"),
    ("Film.2001.Criterion.Collection.1080p.mkv", "Criterion"),
    ("Film.2001.25th.Anniversary.Edition.1080p.mkv", "25th Anniversary Edition"),
    ("Film.2001.Unrated.720p.mkv", "Unrated"),
    ("Film.2001.Remastered.1080p.mkv", "Remastered"),
    ("Film.2001.Ultimate.Cut.1080p.mkv", "Ultimate"),
    ("Apocalypse.Now.1979.Redux.1080p.mkv", "Redux"),
    ("Сталкер.1979.Режиссёрская.версия.1080p.mkv", "Director's Cut"),
    ("Сталкер 1979 Расширенная версия.mkv", "Extended"),
    ("Film.2001.German.Kinofassung.1080p.mkv", "Theatrical"),
    ("Film 2001 Director's Cut German DL 1080p.mkv", "Director's Cut"),
    ("Film.2001.FRENCH.Version.Longue.1080p.mkv", "Extended"),
    ("Film.2001.Directors.Cut/film.mkv", "Director's Cut"),
])
def test_a_release_name_states_its_edition(name: str, edition: str) -> None:
    assert parse_release(name).edition == edition


@pytest.mark.parametrize("name", [
    "The.Final.Cut.2004.1080p.mkv",                      # a film called "The Final Cut"
    "Extended.Stay.2010.1080p.mkv",
    "Show.S01E05.The.Final.Cut.1080p.mkv",              # an episode's own title
    "Film.2001.Theatrical.and.Directors.Cut/Film.mkv",  # the folder names both cuts
    "Film.2001.1080p.BluRay.x264-GRP.mkv",
])
def test_words_that_are_a_title_are_not_an_edition(name: str) -> None:
    assert parse_release(name).edition is None


def test_a_final_cut_is_not_read_as_an_episode_title() -> None:
    release = parse_release("Blade.Runner.1982.The.Final.Cut.1080p.BluRay.x264-GRP")
    assert (release.media_type, release.title, release.year, release.episode_title) == \
        ("movie", "Blade Runner", 1982, None)
    assert parse_release("Show.S01E05.The.Final.Cut.1080p.mkv").episode_title == "The Final Cut"


@pytest.mark.parametrize(("said", "edition"), [
    ("director's cut", "Director's Cut"), ("DIRECTORS CUT", "Director's Cut"),
    ("Extended Edition", "Extended"),
    ("theatrical version", "Theatrical"), ("Режиссёрская версия", "Director's Cut"), ("imax", "IMAX"),
    ("Black and Chrome Edition", "Black and Chrome Edition"), ("", None), ("  .-", None),
])
def test_an_edition_as_written_is_normalized(said: str, edition: str | None) -> None:
    assert normalize_edition(said) == edition


def test_labels_follow_jellyfins_multiple_versions_docs() -> None:
    assert edition_label("Director's Cut") == "Directors Cut"
    assert edition_label("Collector's Edition") == "Collectors Edition"
    assert edition_label("Vol. 2, remastered") == "Vol 2 remastered"
    assert edition_label(None) is None


@given(st.text(max_size=300))
def test_normalizing_and_labelling_never_fail(text: str) -> None:
    edition = normalize_edition(text)
    assert edition is None or (edition == edition.strip() and 0 < len(edition) <= 40)
    label = edition_label(edition)
    assert label is None or (label.strip() == label and not set(label) & set(".,[](){}'/\\\""))
    found = find_edition(text, title=text[:10])
    assert found is None or normalize_edition(found) == found


@given(st.text(max_size=200), st.sampled_from(["Director's Cut", "Extended", "IMAX", "Final Cut"]))
def test_an_edition_after_the_year_is_always_found(title: str, edition: str) -> None:
    name = f"{' '.join(title.split())[:40]} 1999 {edition} 1080p"
    assert find_edition(name, year=1999) == normalize_edition(edition)
