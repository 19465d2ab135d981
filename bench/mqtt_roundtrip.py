"""Benchmark: request→response round trips through mosquitto against a bare publish→echo on the same broker.

Run: .venv/bin/python bench/mqtt_roundtrip.py [--downloads 1000] [--recognized 0] [--requests 1000] [--json]

One process, one event loop, one mosquitto (TCP_NODELAY) on a free loopback port. A real store in a
temp dir gets `--downloads` downloads through the real ingest (`Commands.add`), the newest
`--recognized` of them a current recognition (a title, a folder, reasons and two candidates, the
chosen one with a poster) through the store, as a history mostly laid out has; the real bridge
(with Home Assistant discovery) publishes them all, retained, and serves requests. The worker's poll
loop is not running (there is no qBittorrent), so only the transport and the commands are timed.

Measured, sequentially and interleaved, `--requests` times each, QoS 1 and MQTT 5 everywhere:
- `get` of a random download and `list` (first page, 50 items) through `jellybit.client.JellybitClient`;
- echo: one aiomqtt client publishes, a second one republishes to a reply topic, the first awaits it.

Goals (issue 16): `get` p50 within 2x and `list` p50 within 3x of the echo's p50; the database
trips per request (the reader's) are counted too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import pstats
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiomqtt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import Row, describe_load, emit, load

from jellybit.adapters import resolver
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.adapters.store import Store
from jellybit.client import JellybitClient
from jellybit.config import Config, MqttConfig, PathsConfig, QbittorrentConfig, WorkerConfig
from jellybit.core.addresses import AllowList
from jellybit.core.ports import RecognitionRequest
from jellybit.core.records import Candidate, MediaType, Plan, Reason, RecognitionDraft
from jellybit.engine.commands import Commands
from jellybit.engine.events import EventBus
from jellybit.engine.source_guard import SourceGuard
from jellybit.engine.worker import Worker
from jellybit.protocol import Command, Topics
from jellybit.transports.homeassistant import HomeAssistantDiscovery
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers

NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mosquitto(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    """mosquitto on loopback with TCP_NODELAY (docs testing.md §2); returns once it accepts."""
    binary = shutil.which("mosquitto")
    if binary is None:
        sys.exit("mosquitto is not installed (bash .ci/run installs it)")
    port = free_port()
    conf = directory / "mosquitto.conf"
    conf.write_text(f"per_listener_settings false\nlistener {port} 127.0.0.1\nallow_anonymous true\n"
                    "persistence false\nset_tcp_nodelay true\nlog_dest none\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, port
        except OSError:
            time.sleep(0.02)
    proc.kill()
    sys.exit("mosquitto did not start")


class IdleRecognizer:
    """Recognizer port for a worker whose poll loop never runs (nothing is ever recognized)."""

    async def recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Never called in this benchmark."""
        raise RuntimeError("the benchmark does not recognize anything")


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000  # noqa: E731
    return pick(0.50), pick(0.99)


async def timed_request(client: JellybitClient, command: Command, payload: dict[str, Any]) -> float:
    """Seconds for one request→response; the response must be ok."""
    started = time.perf_counter()
    response = await client.request(command, payload)
    elapsed = time.perf_counter() - started
    if response.status != "ok":
        sys.exit(f"{command} failed: {response.error}")
    return elapsed


@contextlib.asynccontextmanager
async def echo_pair(port: int) -> AsyncIterator[Callable[[], Awaitable[float]]]:
    """Two aiomqtt clients (QoS 1, v5, NODELAY) and a function timing one bare publish→echo round trip."""
    options: dict[str, Any] = {"hostname": "127.0.0.1", "port": port,
                               "protocol": aiomqtt.ProtocolVersion.V5, "socket_options": NODELAY}
    async with aiomqtt.Client(identifier="bench-echo", **options) as echo, \
            aiomqtt.Client(identifier="bench-ping", **options) as ping:
        await echo.subscribe("bench/echo/request", qos=1)
        await ping.subscribe("bench/echo/reply", qos=1)

        async def serve() -> None:
            async for message in echo.messages:
                await echo.publish("bench/echo/reply", message.payload, qos=1)

        server = asyncio.create_task(serve())
        replies = aiter(ping.messages)

        async def once() -> float:
            started = time.perf_counter()
            await ping.publish("bench/echo/request", b'{"id":"x"}', qos=1)
            await asyncio.wait_for(anext(replies), 10)
            return time.perf_counter() - started

        try:
            yield once
        finally:
            server.cancel()
            await asyncio.gather(server, return_exceptions=True)


def recognition(n: int) -> RecognitionDraft:
    """A finished movie recognition with its reasons and two candidates (the chosen one has a poster)."""
    return RecognitionDraft(
        MediaType.MOVIE, f"Фильм {n}", 1999, Plan(folder=f"Фильм {n} (1999) [tmdbid-{n}]"),
        original_title=f"Film {n}", provider="tmdb", provider_id=str(n), confidence=0.93,
        reasons=(Reason("year_close", "the year differs by one", 0.1, False),),
        candidates=(Candidate("tmdb", str(n), MediaType.MOVIE, f"Фильм {n}", 1999,
                              poster_url=f"https://image.tmdb.org/t/p/w342/{n}.jpg", chosen=True),
                    Candidate("tmdb", str(n + 1), MediaType.MOVIE, f"Фильм {n} II", 2001)))


