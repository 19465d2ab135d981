"""Waits between retries: exponential backoff capped before it is computed (it never overflows),
and the pace of reconnecting to a lost broker."""

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


class ReconnectPacer:
    """When to try a lost connection again: soon after it dropped, less often the longer it stays down.

    The wait is a share of the outage so far (5 %), between `first` and `longest`: a broker that
    restarts in 10 s is tried every half second by then, so the link is back within about half a
    second of the broker; one down for an hour is tried every `longest`. A new outage starts the
    clock again, but only after a connection that held for `settle` seconds: a broker that accepts
    and drops at once (another client taking over the session) is not hammered.
    """

    def __init__(self, *, first: float = 0.1, longest: float = 30.0, share: float = 0.05,
                 settle: float = 5.0) -> None:
        self.first = max(first, 0.0)
        self.longest = max(longest, self.first)
        self.share = share
        self.settle = settle
        self._down_since: float | None = None
        self._up_since: float | None = None

    def up(self, now: float) -> None:
        """The connection is established (monotonic `now`)."""
        self._up_since = now

    def down(self, now: float) -> None:
        """The connection failed or was lost (monotonic `now`)."""
        held = self._up_since is not None and now - self._up_since >= self.settle
        if self._down_since is None or held:
            self._down_since = now
        self._up_since = None

    def delay(self, now: float) -> float:
        """Seconds to wait before the next attempt."""
        outage = 0.0 if self._down_since is None else max(now - self._down_since, 0.0)
        return min(max(outage * self.share, self.first), self.longest)
