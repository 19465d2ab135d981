"""The filesystem half of a batch (run in a worker thread): lay rows, resync after a crash, take back.

Every function here gets journal rows, touches only their targets, and returns the row updates
for the caller to write; none of them talks to the store.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.roots import FolderGate
from jellybit.core.links import FileLink, LinkStatus, LinkUpdate
from jellybit.errors import JellybitError

log = logging.getLogger(__name__)

NoteCopy = Callable[[int, int], None]      # (link id, inode of the copy about to be published)


@dataclass
class ChunkResult:
    """What laying one chunk of rows did; stops at the first collision or error.

    `linked` are the rows that became plain hardlinks of their journaled source (status linked,
    target inode = source inode, no message): they stay `pending` in the journal until the batch
    commits, which marks them all in one statement (a rollback or recovery settles them from disk).
    """

    updates: list[LinkUpdate] = field(default_factory=list)
    linked: list[int] = field(default_factory=list)
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


def lay_rows(rows: Sequence[FileLink], roots: Iterable[Path], note_copy: NoteCopy | None) -> ChunkResult:
    """Link (or copy) each pending row's target; stop at the first collision or error.

    Each target folder is proven (and made) once for the chunk by the containment FolderGate;
    each new link is proven to be its journaled source by one lstat (link_file removes a link
    to another inode and refuses). Every folder that got a link, and the parent of every
    folder made, is fsynced once at the end.
    """
    result = ChunkResult()
    gate = FolderGate(roots, create=True)
    touched: dict[str, None] = {}        # folders with new entries, in order
    debug = log.isEnabledFor(logging.DEBUG)
    linked, root_in, link, lstat, is_reg = result.linked, gate.root_in, os.link, os.lstat, stat.S_ISREG
    for row in rows:
        src, dst, dev, ino = row.src_path, row.dst_path, row.src_dev, row.src_ino
        folder, _, name = dst.rpartition("/")
        try:
            root_in(dst, folder, name)
            if ino is not None and dev is not None:
                # The common case inline (one link, one lstat); anything unusual goes to link_file.
                try:
                    link(src, dst, follow_symlinks=False)
                except (FileExistsError, FileNotFoundError):
                    pass        # link_file judges the target, or makes the folder, on its own attempt
                except OSError as exc:
                    if exc.errno not in fs.FALLBACK_ERRNOS:
                        raise fs.link_error(dst, exc) from exc
                else:
                    st = lstat(dst)
                    if st.st_ino == ino and st.st_dev == dev and is_reg(st.st_mode):
                        touched[folder] = None     # the gate proved dst normalized
                        linked.append(row.id)
                        if debug:
                            log.debug("laid", extra={"download_id": row.download_id, "dst": dst})
                        continue
                    fs.refuse_wrong_link(src, dst, st)
            on_copy = (lambda copy_ino, link_id=row.id: note_copy(link_id, copy_ino)) if note_copy else None
            outcome = fs.link_file(src, dst, tag=str(row.id), on_copy=on_copy, expect=(dev, ino))
        except JellybitError as exc:
            result.error = exc
            break
        status = outcome.status
        if status is LinkStatus.LINKED:
            touched[folder] = None     # the gate proved dst absolute and normalized
            if outcome.dst_ino == ino and outcome.warning is None:
                linked.append(row.id)
                if debug:
                    log.debug("laid", extra={"download_id": row.download_id, "dst": dst, "status": status})
                continue
        if status is LinkStatus.COLLISION:
            result.updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, "a different file is there"))
            result.collisions.append(dst)
            break
        message = outcome.warning or ("already linked" if status is LinkStatus.EXISTS else None)
        result.updates.append(LinkUpdate(row.id, status, outcome.dst_ino, message))
        if outcome.warning:
            result.warnings.append(outcome.warning)
        if debug:
            log.debug("laid", extra={"download_id": row.download_id, "dst": dst, "status": status})
    for made in gate.created:
        touched[os.path.dirname(made)] = None     # a new folder's own entry must be durable too
    for directory in touched:
        try:
            fs.fsync_dir(directory)  # the journal says "linked" only once the entry is durable
        except JellybitError as exc:
            result.error = result.error or exc
    return result


def resync_pending(
    rows: Sequence[FileLink], olds: Mapping[int, FileLink] | None = None,
) -> tuple[list[LinkUpdate], list[FileLink]]:
    """After a crash: settle pending rows the disk already answers; return those still to lay.

    `olds` are the rows that pending rows replace (better copies): a target still holding the
    old file is not a collision but a swap still to do.
    """
    updates: list[LinkUpdate] = []
    missing: list[FileLink] = []
    olds = olds or {}
    for row in rows:
        if row.status is not LinkStatus.PENDING:
            continue
        dst = Path(row.dst_path)
        fs.discard_temp(dst, str(row.id))
        old = olds.get(row.id)
        if old is not None:
            fs.discard_temp(dst, f"{row.id}-swap")
        try:
            st = os.lstat(dst)
        except FileNotFoundError:
            missing.append(row)
            continue
        except OSError as exc:
            updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, f"cannot inspect: {exc.strerror}"))
            continue
        if old is not None and old.dst_path == row.dst_path and st.st_ino == old.dst_ino:
            missing.append(row)
        elif (st.st_dev, st.st_ino) == (row.src_dev, row.src_ino):
            updates.append(LinkUpdate(row.id, LinkStatus.LINKED, st.st_ino, "recovered after a crash"))
        elif row.dst_ino is not None and st.st_ino == row.dst_ino:
            updates.append(LinkUpdate(row.id, LinkStatus.COPIED, st.st_ino, "copy recovered after a crash"))
        else:
            updates.append(LinkUpdate(row.id, LinkStatus.COLLISION, None, "a different file is there"))
    return updates, missing


def _prune(dirs: Mapping[str, Path], result: TakeBack) -> None:
    for directory in sorted(dirs, key=lambda d: d.count("/"), reverse=True):
        result.pruned.extend(str(p) for p in fs.prune_empty_dirs(Path(directory), dirs[directory]))


def take_back(rows: Sequence[FileLink], roots: Iterable[Path], *, why: str) -> TakeBack:
    """Undo rows: remove live targets under the rules of invariant 6, then prune emptied folders.

    A target is only touched inside a library root through real directories: its folder is
    proven once (lstat walk, no symlink) by the containment FolderGate, which never creates.
    """
    result = TakeBack()
    gate = FolderGate(roots)
    dirs: dict[str, Path] = {}
    for row in rows:
        if not row.live:
            continue
        dst = row.dst_path
        try:
            root = gate.root_of(dst)
        except JellybitError as exc:
            reason = exc.message        # outside every root, or a symlinked/non-directory parent
            result.refused.append((dst, reason))
            result.updates.append(LinkUpdate(row.id, row.status, None, f"{why} refused: {reason}"))
            continue
        outcome = fs.remove_link(dst, row.dst_ino, row.src_path, copied=is_copy(row), size=row.size)
        if outcome.refused:
            result.refused.append((dst, outcome.reason))
            result.updates.append(LinkUpdate(row.id, row.status, None, f"{why} refused: {outcome.reason}"))
            continue
        if outcome.removed:
            result.removed.append(dst)
            note = why
        else:
            note = f"{why}: {outcome.reason}"
        result.updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None, note))
        dirs[dst.rpartition("/")[0]] = root       # the gate proved dst absolute and normalized
    _prune(dirs, result)
    return result


def roll_back(rows: Sequence[FileLink], roots: Iterable[Path]) -> TakeBack:
    """Take back only what this batch created; targets that were there before stay untouched.

    Rows laid as plain hardlinks stay `pending` until the commit, so every pending row is first
    settled from the disk (`resync_pending`): its target is the journaled source's inode (or our
    noted copy's) -> ours, taken back; nothing or a different file there -> never laid, only marked.
    """
    ours: list[FileLink] = []
    result = TakeBack()
    pending: list[FileLink] = []
    for row in rows:
        if row.status in (LinkStatus.LINKED, LinkStatus.COPIED):
            ours.append(row)
        elif row.status is LinkStatus.EXISTS:
            result.updates.append(LinkUpdate(row.id, LinkStatus.REMOVED, None,
                                             "rolled back; left in place (it was there before)"))
        elif row.status is LinkStatus.PENDING:
            pending.append(row)
    settled, _ = resync_pending(pending)
    laid = {u.link_id: u for u in settled if u.status in (LinkStatus.LINKED, LinkStatus.COPIED)}
    for row in pending:
        found = laid.get(row.id)
        if found is not None:
            ours.append(row._replace(status=found.status, dst_ino=found.dst_ino))
        else:
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
