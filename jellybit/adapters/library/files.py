"""The filesystem edge: hardlink (or visibly copy) into a library, stat sources, undo links safely.

Nothing here ever writes, renames or unlinks a source file: sources are only `lstat`ed, opened
read-only for the copy fallback, and passed to `link(2)` as the existing name.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

from jellybit import ident
from jellybit.core.links import LinkStatus
from jellybit.core.sanitize import is_within
from jellybit.errors import AdapterError

log = logging.getLogger(__name__)

SYSTEM = "filesystem"
DIR_MODE = 0o755
TEMP_PREFIX = ".jellybit-"
TEMP_SUFFIX = ".tmp"
# link(2) errors that mean "no hardlink possible here", not "something is wrong":
# EXDEV across filesystems, ENOTSUP/EOPNOTSUPP on filesystems without hardlinks,
# EPERM from fs.protected_hardlinks when we do not own the source.
FALLBACK_ERRNOS = frozenset({errno.EXDEV, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM})
_COPY_CHUNK = 8 * 1024 * 1024


class SourceMissing(AdapterError):
    """A source file is gone or is not a regular file any more."""

    code = "source_missing"

    def __init__(self, message: str) -> None:
        super().__init__(SYSTEM, message)


@dataclass(frozen=True)
class SourceStat:
    """Identity of a source file, recorded in the journal and checked before undo."""

    dev: int
    ino: int
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class LinkOutcome:
    """What `link_file` did: linked | copied | exists | collision, and the target's identity."""

    status: LinkStatus
    dst_ino: int | None = None
    dst_dev: int | None = None
    warning: str | None = None


@dataclass(frozen=True)
class RemoveOutcome:
    """What `remove_link` did: removed it, found it already gone, or refused (with why)."""

    removed: bool
    gone: bool = False
    reason: str = ""

    @property
    def refused(self) -> bool:
        """Tell whether the file is still there because a rule said no."""
        return not self.removed and not self.gone


def _fail(action: str, path: Path | str, exc: OSError) -> AdapterError:
    return AdapterError(SYSTEM, f"cannot {action} {path}: {exc.strerror or exc}", errno=exc.errno,
                        path=str(path))


def link_error(dst: Path | str, exc: OSError) -> AdapterError:
    """The error for a link(2) failure that is neither a collision nor a reason to copy."""
    return _fail("link", dst, exc)


