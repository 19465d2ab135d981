"""Fixtures of the panel tests: NiceGUI's `user` fixture (registered here only), a config, a responder.

NiceGUI's user plugin is imported into this conftest instead of the root `pytest_plugins`, so its
storage and marker set-up touch nothing outside tests/ui. Every test module marks
`nicegui_main_file("ui/app.py")`: the user fixture runs that file, which loads `$JELLYBIT_CONFIG`.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from nicegui.testing.general_fixtures import pytest_configure  # noqa: F401  (marker + temp storage)
from nicegui.testing.user_plugin import user  # noqa: F401  (NiceGUI's own fixture)

from jellybit.config import Config, MqttConfig, PanelConfig
from tests.support.mosquitto import Broker
from tests.ui.responder import FakeWorker

MAIN_FILE = "ui/app.py"


def panel_config(broker: Broker, base: str, **panel: object) -> Config:
    """A config for the panel on this broker and base topic (short request timeout for tests);
    without a user name it is explicitly open, as the panel refuses to serve otherwise."""
    settings = {"request_timeout": 2.0, "open": not panel.get("username"), **panel}
    return Config(mqtt=MqttConfig(url=broker.url, base_topic=base, client_id=f"worker-{base}"),
                  panel=PanelConfig(**settings))


def write_config(config: Config, path: Path) -> Path:
    """Write the parts of a config the panel reads as TOML."""
    mqtt, panel = config.mqtt, config.panel
    lines = ["[mqtt]", f'url = "{mqtt.url}"', f'base_topic = "{mqtt.base_topic}"',
             f'client_id = "{mqtt.client_id}"', "", "[panel]", f"request_timeout = {panel.request_timeout}",
             f'host = "{panel.host}"', f"port = {panel.port}"]
    if panel.username:
        lines.append(f'username = "{panel.username}"')
    if panel.password:
        lines.append(f'password = "{panel.password.get_secret_value()}"')
    if panel.open:
        lines.append("open = true")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def base_topic() -> str:
    """A base topic of this test's own."""
    return f"jbt-{secrets.token_hex(4)}"


@pytest.fixture
def config(mosquitto: Broker, base_topic: str) -> Config:
    """The panel's config for this test."""
    return panel_config(mosquitto, base_topic)


@pytest.fixture(autouse=True)
def config_file(config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`$JELLYBIT_CONFIG` for ui/app.py when the user fixture runs it."""
    path = write_config(config, tmp_path / "panel.toml")
    monkeypatch.setenv("JELLYBIT_CONFIG", str(path))
    return path


@pytest.fixture
async def worker(config: Config) -> AsyncIterator[FakeWorker]:
    """The scripted responder on the real broker, online."""
    async with FakeWorker(config.mqtt) as fake:
        yield fake
