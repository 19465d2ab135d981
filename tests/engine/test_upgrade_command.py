"""The `upgrade` command: a review's better-copy question answered (keep both, replace, skip)."""

from __future__ import annotations

import pytest

from jellybit.core.records import MediaType, Plan, PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.states import State
from jellybit.errors import InvalidArgument, InvalidState, NotFound
from tests.engine.test_commands import UNKNOWN_ID, in_review, snapshot
from tests.support.engine import EngineFactory

HELD_NOTE = "already in your library as 1080p WEB-DL from Film.1080p, laid out 2026-11-05"


async def held_review(engine, name: str = "Film") -> str:
    """A download in review whose video is held by another download's copy of the film."""
    download_id = await in_review(engine, name)
    draft = RecognitionDraft(
        MediaType.MOVIE, name, 1999, Plan((PlanItem(f"{name}/film.mkv", 100, Role.VIDEO, library="movies",
                                                    target="Film (1999)/Film (1999).mkv", status="held",
                                                    note=HELD_NOTE),)),
        reasons=(Reason("better_copy", HELD_NOTE, blocking=True),), provider="tmdb", provider_id="603")
    await engine.store.save_recognition(download_id, draft)
    return download_id


@pytest.mark.parametrize("choice", ["keep_both", "replace", "skip"])
async def test_upgrade_pins_the_choice_and_lays_out(make_engine: EngineFactory, choice: str) -> None:
    engine = await make_engine()
    download_id = await held_review(engine)
    download = await engine.commands.upgrade(download_id, choice=choice)
    assert download.state is State.APPLYING
    assert (await engine.store.overrides(download_id))["upgrade"] == choice
    history = await engine.store.transitions(download_id)
    assert [(t.to_state, t.reason, t.actor.value) for t in history if t.reason.startswith("upgrade")] == [
        (State.APPLYING, f"upgrade: {choice}", "human")]


async def test_upgrade_is_refused_without_a_question_and_changes_nothing(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidArgument, match="asks nothing about a copy already in the library"):
        await engine.commands.upgrade(download_id, choice="replace")
    assert await snapshot(engine, download_id) == before


@pytest.mark.parametrize("choice", ["overwrite", "", None, 3, "KEEP_BOTH"])
async def test_upgrade_with_a_bad_choice_changes_nothing(make_engine: EngineFactory, choice: object) -> None:
    engine = await make_engine()
    download_id = await held_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidArgument, match="'choice' must be one of keep_both, replace, skip"):
        await engine.commands.upgrade(download_id, choice=choice)
    assert await snapshot(engine, download_id) == before


async def test_upgrade_outside_review_and_for_unknown_ids(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await held_review(engine)
    await engine.commands.reject(download_id)
    with pytest.raises(InvalidState, match="upgrade is not possible in state cancelled"):
        await engine.commands.upgrade(download_id, choice="skip")
    with pytest.raises(NotFound):
        await engine.commands.upgrade(UNKNOWN_ID, choice="skip")


async def test_a_plain_apply_of_a_held_review_asks_for_the_choice(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await held_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidArgument, match="choose keep_both, replace or skip"):
        await engine.commands.apply(download_id)
    assert await snapshot(engine, download_id) == before
    applied = await engine.commands.apply(download_id, overrides={"upgrade": "skip"})
    assert applied.state is State.APPLYING
    assert (await engine.store.overrides(download_id))["upgrade"] == "skip"
