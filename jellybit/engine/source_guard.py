"""No request to where it should not go: qBittorrent is never sent to this machine or its networks.

Jellybit never fetches a user's URL itself, but qBittorrent does, and it contacts every tracker,
web seed and peer a magnet or `.torrent` names. So every such endpoint is checked at ingest,
after resolving its name: loopback, private, link-local, multicast and other non-public
addresses are refused unless allow-listed (`qbittorrent.allow_private_hosts`, for a user's own
tracker). A URL source whose name does not resolve is refused as a transient error (try again);
a tracker or web seed that does not resolve is let through (a dead tracker in a long list is
common, and it cannot reach anything now). What cannot be checked here: a redirect qBittorrent
follows, and a name that resolves differently later (DNS rebinding) — see docs/qbittorrent.md.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from jellybit.core.addresses import Address, AllowList, address_problem, literal, peer_host, url_host
from jellybit.core.identity import Source, SourceKind, TorrentMeta
from jellybit.errors import AdapterError, InvalidSource

log = logging.getLogger(__name__)

Resolver = Callable[[str], Awaitable[list[Address]]]
MAX_HOSTS = 64          # distinct hosts checked per source; a longer list is refused


@dataclass(frozen=True)
class Endpoint:
    """One host qBittorrent would contact, and what it is for the user's message."""

    host: str
    what: str          # "the URL", "tracker", "web seed", "peer"
    strict: bool       # True: it must resolve (the URL source itself)


class SourceGuard:
    """Checks every endpoint of a source before it is accepted."""

    def __init__(self, allow: AllowList | None = None, *, resolve: Resolver,
                 timeout: float = 5.0) -> None:
        self.allow = allow or AllowList()
        self.resolve = resolve
        self.timeout = timeout

    async def check_source(self, source: Source) -> None:
        """A URL, magnet or infohash source: its host, trackers, web seeds and peers."""
        endpoints: list[Endpoint] = []
        if source.kind is SourceKind.URL:
            host = url_host(source.uri)
            if host is None:
                raise InvalidSource("the URL has no host qBittorrent could fetch from")
            endpoints.append(Endpoint(host, "the URL", strict=True))
        endpoints += _endpoints(source.trackers, "tracker", url_host)
        endpoints += _endpoints(source.web_seeds, "web seed", url_host)
        endpoints += _endpoints(source.peers, "peer", peer_host)
        await self._check(endpoints)

    async def check_torrent(self, meta: TorrentMeta) -> None:
        """A `.torrent` file: its trackers and web seeds."""
        await self._check(_endpoints(meta.trackers, "tracker", url_host)
                          + _endpoints(meta.web_seeds, "web seed", url_host))

    async def _check(self, endpoints: list[Endpoint]) -> None:
        unique: dict[str, Endpoint] = {}
        for endpoint in endpoints:
            known = unique.get(endpoint.host)
            if known is None or (endpoint.strict and not known.strict):
                unique[endpoint.host] = endpoint
        if len(unique) > MAX_HOSTS:
            raise InvalidSource(f"the source names {len(unique)} different hosts (trackers, web seeds, "
                                f"peers); at most {MAX_HOSTS} are accepted")
        pending = [e for e in unique.values() if not self._settled(e)]
        # Concurrent lookups, each bounded by the timeout: the whole check takes about one timeout.
        await asyncio.gather(*(self._check_name(e) for e in pending))

    def _settled(self, endpoint: Endpoint) -> bool:
        """Check a host that needs no lookup (an address, or allow-listed by name); True when done."""
        if self.allow.allows(endpoint.host):
            return True
        address = literal(endpoint.host)
        if address is None:
            return False
        _refuse_if_bad(endpoint, address)
        return True

    async def _check_name(self, endpoint: Endpoint) -> None:
        try:
            addresses = await asyncio.wait_for(self.resolve(endpoint.host), self.timeout)
        except (AdapterError, TimeoutError) as exc:
            if endpoint.strict:
                why = exc.message if isinstance(exc, AdapterError) else "the lookup timed out"
                raise AdapterError("dns", f"cannot check where {endpoint.what} points: {why}") from None
            log.info("a %s does not resolve; accepted (it cannot reach anything now)", endpoint.what,
                     extra={"host": endpoint.host[:100]})
            return
        for address in addresses:
            if not self.allow.allows(endpoint.host, address):
                _refuse_if_bad(endpoint, address)


def _endpoints(values: Iterable[str], what: str, host_of: Callable[[str], str | None]) -> list[Endpoint]:
    found = []
    for value in values:
        host = host_of(value)
        if host is not None:
            found.append(Endpoint(host, what, strict=False))
    return found


def _refuse_if_bad(endpoint: Endpoint, address: Address) -> None:
    problem = address_problem(address)
    if problem is not None:
        shown = endpoint.host if len(endpoint.host) <= 80 else endpoint.host[:79] + "…"
        where = shown if literal(endpoint.host) is not None else f"{shown} ({address})"
        raise InvalidSource(f"refused: {endpoint.what} {where} is {problem}; Jellybit does not send "
                            "qBittorrent to this machine or its networks (allow a host of your own in "
                            "qbittorrent.allow_private_hosts)")
