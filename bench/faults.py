"""Fault injection, the heavy version of tests/faults/: many kills and outages, every invariant
checked after each one.

Run: .venv/bin/python bench/faults.py [--files 2000] [--kills 12] [--outages 3] [--seed 15]

1. kill -9 at a random moment of apply, undo and recovery, on a pack of `--files` episodes (plus a
   subtitle for every fourth), with hardlinks and with the copy fallback; the worker's recovery
   runs, the invariants are checked, and the operation is finished and checked again.
2. A real `jellybit run` worker with its own mosquitto and a real qbittorrent-nox: qBittorrent
   stopped, the broker killed mid-command, both at once, the database held by another process.
3. The library filesystem full in the middle of a layout (a small tmpfs; needs root).

Invariants (tests/support/faults.py, fault_stack.py): no source touched; no batch left open; no
lost or duplicate link; no half-written copy or temporary file; no false failure; no acknowledged
command lost; nothing added to qBittorrent twice. Exit status 1 if any was broken.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jellybit.adapters.library.layouter import LayoutEngine  # noqa: E402
from jellybit.adapters.store import Store  # noqa: E402
from jellybit.core.models import Download  # noqa: E402
from jellybit.core.records import Recognition  # noqa: E402
from tests.support import fault_scenarios  # noqa: E402
from tests.support.fault_stack import FaultStack, RestartableBroker, worker_config  # noqa: E402
from tests.support.faults import (  # noqa: E402
    check_invariants,
    kill_at_random,
    planned_files,
    season_pack,
    timed,
)
from tests.support.media import Media  # noqa: E402
from tests.support.qbittorrent import QbittorrentInstance, QbittorrentProcess  # noqa: E402
from tests.support.worker_process import WorkerProcess  # noqa: E402


@dataclass
class Tally:
    """One line of the report."""

    scenario: str
    runs: int = 0
    faults: int = 0
    violations: list[str] = field(default_factory=list)
    notes: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def line(self) -> str:
        notes = ", ".join(f"{k} {v}" for k, v in self.notes.items())
        return (f"{self.scenario:50} {self.runs:5} {self.faults:7} {len(self.violations):10}  "
                f"{self.seconds:7.1f} s  {notes}")


async def kills(args: argparse.Namespace, rng: random.Random) -> list[Tally]:
    """Part 1: kill -9 during apply, undo and recovery."""
    tallies = []
    for copy in (False, True):
        mode = "copy fallback" if copy else "hardlinks"
        with tempfile.TemporaryDirectory(prefix="jb-faults-") as tmp:
            media = Media(Path(tmp) / "media")
            store = Store(Path(tmp) / "jellybit.db")
            await store.open()
            try:
                download, recognition = await season_pack(store, media, "Pack", args.files)
                engine = LayoutEngine(store, media.paths)
                expected = planned_files(recognition)
                applying = timed(store.path, media, download.id, "apply", copy=copy)
                undoing = timed(store.path, media, download.id, "undo", copy=copy)
                for op, span in (("apply", applying), ("undo", undoing), ("recover", applying)):
                    tally = Tally(f"kill -9 during {op} ({mode}, {expected} files)")
                    started = time.monotonic()
                    for _ in range(args.kills):
                        tally.runs += 1
                        try:
                            mid, unrecorded = await one_kill(store, media, engine, download, recognition, op,
                                                             span, copy=copy, rng=rng, expected=expected)
                            tally.faults += 1 + (op == "recover")
                            tally.notes["mid-operation"] = tally.notes.get("mid-operation", 0) + mid
                            if op == "undo":
                                tally.notes["undone, not yet recorded"] = (
                                    tally.notes.get("undone, not yet recorded", 0) + unrecorded)
                        except AssertionError as exc:
                            tally.violations.append(str(exc))
                    tally.seconds = time.monotonic() - started
                    tallies.append(tally)
                    print(tally.line(), flush=True)
            finally:
                await store.close()
    return tallies


async def one_kill(store: Store, media: Media, engine: LayoutEngine, download: Download,
                   recognition: Recognition, op: str, span: float, *, copy: bool, rng: random.Random,
                   expected: int) -> tuple[int, int]:
    """One fault and the checks after it: (1 when the kill landed mid-operation, links an interrupted
    undo removed before it could record them)."""
    if op == "undo":
        assert (await engine.apply(download, recognition)).outcome == "done"
    target = "apply" if op == "recover" else op
    kill = kill_at_random(store.path, media, download.id, target, copy=copy, rng=rng, within=span)
    landed = kill.killed
    if op == "recover":
        second = kill_at_random(store.path, media, download.id, "recover", copy=copy, rng=rng,
                                within=span / 2)
        landed = landed or second.killed
    await engine.recover()
    after = await check_invariants(store, media, download.id, undo_interrupted=op == "undo")
    if op in ("apply", "recover"):
        assert (await engine.apply(download, recognition)).outcome == "done"
        assert (await check_invariants(store, media, download.id))["live"] == expected
    assert (await engine.undo(download)).complete
    assert (await check_invariants(store, media, download.id))["live"] == 0
    return int(landed), after["undone_unrecorded"]


async def outages(args: argparse.Namespace, rng: random.Random) -> list[Tally]:
    """Part 2: a real worker, broker and qBittorrent."""
    scenarios: list[tuple[str, Callable[[FaultStack, QbittorrentInstance], Awaitable[dict[str, int]]]]] = [
        ("qBittorrent stopped", fault_scenarios.qbittorrent_outage),
        ("broker killed mid-command (3 cycles)",
         lambda s, q: fault_scenarios.broker_outages(s, q, random.Random(rng.random()))),
        ("broker and qBittorrent down at once", fault_scenarios.both_outages),
        ("database held by another process", fault_scenarios.database_held),
    ]
    tallies = []
    with tempfile.TemporaryDirectory(prefix="jb-faults-") as tmp:
        server = QbittorrentProcess(Path(tmp) / "qbittorrent")
        server.start()
        try:
            for name, scenario in scenarios:
                tally = Tally(name)
                started = time.monotonic()
                for run in range(args.outages):
                    tally.runs += 1
                    folder = Path(tmp) / f"{len(tallies)}-{run}"
                    data = folder / "data"
                    data.mkdir(parents=True)
                    qbittorrent = QbittorrentInstance(server.url, server.username, server.password, data,
                                                      server)
                    try:
                        figures = await with_stack(folder, qbittorrent, scenario)
                        tally.faults += 1 if "cycles" not in name else 3
                        for key, value in figures.items():
                            tally.notes[key] = tally.notes.get(key, 0) + value
                    except AssertionError as exc:
                        tally.violations.append(str(exc) or traceback.format_exc(limit=2))
                    finally:
                        server.start()
                        server.reset()
                tally.seconds = time.monotonic() - started
                tallies.append(tally)
                print(tally.line(), flush=True)
        finally:
            server.stop()
    return tallies


async def with_stack(folder: Path, qbittorrent: QbittorrentInstance,
                     scenario: Callable[[FaultStack, QbittorrentInstance], Awaitable[dict[str, int]]]
                     ) -> dict[str, int]:
    """A fresh broker and worker around one scenario."""
    broker = RestartableBroker(folder)
    broker.start()
    config = worker_config(folder, broker, qbittorrent)
    worker = WorkerProcess(config, folder / "worker.log")
    worker.start()
    stack = FaultStack(config, worker, broker)
    try:
        await stack.online()
        return await scenario(stack, qbittorrent)
    finally:
        worker.close()
        broker.close()


async def disk_full(args: argparse.Namespace) -> Tally:
    """Part 3: the library's filesystem fills up mid-layout, then gets room again."""
    tally = Tally("library filesystem full (tmpfs, copies)")
    started = time.monotonic()
    for _ in range(args.outages):
        tally.runs += 1
        with tempfile.TemporaryDirectory(prefix="jb-faults-") as tmp:
            media = Media(Path(tmp) / "media")
            problem = mount(["-t", "tmpfs", "-o", "size=192k", "tmpfs", str(media.series)])
            if problem:
                tally.violations.append(f"cannot mount a tmpfs (root needed): {problem}")
                break
            store = Store(Path(tmp) / "jellybit.db")
            await store.open()
            try:
                download, recognition = await season_pack(store, media, "Big", 48, size=8192)
                engine = LayoutEngine(store, media.paths, chunk=8)
                result = await engine.apply(download, recognition)
                assert result.outcome == "failed", result.outcome
                tally.faults += 1
                await engine.recover()
                await check_invariants(store, media, download.id)
                assert not mount(["-o", "remount,size=4m", str(media.series)])
                assert (await engine.apply(download, recognition)).outcome == "done"
                laid = (await check_invariants(store, media, download.id))["live"]
                assert laid == planned_files(recognition)
            except AssertionError as exc:
                tally.violations.append(str(exc))
            finally:
                await store.close()
                unmount(media.series)
    tally.seconds = time.monotonic() - started
    print(tally.line(), flush=True)
    return tally


