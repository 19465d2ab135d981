"""The pure Jellyfin rules: which library covers a root, which item a download became."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.jellyfin import (
    Item,
    Library,
    Wanted,
    check_roots,
    covering,
    item_url,
    missing_note,
    pick,
)
from jellybit.core.path_map import translate_prefixes

MOVIES = Library("Movies", "movies", ("/srv/media/movies",), "m" * 32)
SHOWS = Library("Shows", "tvshows", ("/srv/media/series",), "s" * 32)
ROOTS = {"movie": "/srv/media/movies", "series": "/srv/media/series"}


def test_roots_covered_by_libraries_of_their_type_are_fine() -> None:
    checks = check_roots(ROOTS, [MOVIES, SHOWS])
    assert [(c.kind, c.ok, c.library) for c in checks] == [("movie", True, "Movies"),
                                                           ("series", True, "Shows")]


def test_a_parent_folder_covers_a_root_and_a_mixed_library_takes_both() -> None:
    everything = Library("Everything", "", ("/srv/media",))
    assert all(c.ok for c in check_roots(ROOTS, [everything]))
    assert all(c.ok for c in check_roots(ROOTS, [Library("Mixed", "mixed", ("/srv",))]))


def test_a_sibling_with_a_longer_name_does_not_cover() -> None:
    """`/srv/media/movies-old` is not `/srv/media/movies` (whole components only)."""
    (check, _) = check_roots(ROOTS, [Library("Old", "movies", ("/srv/media/movies-old",)), SHOWS])
    assert not check.ok
    assert "no Jellyfin library has it" in (check.problem or "")


def test_swapped_types_are_reported_for_both_roots() -> None:
    swapped = [Library("Movies", "tvshows", ("/srv/media/movies",)),
               Library("Shows", "movies", ("/srv/media/series",))]
    problems = [c.problem for c in check_roots(ROOTS, swapped)]
    assert "of type tvshows, not movies" in (problems[0] or "")
    assert "of type movies, not tvshows" in (problems[1] or "")


def test_the_deepest_library_folder_wins() -> None:
    kids = Library("Kids", "movies", ("/srv/media/movies/kids",))
    assert covering([MOVIES, kids], "/srv/media/movies/kids/Up (2009)") is kids
    assert covering([MOVIES, kids], "/srv/media/movies/Heat (1995)") is MOVIES
    assert covering([MOVIES], "/elsewhere/Heat (1995)") is None


def test_a_laid_out_video_beats_a_folder_and_a_provider_id() -> None:
    folder = "/srv/media/movies/Heat (1995) [tmdbid-949]"
    video = f"{folder}/Heat (1995) [tmdbid-949].mkv"
    wanted = Wanted("d", "movie", folder, frozenset({video}), "tmdb", "949")
    items = [Item("a", "Heat", "Movie", "/srv/media/movies/Other/Heat.mkv", {"tmdb": "949"}),
             Item("b", "Heat", "Movie", f"{folder}/extra.mkv"),
             Item("c", "Heat", "Movie", f"{folder}/Heat (1995) [tmdbid-949].mkv")]
    assert pick(items, wanted).item_id == "c"
    assert pick(items[:2], wanted).item_id == "b"
    found = pick(items[:1], wanted)
    assert (found.item_id, found.how) == ("a", "provider id")
    assert pick([], wanted) is None


def test_an_episode_is_its_series_and_an_episodes_provider_id_is_not_the_shows() -> None:
    folder = "/srv/media/series/Fargo (2014) [tvdbid-269613]"
    episode = Item("e", "Fargo S02E01", "Episode", f"{folder}/Season 02/Fargo S02E01.mkv", {"tvdb": "269613"},
                   series_id="series", series_name="Fargo")
    wanted = Wanted("d", "series", folder, frozenset({episode.path or ""}), "tvdb", "269613")
    found = pick([episode], wanted)
    assert (found.item_id, found.name) == ("series", "Fargo")
    elsewhere = Item("x", "E1", "Episode", "/other/E1.mkv", {"tvdb": "269613"}, series_id="other")
    assert pick([elsewhere], wanted) is None


def test_the_link_and_the_note_say_what_they_should() -> None:
    assert item_url("https://jf.example.org/", "ab12") == "https://jf.example.org/web/#/details?id=ab12"
    assert "30 s after the layout" in missing_note(30, None)
    note = missing_note(300, "/srv/media/movies/Heat (1995)")
    for words in ("5 min", "/srv/media/movies/Heat (1995)", "jellyfin.path_map", "Scan All Libraries",
                  "read the files"):
        assert words in note


SEGMENT = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1,
                  max_size=8).filter(lambda s: s not in (".", ".."))


@given(st.lists(SEGMENT, min_size=1, max_size=3), st.lists(SEGMENT, max_size=3))
def test_a_mapped_jellyfin_path_is_covered_exactly_when_the_local_one_is(prefix: list[str],
                                                                         rest: list[str]) -> None:
    """Through the path map a library folder and a title folder keep their relation (Cyrillic too)."""
    local_root = "/srv/" + "/".join(prefix)
    jellyfin_root = "/media/" + "/".join(prefix)
    library = Library("L", "movies", (translate_prefixes(jellyfin_root, [("/media", "/srv")]),))
    inside = "/".join([local_root, *rest])
    assert covering([library], inside) is library
    assert covering([library], local_root + "x") is None
