"""Benchmark: a pack's files reach the library as each completes, and its review arrives early (issue 25).

Run: .venv/bin/python bench/file_layout.py [--rounds 3] [--files 10] [--file-mb 2] [--limit-mb 2]
     [--review-rounds 2] [--review-files 20] [--review-mb 3] [--review-limit-mb 1] [--json]

Two throwaway qbittorrent-nox on loopback, one seeding to the other (tests/support/qbittorrent_pair.py),
the real worker loop (`Worker.run`, shipped poll intervals) with the real layouter (hardlinks into a
temp library, the SQLite journal) and an in-test recognizer that reads the pack as a season. The
leecher downloads sequentially under a download limit, so the files complete one by one.

(a) file → library: from the moment a raw `torrents/files` probe (every 25 ms) first sees a file
    complete to the moment its hardlink is in the library (the library scanned every 10 ms, matched
    by inode), p50 and p90 over every file of every round. Baseline in the same run, rounds
    interleaved: the same pack with `worker.early_layout = false` (laid out when the pack completes).
    Goal: p50 at most 1 s while the rest of the pack still downloads.
(b) add → review: a pack that needs a human decision; from `add` to the `review_requested` event,
    against `add` → the whole pack complete in qBittorrent, with the share of the pack downloaded
    when the review was requested. Baseline in the same run: recognition on completion
    (`worker.recognize_early = false`). Goal: the review before 10 % of the pack.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # for tests.support
from common import Row, describe_load, emit, load

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.states import State
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus, EventKind
from jellybit.engine.worker import Worker
from tests.support.engine import ScriptedRecognizer, source_guard
from tests.support.qbittorrent import QbittorrentProcess
from tests.support.qbittorrent_pair import QbittorrentPair

WAIT = 120.0
SEEDING = {"uploading", "stalledUP", "queuedUP", "forcedUP", "pausedUP", "stoppedUP"}


def empty_library(paths: PathsConfig) -> None:
    """Both library roots, present and empty."""
    for folder in (paths.movies, paths.series):
        shutil.rmtree(folder, ignore_errors=True)
        Path(folder).mkdir(parents=True)


class Rig:
    """The pair, one store and library, and an admin client for the leecher's probes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.pair = QbittorrentPair(QbittorrentProcess(root / "seeder"), QbittorrentProcess(root / "leecher"))
        self.downloads = self.pair.leecher.data_root.resolve()
        self.paths = PathsConfig(downloads=self.downloads, movies=root / "movies", series=root / "series")
        self.store = Store(root / "bench.db")
        self.admin: httpx.AsyncClient | None = None

    async def __aenter__(self) -> Rig:
        self.pair.start()
        empty_library(self.paths)
        await self.store.open()
        p = self.pair.leecher
        self.admin = httpx.AsyncClient(base_url=f"{p.url}/api/v2/", timeout=30)
        await self.admin.post("auth/login", data={"username": p.username, "password": p.password})
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            if self.admin is not None:
                await self.admin.aclose()
            await self.store.close()
        finally:
            self.pair.stop()

    def qbt(self) -> QbittorrentConfig:
        p = self.pair.leecher
        return QbittorrentConfig(url=p.url, username=p.username, password=p.password, category="bench",
                                 save_path=str(self.downloads))


