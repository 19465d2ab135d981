"""The local stack's broker takes no anonymous clients: the worker and the panel get passwords, and
an older config (anonymous broker, panel without a login) is given what it lacks in place."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import aiomqtt
import pytest
from devstack.broker import account_passwords, add_missing_keys
from devstack.passwd import password_hash
from devstack.stack import StackPaths, prepare, summary

from jellybit.config import load_config
from tests.support.services import free_port, require_binary


def env_for(ports: dict[str, int]) -> dict[str, str]:
    return {f"JELLYBIT_LOCAL_{name.upper()}_PORT": str(port) for name, port in ports.items()}


def fresh(tmp_path: Path) -> tuple[StackPaths, dict[str, str]]:
    paths = StackPaths(tmp_path / "local")
    ports = {name: free_port() for name in ("mqtt", "qbittorrent", "torrent", "panel")}
    return paths, prepare(paths, env_for(ports))


def test_the_first_start_gives_the_worker_and_the_panel_accounts_and_a_login(tmp_path: Path) -> None:
    paths, values = fresh(tmp_path)
    config = load_config(paths.config, env={})
    assert config.mqtt.username == "jellybit"
    assert config.mqtt.password is not None
    assert config.panel.username == "admin"
    assert config.panel.password is not None
    assert config.panel.storage_secret is not None
    assert not config.panel.open
    assert values["JB_PANEL_MQTT_USER"] == "panel"
    assert values["JB_PANEL_MQTT_PASSWORD"]
    folder = paths.mosquitto_conf.parent
    conf = paths.mosquitto_conf.read_text()
    assert "allow_anonymous false" in conf
    assert "allow_anonymous true" not in conf
    assert f"password_file {folder / 'passwd'}" in conf
    for name in ("passwd", "acl", "accounts.json"):
        assert (folder / name).stat().st_mode & 0o777 == 0o600, name
    users = [line.split(":", 1)[0] for line in (folder / "passwd").read_text().splitlines()]
    assert users == ["jellybit", "panel", "cli", "homeassistant"]
    acl = (folder / "acl").read_text()
    for account in ("jellybit", "panel", "cli", "homeassistant"):
        assert f"user {account}\n" in acl
    own = json.loads((folder / "accounts.json").read_text())
    summary_text = summary(paths, config, panel=True)
    port = int(config.mqtt.url.rsplit(":", 1)[1])
    assert f"mosquitto_pub -p {port} -u cli -P {own['cli']} -t jellybit/request/add" in summary_text
    assert f"broker account homeassistant  password {own['homeassistant']}" in summary_text
    assert values["JB_PANEL_MQTT_PASSWORD"] not in (folder / "passwd").read_text()      # hashes only


def test_the_accounts_stay_the_same_on_the_next_start(tmp_path: Path) -> None:
    paths, first = fresh(tmp_path)
    text = paths.config.read_text()
    ports = load_config(paths.config, env={})
    again = prepare(paths, env_for({"mqtt": int(ports.mqtt.url.rsplit(":", 1)[1]), "torrent": free_port(),
                                    "qbittorrent": int(ports.qbittorrent.url.rsplit(":", 1)[1]),
                                    "panel": ports.panel.port}))
    assert paths.config.read_text() == text
    assert again["JB_PANEL_MQTT_PASSWORD"] == first["JB_PANEL_MQTT_PASSWORD"]


def test_an_older_accounts_file_gets_the_cli_and_home_assistant_accounts(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "accounts.json").write_text(json.dumps({"panel": "kept"}))
    own = account_passwords(folder / "accounts.json")
    assert own["panel"] == "kept"
    assert own["cli"]
    assert own["homeassistant"]
    assert account_passwords(folder / "accounts.json") == own


def test_an_older_config_gets_what_it_lacks_and_keeps_everything_else(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    paths.root.mkdir(parents=True)
    mqtt, qbt, panel = free_port(), free_port(), free_port()
    old = (f'# my notes\n[qbittorrent]\nurl = "http://127.0.0.1:{qbt}"\npassword = "kept"\n\n'
           f'[mqtt]\nurl = "mqtt://127.0.0.1:{mqtt}"  # my broker\n\n[recognition]\nstrong_distance = 0.2\n\n'
           f'[panel]\nport = {panel}\n')
    paths.config.write_text(old)
    prepare(paths, env_for({"mqtt": mqtt, "qbittorrent": qbt, "panel": panel, "torrent": free_port()}))
    new = paths.config.read_text()
    assert all(line in new.splitlines() for line in old.splitlines())
    config = load_config(paths.config, env={})
    assert (config.mqtt.username, config.panel.username) == ("jellybit", "admin")
    assert config.recognition.strong_distance == 0.2
    assert config.qbittorrent.password is not None
    assert config.qbittorrent.password.get_secret_value() == "kept"


def test_an_open_panel_is_left_open(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('[panel]\nopen = true\n[mqtt]\nusername = "me"\n')
    assert add_missing_keys(path, "mqtt", {"username": '"jellybit"', "password": '"p"'}) == ["password"]
    assert load_config(path, env={}).mqtt.username == "me"


@pytest.fixture
def local_broker(tmp_path: Path) -> Iterator[tuple[StackPaths, dict[str, str], subprocess.Popen[bytes]]]:
    paths, values = fresh(tmp_path)
    proc = subprocess.Popen([require_binary("mosquitto"), "-c", str(paths.mosquitto_conf)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield paths, values, proc
    finally:
        proc.terminate()
        proc.wait(10)


async def test_the_local_broker_refuses_anonymous_clients_and_keeps_the_panel_to_requests(
    local_broker: tuple[StackPaths, dict[str, str], subprocess.Popen[bytes]],
) -> None:
    paths, values, proc = local_broker
    config = load_config(paths.config, env={})
    port = int(config.mqtt.url.rsplit(":", 1)[1])
    await _until_listening(port, proc)
    with pytest.raises(aiomqtt.MqttError):
        async with aiomqtt.Client("127.0.0.1", port, identifier=f"anon-{uuid.uuid4().hex[:6]}"):
            pass
    assert config.mqtt.password is not None
    worker = aiomqtt.Client("127.0.0.1", port, identifier="w", username=config.mqtt.username,
                            password=config.mqtt.password.get_secret_value())
    panel = aiomqtt.Client("127.0.0.1", port, identifier="p", username=values["JB_PANEL_MQTT_USER"],
                           password=values["JB_PANEL_MQTT_PASSWORD"])
    async with worker, panel:
        await worker.subscribe("jellybit/#", qos=1)
        await panel.publish("jellybit/availability", b"offline", qos=1, retain=True)   # not its topic
        await panel.publish("jellybit/request/list", b"{}", qos=1)                     # its topic
        async with asyncio.timeout(5):
            message = await anext(aiter(worker.messages))
    assert str(message.topic) == "jellybit/request/list"


async def _until_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.close()
            return
        except OSError:
            assert asyncio.get_running_loop().time() < deadline, "mosquitto did not listen"
            await asyncio.sleep(0.02)


def test_the_hash_is_mosquittos_format() -> None:
    entry = password_hash("пароль", salt=b"0123456789ab")
    kind, rounds, salt, digest = entry.split("$")[1:]
    assert (kind, rounds) == ("7", "101")
    assert salt == "MDEyMzQ1Njc4OWFi"
    assert len(digest) == 88