def mount(arguments: list[str]) -> str:
    """Run mount(8); its error, or "" when it worked."""
    done = subprocess.run(["mount", *arguments], capture_output=True, text=True, check=False)
    return "" if done.returncode == 0 else (done.stderr.strip() or f"status {done.returncode}")


def unmount(target: Path) -> None:
    """Lazily unmount a test filesystem."""
    subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


async def main_async(args: argparse.Namespace) -> int:
    """Every part in turn; the report; 1 when an invariant broke."""
    logging.basicConfig(level=logging.CRITICAL)     # the faults are expected: keep their logs quiet
    rng = random.Random(args.seed)
    print(f"{'scenario':50} {'runs':>5} {'faults':>7} {'violations':>10}  {'time':>9}  figures")
    tallies = await kills(args, rng)
    tallies += await outages(args, rng)
    tallies.append(await disk_full(args))
    broken = [(t.scenario, v) for t in tallies for v in t.violations]
    print(f"\n{sum(t.faults for t in tallies)} faults injected, {len(broken)} invariant violations")
    for scenario, violation in broken[:10]:
        print(f"  {scenario}: {violation[:300]}")
    return 1 if broken else 0


def main() -> None:
    """Parse arguments and run every part."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000, help="episodes in the pack (default 2000)")
    parser.add_argument("--kills", type=int, default=12, help="kills per operation and mode (default 12)")
    parser.add_argument("--outages", type=int, default=3, help="repetitions of each outage (default 3)")
    parser.add_argument("--seed", type=int, default=15)
    sys.exit(asyncio.run(main_async(parser.parse_args())))


if __name__ == "__main__":
    main()
