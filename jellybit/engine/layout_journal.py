"""The filesystem half of a batch (run in a worker thread): lay rows, resync after a crash, take back.

Every function here gets journal rows, touches only their targets, and returns the row updates
for the caller to write; none of them talks to the store.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jellybit.adapters import fs
from jellybit.core.links import FileLink, LinkStatus, LinkUpdate
from jellybit.errors import JellybitError, UnsafePath

log = logging.getLogger(__name__)

NoteCopy = Callable[[str, int], None]      # (link id, inode of the copy about to be published)


@dataclass
class ChunkResult:
    """What laying one chunk of rows did; stops at the first collision or error."""

    updates: list[LinkUpdate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    collisions: list[str] = field(default_factory=list)
    error: JellybitError | None = None


@dataclass
class TakeBack:
    """What removing rows' targets did (undo or rollback)."""

    updates: list[LinkUpdate] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)


def is_copy(row: FileLink) -> bool:
    """A row's target is a copy (undo needs the source) rather than a hardlink of the source."""
    if row.status is LinkStatus.COPIED:
        return True
    return row.dst_ino is not None and row.src_ino is not None and row.dst_ino != row.src_ino


def _same_source(row: FileLink, src: Path) -> None:
    current = fs.stat_source(src)
    if (current.dev, current.ino) != (row.src_dev, row.src_ino):
        raise fs.SourceMissing(f"source was replaced since it was planned: {src}")


def lay_rows(rows: Sequence[FileLink], roots: Iterable[Path], note_copy: NoteCopy | None) -> ChunkResult:
    """Link (or copy) each pending row's target; stop at the first collision or error."""
    result = ChunkResult()
    guard = fs.Roots(roots)
    touched: set[Path] = set()
    for row in rows:
        src, dst = Path(row.src_path), Path(row.dst_path)
        try:
            if guard.root_of(dst) is None:
                raise UnsafePath(f"target {dst} is not inside a library root")
            _same_source(row, src)
            on_copy = (lambda ino, link_id=row.id: note_copy(link_id, ino)) if note_copy else None
            outcome = fs.link_file(src, dst, tag=row.id, on_copy=on_copy)
        except JellybitError as exc:
            result.error = exc
            break
        if outcome.status is LinkStatus.COLLISION:
            result.updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, "a different file is there"))
            result.collisions.append(str(dst))
            break
        message = outcome.warning or ("already linked" if outcome.status is LinkStatus.EXISTS else None)
        result.updates.append(LinkUpdate(row.id, outcome.status, outcome.dst_ino, message))
        if outcome.warning:
            result.warnings.append(outcome.warning)
        if outcome.status is LinkStatus.LINKED:
            touched.add(dst.parent)
        log.debug("laid", extra={"download_id": row.download_id, "dst": str(dst), "status": outcome.status})
    for directory in touched:
        try:
            fs.fsync_dir(directory)  # the journal says "linked" only once the entry is durable
        except JellybitError as exc:
            result.error = result.error or exc
    return result


def resync_pending(rows: Sequence[FileLink]) -> tuple[list[LinkUpdate], list[FileLink]]:
    """After a crash: settle pending rows the disk already answers; return those still to lay."""
    updates: list[LinkUpdate] = []
    missing: list[FileLink] = []
    for row in rows:
        if row.status is not LinkStatus.PENDING:
            continue
        dst = Path(row.dst_path)
        fs.discard_temp(dst, row.id)
        try:
            st = os.lstat(dst)
        except FileNotFoundError:
            missing.append(row)
            continue
        except OSError as exc:
            updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, f"cannot inspect: {exc.strerror}"))
            continue
        if (st.st_dev, st.st_ino) == (row.src_dev, row.src_ino):
            updates.append(LinkUpdate(row.id, LinkStatus.LINKED, st.st_ino, "recovered after a crash"))
        elif row.dst_ino is not None and st.st_ino == row.dst_ino:
            updates.append(LinkUpdate(row.id, LinkStatus.COPIED, st.st_ino, "copy recovered after a crash"))
        else:
            updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, "a different file is there"))
    return updates, missing


def _prune(dirs: Mapping[Path, Path], result: TakeBack) -> None:
    for directory in sorted(dirs, key=lambda d: len(d.parts), reverse=True):
        result.pruned.extend(str(p) for p in fs.prune_empty_dirs(directory, dirs[directory]))


def take_back(rows: Sequence[FileLink], roots: Iterable[Path], *, why: str) -> TakeBack:
    """Undo rows: remove live targets under the rules of invariant 6, then prune emptied folders."""
    result = TakeBack()
    guard = fs.Roots(roots)
    dirs: dict[Path, Path] = {}
    for row in rows:
        if not row.live:
            continue
        dst = Path(row.dst_path)
        root = guard.root_of(dst)
        if root is None:
            reason = "not inside a library root"
            result.refused.append((str(dst), reason))
            result.updates.append(LinkUpdate(row.id, row.status, None, f"{why} refused: {reason}"))
            continue
        outcome = fs.remove_link(dst, row.dst_ino, Path(row.src_path), copied=is_copy(row), size=row.size)
        if outcome.refused:
            result.refused.append((str(dst), outcome.reason))
            result.updates.append(LinkUpdate(row.id, row.status, None, f"{why} refused: {outcome.reason}"))
            continue
        if outcome.removed:
            result.removed.append(str(dst))
        note = why if outcome.removed else f"{why}: {outcome.reason}"
        result.updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None, note))
        dirs[dst.parent] = root
    _prune(dirs, result)
    return result


def roll_back(rows: Sequence[FileLink], roots: Iterable[Path]) -> TakeBack:
    """Take back only what this batch created; targets that were there before stay untouched.

    Pending rows were never laid (after a crash `resync_pending` has already settled every
    pending row whose target the disk shows), so they are only marked.
    """
    ours: list[FileLink] = []
    result = TakeBack()
    for row in rows:
        if row.status in (LinkStatus.LINKED, LinkStatus.COPIED):
            ours.append(row)
        elif row.status is LinkStatus.EXISTS:
            result.updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None,
                                             "rolled back; left in place (it was there before)"))
        elif row.status is LinkStatus.PENDING:
            result.updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None, "not laid (rolled back)"))
    taken = take_back(ours, roots, why="rolled back")
    result.updates.extend(taken.updates)
    result.removed.extend(taken.removed)
    result.refused.extend(taken.refused)
    result.pruned.extend(taken.pruned)
    return result


def present(rows: Sequence[FileLink]) -> list[bool]:
    """For each live row: is its recorded inode still at its target?"""
    return [fs.target_inode(Path(row.dst_path)) == row.dst_ino for row in rows]


def missing(rows: Sequence[FileLink]) -> list[bool]:
    """For each row: is nothing (no regular file) at its target any more?"""
    return [fs.target_inode(Path(row.dst_path)) is None for row in rows]
