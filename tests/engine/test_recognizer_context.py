"""The user's context and hints in a real recognition, with and without an LLM.

The real recognizer, the real providers against the local TMDB/TVDB/TVMaze fakes, and the real
OpenAI client against the fake server.
"""

from __future__ import annotations

from typing import Any

import pytest

from jellybit.config import RecognitionConfig
from jellybit.core.confidence import Reading
from jellybit.core.records import MediaType, RecognitionDraft
from jellybit.engine.metadata_match import Match, Matcher
from jellybit.engine.recognizer import RecognitionEngine
from tests.engine.test_recognizer import GB, SEASON2, blocking, codes, recognizer, request
from tests.support.fake_metadata import Catalogue, FakeTitle
from tests.support.fake_openai import FakeOpenAI, file_entry, llm_answer

OFFICE = "The.Office.S02.1080p.WEB-DL"
OFFICE_FILES = [(f"{OFFICE}/The.Office.S02E{n:02d}.1080p.WEB-DL.mkv", GB) for n in (1, 2, 3)]


@pytest.fixture
def offices(fake_catalogue: Catalogue) -> Catalogue:
    """The same show made twice: the US version and the UK original."""
    fake_catalogue.add(FakeTitle("series", "The Office", 2005, seasons={1: 6, 2: 22, 3: 25}, tmdb_id=2316,
                                 tvdb_id=73244, tvmaze_id=526, imdb_id="tt0386676", slug="the-office-us"))
    fake_catalogue.add(FakeTitle("series", "The Office", 2001, seasons={1: 6, 2: 6}, tmdb_id=2996,
                                 tvdb_id=78107, tvmaze_id=4, imdb_id="tt0290978", slug="the-office"))
    return fake_catalogue


