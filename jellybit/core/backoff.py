"""Exponential backoff whose arithmetic is capped before it is computed (it never overflows)."""

from __future__ import annotations

# 2 ** 60 times any sane first delay is far beyond every ceiling; the exponent stops there.
MAX_EXPONENT = 60


def backoff(first: float, attempt: int, longest: float) -> float:
    """The wait before retry number `attempt` (1 = the first retry): `first` doubling, at most `longest`.

    The exponent is clamped before the power is taken, so a loop that has failed a million
    times still gets `longest` instead of an OverflowError (`2.0 ** 1024` raises one).
    """
    exponent = min(max(int(attempt) - 1, 0), MAX_EXPONENT)
    return max(min(first * 2.0 ** exponent, longest), 0.0)
