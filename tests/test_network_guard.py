"""The harness's network guard: a test that reaches beyond loopback is refused and fails."""

from __future__ import annotations

import socket

import pytest

from jellybit.adapters.metadata import RetryPolicy, TvmazeProvider, build_providers
from jellybit.config import Config, MetadataConfig, TvmazeConfig
from jellybit.core.ports import MetadataQuery
from jellybit.errors import AdapterError
from tests.support.network_guard import BlockedHost, is_loopback, loopback_problems, take_attempts


def test_a_default_config_would_reach_tvmaze_and_the_guard_says_so() -> None:
    assert loopback_problems(Config()) == ["metadata.tvmaze.base_url = 'https://api.tvmaze.com'"]
    offline = Config(metadata=MetadataConfig(tvmaze=TvmazeConfig(enabled=False)))
    assert loopback_problems(offline) == []


async def test_the_default_tvmaze_provider_cannot_leave_this_machine() -> None:
    (provider,) = build_providers(Config().metadata, None, policy=RetryPolicy(attempts=1))
    assert isinstance(provider, TvmazeProvider)
    try:
        with pytest.raises(AdapterError, match="could not be reached"):
            await provider.search(MetadataQuery("Fargo"))
    finally:
        await provider.close()
    assert take_attempts() == ["api.tvmaze.com"]


def test_sockets_beyond_loopback_are_refused_and_loopback_is_not() -> None:
    with socket.socket() as sock, pytest.raises(BlockedHost):
        sock.connect(("192.0.2.1", 80))
    with pytest.raises(BlockedHost):
        socket.getaddrinfo("example.com", 443)
    assert take_attempts() == ["192.0.2.1", "example.com"]
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    assert take_attempts() == []


@pytest.mark.parametrize(("host", "expected"), [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True), ("::ffff:127.0.0.1", True),
    ("127.8.9.10", True), (None, True), ("api.tvmaze.com", False), ("10.0.0.1", False), ("192.0.2.1", False),
    (b"api.themoviedb.org", False),
])
def test_what_counts_as_loopback(host: object, expected: bool) -> None:
    assert is_loopback(host) is expected
