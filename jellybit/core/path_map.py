"""Translating the paths qBittorrent reports into the paths Jellybit sees (`[[paths.map]]`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath
from typing import Protocol

from jellybit.core.sanitize import is_within


class PathMapping(Protocol):
    """One `[[paths.map]]` entry: a prefix as qBittorrent sees it and the same place here."""

    @property
    def qbittorrent(self) -> str: ...
    @property
    def local(self) -> str: ...


def _strip(prefix: str) -> str:
    stripped = prefix.rstrip("/")
    return stripped if stripped or not prefix else "/"


def translate_path(path: str, path_map: Iterable[PathMapping]) -> str:
    """Map a path qBittorrent reports to the local one: longest matching prefix, whole components only.

    `/downloads` maps `/downloads` and `/downloads/x`, never `/downloadsX`. Unmapped paths come back
    unchanged.
    """
    return translate_prefixes(path, ((m.qbittorrent, m.local) for m in path_map))


def translate_prefixes(path: str, pairs: Iterable[tuple[str, str]]) -> str:
    """`translate_path` over plain (theirs, local) prefix pairs: longest match, whole components only."""
    best: tuple[str, str] | None = None
    for theirs, local in pairs:
        prefix = _strip(theirs)
        if not prefix:
            continue
        longer = best is None or len(prefix) > len(best[0])
        if longer and is_within(PurePosixPath(prefix), PurePosixPath(path), or_equal=True):
            best = (prefix, _strip(local))
    if best is None:
        return path
    prefix, local = best
    rest = path[len(prefix):].lstrip("/")
    if not rest:
        return local
    return f"{local}/{rest}" if local != "/" else f"/{rest}"