class _WatchedMatcher(Matcher):
    """The real matcher; it also keeps the readings it is asked to match."""

    def __init__(self, *args: Any, seen: list[Reading], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen = seen

    async def match(self, reading: Reading, search_type: MediaType | None,
                    original_title: str | None = None) -> Match:
        self.seen.append(reading)
        return await super().match(reading, search_type, original_title)


class _WatchedRecognizer(RecognitionEngine):
    """The real recognizer, with a matcher that shows the reading it was given."""

    def __init__(self, providers: list[Any]) -> None:
        super().__init__(llm=None, providers=providers, config=RecognitionConfig())
        self.seen: list[Reading] = []

    def _matcher_for(self, download_id: str) -> Matcher:
        config = RecognitionConfig()
        return _WatchedMatcher(self._providers, low_distance=config.low_distance,
                               medium_distance=config.medium_distance, min_margin=config.min_margin,
                               seen=self.seen)


def note(draft: RecognitionDraft, code: str) -> str:
    return next(r.message for r in draft.reasons if r.code == code)


def series_answer(files: list[tuple[str, int]], title: str, year: int, season: int) -> dict[str, Any]:
    entries = [file_entry(f"f{n}", "video", season=season, episodes=[n]) for n in range(1, len(files) + 1)]
    return llm_answer("series", title, year, entries)


# ------------------------------------------------------------------------------------------ country

async def test_american_version_is_the_readings_country_and_a_note(providers: list[Any],
                                                                    offices: Catalogue) -> None:
    watched = _WatchedRecognizer(providers)
    draft = await watched.recognize(request(OFFICE, OFFICE_FILES, context="American version"))
    assert [r.country for r in watched.seen] == ["US"]
    assert note(draft, "context_read") == "from your context: country US (“American version”)"
    assert "context_unused" not in codes(draft)
    assert {(c.provider, c.year) for c in draft.candidates} >= {("tvdb", 2005), ("tvdb", 2001)}
    plain = _WatchedRecognizer(providers)
    await plain.recognize(request(OFFICE, OFFICE_FILES))
    assert [r.country for r in plain.seen] == [None]


# ------------------------------------------------------------------------------------------ season

async def test_a_season_from_the_context_numbers_a_complete_pack(providers: list[Any]) -> None:
    name = "Fargo.Complete.1080p.WEB-DL"
    files = [(f"{name}/Fargo.E{n:02d}.1080p.mkv", GB) for n in range(1, 4)]
    draft = await recognizer(None, providers).recognize(request(name, files, context="второй сезон"))
    assert [(v.season, v.episodes) for v in draft.plan.videos()] == [(2, (1,)), (2, (2,)), (2, (3,))]
    assert "season_assumed" not in codes(draft)
    assert note(draft, "context_read") == "from your context: season 2 (“второй сезон”)"
    assert draft.automatic, draft.reasons
    without = await recognizer(None, providers).recognize(request(name, files))
    assert [v.season for v in without.plan.videos()] == [1, 1, 1]
    assert "season_assumed" in codes(without)


async def test_the_words_season_is_above_the_llms(llm: Any, providers: list[Any],
                                                  fake_openai: FakeOpenAI) -> None:
    name = "Fargo.Complete.1080p.WEB-DL"
    files = [(f"{name}/Fargo.E{n:02d}.1080p.mkv", GB) for n in range(1, 4)]
    fake_openai.reply(series_answer(files, "Fargo", 2014, 3))
    draft = await recognizer(llm, providers).recognize(request(name, files, context="второй сезон"))
    assert "llm_answer_dropped" not in codes(draft)
    assert "Fargo" in (draft.raw_llm or "")
    assert [(v.season, v.episodes) for v in draft.plan.videos()] == [(2, (1,)), (2, (2,)), (2, (3,))]


async def test_a_season_the_file_names_contradict_blocks(providers: list[Any]) -> None:
    files = [(f"Fargo.S01/Fargo.S01E0{n}.mkv", GB) for n in (1, 2)]
    draft = await recognizer(None, providers).recognize(request("Fargo.S01", files, context="season 2"))
    assert "context_season" in blocking(draft)
    assert note(draft, "context_season") == "your context says season 2, the file names say season 1"
    assert [v.season for v in draft.plan.videos()] == [1, 1]        # the files keep their own season
    assert not draft.automatic


async def test_a_newer_hint_replaces_the_contexts_season(providers: list[Any]) -> None:
    name = "Fargo.Complete.1080p.WEB-DL"
    files = [(f"{name}/Fargo.E{n:02d}.1080p.mkv", GB) for n in (1, 2)]
    draft = await recognizer(None, providers).recognize(
        request(name, files, context="season 1", hints=("season 2", "season 3")))
    assert [v.season for v in draft.plan.videos()] == [3, 3]
    assert note(draft, "context_read") == (
        "from your hint: season 3 (“season 3”); from your hint: season 2 (“season 2”), replaced by a newer "
        "hint; from your context: season 1 (“season 1”), replaced by a newer hint")


async def test_a_pinned_season_beats_the_words(providers: list[Any]) -> None:
    files = [(f"Fargo.S01/Fargo.S01E0{n}.mkv", GB) for n in (1, 2)]
    draft = await recognizer(None, providers).recognize(
        request("Fargo.S01", files, context="season 2", overrides={"season": 3}))
    assert [v.season for v in draft.plan.videos()] == [3, 3]
    assert "context_season" not in codes(draft)


async def test_an_episode_from_the_words_numbers_the_only_video(providers: list[Any]) -> None:
    name = "Fargo.2014.1080p.WEB-DL"
    draft = await recognizer(None, providers).recognize(
        request(name, [(f"{name}.mkv", GB)], context="сериал, 2 сезон 10 серия"))
    assert [(v.season, v.episodes) for v in draft.plan.videos()] == [(2, (10,))]
    assert (draft.media_type, draft.provider_id) == (MediaType.SERIES, "269613")
    assert draft.automatic, draft.reasons


# ------------------------------------------------------------------------------------------ ids

@pytest.mark.parametrize(("context", "expected"), [
    ("tmdb 2316", ("tmdb", "2316")),
    ("https://www.themoviedb.org/tv/2316-the-office", ("tmdb", "2316")),
    ("это https://www.tvmaze.com/shows/526/the-office", ("tvmaze", "526")),
    ("tvdb:78107", ("tvdb", "78107")),
])
async def test_a_provider_id_pins_the_match(providers: list[Any], offices: Catalogue, context: str,
                                            expected: tuple[str, str]) -> None:
    tied = await recognizer(None, providers).recognize(request(OFFICE, OFFICE_FILES))
    assert "small_margin" in blocking(tied)
    draft = await recognizer(None, providers).recognize(request(OFFICE, OFFICE_FILES, context=context))
    assert (draft.provider, draft.provider_id) == expected
    assert draft.automatic, draft.reasons
    assert "small_margin" not in codes(draft)
    assert [c.provider_id for c in draft.candidates if c.chosen] == [expected[1]]


async def test_a_provider_id_nobody_knows_is_not_used(providers: list[Any], offices: Catalogue) -> None:
    draft = await recognizer(None, providers).recognize(request(OFFICE, OFFICE_FILES, context="tmdb 999999"))
    assert draft.provider_id not in ("999999",)
    assert note(draft, "context_read").endswith("TMDB 999999 (“tmdb 999999”): the provider does not confirm "
                                                "this id")
    assert note(draft, "context_unused") == "these words of your context were not used: “tmdb 999999”"
    assert not draft.automatic


async def test_an_imdb_id_selects_the_candidate_that_carries_it(providers: list[Any],
                                                               offices: Catalogue) -> None:
    draft = await recognizer(None, providers).recognize(request(OFFICE, OFFICE_FILES, context="tt0290978"))
    assert (draft.provider, draft.provider_id, draft.year) == ("tvdb", "78107", 2001)
    assert draft.automatic, draft.reasons
    unknown = await recognizer(None, providers).recognize(request(OFFICE, OFFICE_FILES, context="tt0000001"))
    assert note(unknown, "context_read") == (
        "from your context: IMDb tt0000001 (“tt0000001”): no candidate carries this id")
    assert "context_unused" in blocking(unknown)


async def test_a_year_and_type_from_the_words_tell_two_films_apart(providers: list[Any],
                                                                   fake_catalogue: Catalogue) -> None:
    fake_catalogue.add(FakeTitle("movie", "Fargo", 2003, tmdb_id=777, slug="fargo-2003"))
    name = "Fargo.1080p.BluRay.x264"
    tied = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", 6 * GB)]))
    assert not tied.automatic
    draft = await recognizer(None, providers).recognize(
        request(name, [(f"{name}.mkv", 6 * GB)], context="фильм 1996 года"))
    assert (draft.provider_id, draft.year) == ("275", 1996)
    assert draft.automatic, draft.reasons


async def test_a_quoted_title_is_searched_when_the_names_give_none(providers: list[Any]) -> None:
    name = "Season.1.Complete.1080p"
    files = [(f"{name}/E{n:02d}.mkv", GB) for n in (1, 2)]
    untitled = await recognizer(None, providers).recognize(request(name, files))
    assert "no_title" in blocking(untitled)
    draft = await recognizer(None, providers).recognize(request(name, files, context="«Метод», сериал"))
    assert (draft.title, draft.original_title, draft.provider) == ("Method", "Метод", "tvdb")
    assert [(v.season, v.episodes) for v in draft.plan.videos()] == [(1, (1,)), (1, (2,))]
    assert note(draft, "context_read") == "from your context: title “Метод”, a series (“сериал”)"
    assert draft.automatic, draft.reasons


# ------------------------------------------------------------------------------------------ unused words

async def test_unread_words_that_could_change_the_decision_go_to_review(providers: list[Any]) -> None:
    context = "Fargo season 2, Kopenhagen kids, disc 3"
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                                context=context))
    assert "context_unused" in blocking(draft)
    assert note(draft, "context_unused") == "these words of your context were not used: “3”"
    assert note(draft, "context_note") == ("these words of your context matched nothing and could not "
                                           "change the decision: “Kopenhagen”, “kids”, “disc”")
    assert note(draft, "context_read") == "from your context: season 2 (“season 2”)"
    assert not draft.automatic
    assert (draft.provider, draft.provider_id) == ("tvdb", "269613")     # still read, for the human
    confirmed = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                                    context="Fargo season 2"))
    assert confirmed.automatic, confirmed.reasons


