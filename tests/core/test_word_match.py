"""The user's words against a work's names and people (scripts, Russian endings, spellings), weighed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.context_use import context_reasons, read_stated
from jellybit.core.word_match import matches, name_keys, spelling_key, who

PEOPLE = ["Quentin Tarantino", "Christopher Nolan", "Martin Scorsese", "Stanley Kubrick", "Uma Thurman"]


@pytest.mark.parametrize("word", ["Тарантино", "Тарантиноа", "Тарантину", "Нолана", "Ноланом", "Скорсезе",
                                  "Кубрика", "Турман", "tarantino", "Kubrik", "Scorseze"])
def test_a_name_in_any_script_or_case_matches(word: str) -> None:
    assert matches(word, name_keys(PEOPLE))


@pytest.mark.parametrize("word", ["Kopenhagen", "kids", "фильм", "Тара", "Nol", "3", ""])
def test_other_words_do_not(word: str) -> None:
    assert not matches(word, name_keys(PEOPLE))


def test_who_names_the_person() -> None:
    assert who("Нолана", PEOPLE) == "Christopher Nolan"
    assert who("Kopenhagen", PEOPLE) is None


def test_the_spelling_key_ignores_transliterations_choices() -> None:
    assert spelling_key("skorseze") == spelling_key("Scorsese")
    assert spelling_key("kubrik") == spelling_key("Kubrick")


@given(st.text(max_size=60), st.lists(st.text(max_size=40), max_size=5))
def test_matching_is_total(word: str, names: list[str]) -> None:
    assert isinstance(matches(word, name_keys(names)), bool)


def _reasons(context: str, **kwargs: object) -> dict[str, tuple[str, bool]]:
    found = context_reasons(read_stated(context, ()), names=["Pulp.Fiction.1994", "Pulp Fiction"],
                            llm_read=False, **kwargs)  # type: ignore[arg-type]
    return {r.code: (r.message, r.blocking) for r in found}


def test_a_word_naming_the_chosen_works_director_confirms() -> None:
    found = _reasons("фильм Тарантино", people=PEOPLE, exact=True)
    assert "“Тарантино” names Quentin Tarantino of the chosen work" in found["context_read"][0]
    assert "context_unused" not in found
    assert "context_note" not in found


def test_a_stray_word_is_a_note_only_when_the_evidence_is_exact() -> None:
    exact = _reasons("Kopenhagen kids", people=PEOPLE, exact=True)
    assert exact["context_note"][1] is False
    assert "context_unused" not in exact
    inexact = _reasons("Kopenhagen kids", people=PEOPLE, exact=False)
    assert inexact["context_unused"] == (
        "these words of your context were not used: “Kopenhagen”, “kids”", True)


def test_numbers_and_other_candidates_titles_always_block() -> None:
    found = _reasons("Reloaded disc 3 Kopenhagen", others=["The Matrix Reloaded"], exact=True)
    assert found["context_unused"] == ("these words of your context were not used: “Reloaded”, “3”", True)
    assert "“disc”, “Kopenhagen”" in found["context_note"][0]


def test_number_sequel_and_negation_words_always_block() -> None:
    # "The Matrix, the second part, not the first": read by nobody, it must not become a note
    found = _reasons("Матрица — вторая часть, не первая", exact=True)
    assert found["context_unused"] == (
        "these words of your context were not used: “вторая”, “часть”, “первая”", True)
