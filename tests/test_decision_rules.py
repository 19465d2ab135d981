"""The decision rules end to end, in each LLM mode: what is laid out by itself, what asks a human.

Real worker, qbittorrent-nox and mosquitto; TMDB, TVDB, TVMaze and the LLM are local fakes with
the real API shapes (`tests/support/decisions.py`). Every case asserts the final state and the
exact library tree. The bar (issue 11): no wrong layout in any mode, and every case whose evidence
agrees is automatic in every mode — an LLM that is down is never worse than none.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from jellybit.core.states import State
from jellybit.protocol import Command
from tests.support.decisions import LLM_MODES, Case, DecisionStack
from tests.support.fake_http import Reply
from tests.support.fake_metadata import Catalogue, FakeTitle
from tests.support.fake_openai import file_entry, llm_answer

pytestmark = pytest.mark.parametrize("decisions", LLM_MODES, indirect=True)

FARGO = "series/Fargo (2014) [tvdbid-269613]"
# TVDB (the provider a series folder names) calls the show "Shameless (US)", as Sonarr does.
SHAMELESS_US = "series/Shameless (US) (2011) [tvdbid-161511]"
_EPISODE = re.compile(r"(?i)s(\d{1,2})e(\d{1,3})")


def series_answer(title: str, year: int, *, original: str | None = None,
                  numbers: Mapping[str, tuple[int, int]] | None = None) -> Any:
    """The LLM reads a series: every video numbered from its SxxEyy (or `numbers` by file name)."""
    def answer(listed: Mapping[str, str]) -> dict[str, Any]:
        files = []
        for ref, path in listed.items():
            name = path.rsplit("/", 1)[-1]
            found = _EPISODE.search(name)
            season, episode = numbers.get(name, (None, None)) if numbers else (None, None)
            if found:
                season, episode = int(found.group(1)), int(found.group(2))
            if path.endswith(".mkv") and episode is not None:
                files.append(file_entry(ref, "video", season=season, episodes=[episode]))
        return llm_answer("series", title, year, files, original_title=original)
    return answer


def season(name: str, number: int, episodes: int, *, seed: int = 0, context: str = "") -> Case:
    """A season pack of `Fargo` named `name`."""
    files: dict[str, int | bytes] = {f"Fargo.S{number:02d}E{e:02d}.1080p.WEB-DL.mkv": 40_000 + e
                                     for e in range(1, episodes + 1)}
    files["Fargo.nfo"] = 300
    return Case(name, files, context=context, seed=seed, answer=series_answer("Fargo", 2014))


@pytest.fixture
def catalogue(fake_catalogue: Catalogue) -> Catalogue:
    """The default catalogue plus an anime and a show with specials."""
    fake_catalogue.add(FakeTitle(
        "series", "Attack on Titan", 2013, original_title="進撃の巨人", original_language="ja",
        aliases=["Shingeki no Kyojin"], seasons={0: 9, 1: 25, 2: 12, 3: 22, 4: 30}, tmdb_id=1429,
        tvdb_id=267440, tvmaze_id=919, imdb_id="tt2560140", slug="attack-on-titan",
        overview="Humanity fights the Titans."))
    fake_catalogue.add(FakeTitle(
        "series", "Sherlock", 2010, seasons={0: 2, 1: 3, 2: 3, 3: 3, 4: 3}, tmdb_id=19885, tvdb_id=176941,
        tvmaze_id=335, imdb_id="tt1475582", slug="sherlock", overview="A modern Sherlock Holmes."))
    return fake_catalogue


async def test_a_season_pack_then_its_next_season_converge_automatically(decisions: DecisionStack) -> None:
    first = await decisions.run(season("Fargo.S01.1080p.WEB-DL", 1, 3))
    assert first.state is State.DONE, first.reasons
    second = await decisions.run(season("Fargo.S02.1080p.WEB-DL", 2, 2, seed=1,
                                        context="Фарго, второй сезон, русская озвучка"))
    assert second.state is State.DONE, second.reasons
    assert any(r.startswith("folder_inherited") for r in second.reasons)
    assert decisions.tree() == [
        f"{FARGO}/Season 01/Fargo S01E01.mkv", f"{FARGO}/Season 01/Fargo S01E02.mkv",
        f"{FARGO}/Season 01/Fargo S01E03.mkv",
        f"{FARGO}/Season 02/Fargo S02E01.mkv", f"{FARGO}/Season 02/Fargo S02E02.mkv",
    ]


ENGLISH = ["Where were you last night?", "I told you, I was at work until ten.",
           "Don't lie to me. Your car wasn't there.", "Fine. I drove to my brother's place.",
           "Why didn't you just say so?", "Because you would have asked why."]


def movie_answer(title: str, year: int) -> Any:
    """The LLM reads a film: the video, and any subtitle with no language given."""
    def answer(listed: Mapping[str, str]) -> dict[str, Any]:
        files = [file_entry(ref, "video" if path.endswith(".mkv") else "subtitle")
                 for ref, path in listed.items() if path.endswith((".mkv", ".srt"))]
        return llm_answer("movie", title, year, files)
    return answer


async def test_a_movie_with_an_untagged_subtitle(decisions: DecisionStack) -> None:
    name = "The.Matrix.1999.1080p.BluRay.x264-GRP"
    cues = "".join(f"{n}\n00:00:{n:02d},000 --> 00:00:{n:02d},900\n{line}\n\n"
                   for n, line in enumerate(ENGLISH, 1))
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 90_000, f"{name}.srt": cues.encode(),
                                              "Sample/sample.mkv": 900, f"{name}.nfo": 200},
                                       answer=movie_answer("The Matrix", 1999)))
    assert outcome.state is State.DONE, outcome.reasons
    folder = "movies/The Matrix (1999) [tmdbid-603]"
    assert decisions.tree() == [f"{folder}/The Matrix (1999) [tmdbid-603].en.srt",
                                f"{folder}/The Matrix (1999) [tmdbid-603].mkv"]


async def test_a_special_goes_to_season_00(decisions: DecisionStack, catalogue: Catalogue) -> None:
    name = "Sherlock.S00E01.The.Abominable.Bride.1080p.BluRay.x264"
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 70_000},
                                       answer=series_answer("Sherlock", 2010)))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["series/Sherlock (2010) [tvdbid-176941]/Season 00/Sherlock S00E01.mkv"]


async def test_an_anime_episode_under_its_romaji_name(decisions: DecisionStack, catalogue: Catalogue) -> None:
    name = "[SubsPlease] Shingeki no Kyojin - 05 (1080p) [A1B2C3D4]"
    answer = series_answer("Attack on Titan", 2013, original="Shingeki no Kyojin",
                           numbers={f"{name}.mkv": (1, 5)})
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 60_000}, answer=answer))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [
        "series/Attack on Titan (2013) [tvdbid-267440]/Season 01/Attack on Titan S01E05.mkv"]
    assert not any(r.startswith("llm_title") for r in outcome.reasons)


async def test_a_metadata_outage_is_retried_without_a_human(decisions: DecisionStack, fake_tmdb: Any,
                                                            fake_tvdb: Any, fake_tvmaze: Any) -> None:
    down = Reply(503, {"message": "Service Unavailable"})
    for fake in (fake_tmdb, fake_tvdb, fake_tvmaze):
        fake.outage = down
    download_id = await decisions.add(season("Fargo.S01.1080p.WEB-DL", 1, 2))
    waiting = await decisions.settle(download_id)
    assert waiting.state is State.REVIEW
    assert any(r.startswith("provider_unavailable") for r in waiting.reasons), waiting.reasons
    for fake in (fake_tmdb, fake_tvdb, fake_tvmaze):
        fake.outage = None
    deadline = asyncio.get_running_loop().time() + 60
    while (await decisions.app.store.get_download(download_id)).state is not State.DONE:
        assert asyncio.get_running_loop().time() < deadline, "not recognized again after the outage"
        await asyncio.sleep(0.1)
    assert decisions.tree() == [f"{FARGO}/Season 01/Fargo S01E01.mkv", f"{FARGO}/Season 01/Fargo S01E02.mkv"]
    history = [(t.from_state, t.to_state, t.actor.value)
               for t in await decisions.app.store.transitions(download_id)]
    assert (State.REVIEW, State.RECOGNIZING, "worker") in history


def shameless(name: str, *, context: str = "", year: int | None = None) -> Case:
    """Two episodes of a season 3 of `Shameless`, a show that exists as a US and a UK version."""
    files: dict[str, int | bytes] = {f"{name}.E{e:02d}.mkv".replace(".S03.E", ".S03E"): 30_000 + e
                                     for e in (1, 2)}
    answer = series_answer("Shameless", year) if year else series_answer_without_year("Shameless")
    return Case(name, files, context=context, answer=answer)


def series_answer_without_year(title: str) -> Any:
    """The LLM knows the title but not which of its versions this is."""
    inner = series_answer(title, 0)

    def answer(listed: Mapping[str, str]) -> dict[str, Any]:
        return {**inner(listed), "year": None}
    return answer


async def test_an_ambiguous_show_asks_a_human(decisions: DecisionStack) -> None:
    outcome = await decisions.run(shameless("Shameless.S03.1080p.WEB-DL"))
    assert outcome.state is State.REVIEW
    assert any(r.startswith("small_margin") for r in outcome.reasons), outcome.reasons
    assert decisions.tree() == []
    review = await decisions.get(outcome.download_id)
    countries = {c.get("country") for c in review["recognition"]["candidates"]}
    assert {"US", "GB"} <= countries


@pytest.mark.parametrize("context", ["American version", "американская версия"])
async def test_the_context_naming_the_country_decides(decisions: DecisionStack, context: str) -> None:
    outcome = await decisions.run(shameless("Shameless.S03.1080p.WEB-DL", context=context))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{SHAMELESS_US}/Season 03/Shameless (US) S03E01.mkv",
                                f"{SHAMELESS_US}/Season 03/Shameless (US) S03E02.mkv"]



async def test_the_name_naming_the_country_decides(decisions: DecisionStack) -> None:
    outcome = await decisions.run(shameless("Shameless.US.S03.1080p.WEB-DL"))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{SHAMELESS_US}/Season 03/Shameless (US) S03E01.mkv",
                                f"{SHAMELESS_US}/Season 03/Shameless (US) S03E02.mkv"]


async def test_a_multi_season_pack_is_planned_season_by_season(decisions: DecisionStack) -> None:
    files: dict[str, int | bytes] = {
        f"Season {s}/Fargo.S{s:02d}E{e:02d}.720p.HDTV.mkv": 20_000 + 10 * s + e
        for s in (1, 2) for e in (1, 2)}
    outcome = await decisions.run(Case("Fargo.S01-S02.720p.HDTV", files, answer=series_answer("Fargo", 2014)))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == [f"{FARGO}/Season {s:02d}/Fargo S{s:02d}E{e:02d}.mkv"
                                for s in (1, 2) for e in (1, 2)]


async def test_an_anime_batch_in_absolute_numbers_spans_two_seasons(decisions: DecisionStack,
                                                                    catalogue: Catalogue) -> None:
    name = "[Grp] Shingeki no Kyojin - 24-27 [1080p]"
    files: dict[str, int | bytes] = {
        f"[Grp] Shingeki no Kyojin - {n:02d} [1080p][ABCD00{n:02d}].mkv": 10_000 + n
        for n in (24, 25, 26, 27)}
    numbers = {name: (s, e) for name, (s, e) in zip(files, ((1, 24), (1, 25), (2, 1), (2, 2)), strict=True)}
    outcome = await decisions.run(Case(name, files, answer=series_answer("Attack on Titan", 2013,
                                                                        original="Shingeki no Kyojin",
                                                                        numbers=numbers)))
    assert outcome.state is State.DONE, outcome.reasons
    show = "series/Attack on Titan (2013) [tvdbid-267440]"
    assert decisions.tree() == [f"{show}/Season 01/Attack on Titan S01E24.mkv",
                                f"{show}/Season 01/Attack on Titan S01E25.mkv",
                                f"{show}/Season 02/Attack on Titan S02E01.mkv",
                                f"{show}/Season 02/Attack on Titan S02E02.mkv"]


async def test_the_season_the_files_number_tells_two_versions_apart(decisions: DecisionStack) -> None:
    # no year, no country: the 1990 BBC serial has one season of four, the 2013 show six of thirteen
    name = "House.of.Cards.S02.1080p.WEB-DL"
    files: dict[str, int | bytes] = {f"House.of.Cards.S02E{e:02d}.WEB-DL.mkv": 30_000 + e
                                     for e in range(1, 14)}
    outcome = await decisions.run(Case(name, files, answer=series_answer("House of Cards", 2013)))
    assert outcome.state is State.DONE, outcome.reasons
    show = "series/House of Cards (US) (2013) [tvdbid-262980]"
    assert decisions.tree() == [f"{show}/Season 02/House of Cards (US) S02E{e:02d}.mkv" for e in range(1, 14)]


async def test_a_film_without_a_year_is_the_one_with_its_exact_title(decisions: DecisionStack) -> None:
    # TMDB also knows "The Matrix Reloaded": containing the title read is not being it
    name = "The.Matrix.1080p.BluRay.x264-GRP"
    outcome = await decisions.run(Case(name, {f"{name}.mkv": 90_000},
                                       answer=movie_answer("The Matrix", 1999)))
    assert outcome.state is State.DONE, outcome.reasons
    assert decisions.tree() == ["movies/The Matrix (1999) [tmdbid-603]/The Matrix (1999) [tmdbid-603].mkv"]


# ---------------------------------------------------------------------------- better copies

MATRIX = "movies/The Matrix (1999) [tmdbid-603]"
MATRIX_1080P = "The.Matrix.1999.1080p.WEB-DL.DDP5.1.H.264-NTb"
MATRIX_2160P = "The.Matrix.1999.2160p.UHD.BluRay.REMUX.HDR.HEVC-FGT"


def matrix(name: str, seed: int) -> Case:
    """One copy of The Matrix: its video only."""
    return Case(name, {f"{name}.mkv": 90_000 + seed}, seed=seed, answer=movie_answer("The Matrix", 1999))


async def _command(decisions: DecisionStack, command: Command, payload: dict[str, Any]) -> Any:
    response = await decisions.client.request(command, payload)
    assert response.status == "ok", response.error
    return response.data


def _source(decisions: DecisionStack, name: str) -> Path:
    return Path(decisions.qbittorrent.data_dir) / name / f"{name}.mkv"


async def _laid_1080p(decisions: DecisionStack) -> None:
    first = await decisions.run(matrix(MATRIX_1080P, 1))
    assert first.state is State.DONE, first.reasons
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]


async def test_a_better_copy_asks_with_three_choices_and_keep_both_lays_a_version(
        decisions: DecisionStack) -> None:
    await _laid_1080p(decisions)
    second = await decisions.run(matrix(MATRIX_2160P, 2))
    assert second.state is State.REVIEW
    assert any(r.startswith("better_copy") and "already in your library as 1080p WEB-DL by NTb from "
               f"{MATRIX_1080P}" in r and "2160p Remux by FGT: better" in r for r in second.reasons)
    detail = await decisions.get(second.download_id)
    held = [row for row in detail["recognition"]["plan"] if row["status"] == "held"]
    assert [row["source"] for row in held] == [f"{MATRIX_2160P}/{MATRIX_2160P}.mkv"]
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]

    await _command(decisions, Command.UPGRADE, {"id": second.download_id, "choice": "keep_both"})
    done = await decisions.settle(second.download_id, decided=True)
    assert done.state is State.DONE, done.reasons
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603] - 2160p.mkv",
                                f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]


@pytest.mark.upgrades("keep_both")
async def test_the_keep_both_policy_lays_a_version_without_asking(decisions: DecisionStack) -> None:
    await _laid_1080p(decisions)
    second = await decisions.run(matrix(MATRIX_2160P, 2))
    assert second.state is State.DONE, second.reasons
    assert any(r.startswith("copy_kept") for r in second.reasons)
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603] - 2160p.mkv",
                                f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]


@pytest.mark.upgrades("replace_if_better")
async def test_the_replace_policy_replaces_and_undo_restores(decisions: DecisionStack) -> None:
    await _laid_1080p(decisions)
    target = Path(decisions.paths.movies) / "The Matrix (1999) [tmdbid-603]" / \
        "The Matrix (1999) [tmdbid-603].mkv"
    second = await decisions.run(matrix(MATRIX_2160P, 2))
    assert second.state is State.DONE, second.reasons
    assert any(r.startswith("copy_replaced") for r in second.reasons)
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]
    assert target.stat().st_ino == _source(decisions, MATRIX_2160P).stat().st_ino
    old = _source(decisions, MATRIX_1080P)
    assert old.exists()                           # the old download is never touched

    undone = await _command(decisions, Command.UNDO, {"id": second.download_id})
    assert undone.complete
    assert decisions.tree() == [f"{MATRIX}/The Matrix (1999) [tmdbid-603].mkv"]
    assert target.stat().st_ino == old.stat().st_ino


async def test_a_repack_of_an_episode_already_there_asks_and_replaces(decisions: DecisionStack) -> None:
    first = await decisions.run(Case("Fargo.S01E02.1080p.WEB-DL.x264-GRP",
                                     {"Fargo.S01E02.1080p.WEB-DL.x264-GRP.mkv": 41_000},
                                     answer=series_answer("Fargo", 2014)))
    assert first.state is State.DONE, first.reasons
    name = "Fargo.S01E02.REPACK.1080p.WEB-DL.x264-GRP"
    second = await decisions.run(Case(name, {f"{name}.mkv": 42_000}, seed=3,
                                      answer=series_answer("Fargo", 2014)))
    assert second.state is State.REVIEW
    assert any(r.startswith("better_copy") and "REPACK by GRP: better" in r for r in second.reasons)
    await _command(decisions, Command.UPGRADE, {"id": second.download_id, "choice": "replace"})
    done = await decisions.settle(second.download_id, decided=True)
    assert done.state is State.DONE, done.reasons
    assert decisions.tree() == [f"{FARGO}/Season 01/Fargo S01E02.mkv"]
    episode = Path(decisions.paths.series) / "Fargo (2014) [tvdbid-269613]" / "Season 01" / "Fargo S01E02.mkv"
    assert episode.stat().st_ino == _source(decisions, name).stat().st_ino
