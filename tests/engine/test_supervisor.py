"""The supervisor restarts crashed loops with capped backoff, reports faults, and gives up at last."""

from __future__ import annotations

import asyncio

import pytest

from jellybit.engine.supervisor import Fault, GaveUp, Supervisor


async def wait_until(predicate, within: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + within
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.005)


async def test_a_crashed_loop_is_restarted_and_its_fault_published() -> None:
    faults: list[Fault] = []
    runs: list[int] = []
    supervisor = Supervisor(notify=faults.append, first_backoff=0.001, max_backoff=0.01, max_crashes=5)

    async def flaky() -> None:
        runs.append(len(runs))
        if len(runs) <= 2:
            raise RuntimeError(f"boom {len(runs)}")
        await asyncio.Event().wait()           # the third run stays up

    supervisor.supervise("poll", flaky)
    await wait_until(lambda: len(runs) == 3)
    health = supervisor.status()["poll"]
    assert health.running
    assert health.restarts == 2
    assert health.error == "RuntimeError: boom 2"
    assert health.failed_at is not None
    assert [f.error for f in faults] == ["RuntimeError: boom 1", "RuntimeError: boom 2"]
    await supervisor.stop()
    assert not supervisor.status()["poll"].running


async def test_a_loop_that_returns_by_itself_is_a_crash_but_not_when_stopping() -> None:
    runs = 0
    supervisor = Supervisor(first_backoff=0.001, max_backoff=0.001, max_crashes=100)

    async def returns() -> None:
        nonlocal runs
        runs += 1
        await asyncio.sleep(0.001)

    supervisor.supervise("mqtt", returns)
    await wait_until(lambda: runs >= 3)
    assert "ended by itself" in (supervisor.status()["mqtt"].error or "")
    supervisor.stopping()
    task = supervisor.task("mqtt")
    assert task is not None
    await asyncio.wait_for(task, 5)           # the next normal return ends it
    assert task.exception() is None


async def test_it_gives_up_after_repeated_crashes_so_the_process_can_exit_non_zero() -> None:
    supervisor = Supervisor(first_backoff=0.001, max_backoff=0.002, max_crashes=4)

    async def broken() -> None:
        raise OSError("database disk image is malformed")

    supervisor.supervise("poll", broken)
    with pytest.raises(GaveUp) as caught:
        await asyncio.wait_for(supervisor.wait(), 5)
    assert caught.value.component == "poll"
    assert "malformed" in str(caught.value)
    assert supervisor.status()["poll"].restarts == 3
    await supervisor.stop()


async def test_a_restarted_loop_that_stays_up_counts_as_recovered() -> None:
    faults: list[Fault] = []
    supervisor = Supervisor(notify=faults.append, first_backoff=0.001, max_backoff=0.001, stable_after=0.05)
    runs = 0

    async def once_broken() -> None:
        nonlocal runs
        runs += 1
        if runs == 1:
            raise ValueError("first run fails")
        await asyncio.Event().wait()

    supervisor.supervise("mqtt-updates", once_broken)
    await wait_until(lambda: supervisor.status()["mqtt-updates"].error is None and runs == 2)
    assert [f.error for f in faults] == ["ValueError: first run fails", None]
    await supervisor.stop()


async def test_reported_faults_show_once_and_recover_once() -> None:
    faults: list[Fault] = []
    supervisor = Supervisor(notify=faults.append)
    for _ in range(3):
        supervisor.report("poll", RuntimeError("database is locked"))
    assert supervisor.status()["poll"].error == "RuntimeError: database is locked"
    assert supervisor.status()["poll"].faults == 3
    supervisor.report("poll", None)
    supervisor.report("poll", None)
    assert supervisor.status()["poll"].error is None
    assert [f.error for f in faults] == ["RuntimeError: database is locked", None]
