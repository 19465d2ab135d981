"""Store: recognition attempts with candidates, the chosen candidate, hints and overrides."""

from __future__ import annotations

import sqlite3

import pytest

from jellybit.adapters.store import Store
from jellybit.core.models import NewDownload
from jellybit.core.records import (
    Candidate,
    MediaType,
    Plan,
    PlanItem,
    Reason,
    RecognitionDraft,
    Recommendation,
    Role,
)
from jellybit.errors import NotFound

UNKNOWN = "01jbz9x8k4m3n2p1q0r9s8t7v6"


async def download(store: Store, name: str = "x") -> str:
    return (await store.create_download_if_no_active(NewDownload("magnet", name, name, ""))).download.id


def draft(title: str, *candidates: Candidate) -> RecognitionDraft:
    plan = Plan((PlanItem("Бригада/S01E01.mkv", 1000, Role.VIDEO, season=1, episodes=(1,),
                          library="series", target="Бригада (2002)/Season 01/Бригада S01E01.mkv"),),
                folder="Бригада (2002)")
    return RecognitionDraft(
        MediaType.SERIES, title, 2002, plan, original_title="Brigada", provider="tvdb", provider_id="7",
        confidence=0.8, recommendation=Recommendation.MEDIUM, raw_llm='{"title": "Бригада"}',
        reasons=(Reason("low_margin", "two close candidates", 0.2, blocking=True),), candidates=candidates,
    )


async def test_each_saved_draft_becomes_the_current_attempt(store: Store) -> None:
    download_id = await download(store)
    assert await store.current_recognition(download_id) is None
    first = await store.save_recognition(download_id, draft("Бригада", Candidate(
        "tvdb", "7", MediaType.SERIES, "Бригада", 2002, details={"seasons": {"1": 15}}, chosen=True)))
    second = await store.save_recognition(download_id, draft("Brigada"))
    assert (first.attempt_no, second.attempt_no) == (1, 2)
    current = await store.current_recognition(download_id)
    assert current == second
    assert current.is_current
    history = await store.recognitions(download_id)
    assert [(r.attempt_no, r.is_current) for r in history] == [(1, False), (2, True)]
    kept = history[0]
    assert kept.plan == first.plan            # the plan JSON round-trips exactly
    assert kept.reasons == (Reason("low_margin", "two close candidates", 0.2, blocking=True),)
    (candidate,) = kept.candidates
    assert candidate.id
    assert (candidate.title, candidate.details, candidate.chosen) == ("Бригада", {"seasons": {"1": 15}}, True)
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM recognition WHERE download_id = ? AND is_current = 1",
                            (download_id,)).fetchone() == (1,)


async def test_choosing_marks_exactly_one_candidate_of_the_current_attempt(store: Store) -> None:
    download_id = await download(store)
    old = await store.save_recognition(download_id, draft("a", Candidate("tvdb", "1", None, "Old")))
    offered = (Candidate("tvdb", "2", None, "Two", chosen=True), Candidate("tvdb", "3", None, "Three"))
    current = await store.save_recognition(download_id, draft("b", *offered))
    chosen = await store.choose_candidate(download_id, current.candidates[1].id or "")
    assert chosen.provider_id == "3"
    again = await store.current_recognition(download_id)
    assert again is not None
    assert [c.chosen for c in again.candidates] == [False, True]
    with pytest.raises(NotFound):        # a candidate of an older attempt is not offered any more
        await store.choose_candidate(download_id, old.candidates[0].id or "")
    other = await download(store, "other")
    with pytest.raises(NotFound):
        await store.choose_candidate(other, current.candidates[0].id or "")


async def test_hints_and_overrides(store: Store) -> None:
    download_id = await download(store)
    await store.add_hint(download_id, "second season")
    await store.add_hint(download_id, "датская версия")
    assert [h.text for h in await store.hints(download_id)] == ["second season", "датская версия"]
    await store.set_overrides(download_id, {"title": "Forbrydelsen", "year": 2007,
                                            "files": {"a.mkv": {"season": 2, "episodes": [1, 2]}}})
    pinned = await store.set_overrides(download_id, {"year": 2008, "title": None})   # None unpins
    assert pinned == {"year": 2008, "files": {"a.mkv": {"season": 2, "episodes": [1, 2]}}}
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM override WHERE download_id = ? AND field = 'year'",
                            (download_id,)).fetchone() == (1,)


async def test_unknown_downloads_are_not_found_and_nothing_is_written(store: Store) -> None:
    for call in (store.save_recognition(UNKNOWN, draft("x")), store.add_hint(UNKNOWN, "x"),
                 store.set_overrides(UNKNOWN, {"year": 2000})):
        with pytest.raises(NotFound):
            await call
    with sqlite3.connect(store.path) as conn:
        for table in ("recognition", "hint", "override"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone() == (0,)


async def test_current_recognitions_of_many_downloads_in_one_call(store: Store) -> None:
    ids = [await download(store, n) for n in ("a", "b", "c")]
    await store.save_recognition(ids[0], draft("Old"))
    await store.save_recognition(ids[0], draft("New"))
    await store.save_recognition(ids[1], draft("Other"))
    found = await store.current_recognitions([*ids, UNKNOWN])
    assert set(found) == {ids[0], ids[1]}
    assert found[ids[0]].title == "New"
    assert found[ids[1]].title == "Other"
    assert found[ids[0]].candidates == ()
    assert await store.current_recognitions([]) == {}
