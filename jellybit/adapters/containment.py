"""The last gate before any write in a library: a relative target must stay inside its root."""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from jellybit.core.sanitize import is_sanitized
from jellybit.errors import UnsafePath

PATH_MAX = 4096


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
    if real_target == real_root or not real_target.is_relative_to(real_root):
        raise UnsafePath(f"target resolves outside its library root: {'/'.join(parts)!r}")
    return target
