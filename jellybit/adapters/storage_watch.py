"""Finding storage faults and their end: the database's disk and the library roots (core/storage.py).

A fault starts when a write fails for a storage reason (the store and the layouter report it here,
already turned into a `StorageFault` by `database_fault` / `library_fault`) or when a probe sees it
before anything failed (a library that is read-only or no longer mounted, a database file that
vanished). It ends when a probe sees the cause gone: free space grew by `reserve` bytes, the mount is
writable or mounted again, the file is back; a lock, or a database SQLite would not write, ends
with the next write that gets through (the probe tries one).
Each start and each end is logged once and told to `notify` (the app publishes a `fault` event);
the faults in between cost no log line.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import sqlite3
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from jellybit import clock
from jellybit.core.storage import (
    DATABASE,
    Place,
    StorageCode,
    library_component,
    recovered,
    words,
)
from jellybit.errors import StorageFault

log = logging.getLogger(__name__)

RESERVE = 1 << 20          # free bytes a full disk must gain before its fault counts as over
INTERVAL = 2.0             # seconds between probes
FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# Faults no probe can see end (a lock; a file the worker may not write): the probe tries a write.
_ENDED_BY_A_WRITE = frozenset({StorageCode.STORAGE_LOCKED, StorageCode.STORAGE_READ_ONLY})


def mount_of(path: Path) -> Path:
    """The mount point holding `path` (the nearest existing ancestor's)."""
    current = Path(os.path.abspath(path))
    while not current.exists() and current.parent != current:
        current = current.parent
    while not os.path.ismount(current) and current.parent != current:
        current = current.parent
    return current


def place_for(component: str, path: Path) -> Place:
    """The `Place` of a component at `path`."""
    return Place(component, str(path), str(mount_of(path)))


def database_fault(exc: BaseException, place: Place) -> StorageFault | None:
    """The storage fault an sqlite3 error stands for (None: an error of the SQL or the code)."""
    if not isinstance(exc, sqlite3.Error):
        return None
    name = getattr(exc, "sqlite_errorname", "") or ""
    text = str(exc)
    code: StorageCode | None = None
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        code = StorageCode.STORAGE_FULL
    elif name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or (not name and "locked" in text):
        code = StorageCode.STORAGE_LOCKED
    elif name.startswith("SQLITE_READONLY") or "readonly database" in text:
        code = StorageCode.STORAGE_READ_ONLY
    elif name.startswith(("SQLITE_IOERR", "SQLITE_CANTOPEN")):
        # An I/O error while writing: the disk went read-only, full or away under SQLite.
        code = _filesystem_state(Path(place.path))
    if code is None:
        return None
    detail = text if code in (StorageCode.STORAGE_LOCKED, StorageCode.STORAGE_READ_ONLY) else ""
    return StorageFault(code.value, place.component, words(code, place, detail))


def _filesystem_state(database: Path) -> StorageCode | None:
    try:
        vfs = os.statvfs(database.parent)
    except OSError:
        return StorageCode.STORAGE_MISSING
    if not database.exists():
        return StorageCode.STORAGE_MISSING
    if vfs.f_flag & os.ST_RDONLY:
        return StorageCode.STORAGE_READ_ONLY
    if vfs.f_bavail * vfs.f_frsize < RESERVE:
        return StorageCode.STORAGE_FULL
    return None


def library_fault(exc: OSError, place: Place) -> StorageFault | None:
    """The storage fault an OSError inside a library stands for (None: not a storage fault)."""
    if exc.errno in FULL_ERRNOS:
        code = StorageCode.LIBRARY_FULL
    elif exc.errno == errno.EROFS:
        code = StorageCode.LIBRARY_READ_ONLY
    else:
        return None
    return StorageFault(code.value, place.component, words(code, place))


@dataclass(frozen=True)
class Current:
    """One component's fault now: its code and words, when it began, the free bytes then."""

    code: str
    message: str
    since: str
    free_then: int = 0


def _free(path: Path) -> int | None:
    try:
        vfs = os.statvfs(path)
    except OSError:
        return None
    return vfs.f_bavail * vfs.f_frsize


class StorageWatch:
    """The faults of the database and each library root: started by reports or probes, ended by probes."""

    def __init__(self, database: Path, roots: Mapping[str, Path], *,
                 notify: Callable[[str, StorageFault | None], None] | None = None,
                 reserve: int = RESERVE, interval: float = INTERVAL) -> None:
        self.database = Path(database)
        self.roots = {name: Path(root) for name, root in roots.items()}
        self.notify = notify
        self.reserve = reserve
        self.interval = interval
        self.identity: tuple[int, int] | None = None      # the database file the store opened
        self.try_write: Callable[[], Awaitable[None]] | None = None   # a write through the store
        self._mounts: dict[str, Path] = {}
        self._faults: dict[str, Current] = {}
        self._database_place: Place | None = None

    # ------------------------------------------------------------ places

    def database_place(self) -> Place:
        """Where the database is (its mount point looked up once: that walk costs ~0.3 ms)."""
        if self._database_place is None:
            self._database_place = place_for(DATABASE, self.database)
        return self._database_place

    def library_place(self, name: str) -> Place:
        """Where a library root is (its mount point as seen at start, while the root is gone)."""
        root = self.roots[name]
        mount = self._mounts.get(name) or mount_of(root)
        return Place(library_component(name), str(root), str(mount))

    def components(self) -> list[str]:
        """The component names this watch reports on."""
        return [DATABASE, *(library_component(n) for n in self.roots)]

    # ------------------------------------------------------------ reports

    def opened(self) -> None:
        """The store opened the database: remember which file it is, and each library's mount."""
        try:
            st = os.stat(self.database)
        except OSError:
            self.identity = None
        else:
            self.identity = (st.st_dev, st.st_ino)
        for name, root in self.roots.items():
            self._mounts[name] = mount_of(root)
        self._database_place = place_for(DATABASE, self.database)

    def moved(self) -> StorageFault | None:
        """Before a write: the fault of a database file moved or deleted since it was opened, else None.

        One `stat` (about 2 µs): the full probe is `check_database`.
        """
        if self.identity is None:
            return None
        try:
            st = os.stat(self.database)
        except OSError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) == self.identity:
            current = self._faults.get(DATABASE)
            if current is not None and current.code == StorageCode.STORAGE_MISSING:
                self._clear(DATABASE)         # the file is back: this write need not wait for a probe
            return None
        code = StorageCode.STORAGE_MISSING
        fault = StorageFault(code.value, DATABASE, words(code, self.database_place()))
        self.failed(fault)
        return fault

    def failed(self, fault: StorageFault) -> None:
        """A write failed for a storage reason: a new fault (or another code) is logged and told once."""
        current = self._faults.get(fault.component)
        if current is not None and current.code == fault.code:
            return
        folder = self.database.parent if fault.component == DATABASE else self._root_of(fault.component)
        free = (_free(folder) or 0) if folder is not None else 0
        self._faults[fault.component] = Current(fault.code, fault.message, clock.now(), free)
        log.error("storage fault: %s", fault.message,
                  extra={"component": fault.component, "code": fault.code})
        if self.notify is not None:
            self.notify(fault.component, fault)

    def wrote(self) -> None:
        """A database write got through: a lock, or a database that refused writes, is over."""
        current = self._faults.get(DATABASE)
        if current is not None and current.code in _ENDED_BY_A_WRITE:
            self._clear(DATABASE)

    def fault(self, component: str) -> Current | None:
        """The component's fault now, if any."""
        return self._faults.get(component)

    def status(self) -> dict[str, Current | None]:
        """Every component and its fault now (None = healthy)."""
        return {name: self._faults.get(name) for name in self.components()}

    def _root_of(self, component: str) -> Path | None:
        return next((r for n, r in self.roots.items() if library_component(n) == component), None)

    def _clear(self, component: str) -> None:
        if self._faults.pop(component, None) is None:
            return
        place = self.database_place() if component == DATABASE else self.library_place(
            component.removeprefix("library."))
        log.info("storage fault over: %s", recovered(place), extra={"component": component})
        if self.notify is not None:
            self.notify(component, None)

    # ------------------------------------------------------------ probes

    def check_database(self) -> StorageFault | None:
        """Probe the database now: a fault that is still on (or found now), else None (and it ends)."""
        place = self.database_place()
        found = self._database_cause(place)
        return self._settle(DATABASE, found, self.database.parent)

    def check_library(self, name: str) -> StorageFault | None:
        """Probe one library root now: its fault (or None, and a fault it had ends)."""
        place = self.library_place(name)
        return self._settle(place.component, self._library_cause(name, place), self.roots[name])

    def _database_cause(self, place: Place) -> StorageFault | None:
        try:
            st = os.stat(self.database)
        except FileNotFoundError:
            st = None
        except OSError:
            return None
        if st is None or (self.identity is not None and (st.st_dev, st.st_ino) != self.identity):
            code = StorageCode.STORAGE_MISSING
            return StorageFault(code.value, DATABASE, words(code, place))
        if _readonly(self.database.parent):
            code = StorageCode.STORAGE_READ_ONLY
            return StorageFault(code.value, DATABASE, words(code, place, "the mount is read-only"))
        return None

    def _library_cause(self, name: str, place: Place) -> StorageFault | None:
        root = self.roots[name]
        mount = self._mounts.get(name)
        code = StorageCode.LIBRARY_UNMOUNTED
        if not root.is_dir():
            return StorageFault(code.value, place.component, words(code, place, "the folder is missing"))
        if mount is not None and not os.path.ismount(mount):
            return StorageFault(code.value, place.component,
                                words(code, place, f"{mount} is no longer a mount point"))
        if _readonly(root):
            code = StorageCode.LIBRARY_READ_ONLY
            return StorageFault(code.value, place.component, words(code, place))
        return None

    def _settle(self, component: str, found: StorageFault | None, folder: Path) -> StorageFault | None:
        """Start a fault a probe found, keep one still on, end one whose cause is gone."""
        if found is not None:
            self.failed(found)
            return found
        current = self._faults.get(component)
        if current is None:
            return None
        if current.code in (StorageCode.STORAGE_FULL, StorageCode.LIBRARY_FULL):
            free = _free(folder)
            if free is None or free < max(self.reserve, current.free_then + self.reserve):
                return StorageFault(current.code, component, current.message)
        elif current.code in _ENDED_BY_A_WRITE:
            return StorageFault(current.code, component, current.message)   # a write ends it
        self._clear(component)
        return None

    async def probe(self) -> None:
        """Probe every component once (a locked database by trying a write)."""
        self.check_database()
        for name in self.roots:
            self.check_library(name)
        current = self._faults.get(DATABASE)
        if current is not None and current.code in _ENDED_BY_A_WRITE and self.try_write is not None:
            try:
                await self.try_write()
            except StorageFault:
                pass

    async def run(self) -> None:
        """Probe every `interval` seconds, forever (a supervised loop)."""
        while True:
            await self.probe()
            await asyncio.sleep(self.interval)


