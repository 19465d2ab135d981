"""Benchmark: a reconciliation pass over a long history never blocks commands; memory stays flat.

Run: .venv/bin/python bench/history.py [--downloads 100000] [--small 10000] [--json]

The history is generated through the store's own methods (ingest in `applying`, the recognition,
a one-file journal batch, `done`), with a real source file and a real hardlink in the movies
library for each download: the newest 2,000 stay `done` with their torrent still in qBittorrent
(a seedbox's worth), the rest are `orphaned` (torrent removed, files kept), and 1 in 100 has
lost its library file. Generating 100,000 takes a while; it is done once and kept under
`$XDG_CACHE_HOME/jellybit-bench/` (or ~/.cache), and each run works on a copy of the database.

Measured in one run:
  idle       a command (`get` of a random download), a write (`update_download`, what a poll
             does), and the event loop's lag (a 10 ms ticker's overshoot), with nothing else going on
  during     the same while one reconciliation pass walks the whole history
  pass       how long the pass takes and how many downloads it checked and moved
  memory     the worker's RSS after a pass, in a fresh process, for the small and the large history
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import Row, Samples, describe_load, emit, load, ms

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.links import LinkStatus, NewLink
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.ports import TorrentInfo
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role
from jellybit.core.states import Actor, State
from jellybit.core.torrent_state import TorrentIndex
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus
from jellybit.engine.worker import Worker
from tests.support.engine import ScriptedRecognizer, source_guard

VERSION = 1                 # bump when the generated history changes shape
SEEDING = 2000              # newest downloads still in qBittorrent
LOST_EVERY = 100            # one in this many has lost its library file
TICK = 0.01


def cache_root() -> Path:
    """Where generated histories are kept between runs."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "jellybit-bench"


def paths_of(root: Path) -> PathsConfig:
    """The media tree of one generated history."""
    media = root / "media"
    return PathsConfig(downloads=media / "downloads", movies=media / "movies", series=media / "series")


def infohash(n: int) -> str:
    """The generated download number n's infohash."""
    return f"{n + 1:040x}"


def torrent(n: int, tag: str) -> TorrentInfo:
    """qBittorrent's view of download n's torrent, seeding."""
    return TorrentInfo(hash=infohash(n), infohash_v1=infohash(n), infohash_v2="", name=f"Film.{n}.1080p",
                       state="uploading", progress=1.0, dlspeed=0, eta=None, size=1, total_size=1,
                       amount_left=0, content_path="", save_path="", category="jellybit", tags=(tag,),
                       added_on=None, completion_on=None)


async def generate(root: Path, count: int) -> None:
    """Write `count` settled downloads through the store, each with its source and its library link."""
    paths = paths_of(root)
    for folder in (paths.downloads, paths.movies, paths.series):
        folder.mkdir(parents=True, exist_ok=True)
    store = Store(root / "jellybit.db")
    await store.open()
    started = time.monotonic()
    try:
        for n in range(count):
            name = f"Film.{n}.1080p"
            source = paths.downloads / name / f"{name}.mkv"
            source.parent.mkdir()
            source.write_bytes(b"x")
            folder = f"Film {n} (2000) [tmdbid-{n + 1}]"
            target = paths.movies / folder / f"{folder}.mkv"
            if n % LOST_EVERY != LOST_EVERY - 1:
                target.parent.mkdir()
                os.link(source, target)
            st = os.lstat(source)
            created = await store.create_download_if_no_active(NewDownload(
                "magnet", f"magnet:?xt=urn:btih:{infohash(n)}", name, "", (Infohash(infohash(n), "v1"),)),
                state=State.APPLYING, actor=Actor.WORKER)
            download_id = created.download.id
            item = PlanItem(f"{name}/{name}.mkv", 1, Role.VIDEO, library="movies", target=str(target))
            await store.save_recognition(download_id, RecognitionDraft(
                MediaType.MOVIE, f"Film {n}", 2000, Plan((item,), folder=folder), provider="tmdb",
                provider_id=str(n + 1)))
            batch, _ = await store.open_batch(download_id, [NewLink(
                str(source), str(target), "video", 1, src_dev=st.st_dev, src_ino=st.st_ino,
                src_mtime_ns=st.st_mtime_ns, status=LinkStatus.EXISTS, dst_ino=st.st_ino)])
            await store.commit_batch(batch.id)
            await store.transition(download_id, State.DONE, reason="laid out", actor=Actor.WORKER)
            if n < count - SEEDING:
                await store.transition(download_id, State.ORPHANED, reason="reconcile: torrent gone",
                                       actor=Actor.RECONCILE)
            if n % 5000 == 4999:
                print(f"  generated {n + 1:,} of {count:,} ({time.monotonic() - started:.0f} s)", flush=True)
    finally:
        await store.close()


