"""Movie packs: each film matched on its own, laid out without a human when every film is sure."""

from __future__ import annotations

from typing import Any

import pytest

from jellybit.config import RecognitionConfig
from jellybit.core.records import MediaType, Plan, Role
from jellybit.engine.recognizer import RecognitionEngine
from tests.engine.test_recognizer import GB, blocking, codes, item, request
from tests.support.fake_catalogue import FakeTitle
from tests.support.fake_metadata import Catalogue

TRILOGY = "Back.to.the.Future.Trilogy.1985-1990.1080p.BluRay"
FILMS = [f"{TRILOGY}/Back.to.the.Future.1985.1080p.BluRay.mkv",
         f"{TRILOGY}/Back.to.the.Future.Part.II.1989.1080p.BluRay.mkv",
         f"{TRILOGY}/Back.to.the.Future.Part.III.1990.1080p.BluRay.mkv"]


@pytest.fixture(autouse=True)
def films(fake_catalogue: Catalogue) -> Catalogue:
    """The catalogue plus a trilogy and two films called Solaris."""
    for title, year, tmdb in (("Back to the Future", 1985, 105), ("Back to the Future Part II", 1989, 165),
                              ("Back to the Future Part III", 1990, 196), ("Stalker", 1979, 1398),
                              ("Solaris", 1972, 593), ("Solaris", 2002, 2103)):
        fake_catalogue.add(FakeTitle("movie", title, year, tmdb_id=tmdb, imdb_id=f"tt{tmdb:07d}",
                                     slug=title.lower().replace(" ", "-"), overview=f"{title}, a film."))
    return fake_catalogue


def engine(providers: list[Any]) -> RecognitionEngine:
    return RecognitionEngine(llm=None, providers=providers, config=RecognitionConfig())


async def test_a_trilogy_with_a_year_range_is_a_movie_pack_laid_out_by_itself(providers: list[Any]) -> None:
    files = [(p, 8 * GB) for p in FILMS] + [(f"{TRILOGY}/Back.to.the.Future.1985.1080p.BluRay.en.srt", 9)]
    draft = await engine(providers).recognize(request(TRILOGY, files))
    assert draft.media_type is MediaType.MOVIE
    assert [(f.match_title, f.provider_id, f.confirmed) for f in draft.plan.films] == [
        ("Back to the Future", "105", True), ("Back to the Future Part II", "165", True),
        ("Back to the Future Part III", "196", True)]
    assert all(v.season is None and not v.episodes and not v.air_date for v in draft.plan.videos())
    assert item(draft, files[3][0]).work == item(draft, FILMS[0]).work
    assert draft.automatic, draft.reasons
    assert {c.details["film"] for c in draft.candidates} == set(FILMS)


async def test_only_the_uncertain_film_of_a_duology_is_asked_about(providers: list[Any]) -> None:
    name = "Tarkovsky.Duology.1972-1979.1080p"
    files = [(f"{name}/Solaris.1080p.BluRay.mkv", 8 * GB), (f"{name}/Stalker.1979.1080p.BluRay.mkv", 8 * GB)]
    draft = await engine(providers).recognize(request(name, files))
    films = {f.title: f for f in draft.plan.films}
    assert films["Stalker"].confirmed
    assert films["Stalker"].provider_id == "1398"
    assert not films["Solaris"].confirmed
    assert {c.split(":")[1] for c in films["Solaris"].candidates} >= {"593", "2103"}
    assert "film_uncertain" in blocking(draft)
    assert "'Solaris'" in next(
        r.message for r in draft.reasons if r.code == "film_uncertain")
    assert not draft.automatic
    # the human picks Solaris (1972) for its file: the pack is now sure
    pinned = {"files": {files[0][0]: {"provider": "tmdb", "provider_id": "593"}}}
    decided = await engine(providers).recognize(request(name, files, overrides=pinned))
    assert [(f.title, f.provider_id, f.confirmed) for f in decided.plan.films] == [
        ("Solaris", "593", True), ("Stalker", "1398", True)]
    assert "film_uncertain" not in codes(decided)
    assert decided.automatic