def _readonly(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def snapshot(database: Path, roots: Mapping[str, Path], *,
             reserve: int = RESERVE) -> dict[str, tuple[StorageFault | None, int | None]]:
    """What another process (`jellybit healthcheck`) can see of each component now: its fault, free bytes.

    Without the worker's memory of its mounts, a library not mounted shows only as a missing folder.
    """
    found: dict[str, tuple[StorageFault | None, int | None]] = {}
    places = [(place_for(DATABASE, database), database.parent, StorageCode.STORAGE_READ_ONLY,
               StorageCode.STORAGE_FULL)]
    places += [(place_for(library_component(n), r), r, StorageCode.LIBRARY_READ_ONLY,
                StorageCode.LIBRARY_FULL) for n, r in roots.items()]
    for place, folder, read_only, full in places:
        free = _free(folder)
        fault: StorageFault | None = None
        if place.library is not None and not folder.is_dir():
            code = StorageCode.LIBRARY_UNMOUNTED
            fault = StorageFault(code.value, place.component, words(code, place, "the folder is missing"))
        elif _readonly(folder):
            fault = StorageFault(read_only.value, place.component, words(read_only, place))
        elif free is not None and free < reserve:
            fault = StorageFault(full.value, place.component, words(full, place))
        found[place.component] = (fault, free)
    return found
