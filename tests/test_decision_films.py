"""The decision rules for collectors' downloads, in each LLM mode: two cuts of one film, film collections.

Real worker, qbittorrent-nox and mosquitto; TMDB, TVDB, TVMaze and the LLM are local fakes with the
real API shapes (`tests/support/decisions.py`). Every case asserts the final state and the exact
library tree (issue 24).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from jellybit.core.states import State
from jellybit.protocol import Command
from tests.support.decisions import LLM_MODES, Case, DecisionStack
from tests.support.fake_catalogue import FakeTitle
from tests.support.fake_metadata import Catalogue
from tests.support.fake_openai import file_entry, llm_answer

pytestmark = pytest.mark.parametrize("decisions", LLM_MODES, indirect=True)

BLADE_RUNNER = "movies/Blade Runner (1982) [tmdbid-78]"
LINES = "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\nLine {n} of the film, said slowly.\n\n"
                for n in range(1, 7))


@pytest.fixture
def films(fake_catalogue: Catalogue) -> Catalogue:
    """The default catalogue plus the films these cases download."""
    for title, year, tmdb in (("Blade Runner", 1982, 78), ("Back to the Future", 1985, 105),
                              ("Back to the Future Part II", 1989, 165),
                              ("Back to the Future Part III", 1990, 196), ("Stalker", 1979, 1398),
                              ("Solaris", 1972, 593), ("Solaris", 2002, 2103)):
        fake_catalogue.add(FakeTitle("movie", title, year, tmdb_id=tmdb, imdb_id=f"tt{tmdb:07d}",
                                     slug=title.lower().replace(" ", "-"), overview=f"{title}, a film."))
    return fake_catalogue


def pack_answer(works: Mapping[str, tuple[str, int | None, str | None]], title: str | None = None) -> Any:
    """The LLM reads a movie pack: each video's film (by file name part) and its edition."""
    def answer(listed: Mapping[str, str]) -> dict[str, Any]:
        files = []
        for ref, path in listed.items():
            for part, (work, year, edition) in works.items():
                if part in path.rsplit("/", 1)[-1] and path.endswith(".mkv"):
                    files.append(file_entry(ref, "video", work_title=work, work_year=year, edition=edition))
                elif part in path.rsplit("/", 1)[-1] and path.endswith(".srt"):
                    files.append(file_entry(ref, "subtitle", language="en"))
        first = next(iter(works.values()))
        return llm_answer("movie", title or first[0], first[1], files)
    return answer


async def test_two_cuts_of_one_film_are_two_versions_with_their_subtitles(decisions: DecisionStack,
                                                                          films: Catalogue) -> None:
    name = "Blade.Runner.1982.Theatrical.and.Final.Cut.1080p.BluRay.x264-GRP"
    theatrical = "Blade.Runner.1982.Theatrical.Cut.1080p.BluRay"
    final = "Blade.Runner.1982.The.Final.Cut.1080p.BluRay"
    files: dict[str, int | bytes] = {f"{theatrical}.mkv": 90_000, f"{theatrical}.en.srt": LINES.encode(),
                                     f"{final}.mkv": 91_000, f"{final}.en.srt": LINES.encode() + b"\n",
                                     "Sample/sample.mkv": 900}
    answer = pack_answer({"Theatrical": ("Blade Runner", 1982, "Theatrical"),
                          "Final.Cut": ("Blade Runner", 1982, "Final Cut")})
    outcome = await decisions.run(Case(name, files, answer=answer))
    assert outcome.state is State.DONE, outcome.reasons
    stem = f"{BLADE_RUNNER}/Blade Runner (1982) [tmdbid-78]"
    assert decisions.tree() == [f"{stem} - Final Cut.en.srt", f"{stem} - Final Cut.mkv",
                                f"{stem} - Theatrical.en.srt", f"{stem} - Theatrical.mkv"]


BTTF = "Back.to.the.Future.Trilogy.1985-1990.1080p.BluRay"
BTTF_WORKS = {"Future.1985": ("Back to the Future", 1985, None),
              "Part.II.": ("Back to the Future Part II", 1989, None),
              "Part.III.": ("Back to the Future Part III", 1990, None)}


async def test_a_film_trilogy_with_exact_names_is_laid_out_in_three_folders(decisions: DecisionStack,
                                                                            films: Catalogue) -> None:
    files: dict[str, int | bytes] = {
        "Back.to.the.Future.1985.1080p.BluRay.mkv": 80_000, "Back.to.the.Future.1985.1080p.BluRay.en.srt":
        LINES.encode(), "Back.to.the.Future.Part.II.1989.1080p.BluRay.mkv": 81_000,
        "Back.to.the.Future.Part.III.1990.1080p.BluRay.mkv": 82_000}
    outcome = await decisions.run(Case(BTTF, files, answer=pack_answer(BTTF_WORKS)))
    assert outcome.state is State.DONE, outcome.reasons
    first = "movies/Back to the Future (1985) [tmdbid-105]/Back to the Future (1985) [tmdbid-105]"
    second = "Back to the Future Part II (1989) [tmdbid-165]"
    third = "Back to the Future Part III (1990) [tmdbid-196]"
    assert decisions.tree() == [f"{first}.en.srt", f"{first}.mkv", f"movies/{second}/{second}.mkv",
                                f"movies/{third}/{third}.mkv"]
    detail = await decisions.get(outcome.download_id)
    assert [f["provider_id"] for f in detail["recognition"]["films"]] == ["105", "165", "196"]