async def test_an_extra_goes_with_the_film_whose_folder_holds_it(providers: list[Any]) -> None:
    first, second = (f.rsplit("/")[-1] for f in FILMS[:2])
    files = [(f"Pack/BTTF1/{first}", 8 * GB), (f"Pack/BTTF2/{second}", 8 * GB),
             ("Pack/BTTF1/Featurettes/Making.of.mkv", GB // 4), ("Pack/Trailers/trailer.mkv", GB // 8)]
    draft = await engine(providers).recognize(request("Pack", files))
    assert item(draft, files[2][0]).work == item(draft, files[0][0]).work
    assert item(draft, files[3][0]).role is Role.IGNORED
    assert draft.automatic, draft.reasons


async def test_two_names_of_one_film_are_its_versions_not_two_films(providers: list[Any]) -> None:
    files = [("P/Back.to.the.Future.1985.1080p.mkv", 8 * GB), ("P/Stalker.1979.1080p.mkv", 8 * GB),
             ("P/Back.To.The.Future.1985.Remastered.2160p.mkv", 9 * GB)]
    draft = await engine(providers).recognize(request("P", files))
    assert [(f.provider_id, f.sources) for f in draft.plan.films] == [
        ("105", (files[0][0], files[2][0])), ("1398", (files[1][0],))]
    assert [v.version for v in draft.plan.videos()] == ["1080p", None, "Remastered"]


def test_a_plans_films_survive_the_store() -> None:
    from jellybit.core.records import Film, Reason, Recommendation
    film = Film("a.mkv", "Solaris", None, ("a.mkv",), confidence=0.7, recommendation=Recommendation.MEDIUM,
                reasons=(Reason("small_margin", "close", 0.15, True),), candidates=("tmdb:593", "tmdb:2103"))
    plan = Plan(films=(film,))
    assert Plan.from_json(plan.to_json()) == plan
    assert Plan.from_json(Plan().to_json()).films == ()


async def test_a_pack_of_episodes_and_a_film_is_a_series_and_its_film_waits_for_a_human(
        providers: list[Any]) -> None:
    files = [(f"Fargo.S01/Fargo.S01E{e:02d}.1080p.mkv", 4 * GB) for e in (1, 2, 3)]
    files.append(("Fargo.S01/Fargo.1996.1080p.BluRay.mkv", 8 * GB))
    draft = await engine(providers).recognize(request("Fargo.S01.1080p", files))
    assert draft.media_type is MediaType.SERIES
    assert draft.plan.films == ()
    assert "unmapped_video" in blocking(draft)
    assert not draft.automatic


async def test_the_issues_saga_with_a_year_range_is_two_films_never_a_series(providers: list[Any],
                                                                            films: Catalogue) -> None:
    films.add(FakeTitle("movie", "Saga Part I", 1984, tmdb_id=9001, slug="saga-1"))
    films.add(FakeTitle("movie", "Saga Part II", 1987, tmdb_id=9002, slug="saga-2"))
    name = "Saga.Part.I.and.II.1984-1987.1080p"
    files = [(f"{name}/Saga.Part.I.1984.1080p.mkv", 8 * GB), (f"{name}/Saga.Part.II.1987.1080p.mkv", 8 * GB),
             (f"{name}/Saga.Part.II.1987.1080p.en.srt", 9)]
    draft = await engine(providers).recognize(request(name, files))
    assert draft.media_type is MediaType.MOVIE
    assert all(v.air_date is None and v.season is None for v in draft.plan.items)
    assert [(f.provider_id, f.confirmed) for f in draft.plan.films] == [("9001", True), ("9002", True)]
    assert item(draft, files[2][0]).work == item(draft, files[1][0]).work
    assert draft.automatic, draft.reasons
