"""The address rules of the source guard: which hosts are public, the allow-list, hosts from text."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.addresses import AllowList, address_problem, literal, peer_host, url_host


@pytest.mark.parametrize(("address", "words"), [
    ("127.0.0.1", "loopback"), ("127.8.9.10", "loopback"), ("::1", "loopback"),
    ("::ffff:127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"), ("::", "unspecified"),
    ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("192.168.1.1", "private"), ("fd00::1", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"),
    ("224.0.0.1", "multicast"), ("239.255.255.250", "multicast"), ("ff02::1", "multicast"),
    ("100.64.0.1", "reserved"), ("192.0.2.7", "private"), ("240.0.0.1", "private"),
])
def test_addresses_that_are_not_public(address: str, words: str) -> None:
    problem = address_problem(ipaddress.ip_address(address))
    assert problem is not None
    assert words in problem


@pytest.mark.parametrize("address", ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"])
def test_public_addresses_pass(address: str) -> None:
    assert address_problem(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(("url", "host"), [
    ("http://Tracker.Example.ORG:8080/announce", "tracker.example.org"),
    ("udp://[::1]:6969", "::1"), ("https://127.0.0.1/x.torrent", "127.0.0.1"),
    ("wss://tracker.example./a", "tracker.example"), ("http://трекер.рф/announce", "трекер.рф"),
    ("dht://x", None), ("not a url", None), ("http:///nohost", None), ("http://[::1", None),
])
def test_url_host(url: str, host: str | None) -> None:
    assert url_host(url) == host


@pytest.mark.parametrize(("peer", "host"), [
    ("127.0.0.1:6881", "127.0.0.1"), ("[::1]:6881", "::1"), ("peer.example:1", "peer.example"),
    ("10.0.0.1", "10.0.0.1"), ("[", None), ("", None),
])
def test_peer_host(peer: str, host: str | None) -> None:
    assert peer_host(peer) == host


def test_the_allow_list_takes_names_addresses_and_networks() -> None:
    allow = AllowList.parse(["Tracker.LAN", "192.168.1.0/24", "::1", "10.0.0.7"])
    assert allow.allows("tracker.lan")
    assert allow.allows("tracker.lan.")
    assert allow.allows("192.168.1.77")
    assert allow.allows("anything", ipaddress.ip_address("192.168.1.5"))
    assert allow.allows("[::1]")
    assert not allow.allows("other.lan", ipaddress.ip_address("192.168.2.5"))
    assert not allow.allows("10.0.0.8")


@pytest.mark.parametrize("entry", ["", "http://tracker.lan/", "a b", "user@host", "-x"])
def test_bad_allow_list_entries_are_refused(entry: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        AllowList.parse([entry])


@given(st.text(max_size=200))
def test_hosts_from_any_text_never_raise(text: str) -> None:
    for host in (url_host(text), peer_host(text), url_host("http://" + text)):
        assert host is None or isinstance(host, str)
    assert literal(text) is None or str(literal(text))
