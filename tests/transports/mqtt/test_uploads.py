"""The large-request budget: admitted as they are read, counted until answered, one running at a time."""

from __future__ import annotations

import asyncio

from jellybit.transports.mqtt.uploads import Uploads

MIB = 1 << 20


def test_small_requests_are_never_counted() -> None:
    uploads = Uploads(threshold=MIB, budget=4 * MIB)
    assert all(uploads.admit(MIB - 1) for _ in range(100))
    assert uploads.pending == 0


def test_past_the_budget_a_large_request_is_dropped_but_one_alone_always_fits() -> None:
    uploads = Uploads(threshold=MIB, budget=4 * MIB)
    assert uploads.admit(10 * MIB)               # alone: admitted whatever its size
    assert not uploads.admit(MIB)                # nothing more while it is held
    uploads.taken(10 * MIB, queued=True)
    assert not uploads.admit(MIB)
    asyncio.run(uploads.run(10 * MIB, _nothing))
    assert uploads.held == 0
    assert uploads.admit(2 * MIB)
    assert uploads.admit(2 * MIB)                # 4 MiB: exactly the budget
    assert not uploads.admit(MIB)


def test_a_request_refused_by_the_queue_and_a_lost_connection_release_their_bytes() -> None:
    uploads = Uploads(threshold=MIB, budget=4 * MIB)
    assert uploads.admit(3 * MIB)
    uploads.taken(3 * MIB, queued=False)         # the request queue said busy: not held
    assert (uploads.pending, uploads.held) == (0, 0)
    assert uploads.admit(3 * MIB)
    uploads.reconnected()                        # read, then the connection dropped before it was taken
    assert uploads.admit(3 * MIB)


def test_held_requests_run_one_at_a_time() -> None:
    uploads = Uploads(threshold=MIB, budget=64 * MIB)
    running: list[int] = []
    most = 0

    async def answer() -> None:
        nonlocal most
        running.append(1)
        most = max(most, len(running))
        await asyncio.sleep(0.01)
        running.pop()

    async def scenario() -> None:
        for _ in range(5):
            assert uploads.admit(2 * MIB)
            uploads.taken(2 * MIB, queued=True)
        await asyncio.gather(*(uploads.run(2 * MIB, answer) for _ in range(5)))

    asyncio.run(scenario())
    assert most == 1
    assert uploads.held == 0


async def _nothing() -> None:
    return None
