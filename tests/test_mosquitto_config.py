"""The shipped mosquitto config (mosquitto/) against a real mosquitto 2.0: passwords and the ACL
hold, and a second account cannot take over the worker's session by using its client id.

The files are the ones docker-compose mounts, with only the paths and the port changed; the
password file is written by the local stack's own hasher, so this also proves mosquitto accepts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import aiomqtt
import pytest
from devstack.passwd import passwd_text

from jellybit.client import JellybitClient
from jellybit.config import MqttConfig
from jellybit.protocol import Command, Topics
from tests.support.bridge import start_bridge, stop_bridge
from tests.support.engine import EngineFactory
from tests.support.services import free_port, require_binary

ROOT = Path(__file__).resolve().parents[1]
ACCOUNTS = {"jellybit": "worker-пароль", "panel": "panel-secret", "homeassistant": "ha-secret",
            "cli": "cli-secret", "health": "health-secret"}


@dataclass
class ShippedBroker:
    port: int
    proc: subprocess.Popen[bytes]
    bound: bool = True

    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def client(self, user: str, identifier: str, password: str | None = None) -> aiomqtt.Client:
        return aiomqtt.Client("127.0.0.1", self.port, identifier=identifier, username=user,
                              password=ACCOUNTS.get(user, "") if password is None else password,
                              protocol=aiomqtt.ProtocolVersion.V5)


def render(directory: Path, port: int, *, bind_client_ids: bool) -> Path:
    """mosquitto/mosquitto.conf with this test's paths and port (the rest exactly as shipped)."""
    text = (ROOT / "mosquitto" / "mosquitto.conf").read_text(encoding="utf-8")
    assert "use_username_as_clientid true" in text
    text = text.replace("listener 1883", f"listener {port} 127.0.0.1")
    text = text.replace("/mosquitto/config/", f"{directory}/")
    text = text.replace("/mosquitto/data/", f"{directory}/data/")
    text = text.replace("persistence true", "persistence false")
    if not bind_client_ids:
        text = text.replace("use_username_as_clientid true", "")
    (directory / "acl").write_text((ROOT / "mosquitto" / "acl").read_text(encoding="utf-8"), encoding="utf-8")
    (directory / "passwd").write_text(passwd_text(ACCOUNTS), encoding="utf-8")
    (directory / "data").mkdir(exist_ok=True)
    for name in ("acl", "passwd"):
        (directory / name).chmod(0o644)           # mosquitto reads them after dropping root
    conf = directory / "mosquitto.conf"
    conf.write_text(text, encoding="utf-8")
    return conf


