"""The layouter's undo: a download's recorded links taken back (only its own inodes, never the last copy),
its better copies swapped back, folders pruned; chunk by chunk, so a crash leaves little to settle."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from pathlib import Path

from jellybit.adapters.library import journal, replace
from jellybit.core.links import LIVE_STATUSES, ApplyBatch, BatchStatus, FileLink, LinkStatus, LinkUpdate
from jellybit.core.ports import UndoResult
from jellybit.core.store_port import StorePort
from jellybit.logs import for_download

log = logging.getLogger("jellybit.adapters.library.layouter")     # the layouter's own log, as before

UNDO_CHUNK = 128     # links removed per recorded undo step


class UndoMixin:
    """The layouter's undo (needs its store, roots, `_check_links` and `_recover_download`)."""

    store: StorePort
    roots: dict[str, Path]

    def _check_links(self, rows: Sequence[FileLink]) -> None:
        """Refuse links in a library that is read-only or not mounted (the layouter's own)."""
        raise NotImplementedError

    async def _recover_download(self, download_id: str) -> bool:
        """Finish the download's batches a crash left open (the layouter's own)."""
        raise NotImplementedError

    async def _undo(self, download_id: str) -> UndoResult:
        self._check_links(await self.store.links_for_download(download_id, LIVE_STATUSES))
        await self._recover_download(download_id)
        removed: list[str] = []
        refused: list[tuple[str, str]] = []
        await self._forget_replaced(download_id)
        for batch in await self.store.batches_for_download(download_id):
            rows = await self.store.links_for_batch(batch.id, LIVE_STATUSES)
            rows = await self._swap_back(batch, rows)
            # Recorded chunk by chunk: a crash leaves at most one chunk of removed links still
            # recorded as live (undo is not journaled; sending it again settles them).
            for start in range(0, len(rows), UNDO_CHUNK):
                part = rows[start:start + UNDO_CHUNK]
                taken = await asyncio.to_thread(journal.take_back, part, self.roots.values(), why="undone")
                await self.store.finish_links(taken.updates)
                removed.extend(taken.removed)
                refused.extend(taken.refused)
            left = await self.store.links_for_batch(batch.id, LIVE_STATUSES)
            if batch.status is BatchStatus.COMMITTED and not left:
                await self.store.close_batch(batch.id, BatchStatus.UNDONE)
        complete = not await self.store.links_for_download(download_id, LIVE_STATUSES)
        log.info("undo", **for_download(
            download_id, removed=len(removed), refused=len(refused), complete=complete))
        return UndoResult(removed=tuple(removed), refused=tuple(refused), complete=complete)

    async def _swap_back(self, batch: ApplyBatch, rows: list[FileLink]) -> list[FileLink]:
        """Undo the batch's better copies (the replaced files come back); the rows left to take back."""
        olds = {k: v for k, v in (await self.store.replaced_in_batch(batch.id)).items()
                if v.status is LinkStatus.REPLACED}
        swapped = [r for r in rows if r.id in olds]
        if not swapped:
            return rows
        for row in swapped:
            swap = await asyncio.to_thread(replace.swap_back, row, olds[row.id], self.roots.values())
            await self.store.finish_links(replace.undo_updates(row, olds[row.id], swap, "undone"))
            log.info("replaced copy restored" if swap.status else "replaced copy not restored",
                     **for_download(batch.download_id, dst=row.dst_path, reason=swap.reason or None))
        return [r for r in rows if r.id not in olds]

    async def _forget_replaced(self, download_id: str) -> None:
        """Undoing a download whose files were replaced: those files must never come back."""
        rows = await self.store.links_for_download(download_id, [LinkStatus.REPLACED])
        why = "undone while replaced by a better copy"
        await self.store.finish_links([LinkUpdate(r.id, LinkStatus.REMOVED, None, why) for r in rows])
