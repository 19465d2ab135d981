"""Name resolution for the source guard: every address a host name has, through the system resolver."""

from __future__ import annotations

import asyncio
import socket

from jellybit.core.addresses import Address, literal
from jellybit.errors import AdapterError


async def resolve(host: str) -> list[Address]:
    """Every IPv4/IPv6 address of `host` (an AdapterError when it has none or the lookup fails)."""
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise AdapterError("dns", f"cannot resolve {host!r}: {exc}") from None
    found: list[Address] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = literal(str(sockaddr[0]))
        if address is not None and address not in found:
            found.append(address)
    if not found:
        raise AdapterError("dns", f"{host!r} has no address")
    return found