def start(directory: Path, *, bind_client_ids: bool = True) -> ShippedBroker:
    binary = require_binary("mosquitto")
    port = free_port()
    conf = render(directory, port, bind_client_ids=bind_client_ids)
    proc = subprocess.Popen([binary, "-c", str(conf)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        assert proc.poll() is None, "mosquitto refused the shipped config"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return ShippedBroker(port, proc, bind_client_ids)
        except OSError:
            time.sleep(0.02)
    proc.kill()
    pytest.fail("mosquitto did not start with the shipped config")


@contextlib.contextmanager
def broker_folder() -> Iterator[Path]:
    """A folder mosquitto can still read after it drops root (pytest's own tmp dirs are 0700)."""
    with tempfile.TemporaryDirectory(prefix="jb-mosquitto-") as tmp:
        folder = Path(tmp)
        folder.chmod(0o755)
        yield folder


@pytest.fixture(params=[True, False], ids=["shipped", "without-binding"])
def broker(request: pytest.FixtureRequest) -> Iterator[ShippedBroker]:
    with broker_folder() as folder:
        running = start(folder, bind_client_ids=request.param)
        try:
            yield running
        finally:
            running.proc.terminate()
            running.proc.wait(10)


@pytest.fixture
def shipped() -> Iterator[ShippedBroker]:
    with broker_folder() as folder:
        running = start(folder)
        try:
            yield running
        finally:
            running.proc.terminate()
            running.proc.wait(10)


@dataclass
class RunningWorker:
    bridge: object
    task: asyncio.Task[None]
    topics: Topics
    seen: list[bytes]
    connections: list[object]


async def running_worker(broker: ShippedBroker, make_engine: EngineFactory) -> AsyncIterator[RunningWorker]:
    """The real bridge as the worker (account `jellybit`), watched by Home Assistant's account."""
    base = "jellybit"
    config = MqttConfig(url=broker.url(), base_topic=base, client_id="jellybit-worker", username="jellybit",
                        password=ACCOUNTS["jellybit"])
    engine = await make_engine()
    bridge, task = await start_bridge(engine, config)
    topics = Topics(base)
    seen: list[bytes] = []
    connections: list[object] = [bridge._client]
    async with broker.client("homeassistant", "ha-observer") as observer:
        await observer.subscribe(topics.availability, qos=1)

        async def watch() -> None:
            async for message in observer.messages:
                seen.append(bytes(message.payload))  # type: ignore[arg-type]

        watcher = asyncio.create_task(watch())
        try:
            yield RunningWorker(bridge, task, topics, seen, connections)
        finally:
            watcher.cancel()
            await stop_bridge(bridge, task)


async def attempt_takeovers(broker: ShippedBroker, worker: RunningWorker) -> None:
    """Other accounts connect with the worker's client id, and with its account name as client id."""
    # Not Home Assistant's account: that one is watching (and would take over its own session).
    for account, identifier in (("panel", "jellybit-worker"), ("panel", "jellybit"),
                                ("cli", "jellybit"), ("cli", "jellybit-worker")):
        async with broker.client(account, identifier) as intruder:
            await intruder.publish(f"{worker.topics.base}/request/list", b"{}", qos=1)
            await asyncio.sleep(0.5)
        worker.connections.append(worker.bridge._client)  # type: ignore[attr-defined]
    await asyncio.sleep(0.5)


async def test_no_other_account_can_take_over_the_workers_session(broker: ShippedBroker,
                                                                   make_engine: EngineFactory) -> None:
    """With the shipped config the worker stays; without its binding line (the control) the same
    attempts throw it off the broker, which is what Home Assistant saw as `offline`."""
    bound = broker.bound
    async for worker in running_worker(broker, make_engine):
        await asyncio.sleep(0.5)
        await attempt_takeovers(broker, worker)
        if not bound:
            assert b"offline" in worker.seen
            return
        assert b"offline" not in worker.seen                    # no Last Will: never thrown off
        assert worker.seen[-1:] == [b"online"]
        assert len(set(map(id, worker.connections))) == 1      # the same connection all along
        # The bus works for the accounts that may use it, each under its own client id.
        mqtt = MqttConfig(url=broker.url(), base_topic="jellybit", username="cli", password=ACCOUNTS["cli"])
        async with JellybitClient(mqtt, name="cli") as cli:
            reply = await cli.request(Command.LIST, {})
        assert reply.status == "ok"


@pytest.mark.parametrize(("user", "password"), [("panel", "wrong"), ("nobody", "x"), ("", "")])
async def test_wrong_or_missing_credentials_are_refused(shipped: ShippedBroker, user: str,
                                                        password: str) -> None:
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", shipped.port, identifier=f"x-{uuid.uuid4().hex[:6]}",
                                  username=user or None, password=password or None):
            pass


async def test_the_acl_keeps_requesters_off_the_workers_topics(shipped: ShippedBroker) -> None:
    async with shipped.client("homeassistant", "ha") as watcher, shipped.client("panel", "p") as panel:
        await watcher.subscribe("jellybit/#", qos=1)
        await panel.publish("jellybit/availability", b"offline", qos=1, retain=True)
        await panel.publish("jellybit/downloads/x", b"{}", qos=1, retain=True)
        await panel.publish("homeassistant/device/jellybit/config", b"", qos=1, retain=True)
        got: list[str] = []
        try:
            async with asyncio.timeout(1.0):
                async for message in watcher.messages:
                    got.append(str(message.topic))
        except TimeoutError:
            pass
    assert got == []


async def test_each_account_reads_the_state_and_only_its_own_answers(shipped: ShippedBroker,
                                                                     make_engine: EngineFactory) -> None:
    """The panel's and the CLI's answers go to `jellybit/response/<account>/…`; another account that
    subscribes to everything sees the retained state and neither of them (nor the shared answer
    of a request without a response topic)."""
    def account(user: str) -> MqttConfig:
        return MqttConfig(url=shipped.url(), base_topic="jellybit", username=user, password=ACCOUNTS[user])

    async for worker in running_worker(shipped, make_engine):
        async with shipped.client("homeassistant", "ha-snoop") as snoop:
            await snoop.subscribe("jellybit/#", qos=1)
            await snoop.subscribe("jellybit/response/panel/#", qos=1)
            await snoop.subscribe("jellybit/response/cli/#", qos=1)
            async with JellybitClient(account("panel"), name="panel") as panel, \
                    JellybitClient(account("cli"), name="cli") as cli:
                assert panel.response_topic.startswith("jellybit/response/panel/")
                assert cli.response_topic.startswith("jellybit/response/cli/")
                mine = await panel.request(Command.LIST, {"transaction": "panel-secret-list"})
                theirs = await cli.request(Command.GET, {"id": "01jfzzzzzzzzzzzzzzzzzzzzzz"})
                assert mine.status == "ok"
                assert theirs.error is not None
                assert theirs.error.code == "not_found"
                # A request without a response topic (an old script's): its answer goes to the shared
                # jellybit/response/list, which no account may read, the asker included.
                async with shipped.client("cli", "cli-raw") as raw:
                    await raw.subscribe("jellybit/response/#", qos=1)
                    await raw.publish(worker.topics.request(Command.LIST), b"{}", qos=1)
                    seen_by_cli = await drain(raw, 1.0)
            seen = await drain(snoop, 1.0)
    topics = [topic for topic, _ in seen]
    assert {"jellybit/availability", "jellybit/info", "jellybit/summary"} <= set(topics)   # state: all
    assert not [t for t in topics if t.startswith("jellybit/response/")], topics
    assert not [body for _, body in seen if b"panel-secret-list" in body]
    assert seen_by_cli == []                     # the shared jellybit/response/list: nobody reads it


async def drain(client: aiomqtt.Client, within: float) -> list[tuple[str, bytes]]:
    """Every message a client receives within `within` seconds."""
    got: list[tuple[str, bytes]] = []
    try:
        async with asyncio.timeout(within):
            async for message in client.messages:
                got.append((str(message.topic), bytes(message.payload)))  # type: ignore[arg-type]
    except TimeoutError:
        pass
    return got
