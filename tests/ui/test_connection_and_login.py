"""The broker going away and coming back, and the optional login."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from nicegui.testing import User

from jellybit.config import Config
from tests.support.mosquitto import Broker, start_mosquitto
from tests.ui.conftest import panel_config
from tests.ui.responder import FakeWorker
from tests.ui.support import eventually
from tests.ui.test_other_pages import banner_text

pytestmark = pytest.mark.nicegui_main_file("ui/app.py")


class OwnBroker:
    """A mosquitto of this test alone, restartable on the same port."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.proc, self.broker = start_mosquitto(directory)

    def stop(self) -> None:
        """Stop it and wait."""
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    def start(self) -> None:
        """Start it again on the same port."""
        self.proc, self.broker = start_mosquitto(self.directory, self.broker.port)


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[OwnBroker]:
    broker = OwnBroker(tmp_path)
    yield broker
    broker.stop()


class TestBrokerOutage:
    @pytest.fixture
    def config(self, own_broker: OwnBroker, base_topic: str) -> Config:
        return panel_config(own_broker.broker, base_topic)

    async def test_broker_down_is_shown_and_recovers(self, own_broker: OwnBroker, worker: FakeWorker,
                                                     user: User) -> None:
        await user.open("/")
        await eventually(lambda: banner_text(user) is None)
        own_broker.stop()
        await eventually(lambda: "MQTT broker at" in (banner_text(user) or ""), within=10)
        assert "unreachable" in banner_text(user)
        own_broker.start()
        await eventually(lambda: banner_text(user) is None, within=20)


class TestLogin:
    @pytest.fixture
    def config(self, mosquitto: Broker, base_topic: str) -> Config:
        return panel_config(mosquitto, base_topic, username="admin", password="s3cret-пароль")

    async def test_pages_need_a_login(self, user: User) -> None:
        reply = await user.http_client.get("/titles", follow_redirects=False)
        assert reply.status_code in (302, 303, 307)
        assert reply.headers["location"] == "/login?redirect_to=/titles"
        reply = await user.http_client.get("/download/01jf0000000000000000000000", follow_redirects=False)
        assert reply.headers["location"].startswith("/login")

    async def test_wrong_password_is_refused_right_one_lets_in(self, user: User) -> None:
        await user.open("/login?redirect_to=/status")
        user.find("User name").type("admin")
        user.find("Password").type("wrong")
        user.find("Log in").click()
        await eventually(lambda: user.notify.contains("Wrong user name or password."))
        assert (await user.http_client.get("/status", follow_redirects=False)).status_code != 200
        user.find("Password").clear()
        user.find("Password").type("s3cret-пароль")
        user.find("Log in").click()
        await eventually(lambda: user.back_history[-1] == "/status")
        await user.should_see("Log out", retries=30)
        assert (await user.http_client.get("/status", follow_redirects=False)).status_code == 200

    async def test_redirect_target_stays_local(self, user: User) -> None:
        await user.open("/login?redirect_to=//evil.example/x")
        user.find("User name").type("admin")
        user.find("Password").type("s3cret-пароль")
        user.find("Log in").click()
        await eventually(lambda: user.back_history[-1] == "/")


class TestOpenPanel:
    """Without a login the panel must be opened explicitly, and then it says so."""

    async def test_an_open_panel_warns_on_the_status_page(self, user: User) -> None:
        await user.open("/status")
        await user.should_see("This panel is open")
        await user.should_see("panel.open = true")


def test_without_a_login_or_open_the_panel_refuses_to_start() -> None:
    from jellybit.config import PanelConfig
    from jellybit.errors import ConfigError
    from ui import auth

    with pytest.raises(ConfigError, match=r"panel.username and panel.password .* or panel.open = true"):
        auth.register(PanelConfig())
