"""Benchmark: how long after a broker restart Jellybit is back online (issue 28: 5.5 s every time).

Run: .venv/bin/python bench/reconnect.py [--outages 3] [--down 10] [--baseline-python PATH]

A real mosquitto on a free loopback port (no persistence, so a restart loses every retained
message), a real `jellybit run` worker (qBittorrent on a closed port) and the panel's connection
(`ui.live.Live`) in this process. The broker is stopped (SIGTERM) `--outages` times, stays down
`--down` seconds and is started again on the same port. From the moment it accepts connections:

- worker online: until a fresh subscriber receives the worker's `online` on `<base>/availability`
  (published after the worker has reconnected and republished its retained state);
- panel ok: until the panel's banner says the worker is online again.

`--baseline-python` runs a second worker on the same broker (its own base topic) with another
interpreter whose `jellybit` is an older checkout (e.g. the main branch's venv before this change),
through the same outages: the same-run baseline. Goal: online within 2 s of the broker.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiomqtt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import Row, Samples, describe_load, emit, load  # noqa: E402
from jellybit.config import load_config  # noqa: E402
from jellybit.protocol import Topics  # noqa: E402
from tests.support.fault_stack import RestartableBroker  # noqa: E402
from tests.support.worker_process import process_env, worker_config  # noqa: E402
from ui.live import Live  # noqa: E402

GOAL = 2.0


async def online_after(port: int, topic: str, since: float, within: float = 60.0) -> float:
    """Seconds from `since` until a subscriber sees `online` on `topic` (retained or live)."""
    async with asyncio.timeout(within):
        while True:
            try:
                name = f"watch-{uuid.uuid4().hex[:8]}"
                async with aiomqtt.Client("127.0.0.1", port, identifier=name) as client:
                    await client.subscribe(topic, qos=1)
                    async for message in client.messages:
                        if message.payload == b"online":
                            return time.monotonic() - since
            except aiomqtt.MqttError:
                await asyncio.sleep(0.01)


async def panel_ok_after(panel: Live, since: float, within: float = 60.0) -> float:
    """Seconds from `since` until the panel's banner says the worker is online."""
    async with asyncio.timeout(within):
        while not panel.health().ok:  # noqa: ASYNC110 - the panel's own state, polled as its pages do
            await asyncio.sleep(0.01)
    return time.monotonic() - since


def start_worker(python: str, folder: Path, url: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A `jellybit run` process of `python` on the broker; its config file."""
    folder.mkdir(parents=True)
    config = worker_config(folder, mqtt_url=url)
    with (folder / "worker.log").open("ab") as out:
        proc = subprocess.Popen([python, "-m", "jellybit", "--config", str(config), "run"],
                                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=process_env(),
                                cwd=folder)      # not this checkout: `-m` would import its jellybit first
    return proc, config


async def run(args: argparse.Namespace) -> int:
    """Start everything, restart the broker `--outages` times, print the figures."""
    before = load()
    with tempfile.TemporaryDirectory(prefix="jb-reconnect-") as tmp:
        root = Path(tmp)
        broker = RestartableBroker(root / "broker")
        broker.directory.mkdir()
        broker.start()
        workers = {"jellybit": start_worker(sys.executable, root / "worker", broker.url)}
        if args.baseline_python:
            workers["baseline"] = start_worker(args.baseline_python, root / "baseline", broker.url)
        topics = {name: Topics(load_config(config).mqtt.base_topic) for name, (_, config) in workers.items()}
        panel = Live(load_config(workers["jellybit"][1]))
        panel.start()
        samples = {name: Samples(f"{name} worker online") for name in workers}
        panel_samples = Samples("panel ok")
        try:
            for topic in topics.values():
                await online_after(broker.port, topic.availability, time.monotonic())
            await panel_ok_after(panel, time.monotonic())
            for outage in range(1, args.outages + 1):
                broker.stop()
                await asyncio.sleep(args.down)
                for name, (proc, _) in workers.items():
                    if proc.poll() is not None:
                        sys.exit(f"the {name} worker exited during the outage")
                broker.start()                      # returns once the broker accepts connections
                back = time.monotonic()
                figures = await asyncio.gather(
                    *(online_after(broker.port, topic.availability, back) for topic in topics.values()),
                    panel_ok_after(panel, back))
                for name, value in zip(topics, figures, strict=False):
                    samples[name].add(value)
                panel_samples.add(figures[-1])
                shown = ", ".join(f"{name} {value:.2f} s" for name, value in zip([*topics, "panel"], figures,
                                                                                  strict=True))
                print(f"outage {outage} ({args.down:g} s): online after the broker returned: {shown}",
                      flush=True)
        finally:
            await panel.stop()
            for proc, _ in workers.values():
                proc.terminate()
                proc.wait(20)
            broker.close()
    print()
    print(f"{'measure':34} {'each outage (s)':28} {'max':>6}")
    for series in [*samples.values(), panel_samples]:
        values = " ".join(f"{v:5.2f}" for v in series.values)
        print(f"{series.name:34} {values:28} {max(series.values):6.2f}")
    print(describe_load(before, load()))
    worst = max(samples["jellybit"].values)
    baseline = samples.get("baseline")
    emit(Row("worker online after a broker restart (worst)", worst, "s",
             baseline=max(baseline.values) if baseline else None,
             baseline_name="older checkout" if baseline else "", goal=f"≤ {GOAL:g} s", met=worst <= GOAL,
             note=f"{args.outages} outages of {args.down:g} s"), args.json)
    emit(Row("panel back after a broker restart (worst)", max(panel_samples.values), "s",
             goal=f"≤ {GOAL:g} s", met=max(panel_samples.values) <= GOAL), args.json)
    return 0 if worst <= GOAL else 1


def main() -> None:
    """Parse the arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--outages", type=int, default=3)
    parser.add_argument("--down", type=float, default=10.0, help="seconds the broker stays down")
    parser.add_argument("--baseline-python", help="a Python whose jellybit is an older checkout")
    parser.add_argument("--json", action="store_true", help="print BENCH lines for bench/all.py")
    sys.exit(asyncio.run(run(parser.parse_args())))


if __name__ == "__main__":
    main()
