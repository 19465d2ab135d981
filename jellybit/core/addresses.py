"""Where a user's source may make qBittorrent connect: public addresses only, unless allow-listed.

Pure: the address rules, the allow-list and pulling hosts out of URLs and peer strings. The
names are resolved elsewhere (`adapters/resolver.py`); `engine/source_guard.py` applies the rules.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

# Schemes of the URLs qBittorrent (libtorrent) contacts: sources, trackers, web seeds.
URL_SCHEMES = frozenset({"http", "https", "udp", "ws", "wss"})


def address_problem(address: Address) -> str | None:
    """Why qBittorrent must not be sent to this address for a user (None = a public address)."""
    mapped = getattr(address, "ipv4_mapped", None)
    if mapped is not None:
        address = mapped
    if address.is_loopback:
        return "a loopback address (this machine)"
    if address.is_unspecified:
        return "the unspecified address (this machine)"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private network address"
    if not address.is_global:
        return "a reserved, shared or documentation address"
    return None


def literal(host: str) -> Address | None:
    """The address a host names literally (`127.0.0.1`, `[::1]`), or None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return None


def url_host(url: str) -> str | None:
    """The host of a URL qBittorrent would contact, lowercased (None: not such a URL, or no host)."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() not in URL_SCHEMES or not host:
        return None
    return host.rstrip(".").lower() or None


def peer_host(peer: str) -> str | None:
    """The host of a `host:port` or `[v6]:port` peer (a magnet's `x.pe`)."""
    text = peer.strip()
    if text.startswith("["):
        end = text.find("]")
        return text[1:end].lower() if end > 1 else None
    host, _, _port = text.rpartition(":")
    return (host or text).rstrip(".").lower() or None


@dataclass(frozen=True)
class AllowList:
    """Hosts a user allows although they are not public: names (exact) and networks."""

    names: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> AllowList:
        """From config entries: a host name, an address or a network (`192.168.1.0/24`)."""
        names: set[str] = set()
        networks: list[Network] = []
        for raw in entries:
            entry = raw.strip().rstrip(".").lower()
            if not entry:
                raise ValueError("an empty entry")
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if any(c in entry for c in "/:@ ") or entry.startswith("-"):
                raise ValueError(f"{raw!r} is neither a host name, an address nor a network")
            names.add(entry)
        return cls(frozenset(names), tuple(networks))

    def allows(self, host: str, address: Address | None = None) -> bool:
        """Tell whether a host (by its name) or one of its addresses is allow-listed."""
        if host.rstrip(".").lower() in self.names:
            return True
        address = address if address is not None else literal(host)
        return address is not None and any(address in network for network in self.networks)
