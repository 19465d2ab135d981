"""Recognizing again by itself after a metadata outage: the backoff and finding them after a restart."""

from __future__ import annotations

from jellybit.adapters.store import Store
from jellybit.core.models import NewDownload
from jellybit.core.reasons import reason
from jellybit.core.records import Plan, RecognitionDraft
from jellybit.core.states import Actor, State
from jellybit.engine.events import EventBus
from jellybit.engine.retries import OutageRecovery, OutageRetries
from jellybit.engine.serial import Serializer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_doubles_up_to_the_longest_and_clears() -> None:
    clock = Clock()
    retries = OutageRetries(10.0, 35.0, clock=clock)
    assert [retries.schedule("a") for _ in range(4)] == [10.0, 20.0, 35.0, 35.0]
    assert retries.due() == []
    clock.now += 35.0
    assert retries.due() == ["a"]
    retries.clear("a")
    assert retries.due() == []
    assert "a" not in retries
    assert retries.schedule("a") == 10.0             # a new outage starts from the first wait again


def test_many_failures_never_overflow() -> None:
    retries = OutageRetries(60.0, 3600.0, clock=Clock())
    delays = [retries.schedule("a") for _ in range(5000)]
    assert max(delays) == 3600.0


async def _in_review(store: Store, name: str, *codes: str) -> str:
    created = await store.create_download_if_no_active(NewDownload("magnet", name, name, ""))
    download_id = created.download.id
    for state in (State.DOWNLOADING, State.RECOGNIZING, State.REVIEW):
        await store.transition(download_id, state, reason="test", actor=Actor.WORKER)
    reasons = tuple(reason(code, code) for code in codes)
    await store.save_recognition(download_id, RecognitionDraft(None, name, None, Plan(), reasons=reasons))
    return download_id


async def test_after_a_restart_outage_reviews_are_due_at_once(store: Store) -> None:
    outage = await _in_review(store, "a", "provider_unavailable", "no_candidate")
    human = await _in_review(store, "b", "small_margin")
    retries = OutageRetries(60.0, 3600.0, clock=Clock())
    recovery = OutageRecovery(retries, store, Serializer(store, EventBus()))
    await recovery.resume()
    assert retries.due() == [outage]
    assert await recovery.run_due() == [outage]
    assert (await store.get_download(outage)).state is State.RECOGNIZING
    assert (await store.get_download(human)).state is State.REVIEW
    last = (await store.transitions(outage))[-1]
    assert last.actor.value == "worker"
    assert last.reason == "a metadata provider was unreachable; recognizing again"


async def test_a_download_a_human_moved_on_is_forgotten(store: Store) -> None:
    outage = await _in_review(store, "a", "provider_unavailable")
    retries = OutageRetries(0.0, 0.0, clock=Clock())
    recovery = OutageRecovery(retries, store, Serializer(store, EventBus()))
    retries.schedule(outage)
    await store.transition(outage, State.CANCELLED, reason="reject", actor=Actor.HUMAN)
    assert await recovery.run_due() == []
    assert outage not in retries
