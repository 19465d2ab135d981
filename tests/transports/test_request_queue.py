"""The request queue: bounded per key and in total, a few jobs at a time, keys take turns."""

from __future__ import annotations

import asyncio

from jellybit.transports.request_queue import RequestQueue


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