async def one_pack(rig: Rig, name: str, files: int, size: int, limit: int, *, settings: dict,
                   automatic: bool) -> dict:
    """Add one pack through a fresh worker; per-file completion and link times, review and completion."""
    torrent = rig.pair.seed(name, {f"{name}.E{n:02d}.mkv": size for n in range(1, files + 1)})
    bus = EventBus()
    client = QbittorrentClient(rig.qbt())
    worker = Worker(rig.store, bus, client, ScriptedRecognizer(automatic=automatic, series=True),
                    LayoutEngine(rig.store, rig.paths), worker=WorkerConfig(**settings),
                    qbittorrent=rig.qbt(), paths=rig.paths, reconnect_grace=0.0)
    commands = Commands(rig.store, bus, worker, guard=source_guard(worker))
    events = bus.subscribe()
    loop = asyncio.create_task(worker.run(reconcile=False))
    assert rig.admin is not None
    admin, h = rig.admin, torrent.infohash_v1
    complete_at: dict[str, float] = {}
    linked_at: dict[str, float] = {}
    review: list[float] = []
    share_at_review: list[float] = []
    decided: list[float] = []
    done = asyncio.Event()
    reviewed = asyncio.Event()

    async def watch_events() -> None:
        async for event in events:
            if event.event_type is EventKind.REVIEW_REQUESTED and not review:
                review.append(time.perf_counter())
                info = (await admin.get("torrents/info", params={"hashes": h})).json()
                share_at_review.append(float(info[0]["progress"]) if info else 1.0)
                reviewed.set()
            if event.event_type is EventKind.STATE_CHANGED and event.to_state is State.APPLYING \
                    and not decided:
                decided.append(time.perf_counter())
            if event.event_type is EventKind.STATE_CHANGED and event.to_state is State.DONE:
                done.set()

    async def probe_files() -> None:
        while len(complete_at) < files:
            answer = (await admin.get("torrents/files", params={"hash": h})).json()
            now = time.perf_counter()
            for f in answer:
                if f["progress"] >= 1 and f["name"] not in complete_at:
                    complete_at[f["name"]] = now
            await asyncio.sleep(0.025)

    async def probe_library() -> None:
        inodes: dict[int, str] = {}
        while len(linked_at) < files:
            for name in complete_at:
                if name not in inodes.values():
                    try:
                        inodes[os.stat(rig.downloads / name).st_ino] = name
                    except FileNotFoundError:
                        pass        # renamed from .!qB a moment later
            now = time.perf_counter()
            for folder, _dirs, names in os.walk(rig.paths.series):
                for entry in names:
                    ino = os.stat(os.path.join(folder, entry)).st_ino
                    if ino in inodes and inodes[ino] not in linked_at:
                        linked_at[inodes[ino]] = now
            await asyncio.sleep(0.01)

    watchers = [asyncio.create_task(watch_events())]
    try:
        added_at = time.perf_counter()
        download_id = (await commands.add(torrent=torrent.torrent)).download.id
        await asyncio.to_thread(rig.pair.wait_listed, torrent)
        rig.pair.pace(torrent, limit=limit)         # before it has a peer: from the first byte
        await asyncio.to_thread(rig.pair.connect, torrent)
        watchers += [asyncio.create_task(probe_files())]
        if automatic:
            watchers.append(asyncio.create_task(probe_library()))
        if automatic:
            await asyncio.wait_for(done.wait(), WAIT)
            await asyncio.wait_for(watchers[-1], WAIT)
        await asyncio.wait_for(watchers[1], WAIT)        # every file complete in qBittorrent
        if not automatic:
            await asyncio.wait_for(reviewed.wait(), WAIT)
        return {"complete": complete_at, "linked": linked_at, "added": added_at,
                "decided": decided[0] if decided else None,
                "review": review[0] if review else None, "whole": max(complete_at.values()),
                "share_at_review": share_at_review[0] if share_at_review else None}
    except TimeoutError:
        history = await rig.store.transitions(download_id)
        raise RuntimeError(f"{name} timed out: {[(t.to_state.value, t.reason) for t in history]}, "
                           f"{len(complete_at)} files complete, {len(linked_at)} in the library") from None
    finally:
        for task in watchers:
            task.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)
        events.close()
        await worker.stop()
        await asyncio.wait([loop], timeout=30)
        await client.close()
        await admin.post("torrents/delete", data={"hashes": h, "deleteFiles": "true"})
        empty_library(rig.paths)


