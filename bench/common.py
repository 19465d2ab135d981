"""Shared pieces of the benchmarks: medians of interleaved rounds, the machine's load, one result line.

Every benchmark measures Jellybit and a baseline in the same run, round after round in turn
(so both see the same load), and reports medians and their ratio. With `--json` a benchmark
also prints one line `BENCH {...}` per table row, which `bench/all.py` collects into one table.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field


@dataclass
class Samples:
    """Measurements of one quantity (seconds, or bytes for memory)."""

    name: str
    values: list[float] = field(default_factory=list)

    def add(self, value: float) -> None:
        """Record one measurement."""
        self.values.append(value)

    def median(self) -> float:
        """The median."""
        return statistics.median(self.values)

    def p(self, q: float) -> float:
        """The q-quantile (nearest rank), e.g. 0.5 or 0.99."""
        ordered = sorted(self.values)
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@contextmanager
def timed(samples: Samples) -> Iterator[None]:
    """Add the wall time of the block to `samples`."""
    started = time.perf_counter()
    try:
        yield
    finally:
        samples.add(time.perf_counter() - started)


def load() -> tuple[float, float, float]:
    """The 1, 5 and 15 minute load averages."""
    return os.getloadavg()


def describe_load(before: tuple[float, float, float], after: tuple[float, float, float]) -> str:
    """One line: how busy the machine was around the measurement."""
    cores = os.cpu_count() or 1
    return (f"machine: {cores} cores, load average {before[0]:.1f} before and {after[0]:.1f} after "
            f"(15 min {after[2]:.1f})")


@dataclass
class Row:
    """One row of the issue's table: Jellybit's figure, the baseline's, and the goal."""

    measure: str
    value: float
    unit: str                      # ms | MB | s
    baseline: float | None = None
    baseline_name: str = ""
    goal: str = ""
    met: bool | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """Jellybit's figure over the baseline's."""
        if self.baseline is None or not self.baseline:
            return None
        return self.value / self.baseline


def emit(row: Row, enabled: bool) -> None:
    """Print the row as one `BENCH {json}` line when `enabled` (for bench/all.py)."""
    if enabled:
        print("BENCH " + json.dumps({**asdict(row), "ratio": row.ratio}, ensure_ascii=False), flush=True)


def ms(seconds: float) -> float:
    """Seconds to milliseconds."""
    return seconds * 1000.0
