"""Evidence in words: year, country, type, title and season counts checked against one candidate."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.confidence import Reading
from jellybit.core.context_use import read_stated
from jellybit.core.evidence import candidate_evidence, evidence_sources, with_evidence
from jellybit.core.numbering import Overrides
from jellybit.core.records import Candidate, MediaType, PlanItem, Role

SERIES, MOVIE = MediaType.SERIES, MediaType.MOVIE


def show(**details: Any) -> Candidate:
    return Candidate("tvdb", "1", SERIES, "Shameless", 2011, details={
        "first_year": 2011, "last_year": 2021, "country": "US", "seasons": {"1": 12, "2": 12, "3": 12},
        **details})


def episodes(season: int, numbers: range) -> list[PlanItem]:
    return [PlanItem(f"S{season:02d}E{n:02d}.mkv", 1, Role.VIDEO, season=season, episodes=(n,))
            for n in numbers]


def said(candidate: Candidate, reading: Reading, items: list[PlanItem] | None = None,
         sources: dict[str, str] | None = None) -> dict[str, tuple[str, str | None]]:
    return {e.text: (e.verdict, e.source) for e in candidate_evidence(candidate, reading, items or [],
                                                                       sources or {})}


def test_a_series_year_may_be_any_year_it_was_on_air() -> None:
    assert said(show(), Reading(SERIES, ("Shameless",), 2011))["first aired 2011"] == ("match", None)
    assert said(show(), Reading(SERIES, ("Shameless",), 2015))["on air in 2015 (2011–2021)"][0] == "match"
    assert said(show(), Reading(SERIES, ("Shameless",), 2004))["aired 2011–2021; the release says 2004"][0] \
        == "mismatch"
    running = show(last_year=None)
    assert said(running, Reading(SERIES, ("Shameless",), 2024))["on air in 2024 (2011–)"][0] == "match"


def test_a_film_year_must_be_its_year() -> None:
    film = Candidate("tmdb", "603", MOVIE, "The Matrix", 1999)
    assert said(film, Reading(MOVIE, ("The Matrix",), 1999))["year 1999"] == ("match", None)
    assert said(film, Reading(MOVIE, ("The Matrix",), 2003))["year 1999; the release says 2003"] == (
        "mismatch", None)
    assert "year" not in " ".join(said(film, Reading(MOVIE, ("The Matrix",))))


def test_the_country_says_where_the_download_side_came_from() -> None:
    stated = read_stated("the British version", [])
    sources = evidence_sources(stated, Overrides())
    assert sources == {"country": "your context"}
    reading = Reading(SERIES, ("Shameless",), country="GB")
    assert said(show(), reading, sources=sources)["country US; your context says GB"] == (
        "mismatch", "your context")
    assert said(show(country="GB"), reading, sources=sources)["country GB"] == ("match", "your context")
    assert said(show(country=None), reading, sources=sources)["no country given; your context says GB"][0] \
        == "info"


def test_a_hint_and_a_correction_are_named_as_such() -> None:
    stated = read_stated("", ["season 2", "year 2014"])
    assert evidence_sources(stated, Overrides()) == {"season": "your hint", "year": "your hint"}
    assert evidence_sources(stated, Overrides(year=2015, title="Fargo")) == {
        "season": "your hint", "year": "your correction", "titles": "your correction"}


def test_season_counts_against_the_torrent() -> None:
    reading = Reading(SERIES, ("Shameless",))
    full = said(show(), reading, episodes(1, range(1, 13)))
    assert full["season 1: all 12 episodes"] == ("match", None)
    partial = said(show(), reading, episodes(3, range(1, 11)))
    assert partial["season 3 has 12 episodes; the torrent has 10"][0] == "info"
    beyond = said(show(), reading, episodes(2, range(10, 15)))
    assert beyond["season 2 has 12 episodes; the torrent has episode 14"][0] == "mismatch"
    missing = said(show(), reading, episodes(7, range(1, 3)))
    assert missing["TVDB has no season 7"][0] == "mismatch"
    packs = said(show(), reading, episodes(1, range(1, 13)) + episodes(2, range(1, 13)))
    assert packs["seasons 1–2 complete"][0] == "match"


def test_type_and_title_disagreements() -> None:
    film = Candidate("tmdb", "1", MOVIE, "Shameless", 2011)
    assert said(film, Reading(SERIES, ("Shameless",)))["a film; the download looks like a series"][0] \
        == "mismatch"
    other = said(show(), Reading(SERIES, ("Shameful Things",)))
    assert [v for t, (v, _) in other.items() if t.startswith("title")] == ["mismatch"]


KEYS = ["first_year", "last_year", "country", "countries", "seasons"]


@given(details=st.dictionaries(st.sampled_from(KEYS),
                               st.one_of(st.none(), st.integers(-5, 3000), st.text(max_size=20),
                                         st.lists(st.text(max_size=5), max_size=3),
                                         st.dictionaries(st.text(max_size=3), st.integers(-3, 50),
                                                         max_size=3))),
       title=st.text(min_size=1, max_size=40), year=st.one_of(st.none(), st.integers(1870, 2200)))
def test_any_metadata_answer_gives_evidence_and_never_an_error(details: dict[str, Any], title: str,
                                                               year: int | None) -> None:
    # Aliases are always a list of names (the adapters build them); every other detail may be anything.
    named = {**details, "aliases": [title[::-1]]}
    candidate = Candidate("tvmaze", "9", SERIES, title, year, details=named)
    reading = Reading(SERIES, ("Shameless",), year, country="US")
    (annotated,) = with_evidence([candidate], reading, episodes(1, range(1, 4)), {})
    assert all(e["verdict"] in ("match", "mismatch", "info") and e["text"]
               for e in annotated.details["evidence"])
