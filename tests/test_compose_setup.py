"""`scripts/compose-setup` writes everything `docker compose` needs before its first command: .env with
every variable the file requires, the broker's password file for every account of the ACL (checked by a
real mosquitto), a config that is right inside the containers, the media folders for uid 1000."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from jellybit.config import load_config
from tests.support.services import free_port, require_binary

ROOT = Path(__file__).resolve().parents[1]
COMPOSE_TEXT = (ROOT / "docker-compose.yml").read_text(encoding="utf-8")


def clone(tmp_path: Path) -> Path:
    """The files of a fresh clone that the setup touches."""
    repo = tmp_path / "jellybit"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "scripts" / "compose-setup", repo / "scripts")
    shutil.copytree(ROOT / "scripts" / "devstack", repo / "scripts" / "devstack",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "mosquitto", repo / "mosquitto", ignore=shutil.ignore_patterns("passwd"))
    shutil.copy2(ROOT / "docker-compose.yml", repo)
    return repo


def setup(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(repo / "scripts" / "compose-setup"), *args],
                          capture_output=True, text=True, timeout=60, check=False,
                          env={"PATH": os.environ["PATH"]})


def env_file(repo: Path) -> dict[str, str]:
    return dict(re.findall(r"(?m)^([A-Z_]+)=(.*)$", (repo / ".env").read_text()))


def test_setup_writes_what_every_compose_command_needs(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    media = tmp_path / "media"
    mqtt_port, panel_port = free_port(), free_port()

    result = setup(repo, "--media", str(media), "--mqtt-port", str(mqtt_port),
                   "--panel-port", str(panel_port))

    values = env_file(repo)
    required = set(re.findall(r"\$\{([A-Z_]+):\?", COMPOSE_TEXT))
    assert required, "docker-compose.yml requires no variable?"
    assert {name for name in required if values.get(name)} == required
    assert (values["MQTT_PORT"], values["PANEL_PORT"]) == (str(mqtt_port), str(panel_port))
    assert values["MEDIA_ROOT"] == str(media)
    assert (repo / ".env").stat().st_mode & 0o777 == 0o600
    # Every account of the ACL has a password, and only hashes are in the password file.
    accounts = re.findall(r"(?m)^user (\S+)$", (repo / "mosquitto" / "acl").read_text())
    passwd = (repo / "mosquitto" / "passwd").read_text()
    assert [line.split(":", 1)[0] for line in passwd.splitlines()] == accounts
    assert values["JELLYBIT_CLI_MQTT_PASSWORD"] not in passwd
    # The config, as the worker's container reads it (its environment from docker-compose.yml).
    compose = yaml.safe_load(COMPOSE_TEXT)
    worker_env = {k: re.sub(r"\$\{([A-Z_]+)[^}]*\}", lambda m: values.get(m.group(1), ""), str(v))
                  for k, v in compose["services"]["worker"]["environment"].items()}
    config = load_config(repo / "config" / "jellybit.toml", env=worker_env)
    assert config.mqtt.url == "mqtt://mosquitto:1883"
    assert config.mqtt.username == "jellybit"
    assert config.mqtt.password is not None
    assert config.mqtt.password.get_secret_value() == values["JELLYBIT_MQTT_PASSWORD"]
    assert (config.panel.host, config.panel.port) == ("0.0.0.0", 8099)
    assert config.panel.base_url == f"http://127.0.0.1:{panel_port}"
    assert config.qbittorrent.save_path == "/srv/media/downloads"
    assert [str(p) for p in (config.paths.downloads, config.paths.movies, config.paths.series)] == [
        "/srv/media/downloads", "/srv/media/movies", "/srv/media/series"]
    # No secret in the config: it is readable by the containers' user.
    config_text = (repo / "config" / "jellybit.toml").read_text()
    assert not any(value in config_text for name, value in values.items() if "PASSWORD" in name and value)
    # The media folders belong to uid 1000 (as root), or the setup says exactly what to run.
    if os.geteuid() == 0:
        assert result.returncode == 0, result.stderr
        assert all((media / name).stat().st_uid == 1000 for name in ("downloads", "movies", "series"))
    else:
        assert result.returncode == 1
        assert f"sudo install -d -o 1000 -g 1000 {media / 'downloads'}" in result.stderr

    # Again: the passwords and the config stay, the password file is rewritten from them.
    again = setup(repo)
    assert env_file(repo) == values
    assert (repo / "config" / "jellybit.toml").read_text() == config_text
    assert f"kept {repo / 'config' / 'jellybit.toml'}" in again.stdout


def test_mosquitto_takes_the_generated_accounts_and_refuses_others(tmp_path: Path) -> None:
    repo = clone(tmp_path)
    setup(repo, "--media", str(tmp_path / "media"))
    values = env_file(repo)
    port = free_port()
    conf = tmp_path / "m.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous false\n"
                    f"password_file {repo / 'mosquitto' / 'passwd'}\nuser root\n")
    os.chmod(repo / "mosquitto" / "passwd", 0o644)     # this test's mosquitto runs as whoever runs it
    broker = subprocess.Popen([require_binary("mosquitto"), "-c", str(conf)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        def subscribe(user: str, password: str) -> int:
            for _ in range(50):
                done = subprocess.run([require_binary("mosquitto_sub"), "-p", str(port), "-u", user, "-P",
                                       password, "-t", "x", "-W", "1", "-C", "1"], capture_output=True,
                                      timeout=10, check=False)
                if done.returncode != 14 and b"Connection refused" not in done.stderr:
                    return done.returncode
            return done.returncode

        assert subscribe("cli", values["JELLYBIT_CLI_MQTT_PASSWORD"]) == 27          # timed out waiting: in
        assert subscribe("homeassistant", values["JELLYBIT_HOMEASSISTANT_MQTT_PASSWORD"]) == 27
        assert subscribe("cli", "wrong") == 5                                         # not authorised
    finally:
        broker.terminate()
        broker.wait(10)
