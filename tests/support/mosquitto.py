"""A real mosquitto broker on a free loopback port, one per test session."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from devstack.stack import mosquitto_conf

from tests.support.services import free_port, require_binary


@dataclass(frozen=True)
class Broker:
    """Where the test broker listens."""

    host: str
    port: int

    @property
    def url(self) -> str:
        """The broker URL as the config takes it."""
        return f"mqtt://{self.host}:{self.port}"


def start_mosquitto(directory: Path, port: int | None = None) -> tuple[subprocess.Popen, Broker]:
    """Start mosquitto confined to loopback with TCP_NODELAY; wait until it accepts connections."""
    binary = require_binary("mosquitto")
    port = port or free_port()
    conf = directory / "mosquitto.conf"
    conf.write_text(mosquitto_conf(port))
    proc = subprocess.Popen([binary, "-c", str(conf)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"mosquitto exited: {proc.stderr.read().decode(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, Broker("127.0.0.1", port)
        except OSError:
            time.sleep(0.02)
    proc.kill()
    raise RuntimeError("mosquitto did not start within 10 s")


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    """A real broker for the whole session; tests use a unique base topic each."""
    proc, broker = start_mosquitto(tmp_path_factory.mktemp("mosquitto"))
    try:
        yield broker
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
