"""Benchmark: a torrent completes in qBittorrent → the worker has it in recognition, by polling or the hook.

Run: .venv/bin/python bench/completion.py [--rounds 10] [--poll-interval 2.0] [--json]

A throwaway qbittorrent-nox and mosquitto (loopback only); the real worker loop (`Worker.run`,
`poll_interval` 2 s as shipped) with in-test recognizer and layouter, and the real MQTT bridge.
Each round adds a seeded torrent whose data is not there yet (qBittorrent lists it as downloading),
waits until the worker has it in `downloading`, puts the data back and asks qBittorrent to check it
again: qBittorrent finds it complete and "finishes" the torrent. Measured from the moment a raw
`torrents/info` probe (every 10 ms) first sees the torrent complete to the worker's `recognizing`
event, for three ways, interleaved round by round:
  poll        no hook: the next poll finds it (the baseline: what polling alone gives)
  hook cli    qBittorrent runs `jellybit notify %I` (a Python process) → MQTT → the worker polls now
  hook pub    qBittorrent runs `mosquitto_pub … -m %I` → MQTT → the worker polls now
Goal (issue 16): p50 at most 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.store import Store
from jellybit.config import Config, MqttConfig, PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.states import State
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus, EventKind
from jellybit.engine.worker import Worker
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers
from tests.support.engine import ScriptedLayouter, ScriptedRecognizer, source_guard
from tests.support.mosquitto import start_mosquitto
from tests.support.qbittorrent import QbittorrentProcess, seeded_torrent

ROOT = Path(__file__).resolve().parents[1]
WAIT = 60.0
COMPLETE = {"uploading", "stalledUP", "pausedUP", "stoppedUP", "queuedUP", "forcedUP"}


async def until(predicate, what: str, interval: float = 0.01):  # type: ignore[no-untyped-def]
    """Await `predicate()` until truthy; fail after WAIT seconds."""
    deadline = time.monotonic() + WAIT
    while not (value := await predicate()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the benchmark timed out waiting for {what}")
        await asyncio.sleep(interval)
    return value


async def run(root: Path, rounds: int, interval: float, as_json: bool) -> None:
    """Set everything up, run the interleaved rounds, print the table."""
    server = QbittorrentProcess(root / "qbittorrent")
    server.start()
    (root / "mqtt").mkdir()
    broker_proc, broker = start_mosquitto(root / "mqtt")
    base = "jb-bench"
    mqtt = MqttConfig(url=broker.url, base_topic=base, client_id="bench-worker")
    cli_config = root / "cli.toml"
    cli_config.write_text(f'[mqtt]\nurl = "{broker.url}"\nbase_topic = "{base}"\n')
    programs = {
        "poll": "",
        "hook cli": f"env PYTHONPATH={ROOT} {sys.executable} -m jellybit "
                    f"--config {cli_config} notify %I",
        "hook pub": f"mosquitto_pub -h 127.0.0.1 -p {broker.port} -q 1 -t {base}/request/notify -m %I",
    }
    qbt = QbittorrentConfig(url=server.url, username=server.username, password=server.password,
                            save_path=str(server.data_root))
    store = Store(root / "bench.db")
    await store.open()
    bus = EventBus()
    worker = Worker(store, bus, QbittorrentClient(qbt), ScriptedRecognizer(), ScriptedLayouter(),
                    worker=WorkerConfig(poll_interval=interval), qbittorrent=qbt, reconnect_grace=0.0,
                    paths=PathsConfig(downloads=server.data_root, movies=root / "m", series=root / "s"))
    commands = Commands(store, bus, worker, guard=source_guard(worker))
    state = EngineState(commands, bus, Config(mqtt=mqtt), sweep_interval=600, info_interval=600)
    bridge = MqttBridge(mqtt, handlers=build_handlers(commands), state=state, results=store)
    tasks = [asyncio.create_task(bridge.run()), asyncio.create_task(worker.run())]
    admin = httpx.AsyncClient(base_url=f"{server.url}/api/v2/", timeout=30)
    results: dict[str, list[float]] = {name: [] for name in programs}
    before = load()
    try:
        await admin.post("auth/login", data={"username": server.username, "password": server.password})
        await asyncio.wait_for(bridge.connected.wait(), 10)
        names = list(programs)
        for n in range(rounds):
            for name in names[n % 3:] + names[:n % 3]:     # a different order each round
                results[name].append(await one_round(admin, store, bus, commands, server, programs[name],
                                                     f"r{n}-{name.replace(' ', '-')}"))
    finally:
        await worker.stop()
        await asyncio.wait([tasks[1]], timeout=30)        # the loop ends; its stages finish
        await bridge.stop()
        for task in tasks:
            task.cancel()
        _, pending = await asyncio.wait(tasks, timeout=10)
        for task in pending:
            task.print_stack()
        await admin.aclose()
        await worker.client.close()  # type: ignore[attr-defined]
        await store.close()
        server.stop()
        broker_proc.terminate()
    report(results, interval, describe_load(before, load()), as_json)


async def one_round(admin: httpx.AsyncClient, store: Store, bus: EventBus, commands: Commands,
                    server: QbittorrentProcess, program: str, name: str) -> float:
    """Seconds from qBittorrent's completion to the worker's `recognizing` for one torrent."""
    values = {"autorun_enabled": bool(program), "autorun_program": program}
    (await admin.post("app/setPreferences", data={"json": json.dumps(values)})).raise_for_status()
    # In qBittorrent's save path (where the worker adds it); the data waits elsewhere.
    seeded = seeded_torrent(server.data_root, f"Bench.Movie.{name}", {"movie.mkv": 200_000})
    away = server.data_root.parent / f"away-{name}"
    shutil.move(seeded.content, away)
    added = await commands.add(torrent=seeded.torrent)
    download_id = added.download.id

    async def downloading() -> bool:
        return (await store.get_download(download_id)).state is State.DOWNLOADING

    await until(downloading, "downloading", interval=0.05)
    events = bus.subscribe()
    shutil.move(away, seeded.content)
    (await admin.post("torrents/recheck", data={"hashes": seeded.infohash_v1})).raise_for_status()

    async def complete() -> float | None:
        info = (await admin.get("torrents/info", params={"hashes": seeded.infohash_v1})).json()
        return time.perf_counter() if info and info[0]["state"] in COMPLETE else None

    async def recognizing() -> float:
        async for event in events:
            if event.download_id == download_id and event.to_state is State.RECOGNIZING \
                    and event.event_type is EventKind.STATE_CHANGED:
                return time.perf_counter()
        raise RuntimeError("the event bus closed")

    picked = asyncio.create_task(recognizing())
    finished = await until(complete, "qBittorrent's completion")
    try:
        seen = await asyncio.wait_for(picked, WAIT)
    finally:
        events.close()
    return seen - finished


def report(results: dict[str, list[float]], interval: float, machine: str, as_json: bool) -> None:
    """Print p50 / p90 per way and the ratio to polling alone."""
    poll = statistics.median(results["poll"])
    print(f"\ncomplete in qBittorrent -> recognizing, poll_interval {interval:g} s, "
          f"{len(results['poll'])} rounds each, interleaved; {machine}")
    print(f"  {'way':10} {'p50':>9} {'p90':>9} {'vs poll':>8}")
    for name, values in results.items():
        ordered = sorted(values)
        p50, p90 = statistics.median(values), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        print(f"  {name:10} {p50 * 1000:7.0f} ms {p90 * 1000:7.0f} ms {p50 / poll:7.2f}x")
        if name != "poll":
            emit(Row(f"complete -> recognizing, {name}", p50 * 1000, "ms", poll * 1000,
                     f"polling alone every {interval:g} s", "<= 500 ms p50", p50 <= 0.5), as_json)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run in a throwaway directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="torrents per way")
    parser.add_argument("--poll-interval", type=float, default=2.0, help="the worker's poll interval")
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="jellybit-bench-completion-"))
    try:
        asyncio.run(run(root, args.rounds, args.poll_interval, args.json))
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
