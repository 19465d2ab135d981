"""The stall and metadata clocks the worker's slow timer checks, on a clock the test moves."""

from __future__ import annotations

from dataclasses import replace

from jellybit.config import WorkerConfig
from jellybit.core.models import Download
from jellybit.core.ports import TorrentInfo
from jellybit.core.states import State
from jellybit.engine.timeouts import DownloadTimeouts

DOWNLOAD = Download(id="d1", source_type="magnet", source_ref="magnet:?", display_name="Фильм", context="",
                    state=State.DOWNLOADING, qbt_tag="jellybit-d1", created_at="", updated_at="")
MOVING = TorrentInfo(hash="a" * 40, infohash_v1="a" * 40, infohash_v2="", name="Фильм", state="downloading",
                     progress=0.25, dlspeed=10, eta=600, size=100, total_size=100, amount_left=75,
                     content_path="", save_path="", category="jellybit", tags=(), added_on=1,
                     completion_on=None)


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def timeouts(clock: Clock, **settings: float) -> DownloadTimeouts:
    return DownloadTimeouts(WorkerConfig(**{"stall_timeout": 100.0, "metadata_timeout": 50.0, **settings}),
                            monotonic=clock)


def test_a_torrent_that_stops_changing_is_overdue_without_being_looked_at_again() -> None:
    clock = Clock()
    clocks = timeouts(clock)
    assert clocks.observe(DOWNLOAD, MOVING) is None
    clock.now += 99
    assert clocks.overdue() == set()
    clock.now += 2                                      # nobody observed it meanwhile: it did not change
    assert clocks.overdue() == {"d1"}
    expired = clocks.observe(DOWNLOAD, MOVING)
    assert expired is not None
    assert expired.code == "stalled"


def test_progress_or_a_pause_starts_the_stall_clock_again() -> None:
    clock = Clock()
    clocks = timeouts(clock)
    clocks.observe(DOWNLOAD, MOVING)
    clock.now += 90
    assert clocks.observe(DOWNLOAD, replace(MOVING, progress=0.3)) is None     # progress: a new start
    clock.now += 90
    assert clocks.overdue() == set()
    assert clocks.observe(DOWNLOAD, replace(MOVING, state="pausedDL", progress=0.3)) is None
    clock.now += 500                                    # paused by a human for a long time
    assert clocks.overdue() == set()
    assert clocks.observe(DOWNLOAD, replace(MOVING, progress=0.3)) is None     # resumed: counts from now
    clock.now += 50
    assert clocks.overdue() == set()


def test_a_magnet_without_metadata_runs_out_on_the_metadata_clock() -> None:
    clock = Clock()
    clocks = timeouts(clock)
    waiting = replace(MOVING, state="metaDL", progress=0.0, size=0, total_size=0)
    assert clocks.observe(DOWNLOAD, waiting) is None
    clock.now += 51
    assert clocks.overdue() == {"d1"}
    expired = clocks.observe(DOWNLOAD, waiting)
    assert expired is not None
    assert expired.code == "metadata_timeout"
    clocks.forget("d1")
    assert clocks.tracked() == 0


def test_the_sweep_fires_at_most_every_interval_and_short_timeouts_shorten_it() -> None:
    clock = Clock()
    assert timeouts(clock).sweep_interval == 12.5                     # a quarter of the 50 s metadata timeout
    assert timeouts(clock, stall_timeout=6 * 3600.0, metadata_timeout=3600.0).sweep_interval == 30.0
    clocks = timeouts(clock)
    assert clocks.sweep_due()
    assert not clocks.sweep_due()
    clock.now += 12.5
    assert clocks.sweep_due()
