"""Finding a download's torrent in qBittorrent's view, and translating qBittorrent's paths."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from jellybit.core.ports import TorrentInfo

if TYPE_CHECKING:
    from jellybit.config import PathMapping


def match_torrent(hashes: set[str], tag: str | None,
                  torrents: Iterable[TorrentInfo]) -> TorrentInfo | None:
    """The torrent with one of `hashes` (v1/v2), else the oldest one carrying `tag`; else None.

    Never matches on qBittorrent's `hash` field alone: for v2 and hybrid torrents it is the v2
    hash cut to 40 hex digits, which is neither of the real infohashes.
    """
    wanted = {h.lower() for h in hashes if h}
    tagged: list[TorrentInfo] = []
    for torrent in torrents:
        if wanted & torrent.hashes():
            return torrent
        if tag and tag in torrent.tags:
            tagged.append(torrent)
    if not tagged:
        return None
    return min(tagged, key=lambda t: (t.added_on is None, t.added_on or 0, t.hash))


def _strip(prefix: str) -> str:
    stripped = prefix.rstrip("/")
    return stripped if stripped or not prefix else "/"


def translate_path(path: str, path_map: Iterable[PathMapping]) -> str:
    """Map a path qBittorrent reports to the local one: longest matching prefix, whole components only.

    `/downloads` maps `/downloads` and `/downloads/x`, never `/downloadsX`. Unmapped paths come back
    unchanged.
    """
    best: tuple[str, str] | None = None
    for mapping in path_map:
        prefix = _strip(mapping.qbittorrent)
        if not prefix:
            continue
        inside = path == prefix or path.startswith(prefix if prefix == "/" else prefix + "/")
        if inside and (best is None or len(prefix) > len(best[0])):
            best = (prefix, _strip(mapping.local))
    if best is None:
        return path
    prefix, local = best
    rest = path[len(prefix):].lstrip("/")
    if not rest:
        return local
    return f"{local}/{rest}" if local != "/" else f"/{rest}"
