"""Who may use the bot, and how often: fail-closed allow-list and a per-user token bucket (no I/O)."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from enum import StrEnum

MAX_TRACKED_USERS = 10_000      # strangers are remembered in a bounded table, oldest forgotten first


class Verdict(StrEnum):
    """What to do with one update from one user."""

    SERVE = "serve"
    SLOW_DOWN = "slow_down"      # over the rate: say so once, then drop until the bucket refills
    DROP = "drop"                # over the rate again: nothing, not even a log line
    REFUSE = "refuse"            # a stranger's first message: one polite refusal, logged
    DENY = "deny"                # a stranger already refused: logged, no answer


class Gate:
    """The allow-list (empty = nobody) and a token bucket per user, for allowed users and strangers alike."""

    def __init__(self, allowed_user_ids: Iterable[int], per_minute: int,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.allowed = frozenset(allowed_user_ids)
        self.capacity = float(max(1, per_minute))
        self.rate = self.capacity / 60.0
        self.clock = clock
        self._buckets: OrderedDict[int, tuple[float, float, bool]] = OrderedDict()
        self._refused: OrderedDict[int, None] = OrderedDict()

    def allowed_user(self, user_id: int | None) -> bool:
        """Tell whether a user is on the allow-list (None, a channel post, never is)."""
        return user_id is not None and user_id in self.allowed

    def _take(self, user_id: int) -> tuple[bool, bool]:
        """Take one token: (allowed, first refusal of this over-rate stretch)."""
        now = self.clock()
        tokens, last, warned = self._buckets.pop(user_id, (self.capacity, now, False))
        tokens = min(self.capacity, tokens + (now - last) * self.rate)
        if tokens >= 1.0:
            self._buckets[user_id] = (tokens - 1.0, now, False)
            ok, first = True, False
        else:
            self._buckets[user_id] = (tokens, now, True)
            ok, first = False, not warned
        while len(self._buckets) > MAX_TRACKED_USERS:
            self._buckets.popitem(last=False)
        return ok, first

    def check(self, user_id: int | None) -> Verdict:
        """Decide about one update (a message or a button press) from this user."""
        if user_id is None:
            return Verdict.DROP
        ok, first_over = self._take(user_id)
        if not self.allowed_user(user_id):
            if not ok:
                return Verdict.DROP
            if user_id in self._refused:
                return Verdict.DENY
            self._refused[user_id] = None
            while len(self._refused) > MAX_TRACKED_USERS:
                self._refused.popitem(last=False)
            return Verdict.REFUSE
        if ok:
            return Verdict.SERVE
        return Verdict.SLOW_DOWN if first_over else Verdict.DROP
