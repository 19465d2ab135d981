"""Download ids on the command line: a unique prefix stands for the whole id (`show 01jf…`), as in
git; an ambiguous one is answered with the downloads it matches."""

from __future__ import annotations

from jellybit.client import JellybitClient
from jellybit.core.limits import MAX_LIST_LIMIT
from jellybit.protocol import Command, DownloadPayload, ListPage

ID_LENGTH = 26                      # a ULID
SHOWN = 10                          # matches listed for an ambiguous prefix


class IdNotFound(Exception):
    """The prefix names no download, or more than one; the message says which."""


async def matching(client: JellybitClient, prefix: str, timeout: float) -> list[DownloadPayload]:  # noqa: ASYNC109
    """Every download whose id starts with `prefix` (case-insensitive), newest first."""
    wanted = prefix.lower()
    found: list[DownloadPayload] = []
    offset = 0
    while True:
        response = await client.request(Command.LIST, {"limit": MAX_LIST_LIMIT, "offset": offset},
                                        timeout=timeout)
        if response.status != "ok" or not isinstance(response.data, ListPage):
            return found
        page = response.data
        found.extend(item for item in page.items if item.id.lower().startswith(wanted))
        offset += len(page.items)
        if not page.items or offset >= page.total:
            return found


async def resolve_id(client: JellybitClient, given: str, timeout: float) -> str:  # noqa: ASYNC109
    """The full id a unique prefix stands for (a whole id is returned as it is)."""
    if len(given) >= ID_LENGTH:
        return given
    if not given:
        raise IdNotFound("give a download id (or the start of one)")
    found = await matching(client, given, timeout)
    if len(found) == 1:
        return found[0].id
    if not found:
        raise IdNotFound(f"no download id starts with {given!r}; `jellybit list` shows them")
    lines = [f"  {item.id}  {item.state:<14} {item.title or item.name}" for item in found[:SHOWN]]
    more = f"\n  … and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    raise IdNotFound(f"{given!r} is the start of {len(found)} download ids; give more of it:\n"
                     + "\n".join(lines) + more)
