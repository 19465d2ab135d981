"""Benchmark: the worker's memory through a flood of requests (issue 15: 1,000 `list` took it from
81 MiB to 580 MiB).

Run: .venv/bin/python bench/flood.py [--downloads 500] [--requests 1000]

A real `jellybit run` process on a real mosquitto (loopback, a free port), qBittorrent on a closed
port (every poll fails, as in an outage), and a database seeded with `--downloads` downloads through
the real ingest. The worker's resident memory is sampled from /proc every 20 ms; VmHWM gives the
peak. Each scenario fires all its requests at once (QoS 1, MQTT 5 response topics under
`<base>/response/`) and waits until every one is answered, `ok` or `busy`:

- one client, `--requests` × `list` (50 items each);
- fifty clients, `--requests` / 50 × `list` each;
- one client, `--requests` × `list` with the largest page (500 items).

`--unbounded` raises the queue bounds so far that every request is accepted, to show what the
bounds buy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.adapters.store import Store
from jellybit.engine.ingest import ingest
from jellybit.protocol import Topics

MIB = 1024 * 1024


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    """Return once something accepts on the port; exit if the process died first."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{what} exited")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.02)
    sys.exit(f"{what} did not start")


def memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in bytes."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


async def seed(database: Path, count: int) -> None:
    """`count` downloads through the real ingest (distinct magnets with Cyrillic and Latin names)."""
    store = Store(database)
    await store.open()
    try:
        for n in range(count):
            infohash = uuid.uuid4().hex + uuid.uuid4().hex[:8]
            name = f"Сериал.{n}.S01.1080p" if n % 2 else f"Some.Show.{n}.S01.1080p"
            await ingest(store, source=f"magnet:?xt=urn:btih:{infohash}&dn={name}", max_torrent_bytes=1 << 20,
                         context="a flood benchmark")
    finally:
        await store.close()


async def flood(port: int, topics: Topics, clients: int, per_client: int, limit: int) -> dict[str, int]:
    """Fire every request at once from `clients` connections; wait for every answer."""
    counts = {"ok": 0, "busy": 0, "other": 0}
    done = asyncio.Event()
    expected = clients * per_client

    async def one(index: int) -> None:
        reply = f"{topics.base}/response/bench-{index}-{uuid.uuid4().hex[:6]}"
        async with aiomqtt.Client("127.0.0.1", port, identifier=f"bench-{index}-{uuid.uuid4().hex[:6]}",
                                  protocol=aiomqtt.ProtocolVersion.V5) as client:
            await client.subscribe(reply, qos=1)
            props = Properties(PacketTypes.PUBLISH)
            props.ResponseTopic = reply
            for _ in range(per_client):
                await client.publish(topics.request("list"), json.dumps({"limit": limit}), qos=1,
                                     properties=props)
            seen = 0
            async for message in client.messages:
                body = json.loads(message.payload)  # type: ignore[arg-type]
                code = "ok" if body["status"] == "ok" else body["error"]["code"]
                counts[code if code in counts else "other"] += 1
                seen += 1
                if seen == per_client:
                    break
        if sum(counts.values()) == expected:
            done.set()

    await asyncio.gather(*(one(i) for i in range(clients)))
    return counts


def write_config(root: Path, mqtt_port: int, base: str, unbounded: bool) -> Path:
    """The worker's config: qBittorrent on a closed port, the flood's broker and base topic."""
    for name in ("dl", "movies", "series"):
        (root / name).mkdir()
    # --unbounded: queues so large that every request is accepted (what the worker did before).
    queue = "queue_per_client = 10000\nqueue_total = 100000" if unbounded else ""
    config = root / "jellybit.toml"
    config.write_text(f"""
[qbittorrent]
url = "http://127.0.0.1:{free_port()}"
[paths]
downloads = "{root / 'dl'}"
movies = "{root / 'movies'}"
series = "{root / 'series'}"
[storage]
database = "{root / 'jellybit.db'}"
[mqtt]
url = "mqtt://127.0.0.1:{mqtt_port}"
base_topic = "{base}"
discovery = false
{queue}
[metadata.tvmaze]
enabled = false
[log]
level = "WARNING"
""")
    return config


async def sample(pid: int, peak: list[int], stop: asyncio.Event) -> None:
    """Keep the highest resident memory seen in `peak[0]` until `stop` is set."""
    while not stop.is_set():
        peak[0] = max(peak[0], memory(pid)[0])
        await asyncio.sleep(0.02)


async def scenarios(pid: int, port: int, topics: Topics, requests: int) -> None:
    """Run each flood and print the worker's memory before, at its peak and after."""
    print(f"{'scenario':44} {'before':>8} {'peak':>8} {'after':>8}  answers")
    for label, clients, limit in (
        (f"1 client x {requests} list (50 items)", 1, 50),
        (f"50 clients x {requests // 50} list (50 items)", 50, 50),
        (f"1 client x {requests} list (500 items)", 1, 500),
    ):
        before, _ = memory(pid)
        peak = [before]
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample(pid, peak, stop))
        started = time.perf_counter()
        counts = await flood(port, topics, clients, requests // clients, limit)
        took = time.perf_counter() - started
        await asyncio.sleep(1.0)
        stop.set()
        await sampler
        after, _ = memory(pid)
        print(f"{label:44} {before / MIB:7.0f}M {peak[0] / MIB:7.0f}M {after / MIB:7.0f}M  "
              f"{counts} in {took:.1f} s")
    print(f"peak resident memory of the whole run (VmHWM): {memory(pid)[1] / MIB:.0f} MiB")


def run(args: argparse.Namespace) -> None:
    """Start the broker and the worker, seed the store, flood, stop."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        binary = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        mqtt_port = free_port()
        (root / "mosquitto.conf").write_text(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\n"
                                             "persistence false\nset_tcp_nodelay true\nlog_dest none\n")
        broker = subprocess.Popen([binary, "-c", str(root / "mosquitto.conf")], stdin=subprocess.DEVNULL)
        wait_port(mqtt_port, broker, "mosquitto")
        base = f"flood-{uuid.uuid4().hex[:6]}"
        config = write_config(root, mqtt_port, base, args.unbounded)
        asyncio.run(seed(root / "jellybit.db", args.downloads))
        with (root / "worker.log").open("wb") as log:
            command = [sys.executable, "-m", "jellybit", "--config", str(config), "run"]
            worker = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                      stderr=log)
        try:
            time.sleep(3.0)                     # connected, retained state out, first polls failed
            print(f"{args.downloads} downloads; worker pid {worker.pid}")
            asyncio.run(scenarios(worker.pid, mqtt_port, Topics(base), args.requests))
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(60)
            broker.terminate()
            broker.wait(10)


def main() -> None:
    """Parse arguments and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--downloads", type=int, default=500)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--unbounded", action="store_true", help="accept every request (no busy)")
    args = parser.parse_args()
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    run(args)


if __name__ == "__main__":
    main()
