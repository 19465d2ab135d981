"""The layouter: plan targets (with folder convergence and merge), crash-safe batches, undo, reconcile.

Order of every apply: compute and check all targets (nothing written) -> journal the batch
(`open`, rows `pending`) -> link or copy file by file, finishing rows in chunks -> commit (with
supersede). A crash anywhere leaves an `open` batch that `recover()` rolls forward from what
the disk shows, or rolls back when it cannot be completed.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from jellybit.adapters.library import files as fs
from jellybit.adapters.library import journal, replace
from jellybit.adapters.library import upgrades as up
from jellybit.adapters.library.disk import (
    Inspection,
    Upgrades,
    inspect,
    place_of,
    targets_in_place,
)
from jellybit.adapters.library.gc_pause import gc_paused
from jellybit.adapters.library.reuse import PreviewMemory
from jellybit.adapters.library.title_groups import TitleDeleteResult, TitlesMixin, is_dir
from jellybit.adapters.library.undo import UndoMixin
from jellybit.adapters.storage_watch import StorageWatch, library_fault, place_for
from jellybit.config import PathsConfig
from jellybit.core.links import (
    LIVE_STATUSES,
    ApplyBatch,
    BatchStatus,
    FileLink,
    LinkStatus,
    LinkUpdate,
    title_folder_of,
)
from jellybit.core.models import Download
from jellybit.core.names import id_tag
from jellybit.core.ports import ApplyResult, LayoutPreview, PathPlace, UndoResult
from jellybit.core.reasons import reason
from jellybit.core.records import MediaType, Plan, Reason, Recognition, RecognitionDraft, Work
from jellybit.core.sanitize import is_within
from jellybit.core.states import RECONCILABLE, State, drift
from jellybit.core.storage import StorageCode, library_component
from jellybit.core.store_port import StorePort
from jellybit.core.store_records import ReconcileItem
from jellybit.core.targets import layout_reasons, layout_targets
from jellybit.errors import AdapterError, JellybitError, NotFound, StorageFault, UnsafePath
from jellybit.logs import for_download

log = logging.getLogger(__name__)

CHUNK = 2048         # rows finished per journal transaction (one fsync per folder per chunk)
LIBRARIES = {MediaType.MOVIE: "movies", MediaType.SERIES: "series"}
# Reasons that stop even a human-confirmed apply (it returns "collision" -> review).
APPLY_BLOCKERS = frozenset({"several_title_folders", "target_collision", "better_copy"})


_ID_TAG = re.compile(r"\[[a-z]+id-[^\]\s]+\]")


class LayoutEngine(UndoMixin, TitlesMixin):   # UndoMixin first: its `_undo` is the real one
    """Implements the `Layouter` port over the store and the library folders."""

    def __init__(self, store: StorePort, paths: PathsConfig, *, chunk: int = CHUNK,
                 upgrades: str = "ask", watch: StorageWatch | None = None) -> None:
        self.store = store
        self.upgrade_policy = upgrades       # layout.upgrades: ask | keep_both | replace_if_better
        self.watch = watch            # storage faults of the library roots (None: not watched)
        self.paths = paths
        self.chunk = max(1, chunk)
        self.roots = {"movies": Path(paths.movies), "series": Path(paths.series)}
        self._lock = asyncio.Lock()   # one layout operation at a time: convergence must see the last one
        self.previews = PreviewMemory()
        self.inspections = 0          # plans computed and compared with the disk (for tests and benchmarks)

    # ------------------------------------------------------------------ planning

    async def _converge(
        self, recognition: RecognitionDraft
    ) -> tuple[str | None, list[Reason], list[FileLink]]:
        """The title folder to inherit from live links of the same (provider, provider_id)."""
        if not recognition.provider or not recognition.provider_id or recognition.media_type is None:
            return None, [], []
        links = await self.store.live_links_for_title(recognition.provider, recognition.provider_id)
        root = self.roots[LIBRARIES[recognition.media_type]]
        folders = {f for link in links if (f := title_folder_of(link.dst_path, [str(root)])) is not None}
        live = sorted(f for f in folders if is_dir(Path(f)))
        if len(live) > 1:
            names = ", ".join(Path(f).name for f in live)
            return None, [reason("several_title_folders", f"this title already has several live folders "
                                 f"({names}); merge them on disk first")], links
        if not live:
            return None, [], links
        folder = Path(live[0]).name
        work = Work(recognition.media_type, recognition.title or "", recognition.year, recognition.provider,
                    recognition.provider_id)
        own, tags = id_tag(work), _ID_TAG.findall(folder)
        if own is not None and tags and own not in tags:
            # Someone renamed the folder to another title's id: joining it would mix two titles.
            return None, [reason("folder_id_mismatch", f"the title's existing folder {folder!r} carries "
                                 f"{', '.join(tags)}, not {own}")], links
        return folder, [], links

    async def _inspect(
        self, download: Download, recognition: RecognitionDraft, only: frozenset[str] | None = None
    ) -> tuple[Inspection, list[Reason], bool]:
        """The plan checked against the disk, its reasons, and whether the download owns live links."""
        self.inspections += 1
        folder, reasons, title_links = await self._converge(recognition)
        if recognition.media_type is None:
            raise NotFound("the recognition has no media type yet")
        work = Work(recognition.media_type, recognition.title or "", recognition.year, recognition.provider,
                    recognition.provider_id, recognition.original_title)
        own = await self.store.links_for_download(download.id, LIVE_STATUSES)
        with gc_paused():
            plan = layout_targets(recognition.plan, work, folder=folder)
            plan, upgrades, found = await self._upgrades(download, recognition, plan, work, folder,
                                                         title_links)
            reasons.extend(found)
            copies = {
                link.dst_path: (link.dst_ino, link.src_dev, link.src_ino)
                for link in [*title_links, *own] if journal.is_copy(link) and link.dst_ino is not None
            }
            merge = folder is not None and recognition.media_type is MediaType.SERIES
            inspection = await asyncio.to_thread(
                inspect, download, plan, self.paths, self.roots, merge=merge, own_copies=copies,
                upgrades=upgrades, only=only,
            )
            if folder is not None:
                reasons.append(reason("folder_inherited", f"joins the existing folder {folder!r}"))
            return inspection, [*reasons, *layout_reasons(plan), *inspection.reasons()], bool(own)

    async def _upgrades(
        self, download: Download, recognition: RecognitionDraft, plan: Plan, work: Work, folder: str | None,
        title_links: list[FileLink],
    ) -> tuple[Plan, Upgrades | None, list[Reason]]:
        """Better copies: held videos, the decision for each, and the plan relabelled for keep-both."""
        roots = {name: str(root) for name, root in self.roots.items()}
        films = recognition.media_type is MediaType.MOVIE
        holding = up.holders(plan, roots, title_links, download.id, films)
        if not holding:
            return plan, None, []
        choice = (await self.store.overrides(download.id)).get("upgrade")
        copies: dict[str, up.HeldCopy] = {}
        for item in plan.items:
            old = holding.get(item.source)
            if old is None:
                continue
            other = await self.store.find_download(old.download_id)
            batch = await self.store.get_batch(old.apply_batch_id)
            copy = up.held_copy(item, download.display_name, old,
                                other.display_name if other else old.download_id,
                                batch.finished_at or batch.created_at)
            # An episode already there that this copy does not beat is merge top-up (skipped, seed
            # 002 §6.2), not a question: a season pack over single episodes must not ask each time.
            if films or copy.verdict is up.Verdict.BETTER:
                copies[item.source] = copy
        if not copies:
            return plan, None, []
        decisions = {s: up.decide(self.upgrade_policy, choice, c) for s, c in copies.items()}
        kept = {s: copies[s] for s, d in decisions.items() if d == up.Choice.KEEP_BOTH}
        if kept:
            labelled = up.version_labels(recognition.plan, kept)
            plan = layout_targets(labelled, work, folder=folder)
        title_at = {link.dst_path: link for link in title_links if link.download_id != download.id}
        replaced = {s: copies[s].old for s, d in decisions.items() if d == up.Choice.REPLACE}
        notes = {s: c.describe() for s, c in copies.items()}
        return plan, Upgrades(decisions, replaced, title_at, notes), up.upgrade_reasons(copies, decisions)

    async def preview(self, download: Download, recognition: RecognitionDraft) -> LayoutPreview:
        """Compute targets (folder convergence included), statuses and blocking reasons; writes nothing."""
        generation = self.previews.generation
        try:
            inspection, reasons, owns_links = await self._inspect(download, recognition)
        except JellybitError as exc:
            found = reason("layout_preview", f"cannot compute the targets: {exc.message}")
            return LayoutPreview(plan=recognition.plan, reasons=(found,))
        if not owns_links:
            self.previews.remember(download, recognition, generation, inspection, tuple(reasons))
        return LayoutPreview(plan=inspection.plan, reasons=tuple(reasons))

    # ------------------------------------------------------------------ apply

    async def apply(self, download: Download, recognition: Recognition) -> ApplyResult:
        """Lay the plan out as one crash-safe batch; UnsafePath/SourceMissing raise before any write.

        Right after a preview of this very recognition, with no layout operation in between, the
        preview's targets and inspection are used (layout_reuse.py says why that is safe).
        """
        return await self._apply_locked(download, recognition, None)

    async def apply_files(self, download: Download, recognition: Recognition,
                          sources: frozenset[str]) -> ApplyResult:
        """Lay out only these files of the plan as one crash-safe batch (the rest still downloads).

        Targets come from the whole plan (a file's name never depends on which others are there);
        only the given sources are checked against the disk and journaled.
        """
        return await self._apply_locked(download, recognition, sources)

    async def _apply_locked(self, download: Download, recognition: Recognition,
                            only: frozenset[str] | None) -> ApplyResult:
        async with self._lock:
            try:
                with gc_paused():
                    return await self._apply(download, recognition, only=only)
            except AdapterError as exc:
                error = self._storage(exc)
                if error is exc:
                    raise
                raise error from exc
            finally:
                self.previews.changed()

    def place_of(self, path: str) -> PathPlace:
        """Where a path qBittorrent reports is here (its filesystem; inside paths.downloads?)."""
        return place_of(path, self.paths)

    # ------------------------------------------------------------------ storage faults

    def _library(self, path: str | None) -> str | None:
        """The library a path lies in (None: neither)."""
        if path is None:
            return None
        return next((name for name, root in self.roots.items() if is_within(root, Path(path), or_equal=True)),
                    None)

    def _storage(self, exc: AdapterError) -> JellybitError:
        """A filesystem failure in a library as its storage fault (told to the watch), else itself."""
        name = self._library(exc.path)
        if exc.errno is None or name is None:
            return exc
        place = (self.watch.library_place(name) if self.watch is not None
                 else place_for(library_component(name), self.roots[name]))
        fault = library_fault(OSError(exc.errno, exc.message), place)
        if fault is None:
            return exc
        if self.watch is not None:
            self.watch.failed(fault)
        return fault

    def _check_links(self, rows: Sequence[FileLink]) -> None:
        """Refuse to remove or re-check links in a library that is read-only or not mounted: its
        files would be refused one by one, or look gone and be recorded as removed."""
        if self.watch is None:
            return
        for name in dict.fromkeys(n for r in rows if (n := self._library(r.dst_path)) is not None):
            fault = self.watch.check_library(name)
            if fault is not None and fault.code != StorageCode.LIBRARY_FULL:
                raise fault

    def check_library(self, media_type: MediaType) -> None:
        """Refuse to lay out into a library that is full, read-only or not mounted (probed now)."""
        if self.watch is None or media_type not in LIBRARIES:
            return
        fault = self.watch.check_library(LIBRARIES[media_type])
        if fault is not None:
            raise fault

    async def _apply(self, download: Download, recognition: RecognitionDraft,
                     only: frozenset[str] | None = None) -> ApplyResult:
        self.check_library(recognition.media_type)
        if await self._recover_download(download.id):
            self.previews.changed()
        previewed = self.previews.take(download, recognition) if only is None else None
        if previewed is not None:
            inspection, reasons = previewed.inspection, list(previewed.reasons)
        else:
            inspection, reasons, _ = await self._inspect(download, recognition, only)
        if inspection.unsafe:
            raise UnsafePath("; ".join(inspection.unsafe))
        if inspection.missing:
            raise fs.SourceMissing("; ".join(inspection.missing))
        if inspection.collisions:
            return ApplyResult("collision", collisions=tuple(inspection.collisions),
                               message=f"{len(inspection.collisions)} target(s) held by a different file")
        blocking = [r for r in reasons if r.code in APPLY_BLOCKERS]
        if blocking:
            return ApplyResult("collision", message="; ".join(r.message for r in blocking))
        new_links = inspection.new_links()
        if only is not None:
            # Files already in place (or skipped) are journaled by the completion's apply, not here.
            new_links = [r for r in new_links if r.status is LinkStatus.PENDING]
            if not new_links:
                return ApplyResult("done", existing=len(inspection.existing), message="already laid out")
        if not new_links:
            return ApplyResult("failed", message="the plan has no file to lay out")
        batch, rows = await self.store.open_batch(download.id, new_links)
        log.info("batch opened", **for_download(download.id, batch_id=batch.id, files=len(rows)))
        return await self._continue(batch, rows)

    async def _continue(self, batch: ApplyBatch, rows: list[FileLink]) -> ApplyResult:
        """Lay the batch's pending rows chunk by chunk, then commit, or roll back on a collision/error."""
        loop = asyncio.get_running_loop()

        def note_copy(link_id: int, ino: int) -> None:
            asyncio.run_coroutine_threadsafe(self.store.note_copy_inode(link_id, ino), loop).result()

        olds = await self.store.replaced_in_batch(batch.id)
        pending = [r for r in rows if r.status is LinkStatus.PENDING]
        count = Counter(r.status for r in rows)     # only pending rows change below, each once
        warnings: list[str] = []
        swaps = [r for r in pending if r.id in olds]
        if swaps:
            pending = [r for r in pending if r.id not in olds]
        # Better copies last: the old files go only once everything else is laid.
        steps = [*range(0, len(pending), self.chunk), *([-1] if swaps else [])]
        for start in steps:
            if start >= 0:
                chunk = pending[start:start + self.chunk]
                done = await asyncio.to_thread(journal.lay_rows, chunk, self.roots.values(), note_copy)
            else:
                done = await asyncio.to_thread(replace.swap_rows, swaps, olds, self.roots.values())
            # Plain links stay pending until the commit marks them: the disk proves them after a crash.
            await self.store.finish_links(done.updates)
            count[LinkStatus.PENDING] -= len(done.linked) + len(done.updates)
            count[LinkStatus.LINKED] += len(done.linked)
            count.update(u.status for u in done.updates)
            warnings.extend(done.warnings)
            for warning in done.warnings:
                log.warning("copied instead of hardlinking",
                            **for_download(batch.download_id, detail=warning))
            if done.collisions or done.error is not None:
                await self._roll_back(batch)
                if done.error is not None:
                    error = self._storage(done.error) if isinstance(done.error, AdapterError) else done.error
                    if isinstance(error, StorageFault):
                        raise error       # the watch logged it; the download waits in review
                    log.error("batch rolled back", **for_download(batch.download_id, batch_id=batch.id,
                                                                  error=done.error.message))
                    return ApplyResult("failed", batch_id=batch.id, message=done.error.message,
                                       warnings=tuple(warnings))
                return ApplyResult("collision", batch_id=batch.id, collisions=tuple(done.collisions),
                                   message="a different file appeared at a target; nothing was kept")
        superseded = await self.store.commit_batch(batch.id, pending_laid=True)
        log.info("batch committed", **for_download(
            batch.download_id, batch_id=batch.id, linked=count[LinkStatus.LINKED],
            copied=count[LinkStatus.COPIED], existing=count[LinkStatus.EXISTS],
            skipped=count[LinkStatus.SKIPPED], superseded=superseded))
        return ApplyResult(
            "done", batch_id=batch.id, linked=count[LinkStatus.LINKED], copied=count[LinkStatus.COPIED],
            existing=count[LinkStatus.EXISTS], skipped=count[LinkStatus.SKIPPED], warnings=tuple(warnings),
        )

    async def _roll_back(self, batch: ApplyBatch) -> journal.TakeBack:
        rows = await self.store.links_for_batch(batch.id)
        olds = await self.store.replaced_in_batch(batch.id)
        if olds:
            swapped = [r for r in rows if r.id in olds]
            rows = [r for r in rows if r.id not in olds]
            back = await asyncio.to_thread(replace.roll_back_swaps, swapped, olds, self.roots.values())
            await self.store.finish_links(back)
        taken = await asyncio.to_thread(journal.roll_back, rows, self.roots.values())
        await self.store.finish_links(taken.updates)
        await self.store.close_batch(batch.id, BatchStatus.ROLLED_BACK)
        log.warning("batch rolled back", **for_download(
            batch.download_id, batch_id=batch.id, removed=len(taken.removed), refused=len(taken.refused)))
        return taken

    # ------------------------------------------------------------------ recovery

    async def recover(self) -> None:
        """Finish every batch a crash left open: roll forward from the disk, or roll back."""
        async with self._lock:
            try:
                for batch in await self.store.open_batches():
                    await self._recover_batch(batch)
            finally:
                self.previews.changed()

    async def _recover_download(self, download_id: str) -> bool:
        """Finish the download's batches a crash left open; True when there was one."""
        batches = await self.store.batches_for_download(download_id, [BatchStatus.OPEN])
        for batch in batches:
            await self._recover_batch(batch)
        return bool(batches)

    async def _recover_batch(self, batch: ApplyBatch) -> None:
        rows = await self.store.links_for_batch(batch.id)
        olds = await self.store.replaced_in_batch(batch.id)
        updates, _ = await asyncio.to_thread(journal.resync_pending, rows, olds)
        await self.store.finish_links(updates)
        rows = await self.store.links_for_batch(batch.id)
        laid = {u.link_id for u in updates if u.status in (LinkStatus.LINKED, LinkStatus.COPIED)}
        for link_id in laid & set(olds):
            # A crash between laying a better copy and removing the old file at its other path.
            await asyncio.to_thread(replace.drop_old, olds[link_id])
        log.warning("recovering an unfinished batch", **for_download(batch.download_id, batch_id=batch.id))
        # A collision cannot be completed; a removed row means the crash hit a rollback: finish it.
        if any(r.status in (LinkStatus.COLLISION, LinkStatus.REMOVED) for r in rows):
            await self._roll_back(batch)
            return
        result = await self._continue(batch, rows)
        log.info("batch recovered",
                 **for_download(batch.download_id, batch_id=batch.id, outcome=result.outcome))

    # ------------------------------------------------------------------ undo

    async def undo(self, download: Download) -> UndoResult:
        """Remove this download's targets (only its recorded inodes, never the last copy), prune folders."""
        async with self._lock:
            try:
                return await self._undo(download.id)
            finally:
                self.previews.changed()

    # ------------------------------------------------------------------ reconciliation

    async def relink(self, download: Download, recognition: Recognition | None = None) -> ApplyResult:
        """Bring `target_missing` back: forget the vanished targets and lay the current plan again."""
        async with self._lock:
            try:
                return await self._relink(download, recognition)
            except AdapterError as exc:
                error = self._storage(exc)
                if error is exc:
                    raise
                raise error from exc
            finally:
                self.previews.changed()

    async def _relink(self, download: Download, recognition: Recognition | None) -> ApplyResult:
        self.previews.changed()      # its own links change first: no preview describes this
        recognition = recognition or await self.store.current_recognition(download.id)
        if recognition is None:
            raise NotFound(f"download {download.id} has no recognition to relink")
        rows = await self.store.links_for_download(download.id, LIVE_STATUSES)
        self._check_links(rows)
        missing = await asyncio.to_thread(journal.missing, rows)
        await self.store.finish_links([
            LinkUpdate(row.id, LinkStatus.REMOVED, None, "target was missing; relinked")
            for row, gone in zip(rows, missing, strict=True) if gone
        ])
        with gc_paused():
            return await self._apply(download, recognition)

    async def targets_present(self, download: Download) -> bool | None:
        """True while any laid target is still its recorded inode, False when all are gone, None: none."""
        rows = await self.store.links_for_download(download.id, LIVE_STATUSES)
        if not rows:
            return None
        return any(await asyncio.to_thread(journal.present, rows))

    async def targets_present_many(self, items: Sequence[ReconcileItem]) -> dict[str, bool | None]:
        """`targets_present` for a chunk of reconciliation's rows, in one worker-thread trip.

        Raises the fault of a library that is not mounted: its files only look gone.
        """
        for name in self.roots if self.watch is not None else ():
            fault = self.watch.check_library(name)
            if fault is not None and fault.code == StorageCode.LIBRARY_UNMOUNTED:
                raise fault
        return await asyncio.to_thread(targets_in_place, items)

    async def reconcile(self, download: Download, torrent_present: bool) -> State | None:
        """The state reconciliation moves a download to (spec §3), or None to leave it."""
        if download.state not in RECONCILABLE:
            return None
        return drift(download.state, torrent_present, await self.targets_present(download))


__all__ = ["LayoutEngine", "TitleDeleteResult"]
