"""Backoff arithmetic is capped before it is computed: no attempt count overflows it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.backoff import ReconnectPacer, backoff

delays = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False)


def test_doubles_from_the_first_delay_up_to_the_ceiling() -> None:
    assert [backoff(2.0, n, 60.0) for n in range(1, 8)] == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert backoff(2.0, 0, 60.0) == 2.0


@given(first=delays, longest=delays, attempt=st.integers(min_value=-10, max_value=10**30))
def test_any_attempt_count_gives_a_bounded_delay(first: float, longest: float, attempt: int) -> None:
    delay = backoff(first, attempt, longest)
    assert 0.0 <= delay <= longest
    assert delay >= min(first, longest)


@given(first=delays, longest=delays, attempt=st.integers(min_value=1, max_value=10**6))
def test_never_shrinks_as_failures_grow(first: float, longest: float, attempt: int) -> None:
    assert backoff(first, attempt + 1, longest) >= backoff(first, attempt, longest)


def test_the_count_that_killed_the_worker_is_harmless() -> None:
    # 1,025 failures made `2.0 * 2 ** 1024` overflow before the cap was applied.
    assert backoff(2.0, 1_025, 60.0) == 60.0
    assert backoff(2.0, 10**9, 60.0) == 60.0


def test_a_reconnect_is_tried_soon_then_at_a_share_of_the_outage_up_to_the_ceiling() -> None:
    pacer = ReconnectPacer(first=0.1, longest=30.0, share=0.05)
    pacer.down(100.0)
    assert pacer.delay(100.0) == 0.1
    assert pacer.delay(104.0) == 0.2
    assert pacer.delay(110.0) == 0.5            # a 10 s broker restart: tried every half second
    assert pacer.delay(100.0 + 3600) == 30.0


def test_a_connection_that_held_starts_the_next_outage_from_scratch() -> None:
    pacer = ReconnectPacer(first=0.1, longest=30.0, settle=5.0)
    pacer.down(0.0)
    pacer.up(200.0)
    pacer.down(260.0)                           # it held a minute: a new outage
    assert pacer.delay(260.0) == 0.1


def test_a_connection_dropped_at_once_does_not_restart_the_clock() -> None:
    """A broker that accepts and drops at once (a session taken over) is not hammered."""
    pacer = ReconnectPacer(first=0.1, longest=30.0, settle=5.0)
    pacer.down(0.0)
    for t in range(10, 200, 10):
        pacer.up(float(t))
        pacer.down(t + 0.5)
    assert pacer.delay(190.5) >= 9.0


@given(events=st.lists(st.tuples(st.booleans(), st.floats(min_value=0, max_value=1e6)), max_size=30),
       now=st.floats(min_value=0, max_value=2e6))
def test_any_history_gives_a_delay_between_first_and_longest(events: list[tuple[bool, float]],
                                                            now: float) -> None:
    pacer = ReconnectPacer(first=0.1, longest=30.0)
    for up, at in events:
        (pacer.up if up else pacer.down)(at)
    assert 0.1 <= pacer.delay(now) <= 30.0
