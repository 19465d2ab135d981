"""Storage faults in words: the database's disk and the library roots, full, read-only, gone or locked.

One table (the codes, what each means, what to do) shared by the answers, the `fault` events, the
review reasons and `healthcheck`. Pure: the probes that find a fault live in adapters/storage_watch.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

DATABASE = "database"               # the component name of the database on `<base>/info`
LIBRARY_PREFIX = "library."         # `library.movies`, `library.series`


class StorageCode(StrEnum):
    """The error code of one storage fault (answers, events, review reasons, `info.components`)."""

    STORAGE_FULL = "storage_full"
    STORAGE_READ_ONLY = "storage_read_only"
    STORAGE_MISSING = "storage_missing"
    STORAGE_LOCKED = "storage_locked"
    LIBRARY_FULL = "library_full"
    LIBRARY_READ_ONLY = "library_read_only"
    LIBRARY_UNMOUNTED = "library_unmounted"


# What each code means in general (docs/mqtt-api.md lists the same table; a test keeps them in step).
MEANINGS: dict[StorageCode, str] = {
    StorageCode.STORAGE_FULL: "the disk holding the database is full; nothing can be changed until "
                              "there is free space",
    StorageCode.STORAGE_READ_ONLY: "the database cannot be written (a read-only mount or file); nothing "
                                   "can be changed until it is writable",
    StorageCode.STORAGE_MISSING: "the database file was moved or deleted while the worker ran; nothing is "
                                 "changed until it is back",
    StorageCode.STORAGE_LOCKED: "another process holds the database longer than the worker waits; the "
                                "change was not made",
    StorageCode.LIBRARY_FULL: "the library's disk is full; nothing can be laid out there",
    StorageCode.LIBRARY_READ_ONLY: "the library is mounted read-only; nothing can be laid out there",
    StorageCode.LIBRARY_UNMOUNTED: "the library's folder is missing or its disk is not mounted; nothing "
                                   "is laid out there",
}

LIBRARY_CODES = frozenset({StorageCode.LIBRARY_FULL, StorageCode.LIBRARY_READ_ONLY,
                           StorageCode.LIBRARY_UNMOUNTED})


@dataclass(frozen=True)
class Place:
    """Where a fault is: the component, the path concerned and the mount point holding it."""

    component: str          # `database` or `library.<name>`
    path: str
    mount: str

    @property
    def library(self) -> str | None:
        """The library's name (`movies`, `series`), None for the database."""
        return self.component[len(LIBRARY_PREFIX):] if self.component.startswith(LIBRARY_PREFIX) else None


def library_component(name: str) -> str:
    """The component name of a library root on `<base>/info` (`library.series`)."""
    return f"{LIBRARY_PREFIX}{name}"


def words(code: StorageCode, place: Place, detail: str = "") -> str:
    """The sentence an answer, an event and the log give for one fault: what, where, what to do."""
    what = f"the {place.library} library" if place.library else "the database"
    extra = f", {detail}" if detail else ""
    match code:
        case StorageCode.STORAGE_FULL:
            text = (f"the database disk is full ({place.path}); free space on {place.mount} — the change "
                    "was not made, send it again once there is room")
        case StorageCode.STORAGE_READ_ONLY:
            text = (f"the database is read-only ({place.path}{extra}); make {place.mount} writable — "
                    "the change was not made")
        case StorageCode.STORAGE_MISSING:
            text = (f"the database file is gone ({place.path} was moved or deleted while the worker ran); "
                    "put it back — the change was not made, and restarting now would start an empty "
                    "database")
        case StorageCode.STORAGE_LOCKED:
            text = (f"the database is locked by another process ({place.path}{extra}); close the other "
                    "program (a sqlite3 shell, a backup) and send it again — the change was not made")
        case StorageCode.LIBRARY_FULL:
            text = f"{what} is full ({place.path}); free space on {place.mount}"
        case StorageCode.LIBRARY_READ_ONLY:
            text = f"{what} is read-only ({place.path}); remount {place.mount} read-write"
        case StorageCode.LIBRARY_UNMOUNTED:
            text = f"{what} is not mounted ({place.path}{extra}); mount it again"
    return text


def recovered(place: Place) -> str:
    """The sentence for a fault's end."""
    what = f"the {place.library} library" if place.library else "the database"
    return f"{what} works again ({place.path})"
