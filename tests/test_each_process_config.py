"""Each process validates only what it uses: with the bot enabled and its token only in the worker's
environment (as compose arranges it), the panel serves and the CLI answers; the worker alone needs it."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jellybit.config import load_config
from tests.support.fake_telegram import TOKEN, FakeTelegram
from tests.support.mosquitto import Broker
from tests.support.services import free_port
from tests.support.worker_process import (
    CLI,
    WorkerProcess,
    checked,
    eventually_retained,
    process_env,
    run_cli,
    worker_config,
)


@pytest.fixture
def telegram() -> Iterator[FakeTelegram]:
    server = FakeTelegram()
    server.start()
    yield server
    server.stop()


def bot_config(tmp_path: Path, broker: Broker, telegram: FakeTelegram, panel_port: int) -> Path:
    """A config with the bot enabled and no token in it (the token is the worker's secret)."""
    return worker_config(tmp_path, mqtt_url=broker.url, extra=f"""
[telegram]
enabled = true
base_url = "{telegram.base_url}"
allowed_user_ids = [1]

[panel]
host = "127.0.0.1"
port = {panel_port}
username = "admin"
password = "panel-Пароль"
storage_secret = "s"
""")


def test_the_panel_and_the_cli_run_without_the_bot_token(tmp_path: Path, mosquitto: Broker,
                                                         telegram: FakeTelegram) -> None:
    panel_port = free_port()
    config = bot_config(tmp_path, mosquitto, telegram, panel_port)
    worker = WorkerProcess(config, tmp_path / "worker.log", env={"JELLYBIT_TELEGRAM_TOKEN": TOKEN})
    worker.start()
    panel = subprocess.Popen([*CLI, "--config", str(checked(config)), "panel"], stdin=subprocess.DEVNULL,
                             stdout=(tmp_path / "panel.log").open("wb"), stderr=subprocess.STDOUT,
                             env=process_env(NICEGUI_STORAGE_PATH=str(tmp_path / "nicegui")))
    try:
        base = load_config(config, env={}).mqtt.base_topic
        asyncio.run(eventually_retained(mosquitto.url, f"{base}/availability", lambda p: p == b"online"))

        listed = run_cli(config, "list")
        assert listed.returncode == 0, listed.stdout + listed.stderr
        health = run_cli(config, "healthcheck", "--no-services")      # qBittorrent is not running
        assert health.returncode == 0, health.stdout + health.stderr

        deadline = time.monotonic() + 60
        page = None
        while time.monotonic() < deadline and panel.poll() is None:
            try:
                page = httpx.get(f"http://127.0.0.1:{panel_port}/login", timeout=2, trust_env=False)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        assert panel.poll() is None, (tmp_path / "panel.log").read_text(errors="replace")
        assert page is not None
        assert page.status_code == 200
    finally:
        panel.terminate()
        panel.wait(20)
        worker.close()


def test_only_the_worker_refuses_to_start_without_the_token(tmp_path: Path, mosquitto: Broker,
                                                           telegram: FakeTelegram) -> None:
    config = bot_config(tmp_path, mosquitto, telegram, free_port())
    result = run_cli(config, "run", timeout=60)
    assert result.returncode == 3
    assert "needs a bot token" in result.stderr
    assert "JELLYBIT_TELEGRAM_TOKEN" in result.stderr
    assert "check-config" not in result.stderr
    assert run_cli(config, "check-config").returncode == 0