async def test_stray_words_are_a_note_when_the_name_evidence_is_exact(providers: list[Any]) -> None:
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                                context="Fargo season 2, Kopenhagen kids"))
    assert "context_unused" not in codes(draft)
    assert not next(r for r in draft.reasons if r.code == "context_note").blocking
    assert draft.automatic, draft.reasons


async def test_stray_words_block_when_the_name_evidence_is_not_exact(providers: list[Any]) -> None:
    # no year, the film and the show of that name: nothing is exact, so every stray word matters
    name = "Fargo.1080p.BluRay.x264"
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", 6 * GB)],
                                                                context="Kopenhagen kids"))
    assert "context_unused" in codes(draft), draft.reasons
    assert note(draft, "context_unused") == "these words of your context were not used: “Kopenhagen”, “kids”"
    assert not draft.automatic


async def test_the_same_words_read_by_the_llm_are_used(llm: Any, providers: list[Any],
                                                       fake_openai: FakeOpenAI) -> None:
    fake_openai.reply(series_answer(SEASON2, "Fargo", 2014, 2))
    draft = await recognizer(llm, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                               context="Fargo season 2, Kopenhagen kids"))
    assert "context_unused" not in codes(draft)
    assert "Kopenhagen kids" in fake_openai.user_message()
    assert note(draft, "context_read") == "from your context: season 2 (“season 2”)"
    assert draft.automatic, draft.reasons