async def test_a_duology_asks_only_about_its_ambiguous_film(decisions: DecisionStack,
                                                            films: Catalogue) -> None:
    name = "Tarkovsky.Duology.1972-1979.1080p.BluRay"
    files: dict[str, int | bytes] = {"Solaris.1080p.BluRay.mkv": 80_000,
                                     "Stalker.1979.1080p.BluRay.mkv": 81_000}
    answer = pack_answer({"Solaris": ("Solaris", None, None), "Stalker": ("Stalker", 1979, None)},
                         title="Tarkovsky Duology")
    outcome = await decisions.run(Case(name, files, answer=answer))
    assert outcome.state is State.REVIEW
    assert decisions.tree() == []
    detail = await decisions.get(outcome.download_id)
    pack = {f["title"]: f for f in detail["recognition"]["films"]}
    assert pack["Stalker"]["confirmed"]
    assert not pack["Solaris"]["confirmed"]
    uncertain = [r for r in detail["recognition"]["reasons"] if r["code"] == "film_uncertain"]
    assert len(uncertain) == 1
    assert "'Solaris'" in uncertain[0]["message"]
    assert "Stalker" not in uncertain[0]["message"]
    offered = {c["provider_id"]: c["id"] for c in detail["recognition"]["candidates"]
               if c.get("film") == pack["Solaris"]["key"]}
    assert {"593", "2103"} <= offered.keys()
    # the review decides the one uncertain film: its 1972 candidate
    response = await decisions.client.request(Command.APPLY, {"id": outcome.download_id,
                                                              "candidate_id": offered["593"]})
    assert response.status == "ok", response.error
    done = await decisions.settle(outcome.download_id, applied=True)
    assert done.state is State.DONE, done.reasons
    assert decisions.tree() == ["movies/Solaris (1972) [tmdbid-593]/Solaris (1972) [tmdbid-593].mkv",
                                "movies/Stalker (1979) [tmdbid-1398]/Stalker (1979) [tmdbid-1398].mkv"]


async def test_a_pack_with_two_unsure_films_is_decided_film_by_film(decisions: DecisionStack,
                                                                    films: Catalogue) -> None:
    films.add(FakeTitle("movie", "Dune", 1984, tmdb_id=841, slug="dune-1984", overview="Dune, a film."))
    films.add(FakeTitle("movie", "Dune", 2021, tmdb_id=438631, slug="dune-2021", overview="Dune, a film."))
    name = "Sci-Fi.Classics.1080p.BluRay"
    files: dict[str, int | bytes] = {"Solaris.1080p.BluRay.mkv": 80_000, "Dune.1080p.BluRay.mkv": 81_000,
                                     "Stalker.1979.1080p.BluRay.mkv": 82_000}
    answer = pack_answer({"Solaris": ("Solaris", None, None), "Dune": ("Dune", None, None),
                          "Stalker": ("Stalker", 1979, None)}, title="Sci-Fi Classics")
    outcome = await decisions.run(Case(name, files, answer=answer))
    assert outcome.state is State.REVIEW
    for title, provider_id in (("Solaris", "593"), ("Dune", "841")):
        detail = await decisions.get(outcome.download_id)
        unsure = [f["title"] for f in detail["recognition"]["films"] if not f["confirmed"]]
        assert title in unsure, unsure
        key = next(f["key"] for f in detail["recognition"]["films"] if f["title"] == title)
        candidate = next(c["id"] for c in detail["recognition"]["candidates"]
                         if c.get("film") == key and c["provider_id"] == provider_id)
        response = await decisions.client.request(Command.APPLY, {"id": outcome.download_id,
                                                                  "candidate_id": candidate})
        assert response.status == "ok", response.error
        settled = await decisions.settle(outcome.download_id, applied=True)
        if title == "Solaris":      # one decided, one to go: asked again about Dune alone
            assert settled.state is State.REVIEW, settled.reasons
            assert decisions.tree() == []
    assert settled.state is State.DONE, settled.reasons
    assert decisions.tree() == ["movies/Dune (1984) [tmdbid-841]/Dune (1984) [tmdbid-841].mkv",
                                "movies/Solaris (1972) [tmdbid-593]/Solaris (1972) [tmdbid-593].mkv",
                                "movies/Stalker (1979) [tmdbid-1398]/Stalker (1979) [tmdbid-1398].mkv"]
