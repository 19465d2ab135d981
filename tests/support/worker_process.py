"""`jellybit run` as a real child process, and a raw MQTT observer, for tests that kill things.

The worker runs as `python -m jellybit --config FILE run` with an environment
without pytest's variables, exactly as a user would start it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from jellybit.config import load_config
from jellybit.protocol import Topics
from tests.support.network_guard import CHILD_PROXY_ENV, assert_loopback_config
from tests.support.services import free_port

CLI = [sys.executable, "-m", "jellybit"]


def process_env(**extra: str) -> dict[str, str]:
    """The test's environment minus pytest's own variables (a worker must not know it is tested),
    with every HTTP request beyond loopback sent to a closed local port (the network guard)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(CHILD_PROXY_ENV)
    env.update(extra)
    return env


def checked(config: Path) -> Path:
    """The config file, once the network guard has seen that it stays on loopback."""
    assert_loopback_config(load_config(config, env=process_env()))
    return config


def worker_config(directory: Path, *, mqtt_url: str, base_topic: str | None = None,
                  qbittorrent_url: str | None = None, database: Path | None = None,
                  qbittorrent_lines: str = "", worker_lines: str = "", downloads: Path | None = None,
                  extra: str = "") -> Path:
    """A config file for one worker: private database and libraries; qBittorrent on a closed port
    unless given (downloads then stay `queued`, which is all a transport test needs). `qbittorrent_lines`
    go into `[qbittorrent]` (credentials, save path), `worker_lines` into `[worker]`; `downloads` is
    where qBittorrent's files are (`directory/downloads` by default); `extra` is appended (more sections)."""
    for name in ("downloads", "movies", "series"):
        (directory / name).mkdir(parents=True, exist_ok=True)
    downloads = downloads or directory / "downloads"
    base_topic = base_topic or f"jb-{uuid.uuid4().hex[:10]}"
    qbittorrent_url = qbittorrent_url or f"http://127.0.0.1:{free_port()}"
    path = directory / "jellybit.toml"
    path.write_text(f"""
[qbittorrent]
url = "{qbittorrent_url}"
{qbittorrent_lines}

[paths]
downloads = "{downloads}"
movies = "{directory / 'movies'}"
series = "{directory / 'series'}"

[storage]
database = "{database or directory / 'jellybit.db'}"

[mqtt]
url = "{mqtt_url}"
base_topic = "{base_topic}"
client_id = "worker-{base_topic}"
discovery = false

[metadata.tvmaze]
enabled = false

[worker]
poll_interval = 0.2
retry_max_backoff = 1.0
{worker_lines}

[log]
level = "INFO"
{extra}
""", encoding="utf-8")
    return path


