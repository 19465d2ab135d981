"""Benchmark: one worker poll cycle with 2,000 and 10,000 torrents against qBittorrent's raw `sync/maindata`.

Run: .venv/bin/python bench/poll.py [--torrents 2000 10000] [--cycles 20] [--changed 20] [--profile]

A throwaway qbittorrent-nox (loopback only, temp profile, stopped at the end; started with the
test helpers in tests/support/qbittorrent.py) gets trackerless magnets with random hashes, which
stay in `metaDL` without peers. The downloads are created through `ingest` (state `queued`, tag
prefix + id); the magnets go to qBittorrent in batches of newline-separated `urls` under the
category, each then gets its download's tag (`torrents/addTags`, one call per torrent: qBittorrent
gives a whole batch the same tags), and the worker's own first poll moves every download from
`queued` to `downloading` (found by hash). The sizes grow one instance: 2,000, then 8,000 more.

Measured per cycle, interleaved in the same run:
  raw full       GET sync/maindata?rid=0 with httpx (qBittorrent's cost of the whole list)
  raw incr       GET sync/maindata?rid=N with httpx, nothing changed since the last call
  sync full      QbittorrentClient.sync() on a fresh client (the worker's first poll after a start)
  sync incr      QbittorrentClient.sync() of a client that polls every cycle
  poll_once      a whole Worker.poll_once() over a real SQLite store (incremental sync included)
  changed        then (--changed N) poll_once after N random torrents got a tag added or removed:
                 the cost of examining N downloads, above a cycle where nothing changed
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Row, describe_load, emit, load

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.states import State
from jellybit.engine import ingest
from jellybit.engine.events import Event, EventBus, EventKind
from jellybit.engine.worker import Worker
from tests.support.engine import ScriptedLayouter, ScriptedRecognizer
from tests.support.qbittorrent import QbittorrentProcess, magnet

BATCH = 500            # magnets per torrents/add call
TAG_CONCURRENCY = 8    # addTags calls in flight
SYNC_FULL_CYCLES = 3   # a fresh client's full sync costs about a raw full plus parsing: fewer rounds
TIMEOUT = 300.0
SETTLE_TIMEOUT = 60.0


@dataclass
class Series:
    """Seconds per cycle of one measurement, plus what the answers carried."""

    name: str
    seconds: list[float] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)

    def median(self) -> float:
        """The median in seconds."""
        return statistics.median(self.seconds)

    def p90(self) -> float:
        """The 90th percentile in seconds (nearest rank)."""
        ordered = sorted(self.seconds)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


async def timed(series: Series, call: Callable[[], Awaitable[Any]], cpu: Series | None = None) -> Any:
    """Await `call()` and record its wall time (and this process's CPU time, all threads, in `cpu`)."""
    started, cpu_started = time.perf_counter(), time.process_time()
    result = await call()
    series.seconds.append(time.perf_counter() - started)
    if cpu is not None:
        cpu.seconds.append(time.process_time() - cpu_started)
    return result


class Bench:
    """The qBittorrent instance, the store, the worker and the clients of one run."""

    def __init__(self, root: Path, server: QbittorrentProcess) -> None:
        self.root = root
        self.server = server
        self.qbt = QbittorrentConfig(url=server.url, username=server.username, password=server.password,
                                     save_path=str(server.data_root), timeout=TIMEOUT)
        self.store = Store(root / "bench.db")
        # Two sessions: qBittorrent keeps one sync base per session, so a rid=0 request on the
        # incremental session would turn its next answer into a full update.
        self.raw = httpx.AsyncClient(base_url=f"{server.url}/api/v2/", timeout=TIMEOUT)
        self.raw_incr = httpx.AsyncClient(base_url=f"{server.url}/api/v2/", timeout=TIMEOUT)
        self.polling = QbittorrentClient(self.qbt)       # (b) incremental: polls every cycle
        self.worker: Worker | None = None
        self.rid = 0
        self.count = 0
        self.hashes: list[str] = []

    async def open(self) -> None:
        """Open the store, log the raw client in, build the worker with in-test recognizer/layouter."""
        await self.store.open()
        for client in (self.raw, self.raw_incr):
            reply = await client.post("auth/login", data={"username": self.server.username,
                                                          "password": self.server.password})
            if reply.text.strip() not in ("Ok.", ""):
                raise SystemExit(f"raw login failed: HTTP {reply.status_code}")
        config = WorkerConfig(metadata_timeout=30 * 86400.0, stall_timeout=30 * 86400.0)
        paths = PathsConfig(downloads=self.server.data_root, movies=self.root / "movies",
                            series=self.root / "series")
        self.worker = Worker(self.store, EventBus(), QbittorrentClient(self.qbt), ScriptedRecognizer(),
                             ScriptedLayouter(), worker=config, qbittorrent=self.qbt, paths=paths,
                             reconnect_grace=0.0)
        await self.worker.start()

    async def close(self) -> None:
        """Close every client and the store."""
        if self.worker is not None:
            await self.worker.serial.drain(5.0)
            await self.worker.client.close()  # type: ignore[attr-defined]
        await self.polling.close()
        await self.raw.aclose()
        await self.raw_incr.aclose()
        await self.store.close()

    # ------------------------------------------------------------ set-up

    async def grow(self, total: int) -> None:
        """Add downloads and their torrents until there are `total`; the worker's poll makes them downloading.

        Batch k+1 is ingested while qBittorrent adds and tags batch k (two processes, two cores).
        """
        assert self.worker is not None
        new = total - self.count
        started = time.perf_counter()
        gate = asyncio.Semaphore(TAG_CONCURRENCY)
        sent: list[asyncio.Task[None]] = []
        for first in range(self.count, total, BATCH):
            batch: list[tuple[str, str, str]] = []           # (infohash, name, tag)
            for n in range(first, min(first + BATCH, total)):
                infohash, name = secrets.token_hex(20), f"Bench.Show.S01E{n:05d}.1080p.WEB-DL"
                result = await ingest.ingest(
                    self.store, source=magnet(infohash, name),
                    max_torrent_bytes=self.worker.config.max_torrent_bytes, tag_prefix=self.qbt.tag_prefix)
                # As Commands.add does: the worker reads a download again only when told of a change.
                self.worker.bus.publish(Event(EventKind.ADDED, result.download.id, to_state=State.QUEUED))
                batch.append((infohash, name, result.download.qbt_tag))
                self.hashes.append(infohash)
            sent.append(asyncio.create_task(self._send_batch(batch, gate)))
        ingested = time.perf_counter()
        await asyncio.gather(*sent)
        tagged = time.perf_counter()
        await self._until_listed(total)
        listed = time.perf_counter()
        await self.worker.poll_once()              # queued -> downloading, found by hash
        first_poll = time.perf_counter() - listed
        downloading = len([d for d in await self.store.active_downloads() if d.state is State.DOWNLOADING])
        if downloading != total:
            raise SystemExit(f"only {downloading} of {total} downloads reached downloading")
        self.count = total
        print(f"set-up for {total:,} (+{new:,}): ingest {ingested - started:.1f} s, add in batches of "
              f"{BATCH} + tag each {tagged - ingested:.1f} s more, listed after {listed - tagged:.1f} s, "
              f"the worker's poll moving them queued -> downloading {first_poll:.1f} s")

    async def _send_batch(self, batch: list[tuple[str, str, str]], gate: asyncio.Semaphore) -> None:
        """One torrents/add with the batch's magnets, then each torrent's own download tag."""
        links = "\n".join(magnet(infohash, name) for infohash, name, _ in batch)
        async with gate:
            reply = await self.raw.post("torrents/add", data={
                "urls": links, "category": self.qbt.category, "savepath": self.qbt.save_path or "",
                "autoTMM": "false", "paused": "false"})
        if reply.text.strip() != "Ok.":
            raise SystemExit(f"torrents/add failed: HTTP {reply.status_code} {reply.text[:80]}")

        async def tag(infohash: str, name: str) -> None:
            async with gate:
                answer = await self.raw.post("torrents/addTags", data={"hashes": infohash, "tags": name})
            answer.raise_for_status()

        # addTags on a torrent qBittorrent is still adding answers 200 and does nothing: wait for it.
        await self._until_present([infohash for infohash, _, _ in batch])
        await asyncio.gather(*(tag(infohash, name) for infohash, _, name in batch))

    async def _until_present(self, hashes: list[str]) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = await self.raw.get("torrents/info", params={"hashes": "|".join(hashes)})
            if len(reply.json()) >= len(hashes):
                return
            if time.monotonic() > deadline:
                raise SystemExit("qBittorrent did not list a batch of magnets it accepted")
            await asyncio.sleep(0.1)

    async def _until_listed(self, total: int) -> None:
        deadline = time.monotonic() + TIMEOUT
        while True:
            reply = await self.raw.get("torrents/info", params={"category": self.qbt.category})
            torrents = reply.json()
            tagged = sum(1 for t in torrents if t.get("tags"))
            if len(torrents) >= total and tagged >= total:
                return
            if time.monotonic() > deadline:
                raise SystemExit(f"qBittorrent lists {len(torrents)} torrents ({tagged} tagged) of {total}")
            await asyncio.sleep(0.2)

    # ------------------------------------------------------------ measuring

    async def _settle(self) -> None:
        """Wait until new torrents stop changing (`time_active` ticks for a while after an add)."""
        started = time.monotonic()
        self.rid = (await self.raw_incr.get("sync/maindata", params={"rid": 0})).json()["rid"]
        quiet = 0
        while quiet < 2 and time.monotonic() - started < SETTLE_TIMEOUT:
            await asyncio.sleep(1.0)
            data = (await self.raw_incr.get("sync/maindata", params={"rid": self.rid})).json()
            self.rid = data["rid"]
            quiet = quiet + 1 if not data.get("torrents") else 0
        state = "quiet" if quiet >= 2 else "still changing"
        print(f"qBittorrent {state} after {time.monotonic() - started:.1f} s")

    async def _raw_full(self) -> int:
        reply = await self.raw.get("sync/maindata", params={"rid": 0})
        reply.raise_for_status()
        return len(reply.content)

    async def _raw_incremental(self) -> int:
        reply = await self.raw_incr.get("sync/maindata", params={"rid": self.rid})
        reply.raise_for_status()
        data = reply.json()
        if data.get("full_update"):
            raise SystemExit("the incremental session got a full update (its rid was reset)")
        self.rid = data["rid"]
        return len(reply.content)

    async def _fresh_sync(self, series: Series) -> None:
        async with QbittorrentClient(self.qbt) as client:
            await client.login()   # the login is not part of a poll
            series.sizes.append(len((await timed(series, client.sync)).torrents))

    async def measure(self, cycles: int) -> list[Series]:
        """Run `cycles` interleaved rounds of every measurement; return the series."""
        assert self.worker is not None
        raw_full, raw_incr = Series("raw sync/maindata full (rid=0)"), Series("raw sync/maindata incr")
        sync_full = Series("QbittorrentClient.sync() full")
        sync_incr = Series("QbittorrentClient.sync() incr")
        poll = Series("Worker.poll_once()")
        poll_cpu = Series("  its CPU time in this process")
        await self._settle()
        await self.polling.sync()
        await self.worker.poll_once()                 # nothing left to write after this one
        for cycle in range(cycles):
            raw_full.sizes.append(await timed(raw_full, self._raw_full))
            if cycle < SYNC_FULL_CYCLES:
                await self._fresh_sync(sync_full)
            raw_incr.sizes.append(await timed(raw_incr, self._raw_incremental))
            await timed(sync_incr, self.polling.sync)
            if not await timed(poll, self.worker.poll_once, poll_cpu):
                raise SystemExit("the worker could not reach qBittorrent")
        return [raw_full, raw_incr, sync_full, sync_incr, poll, poll_cpu]

    async def measure_changes(self, cycles: int, count: int) -> Series:
        """Worker CPU per cycle when `count` torrents changed since the last one (a tag added or removed)."""
        assert self.worker is not None
        cpu, wall = Series(f"poll_once CPU, {count} torrents changed"), Series("wall")
        await self.worker.poll_once()
        chosen: list[str] = []
        for cycle in range(cycles):
            if cycle % 2 == 0:
                chosen = random.sample(self.hashes, count)
            path = "torrents/addTags" if cycle % 2 == 0 else "torrents/removeTags"
            reply = await self.raw.post(path, data={"hashes": "|".join(chosen), "tags": "bench-touch"})
            reply.raise_for_status()
            await timed(wall, self.worker.poll_once, cpu)
        return cpu

    async def profile(self, path: Path) -> None:
        """Profile one poll cycle with cProfile (the event loop's thread); print the top."""
        import cProfile
        import io
        import pstats

        assert self.worker is not None
        profiler = cProfile.Profile()
        profiler.enable()
        await self.worker.poll_once()
        profiler.disable()
        profiler.dump_stats(path)
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
        print(text.getvalue())
        print(f"profile written to {path} (open with python -m pstats)")


GOALS = {2000: 5.0, 10000: 20.0}   # ms of worker CPU per nothing-changed cycle (issue 16)


def report(total: int, series: list[Series], as_json: bool = False) -> None:
    """Print median / p90 per measurement and the poll cycle's ratios to the raw requests."""
    raw_full, raw_incr, _, sync_incr, poll, poll_cpu = series
    print(f"\n{total:,} torrents, {len(poll.seconds)} cycles (full answer {raw_full.sizes[-1] / 1e6:.1f} "
          f"MB, incremental {statistics.median(raw_incr.sizes):.0f} B)")
    print(f"  {'':34} {'median':>10} {'p90':>10}")
    for s in series:
        print(f"  {s.name:34} {s.median() * 1000:8.1f} ms {s.p90() * 1000:8.1f} ms")
    print(f"  {'poll_once / raw incr':34} {poll.median() / raw_incr.median():9.2f}x")
    print(f"  {'poll_once / raw full':34} {poll.median() / raw_full.median():9.2f}x")
    print(f"  {'poll_once - raw incr (our part)':34} {(poll.median() - raw_incr.median()) * 1000:8.1f} ms")
    print(f"  {'sync incr - raw incr':34} {(sync_incr.median() - raw_incr.median()) * 1000:8.1f} ms")
    goal = GOALS.get(total)
    cpu = poll_cpu.median() * 1000
    emit(Row(f"worker CPU per poll cycle, nothing changed, {total:,} torrents", cpu, "ms",
             raw_incr.median() * 1000, "raw incremental sync/maindata (wall)",
             f"<= {goal:g} ms" if goal else "", cpu <= goal if goal else None), as_json)


async def run(root: Path, sizes: list[int], cycles: int, profile: bool, as_json: bool = False,
              changed: int = 0) -> None:
    """Start qBittorrent, grow it through every size, measure, and stop it."""
    server = QbittorrentProcess(root / "qbittorrent")
    server.start()
    bench = Bench(root, server)
    before = load()
    try:
        await bench.open()
        version = (await bench.raw.get("app/version")).text
        print(f"qbittorrent-nox {version} on {server.url}")
        for total in sorted(set(sizes)):
            await bench.grow(total)
            series = await bench.measure(cycles)
            report(total, series, as_json)
            if changed:
                touched = await bench.measure_changes(cycles, changed)
                extra = (touched.median() - series[-1].median()) * 1000
                print(f"  {touched.name:34} {touched.median() * 1000:8.1f} ms {touched.p90() * 1000:8.1f} ms"
                      f"  ({extra / changed * 1000:.0f} us per changed torrent above nothing changed)")
            print(describe_load(before, load()))
            if profile:
                await bench.profile(root.parent / f"jellybit-poll-profile-{total}.prof")
    finally:
        await bench.close()
        server.stop()


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the benchmark in a throwaway directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torrents", type=int, nargs="+", default=[2000, 10000],
                        help="torrent counts to measure (ascending; one instance grows)")
    parser.add_argument("--cycles", type=int, default=20, help="poll cycles per size")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one poll cycle per size with cProfile (a .prof in the temp dir)")
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    parser.add_argument("--changed", type=int, default=20, metavar="N",
                        help="also measure cycles after N torrents changed (a tag added or removed; 0: skip)")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="jellybit-bench-poll-"))
    try:
        asyncio.run(run(root, args.torrents, args.cycles, args.profile, args.json, args.changed))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
