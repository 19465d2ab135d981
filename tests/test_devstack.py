"""devstack.stack: the local stack's folder, generated config, service configs and crash cleanup."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from devstack.stack import (
    StackError,
    StackPaths,
    check_ports,
    config_text,
    ensure_config,
    mosquitto_conf,
    prepare,
    qbittorrent_conf,
    qbt_password_hash,
    stop_stale,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from jellybit.config import load_config, parse_config
from tests.support.services import free_port

PORTS = {"mqtt": 28830, "qbittorrent": 28080, "torrent": 28881, "panel": 28099}


def env_for(ports: dict[str, int] | None = None) -> dict[str, str]:
    ports = ports or PORTS
    return {f"JELLYBIT_LOCAL_{name.upper()}_PORT": str(port) for name, port in ports.items()}


def free_ports() -> dict[str, int]:
    return {name: free_port() for name in PORTS}


def test_first_prepare_creates_everything_inside_the_folder(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    ports = free_ports()

    values = prepare(paths, env_for(ports))

    config = load_config(paths.config, env={})
    assert config.mqtt.url == f"mqtt://127.0.0.1:{ports['mqtt']}"
    assert config.qbittorrent.url == f"http://127.0.0.1:{ports['qbittorrent']}"
    assert (config.panel.host, config.panel.port) == ("127.0.0.1", ports["panel"])
    for path in (config.paths.downloads, config.paths.movies, config.paths.series, config.storage.database,
                 Path(config.qbittorrent.save_path or "/")):
        assert path.is_relative_to(paths.root), path
    for folder in ("downloads", "movies", "series"):
        assert (paths.media / folder).is_dir()
    assert paths.config.stat().st_mode & 0o777 == 0o600
    assert values["JB_MQTT_PORT"] == str(ports["mqtt"])
    assert f"listener {ports['mqtt']} 127.0.0.1" in paths.mosquitto_conf.read_text()
    qbt = paths.qbittorrent_conf.read_text()
    assert f"Session\\Port={ports['torrent']}" in qbt
    assert f"Session\\DefaultSavePath={paths.media / 'downloads'}" in qbt
    categories = json.loads((paths.qbittorrent_conf.parent / "categories.json").read_text())
    assert categories == {"jellybit": {"save_path": str(paths.media / "downloads")}}


def test_the_config_is_reused_with_its_password_and_the_users_edits(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    ports = free_ports()
    prepare(paths, env_for(ports))
    edited = paths.config.read_text() + "\n[recognition]\nstrong_distance = 0.2\n"
    paths.config.write_text(edited)

    prepare(paths, env_for({**ports, "torrent": free_port()}))     # the torrent port is not in the file

    assert paths.config.read_text() == edited
    assert load_config(paths.config, env={}).recognition.strong_distance == 0.2


def test_a_port_variable_moves_the_port_of_a_config_run_local_wrote(tmp_path: Path) -> None:
    """The documented JELLYBIT_LOCAL_*_PORT variables work after the first run too, when run-local
    wrote the config; the rest of the file (the user's edits included) stays as it was."""
    paths = StackPaths(tmp_path)
    paths.root.mkdir(exist_ok=True)
    ports = free_ports()
    ensure_config(paths, env_for(ports))
    paths.config.write_text(paths.config.read_text() + "\n[recognition]\nstrong_distance = 0.2\n")
    moved = {**ports, "mqtt": free_port(), "panel": free_port()}

    config, used = ensure_config(paths, env_for(moved))

    assert (used["mqtt"], used["panel"]) == (moved["mqtt"], moved["panel"])
    assert used["qbittorrent"] == ports["qbittorrent"]
    assert config.mqtt.url == f"mqtt://127.0.0.1:{moved['mqtt']}"
    assert (config.panel.port, config.panel.base_url) == (moved["panel"], f"http://127.0.0.1:{moved['panel']}")
    assert config.recognition.strong_distance == 0.2


def test_a_port_that_disagrees_with_a_config_written_by_hand_is_refused(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path)
    paths.root.mkdir(exist_ok=True)
    ensure_config(paths, env_for())
    paths.config.write_text("# mine\n" + paths.config.read_text())
    before = paths.config.read_text()

    with pytest.raises(StackError, match=r"JELLYBIT_LOCAL_MQTT_PORT=1884 but .*toml uses port 28830"):
        ensure_config(paths, env_for({**PORTS, "mqtt": 1884}))
    assert paths.config.read_text() == before


def test_a_busy_port_on_the_first_run_writes_nothing(tmp_path: Path) -> None:
    """The port is checked before the config is written: the next run with another port just works."""
    paths = StackPaths(tmp_path / "local")
    ports = free_ports()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", ports["mqtt"]))
        holder.listen()
        with pytest.raises(StackError, match=rf"port {ports['mqtt']} \(mqtt\) .* in use .*"
                           r"JELLYBIT_LOCAL_MQTT_PORT=PORT \(nothing was written\)"):
            prepare(paths, env_for(ports))
        assert not paths.config.exists()
        other = {**ports, "mqtt": free_port()}
        prepare(paths, env_for(other))
    assert load_config(paths.config, env={}).mqtt.url == f"mqtt://127.0.0.1:{other['mqtt']}"


@pytest.mark.parametrize(("url", "message"), [
    ("mqtt://192.0.2.1:1883", r"mqtt\.url .* must be a loopback URL"),
    ("mqtt://127.0.0.1", r"mqtt\.url .* must be a loopback URL with a port"),
])
def test_a_config_that_leaves_loopback_is_refused(tmp_path: Path, url: str, message: str) -> None:
    paths = StackPaths(tmp_path)
    paths.config.write_text(f'[mqtt]\nurl = "{url}"\n'
                            '[qbittorrent]\nurl = "http://127.0.0.1:1"\npassword = "x"\n')
    with pytest.raises(StackError, match=message):
        ensure_config(paths, {})


def test_a_config_without_the_qbittorrent_password_is_refused(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path)
    paths.config.write_text('[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[qbittorrent]\nurl = "http://127.0.0.1:2"\n')
    with pytest.raises(StackError, match=r"qbittorrent\.password is missing"):
        ensure_config(paths, {})


@pytest.mark.parametrize("raw", ["abc", "0", "70000"])
def test_a_bad_port_variable_is_a_clear_error(tmp_path: Path, raw: str) -> None:
    paths = StackPaths(tmp_path)
    with pytest.raises(StackError, match=r"JELLYBIT_LOCAL_PANEL_PORT=.* is not a port number"):
        ensure_config(paths, {"JELLYBIT_LOCAL_PANEL_PORT": raw})
    assert not paths.config.exists()


@settings(max_examples=60, deadline=None)
@example("\x7f \\ \" \n ä")
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00/"), min_size=1,
               max_size=40))
