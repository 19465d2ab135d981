"""The plan's canonical JSON: the same text `dataclasses.asdict` gives, and it reads back equal."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.records import Film, MediaType, Plan, PlanItem, Reason, Recommendation, Role, Work

text = st.text(max_size=12)
maybe_text = st.none() | text
numbers = st.tuples(st.integers(0, 3000)) | st.tuples(st.integers(0, 3000), st.integers(0, 3000))
works = st.none() | st.builds(Work, st.sampled_from(MediaType), text, st.none() | st.integers(1870, 2200),
                              st.none() | st.sampled_from(["tmdb", "tvdb", "tvmaze"]), maybe_text, maybe_text)
items = st.builds(
    PlanItem, st.text(min_size=1, max_size=30), st.integers(0, 2**40), st.sampled_from(Role),
    season=st.none() | st.integers(0, 3000), episodes=st.just(()) | numbers,
    absolute_episodes=st.just(()) | numbers,
    air_date=maybe_text, part=st.none() | st.integers(1, 9), version=maybe_text, extra_kind=maybe_text,
    language=maybe_text, flags=st.lists(st.sampled_from(["default", "forced", "sdh"]), max_size=3).map(tuple),
    track_title=maybe_text, attached_to=maybe_text, work=works,
    library=st.none() | st.sampled_from(["movies", "series"]), target=maybe_text,
    status=st.none() | st.sampled_from(["planned", "exists", "collision", "skipped"]), note=maybe_text,
)
reasons = st.builds(Reason, text, text, st.floats(0, 1), st.booleans())
years = st.none() | st.integers(1870, 2200)
films = st.builds(Film, text, text, years, st.lists(text, max_size=3).map(tuple), maybe_text, maybe_text,
                  maybe_text, years,
                  st.none() | st.floats(0, 1), st.sampled_from(Recommendation),
                  st.lists(reasons, max_size=2).map(tuple), st.lists(text, max_size=3).map(tuple))
plans = st.builds(Plan, st.lists(items, max_size=8).map(tuple), maybe_text,
                  st.lists(films, max_size=3).map(tuple))


def _asdict_json(plan: Plan) -> str:
    return json.dumps(asdict(plan), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


@given(plans)
def test_to_json_is_the_canonical_text_and_reads_back_equal(plan: Plan) -> None:
    text = plan.to_json()
    assert text == _asdict_json(plan)
    assert Plan.from_json(text) == plan


def test_cyrillic_titles_and_shared_works_survive() -> None:
    work = Work(MediaType.SERIES, "Метод", 2015, "tvdb", "300000", "Метод")
    plan = Plan((PlanItem("Метод/Метод.S01E01.mkv", 1, Role.VIDEO, season=1, episodes=(1,), work=work,
                          target="Метод (2015)/Season 01/Метод S01E01.mkv"),
                 PlanItem("Метод/Метод.S01E01.ru.srt", 1, Role.SUBTITLE, language="ru", work=work)),
                folder="Метод (2015)")
    back = Plan.from_json(plan.to_json())
    assert back == plan
    assert "Метод" in plan.to_json()                      # not escaped
    assert back.items[0].work is back.items[1].work      # one Work per distinct work


def test_a_stored_item_that_is_not_a_plan_item_is_refused() -> None:
    with pytest.raises(TypeError):
        Plan.from_json('{"items":[{"source":"a","size":1,"role":"video","colour":"red"}]}')
    with pytest.raises(TypeError):
        Plan.from_json('{"items":[{"size":1,"role":"video"}]}')
    assert Plan.from_json('{"items":[{"source":"a","size":1,"role":"video"}]}').items[0].episodes == ()