def stat_source(path: Path) -> SourceStat:
    """Return a source's identity; it must be a regular file (never a symlink)."""
    st = _source(path, None)
    return SourceStat(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def make_dirs(path: Path) -> list[Path]:
    """Create `path` and missing parents with mode 0755 whatever the umask; return those created."""
    missing: list[Path] = []
    current = path
    while not os.path.lexists(current):
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created: list[Path] = []
    for directory in reversed(missing):
        try:
            os.mkdir(directory, DIR_MODE)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise AdapterError(SYSTEM, f"not a directory: {directory}") from None
            continue
        except OSError as exc:
            raise _fail("create directory", directory, exc) from exc
        os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask; chmod is not
        created.append(directory)
    if not os.path.isdir(path) or os.path.islink(path):
        raise AdapterError(SYSTEM, f"not a directory: {path}")
    return created


def temp_name(dst: Path, tag: str) -> Path:
    """The temporary file a copy into `dst` goes through (recovery removes leftovers by name)."""
    return dst.parent / f"{TEMP_PREFIX}{tag}{TEMP_SUFFIX}"


def _existing(identity: tuple[int, int], dst: Path | str) -> LinkOutcome:
    try:
        st = os.lstat(dst)
    except FileNotFoundError:
        raise AdapterError(SYSTEM, f"{dst} appeared and vanished while linking") from None
    if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == identity:
        return LinkOutcome(LinkStatus.EXISTS, st.st_ino, st.st_dev)
    return LinkOutcome(LinkStatus.COLLISION, st.st_ino, st.st_dev)


def _source(src: Path | str, expect: tuple[int, int] | None) -> os.stat_result:
    """lstat a source: a regular file, and the journaled inode when `expect` is given."""
    try:
        src_st = os.lstat(src)
    except FileNotFoundError as exc:
        raise SourceMissing(f"source file is missing: {src}") from exc
    except OSError as exc:
        raise _fail("stat", src, exc) from exc
    if not stat.S_ISREG(src_st.st_mode):
        raise SourceMissing(f"source is not a regular file: {src}")
    if expect is not None and (src_st.st_dev, src_st.st_ino) != expect:
        raise SourceMissing(f"source was replaced since it was planned: {src}")
    return src_st


def link_file(
    src: Path | str, dst: Path | str, *, tag: str | None = None,
    on_copy: Callable[[int], None] | None = None, expect: tuple[int | None, int | None] | None = None,
) -> LinkOutcome:
    """Hardlink src to dst (never overwriting); where no hardlink is possible, copy visibly.

    `tag` names the copy's temporary file; `on_copy(inode)` is called with the copy's inode
    just before it is published, so a journal can recognise the copy after a crash.
    `expect` is the source's (dev, inode) as journaled: a source replaced since is refused.
    With `expect`, a link costs one `lstat`, of the new target: it proves the link is the
    journaled source (a replaced source's link is ours, just made, and is removed again).
    Without it the source is checked first, and the link is then known to be that inode.
    """
    identity = None
    if expect is not None and expect[0] is not None and expect[1] is not None:
        identity = (expect[0], expect[1])
    src_st = None if identity is not None else _source(src, None)
    for attempt in (1, 2):
        try:
            os.link(src, dst, follow_symlinks=False)
        except FileExistsError:
            if identity is None:
                assert src_st is not None
                return _existing((src_st.st_dev, src_st.st_ino), dst)
            _source(src, identity)       # a replaced source is refused before a target is judged
            return _existing(identity, dst)
        except FileNotFoundError as exc:
            if not os.path.lexists(src):
                raise SourceMissing(f"source file is missing: {src}") from exc
            if attempt == 2:
                raise _fail("link", dst, exc) from exc
            make_dirs(Path(dst).parent)     # a new folder nobody prepared: create it, then retry once
        except OSError as exc:
            if exc.errno not in FALLBACK_ERRNOS:
                raise _fail("link", dst, exc) from exc
            checked = _source(src, identity)    # EPERM may also mean "not a file we may link"
            make_dirs(Path(dst).parent)
            return _copy(Path(src), Path(dst), checked, exc, tag or ident.new_id(), on_copy)
        else:
            break
    if src_st is not None:
        return LinkOutcome(LinkStatus.LINKED, src_st.st_ino, src_st.st_dev)
    st = os.lstat(dst)
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != identity:
        refuse_wrong_link(src, dst, st)
    return LinkOutcome(LinkStatus.LINKED, st.st_ino, st.st_dev)


def refuse_wrong_link(src: Path | str, dst: Path | str, st: os.stat_result) -> NoReturn:
    """A link just made is not the journaled source (`st` is its lstat): remove it again and refuse."""
    _unlink_fresh(dst)
    if not stat.S_ISREG(st.st_mode):
        raise SourceMissing(f"source is not a regular file: {src}")
    raise SourceMissing(f"source was replaced since it was planned: {src}")


def _unlink_fresh(dst: Path | str) -> None:
    """Remove a link this call has just made to the wrong inode (never the source's name)."""
    try:
        os.unlink(dst)
    except OSError as exc:
        raise _fail("remove the wrong link", dst, exc) from exc


def _open_source(src: Path) -> int:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        # O_NOATIME keeps even the source's access time untouched where we are allowed to.
        return os.open(src, flags | getattr(os, "O_NOATIME", 0))
    except PermissionError:
        return os.open(src, flags)


def _copy_data(fd_in: int, fd_out: int, size: int) -> None:
    done = 0
    try:
        while done < size:
            sent = os.copy_file_range(fd_in, fd_out, min(_COPY_CHUNK, size - done))
            if sent == 0:
                break
            done += sent
    except (OSError, AttributeError):
        pass
    else:
        if done >= size:
            return
    os.lseek(fd_in, done, os.SEEK_SET)
    os.lseek(fd_out, done, os.SEEK_SET)
    while True:
        chunk = os.read(fd_in, _COPY_CHUNK)
        if not chunk:
            break
        view = memoryview(chunk)
        while view:
            written = os.write(fd_out, view)
            view = view[written:]


def _copy(
    src: Path, dst: Path, src_st: os.stat_result, cause: OSError, tag: str,
    on_copy: Callable[[int], None] | None,
) -> LinkOutcome:
    tmp = temp_name(dst, tag)
    published = False
    try:
        fd_in = _open_source(src)
    except OSError as exc:
        raise _fail("read", src, exc) from exc
    try:
        in_st = os.fstat(fd_in)
        if (in_st.st_dev, in_st.st_ino) != (src_st.st_dev, src_st.st_ino):
            raise SourceMissing(f"source changed while copying: {src}")
        try:
            fd_out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise _fail("create", tmp, exc) from exc
        try:
            _copy_data(fd_in, fd_out, in_st.st_size)
            os.fchmod(fd_out, stat.S_IMODE(in_st.st_mode))
            os.utime(fd_out, ns=(in_st.st_atime_ns, in_st.st_mtime_ns))
            os.fsync(fd_out)
            tmp_ino = os.fstat(fd_out).st_ino
        except OSError as exc:
            raise _fail("copy to", tmp, exc) from exc
        finally:
            os.close(fd_out)
        if on_copy is not None:
            on_copy(tmp_ino)
        try:
            _publish(tmp, dst)
        except FileExistsError:
            return _existing((src_st.st_dev, src_st.st_ino), dst)
        published = True
        fsync_dir(dst.parent)
    finally:
        os.close(fd_in)
        if not published:
            _discard(tmp)
    name = errno.errorcode.get(cause.errno or 0, str(cause.errno))
    warning = (
        f"hardlink not possible ({name}: {cause.strerror}); copied {src} to {dst}, "
        "which uses extra disk space"
    )
    log.debug("copied instead of hardlinking", extra={"src": str(src), "dst": str(dst), "errno": name})
    st = os.lstat(dst)
    return LinkOutcome(LinkStatus.COPIED, st.st_ino, st.st_dev, warning)


def _discard(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("cannot remove temporary file", extra={"path": str(tmp), "error": exc.strerror})


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _renameat2 = _libc.renameat2
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    _renameat2.restype = ctypes.c_int
except (AttributeError, OSError):  # not glibc >= 2.28 / not Linux
    _renameat2 = None


def _rename_noreplace(tmp: Path, dst: Path) -> bool:
    """renameat2(RENAME_NOREPLACE); False when the kernel or filesystem does not support it."""
    if _renameat2 is None:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(tmp), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
        return True
    code = ctypes.get_errno()
    if code == errno.EEXIST:
        raise FileExistsError(code, os.strerror(code), str(dst))
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP):
        return False
    raise _fail("rename into", dst, OSError(code, os.strerror(code)))


def _publish(tmp: Path, dst: Path) -> None:
    """Move the finished copy to its name atomically, never replacing an existing file."""
    if _rename_noreplace(tmp, dst):
        return
    try:
        os.link(tmp, dst)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in FALLBACK_ERRNOS:
            raise _fail("link", dst, exc) from exc
        # Last resort on filesystems with neither renameat2 nor link (some FUSE/SMB mounts):
        # check, then rename. Only Jellybit writes inside the library, so the window is ours.
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "exists", str(dst)) from None
        os.rename(tmp, dst)
        return
    _discard(tmp)