def history(count: int) -> Path:
    """The cached history of `count` downloads, generated on first use."""
    root = cache_root() / f"history-{count}-v{VERSION}"
    if (root / "complete").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    print(f"generating a history of {count:,} downloads through the store in {root} (once)", flush=True)
    asyncio.run(generate(root, count))
    (root / "complete").write_text(str(count))
    return root


def working_copy(root: Path, scratch: Path) -> Path:
    """A copy of the history's database (the media tree is shared, and only read)."""
    db = scratch / "jellybit.db"
    shutil.copyfile(root / "jellybit.db", db)
    return db


async def build(root: Path, db: Path) -> tuple[Store, Worker, Commands]:
    """The real store, layouter, worker and commands over a history (qBittorrent is never called)."""
    store = Store(db)
    await store.open()
    paths = paths_of(root)
    qbt = QbittorrentConfig(url="http://127.0.0.1:9", password="x", timeout=1.0)
    from jellybit.adapters.qbittorrent import QbittorrentClient

    worker = Worker(store, EventBus(), QbittorrentClient(qbt), ScriptedRecognizer(),
                    LayoutEngine(store, paths), worker=WorkerConfig(), qbittorrent=qbt, paths=paths)
    return store, worker, Commands(store, worker.bus, worker, guard=source_guard(worker))


async def seeding_index(store: Store) -> TorrentIndex:
    """qBittorrent's torrents: the done downloads' (the newest SEEDING)."""
    page = await store.download_page(states=[State.DONE], limit=SEEDING + 10, with_total=False)
    return TorrentIndex([torrent(int(d.display_name.split(".")[1]), d.qbt_tag) for d in page.items])


class Probe:
    """Samples a command, a write and the event loop's lag, for a while or until told to stop."""

    def __init__(self, commands: Commands, ids: list[str], writable: str) -> None:
        self.commands, self.ids, self.writable = commands, ids, writable
        self.get, self.write, self.lag = Samples("get"), Samples("write"), Samples("loop lag")
        self.rng = random.Random(7)

    async def ticker(self, stop: asyncio.Event) -> None:
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            due = loop.time() + TICK
            await asyncio.sleep(TICK)
            self.lag.add(max(0.0, loop.time() - due))

    async def requests(self, stop: asyncio.Event) -> None:
        flip = 0
        while not stop.is_set():
            started = time.perf_counter()
            await self.commands.get(self.rng.choice(self.ids))
            self.get.add(time.perf_counter() - started)
            started = time.perf_counter()
            flip ^= 1
            await self.commands.store.update_download(self.writable, progress=0.5 + flip / 4)
            self.write.add(time.perf_counter() - started)
            await asyncio.sleep(0.005)

    async def run(self, until: asyncio.Future[object] | float) -> None:
        stop = asyncio.Event()
        tasks = [asyncio.create_task(self.ticker(stop)), asyncio.create_task(self.requests(stop))]
        if isinstance(until, float):
            await asyncio.sleep(until)
        else:
            await until
        stop.set()
        await asyncio.gather(*tasks)


async def measure(root: Path, scratch: Path, idle_seconds: float) -> dict[str, object]:
    """Idle samples, then the same during one pass; the pass's own figures."""
    store, worker, commands = await build(root, working_copy(root, scratch))
    try:
        page = await store.download_page(limit=5000, with_total=False)
        ids = [d.id for d in page.items]
        probe = NewDownload("magnet", "magnet:?xt=probe", "probe", "")
        created = await store.create_download_if_no_active(probe)
        index = await seeding_index(store)
        idle = Probe(commands, ids, created.download.id)
        await idle.run(idle_seconds)
        busy = Probe(commands, ids, created.download.id)
        started = time.perf_counter()
        passing = asyncio.ensure_future(worker.reconcile(index))
        await busy.run(passing)
        seconds = time.perf_counter() - started
        progress = worker.housekeeping.reconciler.progress
        return {"idle": idle, "busy": busy, "seconds": seconds, "moved": passing.result(),
                "checked": progress.checked, "total": progress.total}
    finally:
        await worker.client.close()  # type: ignore[attr-defined]
        await store.close()


