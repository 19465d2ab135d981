"""The rule-based reader of a user's context and hints (core/context.py, core/context_words.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.context import MAX_CONTEXT_CHARS, ContextReading, clean_context, read_context
from jellybit.core.context_words import TERMS

# (text, the fields it states, the words it leaves unused)
PHRASES: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    # season
    ("season 2", {"season": 2}, ()),
    ("Season 02", {"season": 2}, ()),
    ("S02", {"season": 2}, ()),
    ("s2", {"season": 2}, ()),
    ("2nd season", {"season": 2}, ()),
    ("second season", {"season": 2}, ()),
    ("season two", {"season": 2}, ()),
    ("the third season please", {"season": 3}, ()),
    ("season 0", {"season": 0}, ()),
    ("второй сезон", {"season": 2}, ()),
    ("2 сезон", {"season": 2}, ()),
    ("сезон 2", {"season": 2}, ()),
    ("2-й сезон", {"season": 2}, ()),
    ("во втором сезоне", {"season": 2}, ()),
    ("десятый сезон", {"season": 10}, ()),
    ("S02E05", {"season": 2, "episode": 5}, ()),
    # a tracker's range: the season, not its first episode
    ("Фарго / Fargo / S2E1-10 of 10 [2015, WEB-DL 1080p]", {"season": 2, "year": 2015, "episode": None},
     ("Фарго", "Fargo", "WEB-DL", "1080p")),
    ("S2E1-10 из 10", {"season": 2, "episode": None}, ()),
    # episode
    ("episode 5", {"episode": 5}, ()),
    ("ep 12", {"episode": 12}, ()),
    ("серия 5", {"episode": 5}, ()),
    ("пятая серия", {"episode": 5}, ()),
    # year
    ("2014", {"year": 2014}, ()),
    ("year 2014", {"year": 2014}, ()),
    ("(1996)", {"year": 1996}, ()),
    ("фильм 2019 года", {"year": 2019, "media_type": "movie"}, ()),
    ("2014 г.", {"year": 2014}, ()),
    ("2 сезон 2014 года", {"season": 2, "year": 2014}, ()),
    ("Fargo 2014 season 2", {"year": 2014, "season": 2}, ("Fargo",)),
    # type
    ("movie", {"media_type": "movie"}, ()),
    ("a film", {"media_type": "movie"}, ()),
    ("TV movie", {"media_type": "movie"}, ()),
    ("мультфильм", {"media_type": "movie"}, ()),
    ("series", {"media_type": "series"}, ()),
    ("TV show", {"media_type": "series"}, ()),
    ("сериал", {"media_type": "series"}, ()),
    ("anime", {"media_type": "series", "anime": True}, ()),
    ("аниме", {"media_type": "series", "anime": True}, ()),
    ("anime movie", {"media_type": "movie", "anime": True}, ()),
    ("not a movie", {"media_type": "series"}, ()),
    ("это сериал 2014 года, не фильм", {"media_type": "series", "year": 2014}, ()),
    ("не сериал", {"media_type": "movie"}, ()),
    ("it is not anime", {"anime": False, "media_type": None}, ("is not anime",)),
    # country
    ("American", {"country": "US"}, ()),
    ("American version", {"country": "US"}, ()),
    ("the US one", {"country": "US"}, ()),
    ("USA", {"country": "US"}, ()),
    ("British", {"country": "GB"}, ()),
    ("UK", {"country": "GB"}, ()),
    ("британская версия", {"country": "GB"}, ()),
    ("американский", {"country": "US"}, ()),
    ("Danish version", {"country": "DK"}, ()),
    ("датская", {"country": "DK"}, ()),
    ("send us the show", {"media_type": "series", "country": None}, ("send", "us")),
    # language
    ("Russian dub", {"audio_languages": ("ru",)}, ()),
    ("dubbed in Russian", {"audio_languages": ("ru",)}, ()),
    ("русская озвучка", {"audio_languages": ("ru",)}, ()),
    ("English subtitles", {"subtitle_languages": ("en",)}, ()),
    ("in English", {"audio_languages": ("en",)}, ()),
    ("с русской озвучкой и английскими субтитрами",
     {"audio_languages": ("ru",), "subtitle_languages": ("en",)}, ()),
    # provider ids and addresses
    ("tmdb 2316", {"provider": "tmdb", "provider_id": "2316", "provider_kind": None}, ()),
    ("tmdb:2316", {"provider": "tmdb", "provider_id": "2316"}, ()),
    ("[tmdbid-2316]", {"provider": "tmdb", "provider_id": "2316"}, ()),
    ("https://www.themoviedb.org/tv/2316-the-office", {"provider": "tmdb", "provider_id": "2316",
                                                       "provider_kind": "series"}, ()),
    ("themoviedb.org/movie/275-fargo.",
     {"provider": "tmdb", "provider_id": "275", "provider_kind": "movie"}, ()),
    ("tvdb 269613", {"provider": "tvdb", "provider_id": "269613", "provider_kind": "series"}, ()),
    ("https://thetvdb.com/?tab=series&id=269613", {"provider": "tvdb", "provider_id": "269613"}, ()),
    ("thetvdb.com/series/fargo", {"provider": None}, ("thetvdb.com/series/fargo",)),
    ("tvmaze 1234", {"provider": "tvmaze", "provider_id": "1234"}, ()),
    ("https://www.tvmaze.com/shows/1234/fargo", {"provider": "tvmaze", "provider_id": "1234"}, ()),
    ("tt0386676", {"imdb": "tt0386676"}, ()),
    ("imdb.com/title/tt0386676", {"imdb": "tt0386676"}, ()),
    ("https://www.imdb.com/title/tt0386676/?ref_=nv", {"imdb": "tt0386676"}, ()),
    ("see https://example.org/fargo", {}, ("see", "https://example.org/fargo")),
    # titles in quotes
    ('"Fargo"', {"titles": ("Fargo",)}, ()),
    ("«Фарго»", {"titles": ("Фарго",)}, ()),
    ("“Fargo”", {"titles": ("Fargo",)}, ()),
    ("'Fargo'", {"titles": ("Fargo",)}, ()),
    ("'Grey's Anatomy' season 3", {"titles": ("Grey's Anatomy",), "season": 3}, ()),
    ('"Blade Runner 2049" 2017', {"titles": ("Blade Runner 2049",), "year": 2017}, ()),
    # whole sentences
    ("second season of the Danish version, Russian dub", {"season": 2, "country": "DK",
                                                          "audio_languages": ("ru",)}, ()),
    ("второй сезон датской версии, русская озвучка", {"season": 2, "country": "DK",
                                                      "audio_languages": ("ru",)}, ()),
    ("Kopenhagen kids, season 2", {"season": 2}, ("Kopenhagen", "kids")),
    ("this is the version, please", {}, ()),
    ("это версия", {}, ()),
    ("", {}, ()),
    ("season 1-3", {"season": 1}, ("3",)),
    ("season 2 and season 3", {"season": 2}, ("season 3",)),
]


@pytest.mark.parametrize(("text", "stated", "unused"), PHRASES, ids=[p[0] or "empty" for p in PHRASES])
def test_phrases_read_as_stated(text: str, stated: dict[str, Any], unused: tuple[str, ...]) -> None:
    reading = read_context(text)
    assert {key: getattr(reading, key) for key in stated} == stated
    assert reading.unused == unused
    # nothing else is read: every field not named keeps its default
    others = {f for f in ("media_type", "year", "season", "episode", "country", "provider", "imdb")
              if f not in stated}
    assert all(getattr(reading, f) is None for f in others), reading


def test_findings_say_what_and_from_which_words() -> None:
    reading = read_context("второй сезон датской версии, русская озвучка, tmdb 2316, «Фарго»")
    assert [f.describe() for f in reading.found] == [
        "season 2 (“второй сезон”)", "country DK (“датской версии”)", "audio language ru (“русская озвучка”)",
        "TMDB 2316 (“tmdb 2316”)", "title “Фарго”",
    ]
    assert read_context("https://www.themoviedb.org/tv/2316").found[0].describe() == \
        "TMDB 2316 (series) (“https://www.themoviedb.org/tv/2316”)"


def test_unused_words_keep_their_spelling_and_order_once() -> None:
    reading = read_context("Kopenhagen, KIDS and Kopenhagen again; Ещё слова")
    assert reading.unused == ("Kopenhagen", "KIDS", "again", "Ещё", "слова")


def test_a_second_different_value_is_not_used() -> None:
    reading = read_context("season 2 … no wait, season 3")
    assert reading.season == 2
    assert [f.value for f in reading.ignored] == [3]
    assert "season 3" in reading.unused


def test_the_length_limit_and_control_characters() -> None:
    assert len(clean_context("x" * 10_000)) == MAX_CONTEXT_CHARS
    assert clean_context("season\x002\u202e") == "season 2 "
    assert read_context("season\x002").season == 2
    assert read_context("season 2".rjust(MAX_CONTEXT_CHARS + 50)).season is None   # cut before it


def test_every_term_is_a_valid_pattern_and_every_country_is_alpha2() -> None:
    for term in TERMS:
        re.compile(term.pattern)
        assert term.lang in ("en", "ru"), term
        if term.kind == "country":
            assert re.fullmatch(r"[A-Z]{2}", str(term.value)), term
        if term.kind == "language":
            assert re.fullmatch(r"[a-z]{2}", str(term.value)), term


def test_every_example_in_the_docs_table_reads_in_full() -> None:
    documented = (Path(__file__).parents[2] / "docs" / "recognition.md").read_text(encoding="utf-8")
    section = documented.split("## Context and hints", 1)[1].split("\n## ", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ") and "`" in line]
    examples = [e for row in rows for column in row[1:3] for e in re.findall(r"`([^`]+)`", column)]
    assert len(examples) > 60
    for example in examples:
        reading = read_context(example)
        assert reading.found, example
        assert reading.unused == (), example
    assert "MAX_CONTEXT_CHARS" in section


# ------------------------------------------------------------------------------------------ totality

_ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=MAX_CONTEXT_CHARS + 96)
_WORDY = st.lists(st.sampled_from(["season", "сезон", "2", "2014", "S02", "tmdb", ":", "tt0386676", '"', "«",
                                   "»", "'", "American", "датская", "не", "фильм", "http://x.y/", "\x00",
                                   "\u202e", " ", "\n", "озвучка", "-й", "year", "года", "e05", "9999"]),
                  max_size=400).map("".join)


def _in_range(reading: ContextReading) -> None:
    assert reading.year is None or 1870 <= reading.year <= 2200
    assert reading.season is None or 0 <= reading.season <= 3000
    assert reading.episode is None or 0 <= reading.episode <= 20_000
    assert reading.media_type in (None, "movie", "series")
    assert reading.country is None or re.fullmatch(r"[A-Z]{2}", reading.country)
    assert all(re.fullmatch(r"[a-z]{2}", c) for c in (*reading.audio_languages, *reading.subtitle_languages))
    assert reading.provider in (None, "tmdb", "tvdb", "tvmaze")
    assert (reading.provider is None) == (reading.provider_id is None)
    assert reading.provider_id is None or reading.provider_id.isdigit()
    assert reading.imdb is None or re.fullmatch(r"tt\d{7,10}", reading.imdb)
    assert all(0 < len(t) <= 200 for t in reading.titles)


@given(st.one_of(_ANY_TEXT, _WORDY))
def test_any_text_reads_without_error_and_in_range(text: str) -> None:
    reading = read_context(text)
    _in_range(reading)
    cleaned = clean_context(text)
    assert all(w in " ".join(cleaned.split()) or w in cleaned for w in reading.unused)
    assert all(f.words in " ".join(cleaned.split()) for f in reading.found)
    assert read_context(text) == reading
    shown = [*reading.unused, *(f.describe() for f in reading.found)]
    assert all(w.encode("utf-8") for w in shown)           # no lone surrogate reaches a message


@given(st.integers(0, 3000), st.integers(1870, 2200), st.sampled_from(["US", "GB", "DK"]),
       st.sampled_from(["en", "ru"]))
def test_composed_phrases_read_back(season: int, year: int, country: str, lang: str) -> None:
    words = {("en", "US"): "American version", ("en", "GB"): "British", ("en", "DK"): "Danish version",
             ("ru", "US"): "американская версия", ("ru", "GB"): "британская", ("ru", "DK"): "датская версия"}
    if lang == "en":
        text = f"season {season} of the {words[lang, country]}, from {year}, please"
    else:
        # four digits before "сезон" may be a year ("2014 сезон"): they are read only after it
        numbered = f"{season} сезон" if season < 1000 else f"сезон {season}"
        text = f"это {numbered}, {words[lang, country]} {year} года"
    reading = read_context(text)
    assert (reading.season, reading.year, reading.country, reading.unused) == (season, year, country, ())