def test_any_folder_name_round_trips_through_the_generated_toml(name: str) -> None:
    root = Path("/srv") / name / "local"
    config = parse_config(config_text(StackPaths(root), PORTS, "pw"), env={})
    assert config.storage.database == root / "jellybit.db"
    assert config.paths.movies == root / "media" / "movies"
    assert config.qbittorrent.save_path == str(root / "media" / "downloads")


@pytest.mark.parametrize("password", ["s3cret", "пароль-Ω", 'with "quotes" and \\'])
def test_the_password_hash_is_what_qbittorrent_verifies(password: str) -> None:
    value = qbt_password_hash(password)
    assert value.startswith('"@ByteArray(')
    assert value.endswith(')"')
    salt_b64, key_b64 = value[len('"@ByteArray('):-2].split(":")
    salt = base64.b64decode(salt_b64)
    assert len(salt) == 16
    assert base64.b64decode(key_b64) == hashlib.pbkdf2_hmac("sha512", password.encode(), salt, 100_000, 64)
    assert qbt_password_hash(password) != value          # a fresh salt each time


def test_qbittorrent_conf_keeps_every_switch_on_loopback(tmp_path: Path) -> None:
    text = qbittorrent_conf(torrent_port=1, webui_port=2, save_path=tmp_path, username="admin",
                            password_hash='"@ByteArray(a:b)"')
    for line in ("Session\\Interface=lo", "Session\\InterfaceAddress=127.0.0.1", "Session\\DHTEnabled=false",
                 "Session\\LSDEnabled=false", "Session\\PeXEnabled=false", "PortForwardingEnabled=false",
                 "WebUI\\Address=127.0.0.1", "WebUI\\Port=2", "WebUI\\UseUPnP=false",
                 "Connection\\ResolvePeerCountries=false", "WebUI\\Password_PBKDF2=\"@ByteArray(a:b)\""):
        assert line in text.splitlines()
    assert "RefreshInterval" not in text
    assert "Session\\RefreshInterval=100" in qbittorrent_conf(
        torrent_port=1, webui_port=2, save_path=tmp_path, username="a", password_hash="h", fast=True)
    assert "listener 5 127.0.0.1" in mosquitto_conf(5)
    assert "set_tcp_nodelay true" in mosquitto_conf(5)


