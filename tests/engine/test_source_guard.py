"""No request to where it should not go: sources, trackers, web seeds and peers that point at this
machine or its networks are refused at ingest (after resolving the name), unless allow-listed.

Names other than `localhost` are resolved by a table (the test harness refuses real lookups
beyond loopback); `localhost` goes through the system resolver.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import quote

import bencode2
import pytest

from jellybit.adapters.resolver import resolve as system_resolve
from jellybit.adapters.store import Store
from jellybit.core.addresses import Address, AllowList
from jellybit.engine.ingest import ingest
from jellybit.engine.source_guard import SourceGuard
from jellybit.errors import AdapterError, InvalidSource
from tests.support.engine import EngineFactory

V1 = "0123456789abcdef0123456789abcdef01234567"
DNS = {
    "tracker.example.org": ["93.184.216.34"],
    "rebind.example.org": ["93.184.216.34", "127.0.0.1"],      # one address is enough to refuse
    "tracker.lan": ["192.168.1.20"],
    "metadata.cloud": ["169.254.169.254"],
    "v6-local.example": ["fe80::1"],
}


async def table(host: str) -> list[Address]:
    """A resolver over DNS; `localhost` through the system; anything else does not exist."""
    if host == "localhost":
        return await system_resolve(host)
    if host not in DNS:
        raise AdapterError("dns", f"cannot resolve {host!r}: no such name")
    return [ipaddress.ip_address(a) for a in DNS[host]]


def guard(*allowed: str) -> SourceGuard:
    return SourceGuard(AllowList.parse(allowed), resolve=table, timeout=5.0)


def magnet(**params: list[str]) -> str:
    extra = "".join(f"&{key.replace('_', '.')}={quote(v, safe='')}" for key, values in params.items()
                    for v in values)
    return f"magnet:?xt=urn:btih:{V1}&dn=Test{extra}"


def torrent(announce: str | None = None, url_list: list[str] | None = None) -> bytes:
    info = {b"name": b"Test", b"piece length": 16384, b"length": 1000, b"pieces": b"\0" * 20}
    meta: dict[bytes, object] = {b"info": info}
    if announce:
        meta[b"announce"] = announce.encode()
    if url_list:
        meta[b"url-list"] = [u.encode() for u in url_list]
    return bencode2.bencode(meta)


@pytest.mark.parametrize(("source", "words"), [
    ("http://127.0.0.1:8080/api/v2/app/shutdown", "the URL 127.0.0.1 is a loopback address"),
    ("http://localhost:18080/x.torrent", "localhost (127.0.0.1) is a loopback"),
    ("http://[::1]:8080/x.torrent", "::1 is a loopback"),
    ("http://[::ffff:127.0.0.1]/x.torrent", "loopback"),
    ("https://10.0.0.5/x.torrent", "private network"),
    ("http://metadata.cloud/latest/meta-data/", "169.254.169.254) is a link-local"),
    ("http://rebind.example.org/x.torrent", "(127.0.0.1) is a loopback"),
    ("http://0.0.0.0:8080/", "unspecified"),
    (magnet(tr=["udp://tracker.example.org:6969", "http://127.0.0.1:8080/announce"]),
     "tracker 127.0.0.1 is a loopback"),
    (magnet(tr=["http://tracker.lan/announce"]), "tracker tracker.lan (192.168.1.20) is a private"),
    (magnet(ws=["http://v6-local.example/files/"]), "web seed v6-local.example (fe80::1) is a link-local"),
    (magnet(x_pe=["127.0.0.1:8080"]), "peer 127.0.0.1 is a loopback"),
    (magnet(tr=["udp://239.1.2.3:1900"]), "multicast"),
])
async def test_endpoints_beyond_the_public_internet_are_refused(store: Store, source: str,
                                                                words: str) -> None:
    with pytest.raises(InvalidSource, match="refused") as caught:
        await ingest(store, source=source, max_torrent_bytes=1 << 20, guard=guard())
    assert words in caught.value.message
    assert "allow_private_hosts" in caught.value.message
    assert await store.count_downloads() == 0


@pytest.mark.parametrize(("announce", "seeds", "words"), [
    ("http://127.0.0.1:6969/announce", None, "tracker 127.0.0.1 is a loopback"),
    (None, ["http://metadata.cloud/"], "web seed metadata.cloud (169.254.169.254) is a link-local"),
])
async def test_a_torrent_file_naming_a_local_tracker_or_web_seed_is_refused(
    store: Store, announce: str | None, seeds: list[str] | None, words: str,
) -> None:
    with pytest.raises(InvalidSource, match="refused") as caught:
        await ingest(store, torrent=torrent(announce, seeds), max_torrent_bytes=1 << 20, guard=guard())
    assert words in caught.value.message
    assert await store.count_downloads() == 0


@pytest.mark.parametrize("source", [
    "http://93.184.216.34/x.torrent",
    "https://tracker.example.org/x.torrent",
    magnet(tr=["udp://tracker.example.org:6969", "udp://dead.tracker.example:80"]),   # a dead name passes
    magnet(),
    V1,
])
async def test_public_endpoints_are_accepted(store: Store, source: str) -> None:
    result = await ingest(store, source=source, max_torrent_bytes=1 << 20, guard=guard())
    assert result.created


@pytest.mark.parametrize(("source", "allowed"), [
    (magnet(tr=["http://tracker.lan/announce"]), "tracker.lan"),
    (magnet(tr=["http://tracker.lan/announce"]), "192.168.1.0/24"),
    ("http://127.0.0.1:8080/x.torrent", "127.0.0.1"),
])
async def test_the_allow_list_lets_a_users_own_host_through(store: Store, source: str, allowed: str) -> None:
    result = await ingest(store, source=source, max_torrent_bytes=1 << 20, guard=guard(allowed))
    assert result.created


async def test_a_url_whose_name_does_not_resolve_is_a_transient_error(store: Store) -> None:
    with pytest.raises(AdapterError, match="cannot check where the URL points") as caught:
        await ingest(store, source="http://nowhere.example/x.torrent", max_torrent_bytes=1 << 20,
                     guard=guard())
    assert caught.value.transient
    assert await store.count_downloads() == 0


async def test_too_many_hosts_are_refused(store: Store) -> None:
    many = magnet(tr=[f"udp://93.184.216.{n}:80" for n in range(70)])
    with pytest.raises(InvalidSource, match="at most 64"):
        await ingest(store, source=many, max_torrent_bytes=1 << 20, guard=guard())


async def test_commands_guard_by_default_from_the_config(make_engine: EngineFactory) -> None:
    engine = await make_engine()
    with pytest.raises(InvalidSource, match="loopback"):
        await engine.commands.add(source="http://127.0.0.1:18080/api/v2/auth/login")
    assert await engine.store.count_downloads() == 0
