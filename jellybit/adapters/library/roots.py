"""Containment in the library wing, all in one module: `resolve_target` and `FolderGate`, the last
gate before any write (a target stays inside its root, no symlink on the way), and `inside` and
`Roots`, the read-side check (a path whose parent, symlinks resolved, lies inside a root)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from jellybit.core.sanitize import is_sanitized, is_within
from jellybit.errors import AdapterError, UnsafePath

PATH_MAX = 4096
DIR_MODE = 0o755


def _components(relative: str | PurePosixPath) -> list[str]:
    """Split a relative target into components, refusing anything that is not canonical."""
    if isinstance(relative, PurePosixPath):
        if relative.is_absolute():
            raise UnsafePath(f"target must be relative to its library root: {str(relative)!r}")
        parts = list(relative.parts)
    elif isinstance(relative, str):
        if "\x00" in relative:
            raise UnsafePath("target contains a NUL character")
        if relative.startswith("/"):
            raise UnsafePath(f"target must be relative to its library root: {relative!r}")
        # Split by hand: PurePosixPath would quietly fold 'a/./b' and 'a//b' into 'a/b'.
        parts = relative.split("/")
    else:
        raise UnsafePath(f"target must be a string or PurePosixPath, not {type(relative).__name__}")
    if not parts or parts == [""]:
        raise UnsafePath("target is empty")
    for part in parts:
        if part in ("", ".", ".."):
            raise UnsafePath(f"target has an empty, '.' or '..' component: {'/'.join(parts)!r}")
        if not is_sanitized(part):
            raise UnsafePath(f"target component is not sanitized: {part!r}")
    return parts


def _real_root(root: Path) -> Path:
    """The library root with its own symlinks followed; it must be an existing directory."""
    if not root.is_absolute():
        raise UnsafePath(f"library root must be absolute: {str(root)!r}")
    real = Path(os.path.realpath(root))
    try:
        st = os.stat(real)
    except OSError as exc:
        # A missing root is often an unmounted share: writing there would fill the local disk.
        raise UnsafePath(f"library root is not reachable: {str(root)!r} ({exc.strerror})") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"library root is not a directory: {str(root)!r}")
    return real


def resolve_target(root: Path, relative: str | PurePosixPath) -> Path:
    """Return root/relative after proving it stays strictly inside root; else raise UnsafePath.

    The root itself may be a symlink (NAS shares are often mounted that way): it is configuration,
    trusted and followed. Below the root nothing may be a symlink: every existing parent is checked
    with os.lstat, and an existing target that is a symlink is refused too. Missing parents are
    fine (the layouter creates them). The returned path is spelled with the configured root, so
    it matches what the store records and what undo compares against.
    """
    parts = _components(relative)
    root = Path(os.path.normpath(Path(root)))
    real_root = _real_root(root)
    target = root.joinpath(*parts)
    if len(os.fsencode(target)) >= PATH_MAX:
        raise UnsafePath(f"target path is longer than {PATH_MAX} bytes")

    current = real_root
    for index, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break                        # nothing below exists yet: nothing below can be a link
        except OSError as exc:
            raise UnsafePath(f"cannot inspect {str(current)!r}: {exc.strerror}") from exc
        is_last = index == len(parts) - 1
        if stat.S_ISLNK(st.st_mode):
            what = "target" if is_last else "parent"
            raise UnsafePath(f"{what} is a symlink: {'/'.join(parts[: index + 1])!r}")
        if not is_last and not stat.S_ISDIR(st.st_mode):
            raise UnsafePath(f"parent is not a directory: {'/'.join(parts[: index + 1])!r}")

    # Belt and braces: with no links below the root this always holds, but it also covers a
    # root whose realpath changed between the two looks.
    real_target = Path(os.path.realpath(real_root.joinpath(*parts)))
    if not is_within(real_root, real_target):
        raise UnsafePath(f"target resolves outside its library root: {'/'.join(parts)!r}")
    return target


class FolderGate:
    """Target folders proven once per batch: real directories below a library root, no symlink.

    The journal lays (or takes back) thousands of files in a handful of folders. The first
    target in a folder walks that folder's chain below its root with `os.lstat`, refusing a
    symlink or a non-directory anywhere (UnsafePath), exactly as `resolve_target` does; the
    folder is then trusted for the rest of this gate's life (one chunk of one batch). With
    `create=True` missing folders are made one by one inside the proven chain, mode 0755
    whatever the umask, and listed in `created` (their parents need an fsync). Targets must be
    absolute, normalized paths strictly inside a root, spelled with the configured root.
    """

    def __init__(self, roots: Iterable[Path], *, create: bool = False) -> None:
        self._roots = [(os.path.normpath(r), Path(os.path.normpath(r))) for r in roots]
        self._create = create
        self._proven: dict[str, Path] = {}          # folder -> the configured root holding it
        self._real: dict[Path, str] = {}            # configured root -> its real path
        self.created: list[str] = []

    def root_of(self, dst: str | os.PathLike[str]) -> Path:
        """The root holding `dst`, once dst's folder is proven (and made, with create); else UnsafePath."""
        path = os.fspath(dst)
        folder, _, name = path.rpartition("/")
        return self.root_in(path, folder, name)

    def root_in(self, path: str, folder: str, name: str) -> Path:
        """`root_of(path)` for a caller that has split it already (`folder/name`, as `rpartition`)."""
        root = self._proven.get(folder)
        if root is None or name in ("", ".", "..") or "\x00" in name:
            root = self._prove(path, folder, name)
        return root

    def _prove(self, path: str, folder: str, name: str) -> Path:
        plain = path.startswith("/") and "\x00" not in path and os.path.normpath(path) == path
        if name in ("", ".", "..") or not plain:
            raise UnsafePath(f"target is not a plain absolute path: {path!r}")
        base, root = next(
            ((b, r) for b, r in self._roots if folder == b or folder.startswith(b.rstrip("/") + "/")),
            ("", None),
        )
        if root is None:
            raise UnsafePath(f"target {path} is not inside a library root")
        if root not in self._real:
            self._real[root] = str(_real_root(root))
        current = self._real[root]
        for part in folder[len(base):].split("/"):
            if not part:
                continue
            current = os.path.join(current, part)
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                if not self._create:
                    break                # nothing below exists yet: nothing below can be a link
                self._mkdir(current)
                continue
            except OSError as exc:
                raise UnsafePath(f"cannot inspect {current!r}: {exc.strerror}") from exc
            _real_directory(st, current)
        self._proven[folder] = root
        return root

    def _mkdir(self, path: str) -> None:
        try:
            os.mkdir(path, DIR_MODE)
        except FileExistsError:
            _real_directory(os.lstat(path), path)       # somebody made it meanwhile: check what it is
            return
        except OSError as exc:
            raise AdapterError("filesystem", f"cannot create directory {path}: {exc.strerror}",
                               errno=exc.errno, path=path) from exc
        os.chmod(path, DIR_MODE)        # mkdir's mode is filtered by the umask; chmod is not
        self.created.append(path)


