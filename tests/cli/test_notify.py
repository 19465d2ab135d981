"""`jellybit notify` on its fast path: a real subprocess, a real config file and a real mosquitto."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import aiomqtt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.cli import local, notify
from jellybit.protocol import Command, Topics
from tests.support.mosquitto import Broker
from tests.support.services import free_port

HASH = "ab" * 20


def run_notify(*args: str, env: dict[str, str] | None = None, probe: bool = False
               ) -> subprocess.CompletedProcess[str]:
    """`python -m jellybit ARGS` (with `probe`, also print whether pydantic got imported)."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("JELLYBIT_")}
    environ.update(env or {})
    code = ("import sys; from jellybit.cli import main; code = main(sys.argv[1:]); "
            "print('pydantic' in sys.modules); sys.exit(code)") if probe else None
    command = [sys.executable, "-c", code, *args] if code else [sys.executable, "-m", "jellybit", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environ, timeout=60, check=False)


def broker_config(tmp_path: Path, broker: Broker, base: str, extra: str = "") -> Path:
    path = tmp_path / "jellybit.toml"
    path.write_text(f'[mqtt]\nurl = "{broker.url}"\nbase_topic = "{base}"\n{extra}', encoding="utf-8")
    return path


async def test_notify_publishes_the_hash_without_loading_the_full_cli(
    mosquitto: Broker, tmp_path: Path
) -> None:
    base = f"jb-{uuid.uuid4().hex[:10]}"
    config = broker_config(tmp_path, mosquitto, base)
    async with aiomqtt.Client(mosquitto.host, mosquitto.port, identifier=f"obs-{base}") as observer:
        await observer.subscribe(Topics(base).request(Command.NOTIFY), qos=1)
        done = run_notify("--config", str(config), "notify", HASH, probe=True)
        assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "False", "")
        message = await anext(aiter(observer.messages))
    assert json.loads(message.payload) == {"hash": HASH}


async def test_notify_without_a_broker_says_so_and_exits_4(tmp_path: Path) -> None:
    config = tmp_path / "jellybit.toml"
    config.write_text(f'[mqtt]\nurl = "mqtt://127.0.0.1:{free_port()}"\n', encoding="utf-8")
    done = run_notify("--config", str(config), "notify", HASH)
    assert done.returncode == 4
    assert "did not take the message" in done.stderr


def test_a_config_the_fast_path_cannot_read_goes_to_the_full_cli_and_its_error(tmp_path: Path) -> None:
    config = tmp_path / "jellybit.toml"
    config.write_text('[mqtt]\nurl = "http://127.0.0.1:1883"\n', encoding="utf-8")
    done = run_notify("--config", str(config), "notify", HASH)
    assert done.returncode == 3                   # the full CLI's "invalid configuration"
    assert "mqtt.url" in done.stderr


def test_the_topic_is_the_protocols_notify_request() -> None:
    for base in ("jellybit", "дом/jellybit"):
        assert notify.BrokerSettings(base_topic=base).topic == Topics(base).request(Command.NOTIFY)


def test_the_config_file_is_found_as_the_full_cli_finds_it(tmp_path: Path) -> None:
    local_dir = tmp_path / "stack"
    local_dir.mkdir()
    (local_dir / "jellybit.toml").write_text("", encoding="utf-8")
    (tmp_path / "var" / "local").mkdir(parents=True)
    (tmp_path / "var" / "local" / "jellybit.toml").write_text("", encoding="utf-8")
    cases = [(None, {}), ("given.toml", {}), (None, {"JELLYBIT_CONFIG": "env.toml"}),
             (None, {"JELLYBIT_LOCAL_DIR": str(local_dir)}), (None, {"JELLYBIT_LOCAL_DIR": str(tmp_path)})]
    for explicit, env in cases:
        found, _source = local.find_config(explicit, env, tmp_path)
        assert notify.config_file(explicit, env, tmp_path) == (Path(found) if found else None)
    assert notify.config_file(None, {}, tmp_path / "stack") is None


def test_the_broker_settings_take_the_account_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "jellybit.toml"
    path.write_text('[mqtt]\nurl = "mqtts://broker:8883"\nusername = "file"\nkeepalive = 5\n'
                    '[mqtt.tls]\ninsecure = true\n[worker]\npoll_interval = 2.0\n', encoding="utf-8")
    settings = notify.broker_settings(path, {"JELLYBIT_MQTT_USERNAME": "хук",
                                             "JELLYBIT_MQTT_PASSWORD": "s3cret"})
    assert settings == notify.BrokerSettings(url="mqtts://broker:8883", username="хук", password="s3cret",
                                             keepalive=5, insecure=True)
    assert notify.broker_settings(None, {}) == notify.BrokerSettings()
    for bad in ('[mqtt]\nkeepalive = "5"\n', "mqtt = 3\n", "[mqtt\n"):
        path.write_text(bad, encoding="utf-8")
        assert notify.broker_settings(path, {}) is None


@pytest.mark.parametrize(("argv", "parsed"), [
    (["notify"], (None, None)),
    (["notify", HASH], (None, HASH)),
    (["--config", "a.toml", "notify", "C" * 64], ("a.toml", "C" * 64)),
    (["--config=a.toml", "notify"], ("a.toml", None)),
    (["notify", "not-a-hash"], None),
    (["notify", HASH, "extra"], None),
    (["list"], None),
    (["--json", "notify"], None),
    ([], None),
])
def test_only_a_plain_notify_takes_the_fast_path(argv: list[str], parsed: tuple | None) -> None:
    assert notify.notify_arguments(argv) == parsed


@given(st.lists(st.text(), max_size=5))
def test_any_command_line_is_either_a_plain_notify_or_left_to_the_full_cli(argv: list[str]) -> None:
    parsed = notify.notify_arguments(argv)
    if parsed is not None:
        assert "notify" in argv
        assert parsed[1] is None or parsed[1] in argv
