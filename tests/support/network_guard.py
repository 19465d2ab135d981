"""The harness's network guard: no test reaches a host beyond loopback, in this process or a child.

- In the test process, connecting a socket to, or looking up the name of, anything but loopback
  (or a Unix socket) is refused with `BlockedHost` (an `OSError`, so the code under test sees an
  unreachable host) and fails the test that tried, naming the host: with TVMaze on by default a
  `Config()` would otherwise talk to api.tvmaze.com.
- A child process (`jellybit run`, the local stack) is started with a config that
  `assert_loopback_config` accepted (every enabled outside service on loopback), and with
  `CHILD_PROXY_ENV`, which sends any other HTTP request to a closed loopback port.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from jellybit.config import Config

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
# httpx honours these; a closed loopback port makes a stray request fail at once, on this machine.
CHILD_PROXY_ENV = {
    "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9", "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost,::1",
}
_attempts: list[str] = []


class BlockedHost(ConnectionRefusedError):
    """A test tried to reach a host beyond loopback."""


def is_loopback(host: object) -> bool:
    """Tell whether a host (name, address text or bytes) is this machine."""
    if host is None or host == "":
        return True
    text = host.decode() if isinstance(host, bytes) else str(host)
    text = text.strip("[]").split("%", 1)[0].casefold()
    if text in LOOPBACK_NAMES or text.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    return address.is_loopback or address.is_unspecified or bool(mapped and mapped.is_loopback)


def _refuse(host: object) -> None:
    _attempts.append(host.decode(errors="replace") if isinstance(host, bytes) else str(host))
    raise BlockedHost(f"the test harness refuses to reach {host!r}: tests stay on loopback")


def _check_address(sock: socket.socket, address: Any) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        if not is_loopback(address[0]):
            _refuse(address[0])


@pytest.fixture(scope="session", autouse=True)
def _guard_sockets() -> Iterator[None]:
    """Refuse every connection and name lookup beyond loopback for the whole session."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        _check_address(self, address)
        return real_connect(self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        _check_address(self, address)
        return real_connect_ex(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if not is_loopback(host):
            _refuse(host)
        return real_getaddrinfo(host, *args, **kwargs)

    socket.socket.connect, socket.socket.connect_ex = connect, connect_ex  # type: ignore[method-assign]
    socket.getaddrinfo = getaddrinfo
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = real_connect, real_connect_ex  # type: ignore[method-assign]
        socket.getaddrinfo = real_getaddrinfo


@pytest.fixture(autouse=True)
def _no_test_left_loopback() -> Iterator[None]:
    """Fail the test that tried to reach beyond loopback (the attempt itself was refused)."""
    _attempts.clear()
    yield
    if _attempts:
        hosts = ", ".join(sorted(set(_attempts)))
        _attempts.clear()
        pytest.fail(f"this test tried to reach {hosts} beyond loopback; point the config at a local fake "
                    "or disable that service")


def take_attempts() -> list[str]:
    """The hosts refused so far in this test, forgotten (for the guard's own tests)."""
    taken = list(_attempts)
    _attempts.clear()
    return taken


def loopback_problems(config: Config) -> list[str]:
    """Every enabled outside service of a config that is not on loopback (empty = fine)."""
    services: list[tuple[str, bool, str | None]] = [
        ("qbittorrent.url", True, config.qbittorrent.url),
        ("mqtt.url", True, config.mqtt.url),
        ("llm.base_url", config.llm.enabled, config.llm.base_url),
        ("jellyfin.url", config.jellyfin.enabled, config.jellyfin.url),
        ("telegram.base_url", config.telegram.enabled, config.telegram.base_url),
    ]
    for name in ("tmdb", "tvdb", "tvmaze"):
        section = getattr(config.metadata, name)
        services.append((f"metadata.{name}.base_url", section.enabled, section.base_url))
        services.append((f"metadata.{name}.proxy", section.enabled and bool(section.proxy), section.proxy))
    return [f"{key} = {url!r}" for key, enabled, url in services
            if enabled and not is_loopback(urlsplit(url or "").hostname)]


def assert_loopback_config(config: Config) -> None:
    """Refuse to start a child process whose config would reach beyond loopback."""
    problems = loopback_problems(config)
    assert not problems, ("a test config reaches beyond loopback (point it at a local fake or disable "
                          f"the service): {'; '.join(problems)}")
