"""qBittorrent's completion hook on a real qbittorrent-nox: set through its WebUI API, it pokes the worker."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiomqtt
import pytest

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.config import Config, MqttConfig, QbittorrentConfig
from jellybit.core.states import State
from jellybit.engine.completion_hook import FOREIGN, KEPT, OFF, SET, CompletionHook
from jellybit.protocol import Topics
from jellybit.transports.mqtt import EngineState, MqttBridge, build_handlers
from tests.support.engine import EngineFactory
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, eventually, seeded_torrent

ROOT = Path(__file__).resolve().parents[2]


def autorun(qbittorrent: QbittorrentInstance) -> tuple[bool, str]:
    """qBittorrent's own "run on torrent finished" setting, read with the test's admin client."""
    with qbittorrent.process.admin() as admin:
        preferences = admin.get("app/preferences").json()
    return preferences["autorun_enabled"], preferences["autorun_program"]


def set_autorun(qbittorrent: QbittorrentInstance, enabled: bool, program: str) -> None:
    """Set qBittorrent's "run on torrent finished" with the test's admin client."""
    with qbittorrent.process.admin() as admin:
        values = {"autorun_enabled": enabled, "autorun_program": program}
        admin.post("app/setPreferences", data={"json": json.dumps(values)}).raise_for_status()


@pytest.fixture
def hookable(qbittorrent: QbittorrentInstance) -> Iterator[QbittorrentInstance]:
    """The shared qBittorrent with no program set, and none left behind for the other tests."""
    set_autorun(qbittorrent, False, "")
    yield qbittorrent
    set_autorun(qbittorrent, False, "")


async def test_the_hook_is_set_once_kept_and_never_replaces_a_users_program(
    hookable: QbittorrentInstance,
) -> None:
    command = "jellybit notify %I"
    async with _client(hookable, completion_hook=False) as (client, config):
        assert await CompletionHook(client, config).ensure() == OFF
    assert autorun(hookable) == (False, "")

    async with _client(hookable, completion_hook=True, completion_command=command) as (client, config):
        hook = CompletionHook(client, config)
        assert await hook.ensure() == SET
        assert autorun(hookable) == (True, command)
        assert await hook.ensure() == KEPT

    set_autorun(hookable, True, "/usr/local/bin/my-own-script %N")
    async with _client(hookable, completion_hook=True, completion_command=command) as (client, config):
        assert await CompletionHook(client, config).ensure() == FOREIGN
    assert autorun(hookable) == (True, "/usr/local/bin/my-own-script %N")


async def test_a_finished_torrent_reaches_recognition_through_the_hook_not_the_next_poll(
    make_engine: EngineFactory, hookable: QbittorrentInstance, mosquitto: Broker, tmp_path: Path,
) -> None:
    base = f"jb-{uuid.uuid4().hex[:10]}"
    mqtt = MqttConfig(url=mosquitto.url, base_topic=base, client_id=f"worker-{base}")
    cli_config = tmp_path / "cli.toml"
    cli_config.write_text(f'[mqtt]\nurl = "{mosquitto.url}"\nbase_topic = "{base}"\n')
    # What a user configures: `jellybit notify %I` (here the CLI module of this checkout).
    command = (f"env PYTHONPATH={ROOT} {sys.executable} -m jellybit --config {cli_config} "
               "notify %I")
    # Polls an hour apart and no faster polling near the end: only the hook can bring the torrent in.
    engine = await make_engine(hookable.config(completion_hook=True, completion_command=command),
                               worker={"poll_interval": 3600.0, "near_completion_eta": 0})
    seeded = seeded_torrent(hookable.data_dir, "Hooked.Movie.2004", {"movie.mkv": 60_000})
    away = hookable.data_dir / "away"
    shutil.move(seeded.content, away)           # qBittorrent starts with nothing: it is downloading
    added = await engine.commands.add(torrent=seeded.torrent)
    download_id = added.download.id
    await engine.settle(download_id, State.DOWNLOADING)
    assert autorun(hookable) == (True, command)  # set by the worker's first poll that reached qBittorrent

    state = EngineState(engine.commands, engine.bus, Config(mqtt=mqtt), sweep_interval=60, info_interval=60)
    bridge = MqttBridge(mqtt, handlers=build_handlers(engine.commands), state=state, results=engine.store)
    bridge_task = asyncio.create_task(bridge.run())
    await asyncio.wait_for(bridge.connected.wait(), 10)
    port = int(mosquitto.url.rsplit(":", 1)[1])
    try:
        async with aiomqtt.Client("127.0.0.1", port, identifier=f"obs-{base}") as observer:
            await observer.subscribe(Topics(base).request("notify"), qos=1)
            running = asyncio.create_task(engine.worker.run())
            # Not an assertion: the loop's first cycles take milliseconds; then it waits its hour.
            await asyncio.sleep(1.0)
            shutil.move(away, seeded.content)      # the data arrives; qBittorrent's check finds it complete
            with hookable.process.admin() as admin:
                admin.post("torrents/recheck", data={"hashes": seeded.infohash_v1}).raise_for_status()
            message = await asyncio.wait_for(anext(aiter(observer.messages)), 30)
            assert json.loads(message.payload)["hash"] == seeded.infohash_v1   # %I, from qBittorrent
            await eventually(lambda: engine.state_is(download_id, State.RECOGNIZING, State.APPLYING,
                                                     State.DONE), within=30)
            await engine.worker.stop()
            await asyncio.wait_for(running, 30)
    finally:
        await bridge.stop()
        bridge_task.cancel()
        await asyncio.gather(bridge_task, return_exceptions=True)
    path = await engine.path(download_id)
    assert ("downloading", "recognizing") in path
    assert engine.recognizer.requests


@contextlib.asynccontextmanager
async def _client(qbittorrent: QbittorrentInstance, **overrides: object
                  ) -> AsyncIterator[tuple[QbittorrentClient, QbittorrentConfig]]:
    """A QbittorrentClient for the instance's config with some overrides, closed on exit."""
    config = qbittorrent.config(**overrides)
    client = QbittorrentClient(config)
    try:
        yield client, config
    finally:
        await client.close()
