"""The command API: validation before side effects, state guards, and each command's effect."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from jellybit import clock
from jellybit.core.records import Candidate, MediaType, Plan, PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.states import Actor, State, is_reactivation
from jellybit.engine.commands import retry_target
from jellybit.errors import (
    ConfirmationRequired,
    Conflict,
    InvalidArgument,
    InvalidSource,
    InvalidState,
    NotFound,
)
from jellybit.protocol import ApplyRequest
from tests.support.engine import Engine, EngineFactory
from tests.support.qbittorrent import QbittorrentInstance, magnet, seeded_torrent

UNKNOWN_ID = "01jbz9x8k4m3n2p1q0r9s8t7v6"
REVIEW_PATH = (State.DOWNLOADING, State.RECOGNIZING, State.REVIEW)
DONE_PATH = (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE)


async def walk(engine: Engine, download_id: str, *states: State) -> None:
    """Move a download through states with the real state machine."""
    for state in states:
        current = (await engine.store.get_download(download_id)).state
        await engine.worker.serial.change(download_id, state, reason="test", actor=Actor.WORKER,
                                          reactivate=is_reactivation(current, state))


async def in_review(engine: Engine, name: str = "Film") -> str:
    """A download in review with a stored recognition offering two candidates."""
    download_id = (await engine.commands.add(source=magnet(name=name))).download.id
    await walk(engine, download_id, State.DOWNLOADING, State.RECOGNIZING)
    draft = RecognitionDraft(
        MediaType.MOVIE, name, None, Plan((PlanItem(f"{name}/film.mkv", 100, Role.VIDEO),
                                           PlanItem(f"{name}/film.srt", 5, Role.SUBTITLE))),
        reasons=(Reason("no_match", "no confirmed match", blocking=True),),
        candidates=(Candidate("tmdb", "603", MediaType.MOVIE, "Test Movie", 1999),
                    Candidate("tmdb", "604", MediaType.MOVIE, "Test Movie Reloaded", 2003)),
    )
    await engine.store.save_recognition(download_id, draft)
    await walk(engine, download_id, State.REVIEW)
    return download_id


async def snapshot(engine: Engine, download_id: str) -> tuple[Any, ...]:
    """Everything a command could change about a download."""
    recognition = await engine.store.current_recognition(download_id)
    return (
        await engine.store.get_download(download_id),
        await engine.store.transitions(download_id),
        recognition.id if recognition else None,
        tuple(c.chosen for c in recognition.candidates) if recognition else (),
        await engine.store.hints(download_id),
        await engine.store.overrides(download_id),
    )


async def settle(engine: Engine, download_id: str, *states: State) -> None:
    """Wait for a stage task (no qBittorrent needed) to bring the download to a state."""
    for _ in range(400):
        if (await engine.store.get_download(download_id)).state in states:
            return
        await asyncio.sleep(0.01)
    pytest.fail(f"download did not reach {states}")


# ---------------------------------------------------------------- ids and states


@pytest.mark.parametrize("bad_id", ["nope", "", None, 42, UNKNOWN_ID, UNKNOWN_ID.upper() + "X"])
async def test_unknown_or_malformed_ids_are_not_found(make_engine: EngineFactory, bad_id: object) -> None:
    engine = await make_engine()
    commands = engine.commands
    calls = [commands.get(bad_id), commands.apply(bad_id), commands.refine(bad_id, hint="x"),
             commands.reject(bad_id), commands.defer(bad_id, hours=1), commands.undo(bad_id),
             commands.retry(bad_id), commands.cancel(bad_id), commands.relink(bad_id)]
    for call in calls:
        with pytest.raises(NotFound):
            await call


@pytest.mark.parametrize(("command", "kwargs"), [
    ("apply", {}), ("refine", {"hint": "season 2"}), ("reject", {}), ("defer", {"hours": 2}),
    ("undo", {}), ("relink", {}), ("retry", {}),
])
async def test_commands_in_the_wrong_state_are_refused_and_change_nothing(
    make_engine: EngineFactory, command: str, kwargs: dict[str, Any]
) -> None:
    engine = await make_engine()
    download_id = (await engine.commands.add(source=magnet())).download.id
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidState, match=f"^{command} is not possible in state queued$"):
        await getattr(engine.commands, command)(download_id, **kwargs)
    assert await snapshot(engine, download_id) == before


async def test_cancel_is_only_for_active_downloads(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = (await engine.commands.add(source=magnet())).download.id
    await engine.commands.cancel(download_id)
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidState, match="cancel is not possible in state cancelled"):
        await engine.commands.cancel(download_id)
    assert await snapshot(engine, download_id) == before


async def test_cancel_with_delete_data_needs_a_confirmation(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(ConfirmationRequired, match="confirm"):
        await engine.commands.cancel(download_id, delete_data=True)
    assert await snapshot(engine, download_id) == before
    cancelled = await engine.commands.cancel(download_id, confirm=True)   # confirm alone deletes nothing
    assert cancelled.state is State.CANCELLED
    assert (await engine.store.transitions(download_id))[-1].reason == "cancel"


async def test_cancel_with_delete_data_removes_the_torrent_and_its_data(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    seeded = seeded_torrent(qbittorrent.data_dir, "To.Delete", {"a.mkv": 20_000})
    added = await engine.commands.add(torrent=seeded.torrent)
    await engine.settle(added.download.id, State.REVIEW)
    cancelled = await engine.commands.cancel(added.download.id, delete_data=True, confirm=True)
    assert cancelled.state is State.CANCELLED
    assert (await engine.store.transitions(cancelled.id))[-1].reason.startswith("cancel: torrent and data")
    for _ in range(200):
        if not seeded.content.exists():
            break
        await asyncio.sleep(0.02)
    assert not seeded.content.exists()
    with qbittorrent.process.admin() as admin:
        assert admin.get("torrents/info").json() == []


async def test_cancel_with_delete_data_changes_nothing_while_qbittorrent_is_unreachable(
    make_engine: EngineFactory
) -> None:
    engine = await make_engine()          # points at a closed port
    download_id = await in_review(engine)
    before = await snapshot(engine, download_id)
    from jellybit.errors import AdapterError

    with pytest.raises(AdapterError, match="cannot connect"):
        await engine.commands.cancel(download_id, delete_data=True, confirm=True)
    assert await snapshot(engine, download_id) == before


# ---------------------------------------------------------------- review decisions


async def test_apply_stores_the_choice_and_lays_out_what_the_human_decided(
    make_engine: EngineFactory,
) -> None:
    engine = await make_engine(automatic=False)
    download_id = await in_review(engine)
    recognition = await engine.store.current_recognition(download_id)
    assert recognition is not None
    second = recognition.candidates[1]
    overrides = {"title": "Матрица", "year": 2003, "files": {"Film/film.mkv": {"role": "video"}}}
    applying = await engine.commands.apply(download_id, candidate_id=second.id.upper(), overrides=overrides)
    assert applying.state is State.APPLYING
    await settle(engine, download_id, State.DONE)

    assert await engine.store.overrides(download_id) == overrides
    request = engine.recognizer.requests[-1]
    assert (request.use_llm, request.chosen.id if request.chosen else None) == (False, second.id)
    assert [f.path for f in request.files] == ["Film/film.mkv", "Film/film.srt"]
    assert request.overrides == overrides
    current = await engine.store.current_recognition(download_id)
    assert current is not None
    assert (current.attempt_no, current.provider_id, current.title) == (2, "604", "Матрица")
    history = await engine.store.transitions(download_id)
    assert [(t.to_state, t.actor) for t in history[-2:]] == [(State.APPLYING, Actor.HUMAN),
                                                             (State.DONE, Actor.WORKER)]
    assert engine.done == [download_id]


async def test_apply_over_mqtt_accepts_a_pinned_subtitle_language_and_flags(
    make_engine: EngineFactory,
) -> None:
    engine = await make_engine(automatic=False)
    download_id = await in_review(engine)
    # the same path as the MQTT handler: the wire model, then the command's own validation
    wire = ApplyRequest.model_validate({"id": download_id, "overrides": {"files": {
        "Film/film.srt": {"language": "pt-BR", "flags": ["forced", "sdh"]}}}})
    assert wire.overrides is not None
    await engine.commands.apply(download_id, overrides=wire.overrides.model_dump(exclude_none=True))
    await settle(engine, download_id, State.DONE)
    pinned = {"files": {"Film/film.srt": {"episodes": [], "language": "pt-BR", "flags": ["forced", "sdh"]}}}
    assert await engine.store.overrides(download_id) == pinned
    assert engine.recognizer.requests[-1].overrides == pinned
    with pytest.raises(ValueError, match="language"):
        ApplyRequest.model_validate({"id": download_id, "overrides": {"files": {"x": {"language": "../en"}}}})


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"candidate_id": UNKNOWN_ID}, NotFound, "unknown candidate"),
    ({"candidate_id": "not-an-id"}, NotFound, "unknown candidate"),
    ({"overrides": {"year": "1999"}}, InvalidArgument, "overrides.year"),
    ({"overrides": {"colour": "blue"}}, InvalidArgument, "overrides.colour: unknown field"),
    ({"overrides": {"media_type": "podcast"}}, InvalidArgument, "overrides.media_type"),
    ({"overrides": {"title": "\x00\x01 "}}, InvalidArgument, "must not be empty"),
    ({"overrides": {"files": {"../../etc/passwd": {"season": 1}}}}, InvalidArgument, "not in the torrent"),
    ({"overrides": {"files": {"Film/film.mkv": {"episodes": [1], "extra": 1}}}}, InvalidArgument,
     "unknown field"),
    ({"overrides": ["title"]}, InvalidArgument, "must be an object"),
    ({"overrides": {"files": {"Film/film.srt": {"language": "english!"}}}}, InvalidArgument,
     "overrides.files.Film/film.srt.language"),
    ({"overrides": {"files": {"Film/film.srt": {"flags": ["loud"]}}}}, InvalidArgument,
     "overrides.files.Film/film.srt.flags"),
])
async def test_apply_with_bad_arguments_changes_nothing(
    make_engine: EngineFactory, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(error, match=message):
        await engine.commands.apply(download_id, **kwargs)
    assert await snapshot(engine, download_id) == before
    assert engine.recognizer.requests == []


async def test_a_candidate_of_another_download_is_refused(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    first = await in_review(engine, "First")
    second = await in_review(engine, "Second")
    foreign = (await engine.store.current_recognition(second))
    assert foreign is not None
    with pytest.raises(NotFound, match="unknown candidate"):
        await engine.commands.apply(first, candidate_id=foreign.candidates[0].id)


async def test_refine_keeps_the_hint_and_recognizes_again(
    make_engine: EngineFactory, qbittorrent: QbittorrentInstance
) -> None:
    engine = await make_engine(qbittorrent.config(), automatic=False)
    seeded = seeded_torrent(qbittorrent.data_dir, "Refine.Me", {"a.mkv": 20_000})
    download_id = (await engine.commands.add(torrent=seeded.torrent)).download.id
    await engine.settle(download_id, State.REVIEW)
    with pytest.raises(InvalidArgument, match="the hint must not be empty"):
        await engine.commands.refine(download_id, hint="  \n ")
    with pytest.raises(InvalidArgument, match="longer than 2000"):
        await engine.commands.refine(download_id, hint="x" * 2001)
    refined = await engine.commands.refine(download_id, hint="это второй сезон")
    assert refined.state is State.RECOGNIZING
    await engine.settle(download_id, State.REVIEW)
    assert engine.recognizer.requests[-1].hints == ("это второй сезон",)
    assert [h.text for h in await engine.store.hints(download_id)] == ["это второй сезон"]
    assert [t.to_state for t in await engine.store.transitions(download_id)][-3:] == [
        State.REVIEW, State.RECOGNIZING, State.REVIEW]


async def test_reject_cancels_with_the_reason(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    rejected = await engine.commands.reject(download_id, reason="wrong dub")
    assert rejected.state is State.CANCELLED
    assert (await engine.store.transitions(download_id))[-1].reason == "reject: wrong dub"


async def test_defer_keeps_review_and_leaves_the_queue(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    await in_review(engine, "Other")
    assert (await engine.commands.summary()).review_queue == 2
    deferred = await engine.commands.defer(download_id, hours=2)
    assert deferred.state is State.REVIEW
    assert deferred.defer_until is not None
    moment = clock.parse_time(deferred.defer_until) - clock.utcnow()
    assert timedelta(hours=1, minutes=59) < moment <= timedelta(hours=2)
    summary = await engine.commands.summary()
    assert (summary.in_review, summary.review_queue) == (2, 1)
    later = clock.format_time(clock.utcnow() + timedelta(days=3))
    assert (await engine.commands.defer(download_id, until=later)).defer_until == later


@pytest.mark.parametrize("kwargs", [
    {}, {"hours": 1, "until": "2099-01-01T00:00:00Z"}, {"hours": 0}, {"hours": -1}, {"hours": "2"},
    {"hours": True}, {"hours": 10_000}, {"until": "2000-01-01T00:00:00Z"}, {"until": "tomorrow"},
    {"until": "2099-01-01T00:00:00"},
])
async def test_defer_with_bad_arguments_changes_nothing(make_engine: EngineFactory,
                                                        kwargs: dict[str, Any]) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    before = await snapshot(engine, download_id)
    with pytest.raises(InvalidArgument):
        await engine.commands.defer(download_id, **kwargs)
    assert await snapshot(engine, download_id) == before


# ---------------------------------------------------------------- after layout


async def test_undo_reverts_only_when_the_layouter_says_complete(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = (await engine.commands.add(source=magnet())).download.id
    await walk(engine, download_id, *DONE_PATH)
    engine.layouter.undo_complete = False
    partial = await engine.commands.undo(download_id)
    assert (partial.complete, partial.download.state) == (False, State.DONE)
    assert partial.refused == (("/lib/a.mkv", "last copy"),)
    engine.layouter.undo_complete = True
    undone = await engine.commands.undo(download_id)
    assert (undone.complete, undone.download.state, undone.removed) == (True, State.REVERTED, ("/lib/a.mkv",))
    assert engine.layouter.undone == [download_id, download_id]


async def test_relink_lays_a_target_missing_download_out_again(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    await walk(engine, download_id, State.APPLYING, State.DONE, State.TARGET_MISSING)
    relinked = await engine.commands.relink(download_id)
    assert relinked.state is State.APPLYING
    await settle(engine, download_id, State.DONE)
    assert [t.to_state for t in await engine.store.transitions(download_id)][-3:] == [
        State.TARGET_MISSING, State.APPLYING, State.DONE]


# ---------------------------------------------------------------- retry


async def test_retry_is_refused_while_another_active_download_owns_the_hash(
    make_engine: EngineFactory,
) -> None:
    engine = await make_engine()
    link = magnet(name="Shared")
    first = (await engine.commands.add(source=link)).download.id
    await engine.commands.cancel(first)
    second = await engine.commands.add(source=link)
    assert second.created
    assert second.settled_before == (first,)
    before = await snapshot(engine, first)
    with pytest.raises(Conflict, match=second.download.id):
        await engine.commands.retry(first)
    assert await snapshot(engine, first) == before
    await engine.commands.cancel(second.download.id)
    assert (await engine.commands.retry(first)).state is State.QUEUED


@pytest.mark.parametrize(("path", "expected"), [
    ((State.FAILED,), State.QUEUED),                                               # qBittorrent refused it
    ((State.DOWNLOADING, State.FAILED), State.QUEUED),                             # stalled, missing, ...
    ((State.DOWNLOADING, State.RECOGNIZING, State.FAILED), State.RECOGNIZING),
    ((*REVIEW_PATH, State.CANCELLED), State.RECOGNIZING),                          # rejected
    ((State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.FAILED), State.APPLYING),  # layout_io
    ((State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.CANCELLED), State.RECOGNIZING),
    ((*DONE_PATH, State.REVERTED), State.APPLYING),                                # undone
])
async def test_retry_resumes_where_the_download_stopped(
    make_engine: EngineFactory, path: tuple[State, ...], expected: State
) -> None:
    engine = await make_engine()
    download_id = (await engine.commands.add(source=magnet())).download.id
    await walk(engine, download_id, *path)
    await engine.store.update_download(download_id, error_code="x", error_msg="y")
    retried = await engine.commands.retry(download_id)
    assert retried.state is expected
    assert (retried.error_code, retried.error_msg, retried.source_miss_count) == (None, None, 0)
    assert retried.retried_at is not None
    assert (await engine.store.transitions(download_id))[-1].reason == "retry"


def test_retry_target_falls_back_to_what_the_table_allows() -> None:
    assert retry_target(State.CANCELLED, State.APPLYING) is State.RECOGNIZING
    assert retry_target(State.REVERTED, State.DONE) is State.APPLYING
    assert retry_target(State.FAILED, None) is State.QUEUED
    with pytest.raises(InvalidState):
        retry_target(State.DONE, State.APPLYING)


# ---------------------------------------------------------------- reading


async def test_get_returns_the_whole_detail(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    await engine.store.add_hint(download_id, "Danish version")
    await engine.store.set_overrides(download_id, {"year": 2007})
    detail = await engine.commands.get(download_id.upper())
    assert detail.download.id == download_id
    assert [t.to_state for t in detail.transitions] == [State.QUEUED, *REVIEW_PATH]
    assert detail.recognition is not None
    assert [c.provider_id for c in detail.recognition.candidates] == ["603", "604"]
    assert [h.text for h in detail.hints] == ["Danish version"]
    assert detail.overrides == {"year": 2007}
    assert detail.links == ()


async def test_list_filters_pages_and_counts(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    ids = [(await engine.commands.add(source=magnet(name=f"Show {i}"))).download.id for i in range(5)]
    await engine.commands.cancel(ids[0])
    page = await engine.commands.list(limit=2)
    assert ([d.id for d in page.items], page.total) == ([ids[4], ids[3]], 5)
    page = await engine.commands.list(limit=2, offset=4)
    assert ([d.id for d in page.items], page.total) == ([ids[0]], 5)
    queued = await engine.commands.list(states=["queued"])
    assert queued.total == 4
    found = await engine.commands.list(text="show 3")
    assert [d.id for d in found.items] == [ids[3]]
    assert (await engine.commands.list(states=[])).total == 0


async def test_get_list_and_summary_each_read_the_database_once(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    for _ in range(3):
        await engine.commands.add(source=magnet())
    reads = engine.store.reader.trips
    await engine.commands.get(download_id)
    page = await engine.commands.list(limit=50)
    await engine.commands.summary()
    assert engine.store.reader.trips == reads + 3
    assert page.total == 4
    headline, full = page.headlines[download_id], await engine.store.current_recognition(download_id)
    assert full is not None
    assert (headline.id, headline.title, headline.year) == (full.id, full.title, full.year)
    walked, after = [], None
    while True:
        keyset = await engine.commands.list(limit=1, after=after)
        if not keyset.items:
            break
        walked.extend(d.id for d in keyset.items)
        after = keyset.items[-1].id
    assert walked == [d.id for d in page.items]


@pytest.mark.parametrize("kwargs", [
    {"states": ["sleeping"]}, {"limit": 0}, {"limit": 501}, {"limit": "10"}, {"offset": -1},
    {"text": "x" * 201},
])
async def test_list_with_bad_arguments_is_refused(make_engine: EngineFactory, kwargs: dict[str, Any]) -> None:
    engine = await make_engine()
    with pytest.raises(InvalidArgument):
        await engine.commands.list(**kwargs)
    with pytest.raises(InvalidArgument):
        await engine.commands.list_rows(**kwargs)


async def test_summary_counts_every_state(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    await in_review(engine)
    download_id = (await engine.commands.add(source=magnet())).download.id
    await walk(engine, download_id, State.DOWNLOADING)
    summary = await engine.commands.summary()
    assert set(summary.states) == {s.value for s in State}
    assert (summary.states["review"], summary.states["downloading"], summary.states["done"]) == (1, 1, 0)
    assert (summary.active, summary.downloading, summary.in_review, summary.failed) == (2, 1, 1, 0)


async def test_status_shows_qbittorrent_health(make_engine: EngineFactory,
                                               qbittorrent: QbittorrentInstance) -> None:
    down = await make_engine()
    assert (await down.commands.status()).qbittorrent.reachable is None
    await down.worker.poll_once()
    status = await down.commands.status()
    assert status.qbittorrent.reachable is False
    assert "cannot connect" in (status.qbittorrent.error or "")
    up = await make_engine(qbittorrent.config())
    await up.worker.poll_once()
    status = await up.commands.status()
    assert (status.qbittorrent.reachable, status.qbittorrent.version) == (True, "v4.5.2")
    assert status.qbittorrent.api_version is not None


async def test_add_refuses_bad_sources_and_creates_nothing(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    with pytest.raises(InvalidSource):
        await engine.commands.add(source="magnet:?xt=urn:btih:nothex")
    with pytest.raises(InvalidSource):
        await engine.commands.add(torrent=b"not a torrent")
    with pytest.raises(InvalidArgument):
        await engine.commands.add()
    assert await engine.store.count_downloads() == 0


# ---------------------------------------------------------------- delete a title


@pytest.mark.parametrize(("args", "kwargs", "error"), [
    (("netflix", "1"), {}, InvalidArgument),
    (("tmdb", ""), {}, InvalidArgument),
    (("tmdb", "x" * 33), {}, InvalidArgument),
    (("tmdb", "603"), {"delete_torrents": True}, ConfirmationRequired),
    (("tmdb", "603"), {}, NotFound),
])
async def test_delete_title_checks_its_arguments_first(
    make_engine: EngineFactory, tmp_path: Path, args: tuple[str, str], kwargs: dict[str, Any],
    error: type[Exception]
) -> None:
    engine = await make_engine()
    with pytest.raises(error):
        await engine.commands.delete_title(*args, **kwargs)


# ---------------------------------------------------------------- serialization with the stages


async def test_a_command_waits_for_a_running_layout_of_the_same_download(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    engine.layouter.gate = asyncio.Event()
    await engine.commands.apply(download_id)
    await asyncio.wait_for(engine.layouter.entered.wait(), 5)   # the layout holds the download
    cancel = asyncio.create_task(engine.commands.cancel(download_id))
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(asyncio.shield(cancel), 0.3)
    assert (await engine.store.get_download(download_id)).state is State.APPLYING
    engine.layouter.gate.set()
    with pytest.raises(InvalidState, match="cancel is not possible in state done"):
        await asyncio.wait_for(cancel, 5)
    assert [t.to_state for t in await engine.store.transitions(download_id)][-2:] == [State.APPLYING,
                                                                                      State.DONE]


async def test_a_cancel_during_recognition_discards_its_result(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    download_id = await in_review(engine)
    engine.recognizer.gate = asyncio.Event()
    await engine.commands.apply(download_id)       # re-recognition without the LLM runs first
    await asyncio.wait_for(engine.recognizer.entered.wait(), 5)
    # The recognizer runs outside the lock: a cancel does not have to wait for it ...
    cancelled = await asyncio.wait_for(engine.commands.cancel(download_id), 5)
    assert cancelled.state is State.CANCELLED
    engine.recognizer.gate.set()
    await asyncio.wait_for(engine.worker.serial.wait_stage(download_id), 5)
    # ... and the stale result is thrown away: nothing stored, nothing laid out.
    assert (await engine.store.get_download(download_id)).state is State.CANCELLED
    current = await engine.store.current_recognition(download_id)
    assert current is not None
    assert current.attempt_no == 1
    assert engine.layouter.applied == []