async def main(downloads: int, requests: int, as_json: bool, profile: bool = False,
               recognized: int = 0) -> None:
    """Set everything up, measure, print."""
    warmup = max(10, requests // 20)
    with tempfile.TemporaryDirectory(prefix="jellybit-bench-") as tmp:
        base = Path(tmp)
        broker, port = start_mosquitto(base)
        store = Store(base / "bench.db")
        await store.open()
        bus = EventBus()
        qbt = QbittorrentConfig(url=f"http://127.0.0.1:{free_port()}", password="x", timeout=2.0)
        client = QbittorrentClient(qbt)
        paths = PathsConfig(downloads=base / "downloads", movies=base / "movies", series=base / "series")
        worker = Worker(store, bus, client, IdleRecognizer(), LayoutEngine(store, paths),
                        worker=WorkerConfig(), qbittorrent=qbt, paths=paths)
        commands = Commands(store, bus, worker, guard=SourceGuard(AllowList(), resolve=resolver.resolve))
        bridge_task: asyncio.Task[None] | None = None
        try:
            rng = random.Random(7)
            ids: list[str] = []
            started = time.perf_counter()
            for n in range(downloads):
                magnet = f"magnet:?xt=urn:btih:{rng.randbytes(20).hex()}&dn=Show.S01E{n:04d}.1080p"
                result = await commands.add(source=magnet)
                ids.append(result.download.id)
            for n, download_id in enumerate(ids[len(ids) - recognized:]):
                await store.save_recognition(download_id, recognition(n))
            ingest = time.perf_counter() - started

            mqtt = MqttConfig(url=f"mqtt://127.0.0.1:{port}", base_topic="bench", client_id="bench-worker")
            topics = Topics(mqtt.base_topic, mqtt.discovery_prefix)
            bridge = MqttBridge(mqtt, handlers=build_handlers(commands),
                                state=EngineState(commands, bus, Config(mqtt=mqtt)), results=store,
                                extensions=(HomeAssistantDiscovery(topics),))
            started = time.perf_counter()
            bridge_task = asyncio.create_task(bridge.run())
            await asyncio.wait_for(bridge.connected.wait(), 60)
            connect = time.perf_counter() - started

            # Interleaved (get, list, echo, get, ...) so all three see the same machine load.
            samples: dict[str, list[float]] = {"get": [], "list": [], "echo": []}
            before = load()
            trips, inline = store.reader.trips, store.reader.inline
            profiler = cProfile.Profile() if profile else None
            async with JellybitClient(mqtt, name="bench") as api, echo_pair(port) as echo_once:
                for n in range(requests + warmup):
                    round_trips = {"get": await timed_request(api, Command.GET, {"id": rng.choice(ids)}),
                                   "list": await timed_request(api, Command.LIST, {}),
                                   "echo": await echo_once()}
                    if n >= warmup:
                        for key, seconds in round_trips.items():
                            samples[key].append(seconds)
                    if profiler is not None and n == warmup:
                        profiler.enable()
            if profiler is not None:
                profiler.disable()
                text = io.StringIO()
                pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(25)
                print("profile of the measured rounds (client and worker share this process):")
                print(text.getvalue())
            per_request = (store.reader.trips - trips) / (2 * (requests + warmup))
            on_loop = (store.reader.inline - inline) / max(1, store.reader.trips - trips)
            after = load()
        finally:
            if bridge_task is not None:
                await bridge.stop()
                bridge_task.cancel()
                await asyncio.gather(bridge_task, return_exceptions=True)
            await client.close()
            await store.close()
            broker.terminate()
            broker.wait(5)

    gets, lists, echo = samples["get"], samples["list"], samples["echo"]
    echo50 = percentiles(echo)[0]
    print(f"downloads tracked: {downloads}, {recognized} recognized (ingested in {ingest:.2f} s; bridge "
          "connected and published "
          f"all retained state in {connect:.2f} s)")
    print(f"{'round trip':<28}{'p50 ms':>9}{'p99 ms':>9}{'p50 / echo p50':>16}")
    for label, series in ((f"get (n={len(gets)})", gets), (f"list, 50 items (n={len(lists)})", lists),
                          (f"bare echo (n={len(echo)})", echo)):
        p50, p99 = percentiles(series)
        print(f"{label:<28}{p50:>9.2f}{p99:>9.2f}{p50 / echo50:>15.1f}x")
    print(f"database trips per get or list: {per_request:.2f} "
          f"({on_loop:.0%} of them on the event loop's thread)")
    print(describe_load(before, after))
    for name, series, goal in (("MQTT get p50", gets, 2.0), ("MQTT list of 50 p50", lists, 3.0)):
        p50, p99 = percentiles(series)
        note = f"p99 {p99:.2f} ms; {per_request:.2f} database trips per request"
        emit(Row(name, p50, "ms", echo50, "bare publish->echo", f"<= {goal:g}x", p50 <= goal * echo50, note),
             as_json)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--downloads", type=int, default=1000)
    parser.add_argument("--recognized", type=int, default=0,
                        help="how many of the newest downloads have a current recognition")
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    parser.add_argument("--profile", action="store_true", help="profile the measured rounds with cProfile")
    args = parser.parse_args()
    asyncio.run(main(args.downloads, args.requests, args.json, args.profile,
                     min(args.recognized, args.downloads)))