async def test_an_llm_that_is_down_read_nothing(llm: Any, providers: list[Any],
                                                fake_openai: FakeOpenAI) -> None:
    fake_openai.fail(500, "model crashed")
    draft = await recognizer(llm, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                               hints=("Kopenhagen kids, disc 3",)))
    assert "llm_unavailable" in codes(draft)
    assert note(draft, "context_unused") == "these words of your hint were not used: “3”"
    assert not draft.automatic


async def test_a_context_fully_read_keeps_a_download_automatic_without_an_llm(providers: list[Any]) -> None:
    context = "Фарго, второй сезон, американская версия, русская озвучка"
    draft = await recognizer(None, providers).recognize(request("Fargo.S02.1080p.WEB-DL", SEASON2,
                                                                context=context))
    assert draft.automatic, draft.reasons
    assert note(draft, "context_read") == (
        "from your context: season 2 (“второй сезон”), country US (“американская версия”), "
        "audio language ru (“русская озвучка”)")


# ------------------------------------------------------------------------------------------ people

@pytest.mark.parametrize("context", ["фильм Тарантино", "фильм Квентина Тарантино", "Tarantino film"])
async def test_a_word_naming_the_director_confirms_the_match(providers: list[Any], fake_catalogue: Catalogue,
                                                            context: str) -> None:
    fake_catalogue.add(FakeTitle("movie", "Pulp Fiction", 1994, tmdb_id=680, imdb_id="tt0110912",
                                 slug="pulp-fiction", directors=["Quentin Tarantino"],
                                 cast=["John Travolta", "Uma Thurman"],
                                 translations={"ru": "Криминальное чтиво"}))
    name = "Pulp.Fiction.1994.1080p.BluRay.x264"
    draft = await recognizer(None, providers).recognize(request(name, [(f"{name}.mkv", 6 * GB)],
                                                                context=context))
    assert "names Quentin Tarantino of the chosen work" in note(draft, "context_read"), draft.reasons
    assert "context_unused" not in codes(draft)
    assert draft.automatic, draft.reasons

