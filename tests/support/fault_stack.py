"""A real worker process on a broker of its own and the shared real qBittorrent, for outages.

The broker can be killed and started again on the same port, qBittorrent stopped and started, and
the database held by another process; `Ledger` remembers which commands were acknowledged, and
`check_outage_invariants` proves none of them was lost, nothing was added twice and nothing failed.
"""

from __future__ import annotations

import sqlite3
import subprocess
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jellybit.client import JellybitClient, NoAnswer
from jellybit.config import MqttConfig, load_config
from jellybit.protocol import Command, Response, Topics
from tests.support import polling
from tests.support.mosquitto import start_mosquitto
from tests.support.qbittorrent import QbittorrentInstance
from tests.support.services import free_port
from tests.support.worker_process import WorkerProcess, eventually_retained
from tests.support.worker_process import worker_config as process_config


class RestartableBroker:
    """A mosquitto of one test, killable and started again on the same port (no persistence)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"mqtt://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start (again) on the same port."""
        self.proc, _ = start_mosquitto(self.directory, self.port)

    def stop(self) -> None:
        """SIGTERM: the broker restarted or updated (start it again with `start`)."""
        self.close()

    def kill(self) -> None:
        """SIGKILL: an outage."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def close(self) -> None:
        """Stop it for good."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


def worker_config(directory: Path, broker: RestartableBroker, qbittorrent: QbittorrentInstance,
                  database: Path | None = None) -> Path:
    """A worker on this broker and the test's qBittorrent; no metadata (complete downloads wait in
    review); a miss threshold of 3 polls, so a missed debounce would fail downloads quickly."""
    return process_config(
        directory, mqtt_url=broker.url, base_topic=f"jbf-{uuid.uuid4().hex[:8]}", database=database,
        qbittorrent_url=qbittorrent.url, downloads=qbittorrent.data_dir,
        qbittorrent_lines=f'username = "{qbittorrent.username}"\npassword = "{qbittorrent.password}"\n'
                          f'save_path = "{qbittorrent.data_dir}"\ntimeout = 2.0',
        worker_lines="source_miss_threshold = 3")


@dataclass
class Ledger:
    """Every command sent, by transaction: its first acknowledgement (an answer) if it got one."""

    sent: dict[str, tuple[Command, dict[str, Any]]] = field(default_factory=dict)
    acknowledged: dict[str, Response] = field(default_factory=dict)
    unanswered: int = 0

    def figures(self) -> dict[str, int]:
        """Commands sent, acknowledged, refused (an error answer) and left without an answer."""
        refused = sum(1 for r in self.acknowledged.values() if r.status == "error")
        return {"sent": len(self.sent), "acknowledged": len(self.acknowledged), "refused": refused,
                "unanswered": self.unanswered}

    async def send(self, client: JellybitClient | None, command: Command, payload: dict[str, Any],
                   transaction: str, within: float = 5.0) -> Response | None:
        """Send (or send again) one command; None when it got no answer (an outage)."""
        body = {**payload, "transaction": transaction}
        self.sent[transaction] = (command, body)
        if client is None:
            self.unanswered += 1
            return None
        try:
            response = await client.request(command, body, timeout=within)
        except NoAnswer:
            self.unanswered += 1
            return None
        self.acknowledged.setdefault(transaction, response)
        return response


@dataclass
class FaultStack:
    """The worker process, its config and how to reach it."""

    config: Path
    worker: WorkerProcess
    broker: RestartableBroker

    @property
    def mqtt(self) -> MqttConfig:
        return load_config(self.config).mqtt

    @property
    def topics(self) -> Topics:
        return Topics(self.mqtt.base_topic)

    @property
    def database(self) -> Path:
        return load_config(self.config).storage.database

    async def online(self, within: float = 30.0) -> None:
        """Wait for the worker's retained `online`."""
        await eventually_retained(self.broker.url, self.topics.availability, lambda p: p == b"online",
                                  within=within)

    def states(self) -> dict[str, str]:
        """Every download's state, read from the database as another process would."""
        with sqlite3.connect(self.database, timeout=30) as conn:
            return dict(conn.execute("SELECT id, state FROM download").fetchall())

    def transitions_to(self, state: str) -> int:
        """How many times any download entered a state (a false failure shows here)."""
        with sqlite3.connect(self.database, timeout=30) as conn:
            row = conn.execute("SELECT count(*) FROM state_transition WHERE to_state = ?",
                               (state,)).fetchone()
        return int(row[0])


async def until(probe: Any, *, within: float = 30.0, what: str = "a condition") -> Any:
    """Poll a sync or async probe until it returns something truthy."""
    return await polling.until(probe, within=within, interval=0.1, what=what)


def check_outage_invariants(stack: FaultStack, ledger: Ledger, qbittorrent: QbittorrentInstance) -> None:
    """After the outages: no false failure, no acknowledged add lost, nothing added twice."""
    assert stack.transitions_to("failed") == 0, "a download failed because of an outage"
    states = stack.states()
    for transaction, response in ledger.acknowledged.items():
        command, _body = ledger.sent[transaction]
        if command is Command.ADD and response.status == "ok":
            assert response.data.id in states, f"acknowledged add {transaction} was lost"
    adds = [t for t, (command, _) in ledger.sent.items() if command is Command.ADD]
    assert len(states) >= len(adds)
    with qbittorrent.process.admin() as admin:
        tags = Counter(tag for torrent in admin.get("torrents/info").json()
                       for tag in torrent["tags"].split(", ") if tag)
    doubled = [tag for tag, n in tags.items() if n > 1]
    assert not doubled, f"torrents added twice: {doubled}"
