"""The request queue: bounded per key and in total, a few jobs at a time, keys take turns."""

from __future__ import annotations

import asyncio

from jellybit.transports.mqtt.request_queue import RequestQueue


async def test_past_the_per_key_bound_submit_says_no() -> None:
    queue = RequestQueue(workers=1, per_key=3, total=100)
    gate = asyncio.Event()

    async def blocked() -> None:
        await gate.wait()

    assert [queue.submit("a", blocked) for _ in range(5)] == [True, True, True, False, False]
    assert queue.submit("b", blocked)           # another client still gets in
    assert len(queue) == 4
    queue.start()
    gate.set()
    await asyncio.wait_for(queue.join(), 10)
    assert queue.submit("a", blocked)           # room again once the jobs ran
    await queue.stop()


async def test_the_total_bound_holds_across_keys() -> None:
    queue = RequestQueue(workers=1, per_key=10, total=4)
    accepted = [queue.submit(f"k{i}", asyncio.sleep) for i in range(6)]  # type: ignore[arg-type]
    assert accepted == [True] * 4 + [False] * 2
    await queue.stop()


async def test_keys_take_turns_so_a_flood_does_not_starve_another_client() -> None:
    queue = RequestQueue(workers=1, per_key=50, total=100)
    order: list[str] = []

    def job(name: str):  # type: ignore[no-untyped-def]
        async def run() -> None:
            order.append(name)
        return run

    for i in range(20):
        queue.submit("flood", job(f"flood-{i}"))
    queue.submit("other", job("other"))
    queue.start()
    await asyncio.wait_for(queue.join(), 10)
    assert order.index("other") <= 1
    await queue.stop()


async def test_at_most_workers_jobs_run_at_once_and_a_failing_job_kills_no_worker() -> None:
    queue = RequestQueue(workers=3, per_key=100, total=100)
    running = peak = done = 0

    async def job() -> None:
        nonlocal running, peak, done
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.002)
        running -= 1
        done += 1
        if done % 2:
            raise RuntimeError("a job failed")

    for i in range(30):
        queue.submit(f"k{i % 7}", job)
    queue.start()
    await asyncio.wait_for(queue.join(), 10)
    assert done == 30
    assert peak == 3
    await queue.stop()


async def test_one_key_never_takes_more_than_half_the_workers() -> None:
    queue = RequestQueue(workers=4, per_key=50, total=100)
    gate = asyncio.Event()
    running: dict[str, int] = {"slow": 0}
    peak = 0
    other_ran = asyncio.Event()

    async def slow() -> None:
        nonlocal peak
        running["slow"] += 1
        peak = max(peak, running["slow"])
        await gate.wait()
        running["slow"] -= 1

    async def other() -> None:
        other_ran.set()

    for _ in range(10):
        queue.submit("uploads", slow)
    queue.start()
    await asyncio.sleep(0.01)
    queue.submit("someone else", other)
    await asyncio.wait_for(other_ran.wait(), 5)      # runs while the uploads still hold their workers
    assert peak == 2
    gate.set()
    await asyncio.wait_for(queue.join(), 10)
    await queue.stop()