def rss_mb() -> float:
    """This process's resident set size in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def child_rss(root: Path, scratch: Path) -> dict[str, float]:
    """In a fresh process: RSS after opening the worker, and after one reconciliation pass."""
    store, worker, _ = await build(root, working_copy(root, scratch))
    try:
        index = await seeding_index(store)
        gc.collect()
        opened = rss_mb()
        await worker.reconcile(index)
        gc.collect()
        return {"opened": opened, "after": rss_mb(), "tracked": worker.serial.tracked(),
                "checked": worker.housekeeping.reconciler.progress.checked}
    finally:
        await worker.client.close()  # type: ignore[attr-defined]
        await store.close()


def memory(root: Path) -> dict[str, float]:
    """Run `child_rss` in a fresh interpreter and return what it printed."""
    out = subprocess.run([sys.executable, __file__, "--child-rss", str(root)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def line(label: str, samples: Samples) -> str:
    """One table line: p50, p99 and the worst, in ms."""
    return (f"  {label:34} p50 {ms(samples.median()):7.2f} ms  p99 {ms(samples.p(0.99)):8.2f} ms  "
            f"max {ms(max(samples.values)):8.2f} ms  (n={len(samples.values)})")


def main(argv: list[str] | None = None) -> None:
    """Generate (once) and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--downloads", type=int, default=100_000, help="history size for the pass")
    parser.add_argument("--small", type=int, default=10_000, help="smaller history for the memory row")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds of idle sampling")
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    parser.add_argument("--child-rss", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_rss is not None:
        with tempfile.TemporaryDirectory(prefix="jellybit-bench-") as scratch:
            print(json.dumps(asyncio.run(child_rss(args.child_rss, Path(scratch)))))
        return
    large, small = history(args.downloads), history(args.small)
    before = load()
    with tempfile.TemporaryDirectory(prefix="jellybit-bench-") as scratch:
        result = asyncio.run(measure(large, Path(scratch), args.idle))
    idle, busy = result["idle"], result["busy"]
    assert isinstance(idle, Probe)
    assert isinstance(busy, Probe)
    seconds = float(result["seconds"])  # type: ignore[arg-type]
    print(f"\nreconciliation pass over {args.downloads:,} downloads: {seconds:.1f} s, checked "
          f"{result['checked']:,} of {result['total']:,}, moved {result['moved']:,}")
    for label, probe in (("idle", idle), ("during the pass", busy)):
        print(f" {label}")
        print(line("get (a command)", probe.get))
        print(line("update_download (a poll's write)", probe.write))
        print(line("event loop lag (10 ms ticker)", probe.lag))
    memory_small, memory_large = memory(small), memory(large)
    print(f"\nworker RSS after a pass: {memory_small['after']:.1f} MB with {args.small:,} downloads, "
          f"{memory_large['after']:.1f} MB with {args.downloads:,} (opened: {memory_small['opened']:.1f} / "
          f"{memory_large['opened']:.1f} MB); per-download state kept afterwards: "
          f"{memory_small['tracked']:.0f} / {memory_large['tracked']:.0f}")
    after = load()
    print(describe_load(before, after))
    worst = max(busy.lag.values)
    emit(Row(f"reconcile, {args.downloads:,} history rows: get p99 during the pass", ms(busy.get.p(0.99)),
             "ms", ms(idle.get.p(0.99)), "get p99 idle", "never blocks polling or commands",
             worst < 0.25, f"pass {seconds:.1f} s; longest loop stall {ms(worst):.0f} ms (idle "
             f"{ms(max(idle.lag.values)):.0f} ms); write p99 {ms(busy.write.p(0.99)):.1f} ms (idle "
             f"{ms(idle.write.p(0.99)):.1f} ms)"), args.json)
    emit(Row(f"RSS with {args.downloads:,} history rows, after a pass", memory_large["after"], "MB",
             memory_small["after"], f"RSS with {args.small:,}", "<= 100 MB, flat in history size",
             memory_large["after"] <= 100 and memory_large["tracked"] == 0,
             f"per-download state kept: {memory_large['tracked']:.0f}"), args.json)


if __name__ == "__main__":
    sys.exit(main())
