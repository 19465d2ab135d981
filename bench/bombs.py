"""Benchmark: the worker's memory under twenty hostile `.torrent` files at once (issue 28: the worker
peaked at 289 MiB and its parsing children at 747 MiB together).

Run: .venv/bin/python bench/bombs.py [--bombs 20] [--kind lists] [--python PATH]

A real `jellybit run` process on a real mosquitto (loopback, a free port), qBittorrent on a closed
port. First the idle worker is measured (after one ordinary `.torrent` was added, so the parser's
forkserver is running, as in any worker that has read a torrent). Then `--bombs` clients each send
one `add` with a bencode bomb at the same moment, and every answer is awaited. A bomb is a
`.torrent` that is small on the wire and large once decoded: a valid torrent plus an extra key
holding about three million empty lists (`--kind lists`, ~6 MiB, ~8 MiB in base64) or dictionaries
(`dicts`), each 2 bytes in the file and 56-64 bytes in Python.

Memory is sampled every 10 ms from /proc: the worker's resident memory (its exact peak from VmHWM),
and the sum over every process under it (the forkserver and the parsing children) as RSS and as
PSS (shared pages split between the processes that share them, so the sum is what they really
hold together). The figures are printed next to the idle worker's, with their ratios. Goals: the
worker's own peak ≤ 150 MiB, worker and children together ≤ 300 MiB; every bomb answered with an
error and no download created. `--python` runs the worker with another interpreter (an older
checkout's venv) for a same-machine comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Row, describe_load, emit, load  # noqa: E402
from bench.reconnect import online_after  # noqa: E402
from jellybit.protocol import Topics  # noqa: E402
from tests.support.fault_stack import RestartableBroker  # noqa: E402
from tests.support.worker_process import process_env, requests_at_once, worker_config  # noqa: E402

MIB = 1024 * 1024

WORKER_GOAL = 150 * MIB
TOTAL_GOAL = 300 * MIB
UNITS = {"lists": b"le", "dicts": b"de"}


def _text(value: bytes) -> bytes:
    return str(len(value)).encode() + b":" + value


def torrent(name: bytes, extra: bytes = b"") -> bytes:
    """A small valid single-file v1 torrent, with `extra` bencoded keys after its `info`."""
    info = (b"d6:lengthi1048576e4:name" + _text(name) + b"12:piece lengthi262144e6:pieces"
            + _text(b"\x01" * 80) + b"e")
    return b"d4:info" + info + extra + b"e"


def bomb(kind: str, count: int, n: int) -> bytes:
    """A torrent with a `zz` key holding `count` empty containers (a distinct name per bomb)."""
    return torrent(f"Bomb.{n}".encode(), b"2:zzl" + UNITS[kind] * count + b"e")


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, grandchildren, …)."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def rss(pid: int) -> int:
    """Resident memory of one process in bytes (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def pss(pid: int) -> int:
    """Proportional set size of one process in bytes (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def hwm(pid: int) -> int:
    """The process's peak resident memory (VmHWM) in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


@dataclass
class Peaks:
    """The highest figures seen by the sampler."""

    worker: int = 0
    children_rss: int = 0
    children_pss: int = 0
    total_pss: int = 0            # worker + children at the same instant
    children: int = 0             # most processes under the worker at once


def snapshot(pid: int) -> tuple[int, int, int, int]:
    """(worker RSS, children RSS, children PSS, processes under the worker) right now."""
    kids = descendants(pid)
    return rss(pid), sum(rss(k) for k in kids), sum(pss(k) for k in kids), len(kids)


def sampler(pid: int, peaks: Peaks, stop: threading.Event) -> None:
    """Sample every 10 ms until `stop` (a thread: the event loop is busy sending the bombs)."""
    while not stop.is_set():
        worker, kids_rss, kids_pss, kids = snapshot(pid)
        peaks.worker = max(peaks.worker, worker)
        peaks.children_rss = max(peaks.children_rss, kids_rss)
        peaks.children_pss = max(peaks.children_pss, kids_pss)
        peaks.total_pss = max(peaks.total_pss, pss(pid) + kids_pss)
        peaks.children = max(peaks.children, kids)
        time.sleep(0.01)


async def send(port: int, topics: Topics, payloads: list[bytes], within: float,
               command: str = "add") -> list[dict]:
    """Every request at once, one client each; every answer."""
    return await requests_at_once(port, topics, command, payloads, within=within)


def request(data: bytes, context: str) -> bytes:
    """An `add` request carrying a .torrent."""
    return json.dumps({"torrent": base64.b64encode(data).decode(), "context": context}).encode()


async def scenario(args: argparse.Namespace, pid: int, port: int, topics: Topics) -> int:
    """Idle figures, the bombs, the peaks, the answers; the exit status (1 = a goal missed)."""
    warm = await send(port, topics, [request(torrent(b"Warm.Up"), "warm-up")], 60)
    assert warm[0]["status"] == "ok", warm
    await asyncio.sleep(2.0)
    idle_worker, idle_kids_rss, idle_kids_pss, idle_kids = snapshot(pid)
    idle_total = pss(pid) + idle_kids_pss
    payloads = [request(bomb(args.kind, args.count, n), f"bomb {n}") for n in range(args.bombs)]
    print(f"{args.bombs} bombs of {args.kind}: {len(bomb(args.kind, args.count, 0)) / MIB:.1f} MiB each, "
          f"{len(payloads[0]) / MIB:.1f} MiB on the wire", flush=True)
    peaks = Peaks()
    stop = threading.Event()
    thread = threading.Thread(target=sampler, args=(pid, peaks, stop), daemon=True)
    thread.start()
    started = time.perf_counter()
    answers = await send(port, topics, payloads, 300)
    took = time.perf_counter() - started
    await asyncio.sleep(1.0)
    stop.set()
    thread.join()
    after_worker = rss(pid)
    listing = await send(port, topics, [json.dumps({"limit": 500}).encode()], 60, "list")
    codes = Counter("ok" if a["status"] == "ok" else a["error"]["code"] for a in answers)
    messages = sorted({a["error"]["message"] for a in answers if a["status"] == "error"})
    peak_worker = max(peaks.worker, hwm(pid))

    def line(what: str, idle: int, peak: int) -> None:
        print(f"{what:44} {idle / MIB:8.1f} {peak / MIB:8.1f} {peak / idle if idle else 0:7.2f}x")

    print(f"\n{'measure (MiB)':44} {'idle':>8} {'peak':>8} {'ratio':>8}")
    line("worker RSS (peak from VmHWM)", idle_worker, peak_worker)
    line("processes under the worker, RSS summed", idle_kids_rss, peaks.children_rss)
    line("processes under the worker, PSS summed", idle_kids_pss, peaks.children_pss)
    line("worker + processes under it, PSS", idle_total, peaks.total_pss)
    print(f"processes under the worker: {idle_kids} idle, at most {peaks.children} at once")
    print(f"worker RSS one second after the last answer: {after_worker / MIB:.1f} MiB")
    print(f"answers in {took:.1f} s: {dict(codes)}")
    for message in messages:
        print(f"  - {message}")
    downloads = listing[0]["data"]["total"] if listing[0]["status"] == "ok" else None
    print(f"downloads in the store: {downloads} (the warm-up torrent only: 1)")
    print(describe_load(args.load_before, load()))
    ok = (peak_worker <= WORKER_GOAL and peaks.total_pss <= TOTAL_GOAL and codes.get("ok", 0) == 0
          and downloads == 1)
    emit(Row("worker peak RSS under 20 bombs", peak_worker / MIB, "MB", baseline=idle_worker / MIB,
             baseline_name="idle worker", goal="≤ 150 MiB", met=peak_worker <= WORKER_GOAL), args.json)
    emit(Row("worker + children peak PSS under 20 bombs", peaks.total_pss / MIB, "MB",
             baseline=idle_total / MIB, baseline_name="idle worker", goal="≤ 300 MiB",
             met=peaks.total_pss <= TOTAL_GOAL), args.json)
    return 0 if ok else 1


def run(args: argparse.Namespace) -> int:
    """Start the broker and the worker, run the scenario, stop everything."""
    args.load_before = load()
    with tempfile.TemporaryDirectory(prefix="jb-bombs-") as tmp:
        root = Path(tmp)
        broker = RestartableBroker(root / "broker")
        broker.directory.mkdir()
        broker.start()
        folder = root / "worker"
        folder.mkdir()
        config = worker_config(folder, mqtt_url=broker.url)
        base = next(line.split('"')[1] for line in config.read_text().splitlines()
                    if line.startswith("base_topic"))
        with (folder / "worker.log").open("ab") as out:
            worker = subprocess.Popen([args.python, "-m", "jellybit", "--config", str(config), "run"],
                                      stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=process_env(),
                                      cwd=folder)    # not this checkout: `-m` would import its jellybit
        try:
            asyncio.run(online_after(broker.port, Topics(base).availability, time.monotonic()))
            return asyncio.run(scenario(args, worker.pid, broker.port, Topics(base)))
        except BaseException:
            print((folder / "worker.log").read_text()[-3000:], file=sys.stderr)
            raise
        finally:
            worker.terminate()
            worker.wait(60)
            broker.close()


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bombs", type=int, default=20)
    parser.add_argument("--kind", choices=sorted(UNITS), default="lists")
    parser.add_argument("--count", type=int, default=2_990_000, help="empty containers per bomb")
    parser.add_argument("--python", default=sys.executable, help="the worker's interpreter")
    parser.add_argument("--json", action="store_true", help="print BENCH lines for bench/all.py")
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