def run_cli(config: Path, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run one `jellybit --config FILE ...` command as a subprocess."""
    return subprocess.run([*CLI, "--config", str(checked(config)), *args], capture_output=True, text=True,
                          env=process_env(), stdin=subprocess.DEVNULL, timeout=timeout, check=False)


class WorkerProcess:
    """One `jellybit run` child process; its output goes to `log` (appended across restarts)."""

    def __init__(self, config: Path, log: Path, env: dict[str, str] | None = None) -> None:
        self.config = config
        self.log = log
        self.env = env or {}            # the worker's own variables (a secret only it needs)
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def alive(self) -> bool:
        """Tell whether the process is running."""
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        """Start the worker (returns at once; wait for `online` on the bus)."""
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen([*CLI, "--config", str(checked(self.config)), "run"],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                         env=process_env(**self.env))

    def wait_online(self, within: float = 60.0) -> None:
        """Wait until the worker says `online` (retained; published once it listens for requests).

        Cheaper than polling with a CLI request: one sent before the worker subscribed is lost, and
        the caller waits out the whole request timeout before it asks again.
        """
        mqtt = load_config(self.config).mqtt
        topic = Topics(mqtt.base_topic).availability
        asyncio.run(eventually_retained(mqtt.url, topic, lambda p: p == b"online", within=within))

    def signal(self, sig: int, timeout: float = 30.0) -> int:
        """Send a signal and wait for the process to end; its return code."""
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(timeout)

    def kill(self) -> int:
        """SIGKILL, as a crash."""
        return self.signal(signal.SIGKILL)

    def close(self) -> None:
        """Make sure nothing is left running."""
        if self.alive:
            assert self.proc is not None
            self.proc.kill()
            self.proc.wait(10)

    def output(self) -> str:
        """What the worker logged so far."""
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""


def _broker(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 1883


async def retained(url: str, topic: str, *, within: float = 0.5) -> bytes | None:
    """The retained payload of a topic as a fresh subscriber sees it (None when nothing is retained)."""
    host, port = _broker(url)
    async with aiomqtt.Client(host, port, identifier=f"obs-{uuid.uuid4().hex[:8]}") as observer:
        await observer.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(within):
                async for message in observer.messages:
                    if message.retain:
                        return bytes(message.payload) if isinstance(message.payload, bytes) else b""
        except TimeoutError:
            return None
    return None


async def eventually_retained(url: str, topic: str, predicate: Any, *, within: float = 20.0) -> bytes:
    """Poll a retained topic until `predicate(payload)` holds; fail the test at the deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    last: bytes | None = None
    while True:
        try:
            last = await retained(url, topic)
        except aiomqtt.MqttError:
            last = None                     # the broker is (re)starting
        if last is not None and predicate(last):
            return last
        if loop.time() > deadline:
            pytest.fail(f"{topic} never satisfied the condition within {within} s; last: {last!r}")
        await asyncio.sleep(0.05)


def as_json(payload: bytes) -> Any:
    """Decode a JSON payload (an empty retained payload is None)."""
    return json.loads(payload) if payload else None


@pytest.fixture
def worker(tmp_path: Path, mosquitto: Any) -> Iterator[WorkerProcess]:
    """A real `jellybit run` process on the test's broker (qBittorrent unreachable), stopped after."""
    process = WorkerProcess(worker_config(tmp_path, mqtt_url=mosquitto.url), tmp_path / "worker.log")
    process.start()
    yield process
    process.close()


@contextlib.contextmanager
def tmdb_worker(log_dir: Path, broker_url: str, qbittorrent: Any,
                tmdb: Any) -> Iterator[tuple[WorkerProcess, Path]]:
    """A worker over a real qBittorrent (its data dir the root, downloads saved under it) and the
    TMDB fake, yielded with that root once it says `online`; stopped after."""
    root = qbittorrent.data_dir
    config = worker_config(
        root, mqtt_url=broker_url, qbittorrent_url=qbittorrent.url,
        qbittorrent_lines=f'username = "{qbittorrent.username}"\npassword = "{qbittorrent.password}"\n'
                          f'save_path = "{root / "downloads"}"',
        extra=f'\n[metadata.tmdb]\nenabled = true\napi_key = "{tmdb.API_KEY}"\n'
              f'base_url = "{tmdb.base_url}"\nimage_base_url = "http://127.0.0.1:9/p"\n')
    process = WorkerProcess(config, log_dir / "worker.log")
    process.start()
    try:
        process.wait_online()
        yield process, root
    finally:
        process.close()


async def requests_at_once(port: int, topics: Any, command: str, payloads: list[bytes],
                           *, within: float = 120.0) -> list[dict[str, Any]]:
    """One MQTT 5 client per payload, each with its own response topic; every request published
    at the same moment once all are connected; every answer, in the payloads' order."""
    ready = asyncio.Event()
    connected: list[int] = []

    async def one(n: int, payload: bytes) -> dict[str, Any]:
        name = f"many-{n}-{uuid.uuid4().hex[:6]}"
        reply = f"{topics.base}/response/{name}"
        async with aiomqtt.Client("127.0.0.1", port, identifier=name, protocol=aiomqtt.ProtocolVersion.V5,
                                  timeout=within) as client:
            await client.subscribe(reply, qos=1)
            props = Properties(PacketTypes.PUBLISH)
            props.ResponseTopic = reply
            connected.append(n)
            if len(connected) == len(payloads):
                ready.set()
            await ready.wait()
            await client.publish(topics.request(command), payload, qos=1, properties=props)
            async with asyncio.timeout(within):
                message = await anext(aiter(client.messages))
        return json.loads(message.payload)  # type: ignore[arg-type,no-any-return]

    return await asyncio.gather(*(one(n, p) for n, p in enumerate(payloads)))
