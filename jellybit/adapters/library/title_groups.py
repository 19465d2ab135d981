"""Titles on the layouter: the computed title groups and the deletion of a whole title."""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.roots import Roots
from jellybit.core.links import FileLink, TitleGroup, title_folder_of
from jellybit.core.ports import UndoResult
from jellybit.errors import NotFound

if TYPE_CHECKING:
    from jellybit.adapters.library.reuse import PreviewMemory
    from jellybit.core.store_port import StorePort

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TitleDeleteResult:
    """Outcome of deleting a whole title (every download of its computed group)."""

    provider: str
    provider_id: str
    results: tuple[tuple[str, UndoResult], ...] = ()     # (download id, its undo)
    reverted: tuple[str, ...] = ()          # downloads with nothing left: the caller moves them to reverted
    torrents: tuple[str, ...] = ()          # downloads whose torrents may go (after explicit confirmation)
    removed_folders: tuple[str, ...] = ()
    kept_folders: tuple[tuple[str, str], ...] = ()        # (folder, why it stays)

    @property
    def complete(self) -> bool:
        """Tell whether every download of the title was fully undone and every folder went."""
        return all(r.complete for _, r in self.results) and not self.kept_folders


def is_dir(path: Path) -> bool:
    """Liveness of a folder: lstat says it is a real directory (a symlink does not count)."""
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


class TitlesMixin:
    """The layouter's title operations (needs its store, roots, lock, previews and `_undo`)."""

    store: StorePort
    roots: dict[str, Path]
    previews: PreviewMemory
    _lock: asyncio.Lock

    async def _undo(self, download_id: str) -> UndoResult:
        """Undo one download under the lock (the layouter's own)."""
        raise NotImplementedError

    def _check_links(self, rows: Sequence[FileLink]) -> None:
        """Refuse links in a library that is read-only or not mounted (the layouter's own)."""
        raise NotImplementedError

    async def title_groups(self) -> list[TitleGroup]:
        """Every computed title with live links, its folders and which of them exist on disk."""
        groups = await self.store.title_groups([str(r) for r in self.roots.values()])
        return [replace(g, live_folders=tuple(f for f in g.folders if is_dir(Path(f)))) for g in groups]

    async def delete_title(self, provider: str, provider_id: str) -> TitleDeleteResult:
        """Undo every download of a title group and remove the folders that emptied."""
        async with self._lock:
            try:
                return await self._delete_title(provider, provider_id)
            finally:
                self.previews.changed()

    async def _delete_title(self, provider: str, provider_id: str) -> TitleDeleteResult:
        ids = await self.store.title_download_ids(provider, provider_id)
        if not ids:
            raise NotFound(f"no laid-out title {provider}:{provider_id}")
        links = await self.store.live_links_for_title(provider, provider_id)
        roots = [str(r) for r in self.roots.values()]
        self._check_links(links)          # before the first download's undo: all of them or none
        folders = sorted({f for x in links if (f := title_folder_of(x.dst_path, roots)) is not None})
        results = [(download_id, await self._undo(download_id)) for download_id in ids]
        removed, kept = [], []
        for folder in folders:
            path = Path(folder)
            root = Roots(self.roots.values()).root_of(path / "x")
            if root is not None and is_dir(path):
                await asyncio.to_thread(fs.prune_empty_dirs, path, root)
            if is_dir(path):
                left = len(os.listdir(path))
                kept.append((folder, f"not empty: {left} item(s) Jellybit did not lay"))
            else:
                removed.append(folder)
        done = tuple(download_id for download_id, r in results if r.complete)
        log.info("title deleted", extra={"provider": provider, "provider_id": provider_id,
                                         "downloads": list(ids), "kept_folders": len(kept)})
        return TitleDeleteResult(provider, provider_id, tuple(results), reverted=done, torrents=done,
                                 removed_folders=tuple(removed), kept_folders=tuple(kept))
