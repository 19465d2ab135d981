"""One candidate per work: listings joined by their ids, by name only when no id says otherwise."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.records import Candidate, MediaType
from jellybit.core.works import combine, group_works, listing_ids, merge, same_work, with_ids

SERIES = ("tvdb", "tmdb", "tvmaze")
S = MediaType.SERIES


def listing(provider: str, ident: str, title: str, year: int | None, **details: object) -> Candidate:
    urls = {"tmdb": f"https://www.themoviedb.org/tv/{ident}", "tvdb": f"https://thetvdb.com/series/x-{ident}",
            "tvmaze": f"https://www.tvmaze.com/shows/{ident}/x"}
    return Candidate(provider, ident, S, title, year, url=urls.get(provider), details=dict(details))


OFFICE_TMDB = listing("tmdb", "2316", "The Office", 2005, external_ids={"tvdb": "73244", "imdb": "tt0386676"},
                      country="US", seasons={"1": 6}, aliases=["Офис"])
OFFICE_TVDB = listing("tvdb", "73244", "The Office (US)", 2005, external_ids={"imdb": "tt0386676"},
                      country="US", network="NBC")
OFFICE_TVMAZE = listing("tvmaze", "526", "The Office", 2005, external_ids={"tvdb": "73244"},
                        aliases=["La Oficina"])
OFFICE_UK_TMDB = listing("tmdb", "2996", "The Office", 2001, external_ids={"tvdb": "78107"}, country="GB")
OFFICE_UK_TVDB = listing("tvdb", "78107", "The Office (UK)", 2001, country="GB")


def test_listings_sharing_an_id_are_one_work() -> None:
    groups = group_works([OFFICE_TMDB, OFFICE_UK_TMDB, OFFICE_TVDB, OFFICE_TVMAZE, OFFICE_UK_TVDB])
    assert sorted(sorted(c.provider + c.provider_id for c in g) for g in groups) == [
        ["tmdb2316", "tvdb73244", "tvmaze526"], ["tmdb2996", "tvdb78107"]]


def test_the_merged_candidate_speaks_for_the_preferred_provider_and_carries_every_id() -> None:
    (office,) = [merge(g, SERIES) for g in group_works([OFFICE_TVMAZE, OFFICE_TMDB, OFFICE_TVDB])]
    assert (office.provider, office.provider_id, office.title) == ("tvdb", "73244", "The Office (US)")
    assert office.url == "https://thetvdb.com/series/x-73244"
    assert office.details["ids"] == {"tmdb": "2316", "tvdb": "73244", "tvmaze": "526", "imdb": "tt0386676"}
    assert office.details["links"] == {
        "tmdb": "https://www.themoviedb.org/tv/2316", "tvdb": "https://thetvdb.com/series/x-73244",
        "tvmaze": "https://www.tvmaze.com/shows/526/x", "imdb": "https://www.imdb.com/title/tt0386676/"}
    assert office.details["seasons"] == {"1": 6}            # filled from TMDB
    assert office.details["network"] == "NBC"
    assert set(office.details["aliases"]) == {"The Office", "Офис", "La Oficina"}


def test_contradicting_ids_keep_listings_apart_even_with_one_name() -> None:
    wrong = listing("tvmaze", "3", "The Office", 2005, external_ids={"tvdb": "78107"})
    groups = group_works([OFFICE_TVDB, wrong])
    assert len(groups) == 2
    assert not same_work(OFFICE_TVDB, wrong)


def test_without_ids_a_shared_name_year_and_country_join() -> None:
    bare_tmdb = listing("tmdb", "2316", "The Office", 2005, country="US")      # a search result: no ids yet
    assert same_work(bare_tmdb, OFFICE_TVDB)                                   # `(US)` is a country tag
    assert not same_work(bare_tmdb, OFFICE_UK_TVDB)                            # another year and country
    other_country = listing("tmdb", "9", "The Office", 2005, country="CL")
    assert not same_work(other_country, OFFICE_TVDB)
    other_year = listing("tmdb", "9", "The Office", 2009, country="US")
    assert not same_work(other_year, OFFICE_TVDB)


def test_one_provider_never_lists_a_work_twice() -> None:
    twin = listing("tmdb", "9999", "The Office", 2005, country="US")
    assert len(group_works([OFFICE_TMDB, twin])) == 2


def test_films_and_shows_are_never_one_work() -> None:
    film = Candidate("tmdb", "275", MediaType.MOVIE, "Fargo", 2014)
    show = listing("tvdb", "269613", "Fargo", 2014)
    assert len(group_works([film, show])) == 2


def test_ids_from_provider_text_are_validated() -> None:
    hostile = listing("tvmaze", "1", "X", 2000,
                      external_ids={"tvdb": "../1", "imdb": "javascript:x", "tmdb": "007"})
    assert listing_ids(hostile) == {"tmdb": "7", "tvmaze": "1"}
    assert "imdb" not in with_ids(hostile).details["links"]


def test_combining_keeps_the_base_and_unions_names_ids_and_links() -> None:
    done = combine(OFFICE_TVDB, OFFICE_TMDB)
    assert (done.provider, done.title, done.details["network"]) == ("tvdb", "The Office (US)", "NBC")
    assert done.details["ids"]["tmdb"] == "2316"
    assert "The Office" in done.details["aliases"]
    assert combine(done, OFFICE_TVMAZE).details["ids"]["tvmaze"] == "526"


NAMES = st.sampled_from(["The Office", "Shameless", "Fargo", "Метод", "The Office (US)", "Shameless (UK)"])
IDS = st.dictionaries(st.sampled_from(["tvdb", "imdb", "tmdb"]),
                      st.sampled_from(["1", "2", "tt0000001", "tt0000002"]), max_size=2)


@given(st.lists(st.tuples(st.sampled_from(SERIES), st.sampled_from(["1", "2", "3"]), NAMES,
                          st.sampled_from([2001, 2005, None]), IDS), max_size=8))
def test_grouping_is_a_partition_without_contradictions(raw: list[tuple]) -> None:
    listings = list({(p, i): listing(p, i, n, y, external_ids=e) for p, i, n, y, e in raw}.values())
    groups = group_works(listings)
    assert sorted(id(c) for g in groups for c in g) == sorted(id(c) for c in listings)
    for group in groups:
        seen: dict[str, str] = {}
        for member in group:
            for key, value in listing_ids(member).items():
                assert seen.setdefault(key, value) == value      # no two ids of one kind in a work
        merged = merge(group, SERIES)
        assert merged.provider == min((c.provider for c in group), key=SERIES.index)