def test_existing_categories_are_kept(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    categories = paths.qbittorrent_conf.parent / "categories.json"
    categories.parent.mkdir(parents=True)
    categories.write_text(json.dumps({"music": {"save_path": "/m"}}))
    prepare(paths, env_for(free_ports()))
    assert json.loads(categories.read_text()) == {
        "music": {"save_path": "/m"}, "jellybit": {"save_path": str(paths.media / "downloads")}}


def _spawn(*argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *argv],
                            start_new_session=True)


def test_stop_stale_stops_only_this_stacks_leftovers(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path)
    paths.run.mkdir()
    ours = _spawn(str(paths.mosquitto_conf))                 # looks like this stack's mosquitto
    stranger = _spawn("/etc/mosquitto/mosquitto.conf")       # a pid file may point at a reused pid
    dead = _spawn()
    dead.kill()
    dead.wait()
    paths.pid_file("mosquitto").write_text(str(ours.pid))
    paths.pid_file("qbittorrent").write_text(str(stranger.pid))
    paths.pid_file("worker").write_text(str(dead.pid))
    paths.pid_file("panel").write_text("not a pid")
    try:
        stopped = stop_stale(paths, timeout=5)
        assert stopped == [f"mosquitto (pid {ours.pid})"]
        assert ours.wait(5) == -signal.SIGTERM
        assert stranger.poll() is None
        assert list(paths.run.iterdir()) == []
    finally:
        for proc in (ours, stranger):
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_stop_stale_kills_what_ignores_sigterm(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path)
    paths.run.mkdir()
    stubborn = subprocess.Popen(
        [sys.executable, "-c", "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
         "print('ready', flush=True); time.sleep(60)", str(paths.config), "run"],
        stdout=subprocess.PIPE, start_new_session=True)
    assert stubborn.stdout is not None
    assert stubborn.stdout.readline() == b"ready\n"
    paths.pid_file("worker").write_text(str(stubborn.pid))
    assert stop_stale(paths, timeout=0.3) == [f"worker (pid {stubborn.pid})"]
    assert stubborn.wait(5) == -signal.SIGKILL     # it would sleep 60 s; SIGKILL is what ended it
    stubborn.stdout.close()


def test_a_port_held_by_another_program_is_named(tmp_path: Path) -> None:
    ports = free_ports()
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", ports["mqtt"]))
        holder.listen()
        with pytest.raises(StackError, match=rf"port {ports['mqtt']} \(mqtt\) on 127.0.0.1 is in use"):
            check_ports(ports, panel=False)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", ports["panel"]))
        holder.listen()
        check_ports(ports, panel=False)           # no panel yet: its port does not matter
        with pytest.raises(StackError, match=r"\(panel\)"):
            check_ports(ports, panel=True)


def test_prepare_stops_leftovers_before_checking_ports(tmp_path: Path) -> None:
    paths = StackPaths(tmp_path / "local")
    ports = free_ports()
    prepare(paths, env_for(ports))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import socket, sys, time; s = socket.socket(); "
         f"s.bind(('127.0.0.1', {ports['mqtt']})); s.listen(); print('ready', flush=True); time.sleep(60)",
         "-c", str(paths.mosquitto_conf)], stdout=subprocess.PIPE, start_new_session=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == b"ready\n"
        paths.pid_file("mosquitto").write_text(str(holder.pid))
        prepare(paths, env_for(ports))            # the orphan goes, so its port is free again
        assert holder.wait(5) == -signal.SIGTERM
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        if holder.stdout:
            holder.stdout.close()
    assert not os.path.exists(paths.pid_file("mosquitto"))
