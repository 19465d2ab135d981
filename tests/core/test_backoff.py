"""Backoff arithmetic is capped before it is computed: no attempt count overflows it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.backoff import backoff

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
