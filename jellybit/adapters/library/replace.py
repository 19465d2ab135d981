"""The filesystem half of a better copy (worker thread): swap a new link in, swap the old one back.

A swap never leaves the target empty: the incoming file is linked (or copied) under a
temporary name in the same folder and renamed over the target, which is atomic. Each step
checks that the file it takes away is still the recorded inode and not the last copy of its
data (invariant 6); the sources in the downloads folder are only ever linked from. Both
functions are idempotent: after a crash, running them again finds the target already swapped
and only reports it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.journal import ChunkResult
from jellybit.adapters.library.roots import FolderGate
from jellybit.core.links import FileLink, LinkStatus, LinkUpdate
from jellybit.errors import JellybitError

SWAP_TAG = "{}-swap"      # the temporary name's tag: the row id, so recovery finds a leftover


@dataclass(frozen=True)
class Swap:
    """What one swap did: the row's new status and inode, or why it refused (status None)."""

    status: LinkStatus | None
    dst_ino: int | None = None
    reason: str = ""


def _lstat(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except FileNotFoundError:
        return None


def _may_take(row: FileLink, st: os.stat_result) -> str | None:
    """Why this row's file at its target must not be taken away (None: it may)."""
    copied = row.dst_ino is not None and row.src_ino is not None and row.dst_ino != row.src_ino
    if not copied:
        return None if st.st_nlink > 1 else "it is the last copy of the data (st_nlink 1)"
    src = _lstat(row.src_path)
    if src is None or not stat.S_ISREG(src.st_mode) or src.st_size != row.size:
        return "it is a copy whose source is gone or changed"
    return None


def discard_leftover(row: FileLink) -> None:
    """Remove a swap's temporary file a crash left beside the row's target."""
    fs.discard_temp(Path(row.dst_path), SWAP_TAG.format(row.id))
    fs.discard_temp(Path(row.dst_path), str(row.id))


def _bring(src: FileLink, dst: str, tag: str) -> Swap:
    """Link (or copy) `src`'s journaled source over `dst` through a temporary name, atomically."""
    tmp = fs.temp_name(Path(dst), tag)
    fs.discard_temp(Path(dst), tag)
    outcome = fs.link_file(src.src_path, tmp, tag=f"{tag}c", expect=(src.src_dev, src.src_ino))
    try:
        os.rename(tmp, dst)       # atomic: the target is the old file or the new one, never nothing
    except OSError as exc:
        fs.discard_temp(Path(dst), tag)
        raise fs.link_error(dst, exc) from exc
    fs.fsync_dir(Path(os.path.dirname(dst)))
    status = LinkStatus.LINKED if outcome.status is LinkStatus.LINKED else LinkStatus.COPIED
    return Swap(status, outcome.dst_ino)


def swap_in(row: FileLink, old: FileLink, roots: Iterable[Path]) -> Swap:
    """Lay `row` in place of another download's `old` row (same path: atomic rename; else link, unlink)."""
    FolderGate(roots, create=True).root_of(row.dst_path)
    FolderGate(roots).root_of(old.dst_path)
    dst = row.dst_path
    st = _lstat(dst)
    if st is not None and (st.st_dev, st.st_ino) == (row.src_dev, row.src_ino):
        swap = Swap(LinkStatus.LINKED, st.st_ino)            # done before a crash
    elif dst == old.dst_path and st is not None:
        if not stat.S_ISREG(st.st_mode) or st.st_ino != old.dst_ino:
            return Swap(None, reason="a different file is there now")
        refused = _may_take(old, st)
        if refused:
            return Swap(None, reason=f"the old copy stays: {refused}")
        return _bring(row, dst, SWAP_TAG.format(row.id))
    elif st is not None:
        return Swap(None, reason="a different file is there")
    else:
        fs.make_dirs(Path(dst).parent)
        outcome = fs.link_file(row.src_path, dst, tag=str(row.id), expect=(row.src_dev, row.src_ino))
        if outcome.status not in (LinkStatus.LINKED, LinkStatus.COPIED):
            return Swap(None, reason="a different file appeared")
        swap = Swap(outcome.status, outcome.dst_ino)
    if old.dst_path != dst:
        drop_old(old)
    return swap


def drop_old(old: FileLink) -> None:
    """Remove a replaced file that sat at another path than its replacement (once that is laid)."""
    st = _lstat(old.dst_path)
    if st is None or not stat.S_ISREG(st.st_mode) or st.st_ino != old.dst_ino:
        return
    if _may_take(old, st) is None:
        os.unlink(old.dst_path)     # the new file is in place first: the work is never missing
        fs.fsync_dir(Path(os.path.dirname(old.dst_path)))


def swap_back(row: FileLink, old: FileLink, roots: Iterable[Path]) -> Swap:
    """Undo a replace: put `old`'s file back at its path, then take `row`'s file away."""
    try:
        FolderGate(roots).root_of(row.dst_path)
        FolderGate(roots, create=True).root_of(old.dst_path)
    except JellybitError as exc:
        return Swap(None, reason=exc.message)
    source = _lstat(old.src_path)
    if source is None or (source.st_dev, source.st_ino) != (old.src_dev, old.src_ino):
        return Swap(None, reason="the replaced copy's source is gone; this copy stays")
    st = _lstat(old.dst_path)
    if st is not None and (st.st_dev, st.st_ino) == (old.src_dev, old.src_ino):
        back = Swap(LinkStatus.LINKED, st.st_ino)                    # done before a crash
    elif old.dst_path == row.dst_path and st is not None:
        if not stat.S_ISREG(st.st_mode) or st.st_ino != row.dst_ino:
            return Swap(None, reason="a different file is there now")
        refused = _may_take(row, st)
        if refused:
            return Swap(None, reason=f"this copy stays: {refused}")
        return _bring(old, old.dst_path, SWAP_TAG.format(row.id))
    elif st is not None:
        return Swap(None, reason="a different file is where the old copy was")
    else:
        outcome = fs.link_file(old.src_path, old.dst_path, tag=SWAP_TAG.format(row.id),
                               expect=(old.src_dev, old.src_ino))
        if outcome.status not in (LinkStatus.LINKED, LinkStatus.COPIED):
            return Swap(None, reason="a different file appeared where the old copy was")
        back = Swap(outcome.status, outcome.dst_ino)
    if old.dst_path != row.dst_path:
        gone = fs.remove_link(row.dst_path, row.dst_ino, row.src_path,
                              copied=row.dst_ino != row.src_ino, size=row.size)
        if gone.refused:
            return Swap(None, reason=f"the old copy is back; this one stays: {gone.reason}")
    return back


def undo_updates(row: FileLink, old: FileLink, swap: Swap, why: str) -> list[LinkUpdate]:
    """The journal updates of a swap back: the new row removed, the old row live again."""
    if swap.status is None:
        return [LinkUpdate(row.id, row.status, None, f"{why} refused: {swap.reason}")]
    return [LinkUpdate(row.id, LinkStatus.REMOVED, None, f"{why}; the replaced copy is back"),
            LinkUpdate(old.id, swap.status, swap.dst_ino, f"back in the library ({why} of download "
                       f"{row.download_id})")]


def swap_rows(rows: Iterable[FileLink], olds: dict[int, FileLink], roots: Iterable[Path]) -> ChunkResult:
    """Lay pending rows that replace another download's rows; stop at the first refusal or error."""
    result = ChunkResult()
    roots = list(roots)
    for row in rows:
        old = olds[row.id]
        try:
            swap = swap_in(row, old, roots)
        except JellybitError as exc:
            result.error = exc
            break
        if swap.status is None:
            result.updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, swap.reason))
            result.collisions.append(f"{row.dst_path} ({swap.reason})")
            break
        result.updates.append(LinkUpdate(row.id, swap.status, swap.dst_ino,
                                         f"replaced {os.path.basename(old.src_path)}"))
    return result


def roll_back_swaps(
    rows: Iterable[FileLink], olds: dict[int, FileLink], roots: Iterable[Path],
) -> list[LinkUpdate]:
    """Roll back a batch's replacing rows: each one laid gives its place back to the old file."""
    updates: list[LinkUpdate] = []
    roots = list(roots)
    for row in rows:
        old = olds[row.id]
        discard_leftover(row)
        st = _lstat(row.dst_path)
        laid = row.status in (LinkStatus.LINKED, LinkStatus.COPIED) or (
            row.status is LinkStatus.PENDING and st is not None
            and (st.st_dev, st.st_ino) == (row.src_dev, row.src_ino))
        if not laid:
            if row.status is LinkStatus.PENDING:
                updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None, "not laid (rolled back)"))
            continue
        if row.dst_ino is None and st is not None:
            row = row._replace(dst_ino=st.st_ino)
        updates.extend(undo_updates(row, old, swap_back(row, old, roots), "rolled back"))
    return updates