def fsync_dir(path: Path) -> None:
    """Make a directory's entries durable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise _fail("open directory", path, exc) from exc
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # some filesystems cannot fsync dirs
            raise _fail("fsync", path, exc) from exc
    finally:
        os.close(fd)


def target_inode(dst: Path) -> int | None:
    """Return the inode of a regular file at dst, or None when nothing (or not a file) is there."""
    try:
        st = os.lstat(dst)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _fail("stat", dst, exc) from exc
    return st.st_ino if stat.S_ISREG(st.st_mode) else None


_REMOVED = RemoveOutcome(removed=True)
_GONE = RemoveOutcome(removed=False, gone=True, reason="already gone")


def remove_link(
    dst: Path | str, expected_ino: int | None, src: Path | str, *, copied: bool = False,
    size: int | None = None,
) -> RemoveOutcome:
    """Remove a target only if it is still the recorded inode and not the last copy of the data.

    A hardlink goes only while `st_nlink > 1`; a copy (`copied=True`) only while its source
    still exists with the recorded size. The source itself is never touched.
    """
    try:
        st = os.lstat(dst)
    except FileNotFoundError:
        return _GONE
    except OSError as exc:
        return RemoveOutcome(removed=False, reason=f"cannot stat: {exc.strerror}")
    if not stat.S_ISREG(st.st_mode):
        return RemoveOutcome(removed=False, reason="not a regular file any more")
    if expected_ino is None or st.st_ino != expected_ino:
        return RemoveOutcome(
            removed=False, reason=f"replaced by a different file (inode {st.st_ino}, laid {expected_ino})"
        )
    if copied:
        try:
            src_st = os.lstat(src)
        except FileNotFoundError:
            return RemoveOutcome(removed=False, reason="this copy is the last one: the source is gone")
        except OSError as exc:
            return RemoveOutcome(removed=False, reason=f"cannot stat the source: {exc.strerror}")
        if not stat.S_ISREG(src_st.st_mode) or (size is not None and src_st.st_size != size):
            return RemoveOutcome(removed=False, reason="the source changed since it was copied")
    elif st.st_nlink <= 1:
        return RemoveOutcome(removed=False, reason="last copy of the data (st_nlink 1)")
    try:
        os.unlink(dst)
    except FileNotFoundError:
        return _GONE
    except OSError as exc:
        return RemoveOutcome(removed=False, reason=f"cannot remove: {exc.strerror}")
    return _REMOVED


def prune_empty_dirs(start: Path, stop_at_root: Path) -> list[Path]:
    """Remove `start` and its parents while they are empty, up to (not including) the root."""
    root = Path(os.path.normpath(stop_at_root))
    current = Path(os.path.normpath(start))
    removed: list[Path] = []
    while is_within(root, current):
        try:
            os.rmdir(current)
        except FileNotFoundError:
            pass
        except OSError:
            break  # not empty, a symlink, or not ours to remove: stop here
        else:
            removed.append(current)
        current = current.parent
    return removed


def discard_temp(dst: Path, tag: str) -> bool:
    """Remove a copy's leftover temporary file after a crash; True when one was there."""
    tmp = temp_name(dst, tag)
    if not os.path.lexists(tmp):
        return False
    _discard(tmp)
    return True