def _real_directory(st: os.stat_result, path: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"parent is a symlink: {path!r}")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"parent is not a directory: {path!r}")


def inside(path: Path, root: Path) -> bool:
    """Tell whether `path` (its parent resolved through symlinks) lies strictly inside `root`."""
    if not path.is_absolute() or path.name in ("", ".", ".."):
        return False
    real_root = Path(os.path.realpath(root))
    real_parent = Path(os.path.realpath(path.parent))
    return is_within(real_root, real_parent, or_equal=True)


class Roots:
    """`inside` checks against some roots, memoized per parent folder for one operation.

    One batch asks about thousands of files in a handful of folders; the folders do not move
    under us meanwhile (Jellybit is the only writer in the libraries), so one realpath each is enough.
    """

    def __init__(self, roots: Iterable[Path]) -> None:
        self._roots = [(Path(os.path.normpath(r)), Path(os.path.realpath(r))) for r in roots]
        self._parents: dict[str, Path | None] = {}      # parent folder as spelled -> its root

    def root_of(self, path: Path | str) -> Path | None:
        """The root `path` lies inside (its parent resolved through symlinks), or None."""
        text = os.fspath(path)
        folder, _, name = text.rpartition("/")
        if name in ("", ".", "..") or not text.startswith("/"):
            return self._resolve(Path(text))        # relative or odd: the exact answer, not memoized
        if folder not in self._parents:
            # A plain last component: Path(text).parent is this folder, so it answers for every file in it.
            self._parents[folder] = self._resolve(Path(text))
        return self._parents[folder]

    def _resolve(self, path: Path) -> Path | None:
        if not path.is_absolute() or path.name in ("", ".", ".."):
            return None
        parent = path.parent
        real = Path(os.path.realpath(parent))
        lexical = Path(os.path.normpath(parent))
        return next(
            (base for base, real_root in self._roots
             if is_within(base, lexical, or_equal=True) and is_within(real_root, real, or_equal=True)),
            None,
        )
