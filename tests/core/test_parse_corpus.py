"""The ratchet on the release-name corpus: Jellybit's accuracy never drops, and never below plain guessit.

Both parsers read every name of `tests/data/release_corpus.jsonl` in the same run (deterministic:
the same names, the same guessit), scored by `bench/parse_accuracy.py`.
"""

from __future__ import annotations

import json
import re

import pytest

from bench.parse_accuracy import (
    CATEGORIES,
    CORPUS,
    FIELDS,
    Case,
    Score,
    guessit_reader,
    jellybit_reader,
    judge,
    load_corpus,
    score,
)

# Raise this when the parser improves; never lower it to make a change pass.
OVERALL_AT_LEAST = 0.90

pytestmark = pytest.mark.timeout(1200)   # ~4,000 guessit parses on a busy 2-core machine


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return load_corpus()


@pytest.fixture(scope="module")
def scores(cases: list[Case]) -> dict[str, Score]:
    return {"jellybit": score(cases, jellybit_reader()), "guessit": score(cases, guessit_reader)}


def test_the_corpus_is_big_and_well_formed(cases: list[Case]) -> None:
    assert len(cases) >= 1500
    assert len({c.name for c in cases}) == len(cases)
    assert {c.category for c in cases} == set(CATEGORIES)
    for case in cases:
        assert case.expected, case.name
        assert set(case.expected) <= set(FIELDS), case.name
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S.*", case.source), case.name
    with CORPUS.open(encoding="utf-8") as handle:
        assert all(json.loads(line)["source"] for line in handle)


def test_overall_accuracy_does_not_drop(scores: dict[str, Score]) -> None:
    assert scores["jellybit"].accuracy() >= OVERALL_AT_LEAST


@pytest.mark.parametrize("category", CATEGORIES)
def test_every_category_is_at_least_plain_guessit(scores: dict[str, Score], category: str) -> None:
    ours, theirs = scores["jellybit"].accuracy(category), scores["guessit"].accuracy(category)
    assert ours >= theirs, f"{category}: Jellybit {ours:.3f} < guessit {theirs:.3f}"


def test_a_country_counts_in_the_title_or_in_its_field() -> None:
    expected = {"title": "House of Cards", "country": "US"}
    case = Case("House.of.Cards.US.S02", "season_packs", expected, "x/y@z:w")
    assert all(judge(case, {"title": "House of Cards", "country": "US"}).values())
    assert all(judge(case, {"title": "House of Cards US", "country": None}).values())
    assert not all(judge(case, {"title": "House of Cards", "country": None}).values())