def quantile(values: list[float], q: float) -> float:
    """Nearest-rank quantile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


async def run(root: Path, rounds: int, files: int, size: int, limit: int, review: tuple[int, int, int, int],
              as_json: bool) -> None:
    """Interleave early layout and layout on completion; then early and late recognition with a review."""
    base = {"poll_interval": 2.0}
    ways = {"early": {**base, "early_layout": True}, "on completion": {**base, "early_layout": False}}
    lat: dict[str, list[float]] = {w: [] for w in ways}
    after: list[float] = []          # early: the files that completed once the download was decided
    reviews: dict[str, list[tuple[float, float, float]]] = {"early": [], "on completion": []}
    before = load()
    async with Rig(root) as rig:
        for n in range(rounds):
            names = list(ways) if n % 2 == 0 else list(reversed(ways))
            for way in names:
                result = await one_pack(rig, f"Show.R{n}.{way[:5]}", files, size, limit,
                                        settings=ways[way], automatic=True)
                lat[way] += [result["linked"][f] - result["complete"][f] for f in result["complete"]]
                if way == "early":
                    after += [result["linked"][f] - t for f, t in result["complete"].items()
                              if result["decided"] is not None and t > result["decided"]]
        review_rounds, review_files, review_size, review_limit = review
        for n in range(review_rounds):
            order = [("early", True), ("on completion", False)]
            for way, early in order if n % 2 == 0 else reversed(order):
                result = await one_pack(rig, f"Review.R{n}.{way[:5]}", review_files, review_size,
                                        review_limit, settings={**base, "recognize_early": early},
                                        automatic=False)
                reviews[way].append((result["review"] - result["added"], result["whole"] - result["added"],
                                     result["share_at_review"]))
    lat["early, after the decision"] = after
    report(lat, reviews, (files, size, limit), review, describe_load(before, load()), as_json)


def report(lat: dict[str, list[float]], reviews: dict[str, list[tuple[float, float, float]]],
           pack: tuple[int, int, int], review: tuple[int, int, int, int], machine: str,
           as_json: bool) -> None:
    """Print the two tables and the BENCH rows."""
    files, size, limit = pack
    print(f"\n(a) file complete in qBittorrent -> hardlink in the library; packs of {files} x "
          f"{size / 1e6:g} MB at {limit / 1e6:g} MB/s, sequential; {machine}")
    print(f"  {'way':27} {'files':>5} {'p50':>9} {'p90':>9}")
    for way, values in lat.items():
        if values:
            print(f"  {way:27} {len(values):5d} {statistics.median(values) * 1000:7.0f} ms "
                  f"{quantile(values, 0.9) * 1000:7.0f} ms")
    print("  (files that completed before the download was decided wait for the decision: 'early' counts "
          "them, 'after the decision' does not)")
    ours = lat["early, after the decision"] or lat["early"]
    early, late = statistics.median(ours), statistics.median(lat["on completion"])
    emit(Row("file complete -> in library, p50", early * 1000, "ms", late * 1000,
             "laid out on completion (worker.early_layout = false)", "<= 1000 ms p50", early <= 1.0), as_json)
    emit(Row("file complete -> in library, p90", quantile(ours, 0.9) * 1000, "ms",
             quantile(lat["on completion"], 0.9) * 1000, "laid out on completion", "", None), as_json)
    if not reviews["early"]:
        return
    print(f"\n(b) add -> review requested, against add -> the pack complete; {review[0]} packs per way of "
          f"{review[1]} x {review[2] / 1e6:g} MB at {review[3] / 1e6:g} MB/s")
    print(f"  {'way':14} {'review':>9} {'complete':>9} {'share':>7} {'downloaded':>10}")
    for way, rows in reviews.items():
        r = statistics.median(x[0] for x in rows)
        c = statistics.median(x[1] for x in rows)
        share = statistics.median(x[0] / x[1] for x in rows)
        done = statistics.median(x[2] for x in rows)
        print(f"  {way:14} {r * 1000:7.0f} ms {c:7.1f} s {share:7.1%} {done:10.0%}")
    e = statistics.median(x[0] / x[1] for x in reviews["early"])
    b = statistics.median(x[0] / x[1] for x in reviews["on completion"])
    emit(Row("add -> review, share of the download time", e * 100, "%", b * 100,
             "recognized on completion (worker.recognize_early = false)", "< 10 %", e < 0.10), as_json)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run in a throwaway directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="packs per way")
    parser.add_argument("--files", type=int, default=10, help="files per pack in (a)")
    parser.add_argument("--file-mb", type=float, default=2.0, help="size of each file, MB")
    parser.add_argument("--limit-mb", type=float, default=2.0, help="the leecher's download limit, MB/s")
    parser.add_argument("--review-rounds", type=int, default=2, help="packs per way in (b)")
    parser.add_argument("--review-files", type=int, default=20, help="files per pack in (b)")
    parser.add_argument("--review-mb", type=float, default=3.0, help="size of each file in (b), MB")
    parser.add_argument("--review-limit-mb", type=float, default=1.0, help="download limit in (b), MB/s")
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    args = parser.parse_args(argv)
    review = (args.review_rounds, args.review_files, int(args.review_mb * 1e6),
              int(args.review_limit_mb * 1e6))
    root = Path(tempfile.mkdtemp(prefix="jellybit-bench-files-"))
    try:
        asyncio.run(run(root, args.rounds, args.files, int(args.file_mb * 1e6), int(args.limit_mb * 1e6),
                        review, args.json))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
