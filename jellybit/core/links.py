"""Records of laid-out files: link and batch statuses, file links, title groups (pure data)."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import NamedTuple

from jellybit.core.sanitize import is_within

# Jellyfin episode codes as naming writes them: S01E02, S01E01-E03, S01E01E02.
_EPISODE_RE = re.compile(r"\bS(\d{1,4})E(\d{1,4})((?:-?E\d{1,4})*)", re.IGNORECASE)
_MAX_RANGE = 100


class LinkStatus(StrEnum):
    """What happened to one planned target."""

    PENDING = "pending"          # journaled, the filesystem may or may not have it yet
    LINKED = "linked"            # a hardlink this batch created
    COPIED = "copied"            # a copy this batch created (hardlink impossible)
    EXISTS = "exists"            # the same inode was already there
    COLLISION = "collision"      # a different file holds the target
    SKIPPED = "skipped"          # merge top-up: the episode is already present as another file
    SUPERSEDED = "superseded"    # a newer batch owns this path now
    REPLACED = "replaced"        # a better copy of the same work took its place; undo brings it back
    REMOVED = "removed"          # undone or rolled back


# Rows that own a file in the library right now.
LIVE_STATUSES: frozenset[LinkStatus] = frozenset({LinkStatus.LINKED, LinkStatus.COPIED, LinkStatus.EXISTS})


class BatchStatus(StrEnum):
    """Life of one apply batch."""

    OPEN = "open"
    COMMITTED = "committed"
    ROLLED_BACK = "rolled_back"
    UNDONE = "undone"


class NewLink(NamedTuple):
    """One journal row to write before the filesystem is touched.

    NewLink and FileLink are named tuples, not dataclasses: a season pack journals thousands of
    rows, and a tuple is built in a fraction of a dataclass's time (docs/layout.md).
    """

    src_path: str
    dst_path: str                # absolute path inside a library root
    kind: str                    # video | subtitle | audio | extra
    size: int
    src_dev: int | None = None
    src_ino: int | None = None
    src_mtime_ns: int | None = None
    status: LinkStatus = LinkStatus.PENDING
    dst_ino: int | None = None   # known up front for targets already there (status exists)
    message: str | None = None
    replaces: int | None = None  # id of another download's live row whose library file this replaces


@dataclass(frozen=True)
class LinkUpdate:
    """The finished state of one journal row."""

    link_id: int
    status: LinkStatus
    dst_ino: int | None = None
    message: str | None = None


class FileLink(NamedTuple):
    """One stored `file_link` row, with its batch's download and id (the row stores its batch's number)."""

    id: int
    download_id: str
    apply_batch_id: str
    src_path: str
    dst_path: str
    kind: str
    status: LinkStatus
    size: int
    src_dev: int | None
    src_ino: int | None
    src_mtime_ns: int | None
    dst_ino: int | None
    message: str | None

    @property
    def live(self) -> bool:
        """Tell whether this row owns a library file right now."""
        return self.status in LIVE_STATUSES


@dataclass(frozen=True)
class ApplyBatch:
    """One stored `apply_batch` row."""

    id: str
    download_id: str
    status: BatchStatus
    created_at: str
    finished_at: str | None


@dataclass(frozen=True)
class TitleMember:
    """One download of a title group."""

    download_id: str
    display_name: str
    state: str
    live_links: int


@dataclass(frozen=True)
class TitleGroup:
    """A computed title: downloads whose current recognition shares `(provider, provider_id)`."""

    provider: str
    provider_id: str
    media_type: str | None
    title: str | None
    year: int | None
    members: tuple[TitleMember, ...]
    folders: tuple[str, ...]                               # absolute title folders of live links
    seasons: dict[int, tuple[int, ...]] = field(default_factory=dict)  # season -> episodes laid
    live_folders: tuple[str, ...] = ()                     # those folders that exist on disk


def episode_numbers(name: str) -> list[tuple[int, int]]:
    """The (season, episode) pairs a file name's episode code covers; [] when it has none."""
    match = _EPISODE_RE.search(name)
    if match is None:
        return []
    season, first = int(match.group(1)), int(match.group(2))
    more = [int(n) for n in re.findall(r"\d+", match.group(3))]
    last = max([first, *more])
    episodes = range(first, last + 1) if last - first < _MAX_RANGE else [first, *more]
    return [(season, e) for e in episodes]


def title_folder_of(dst_path: str, roots: Sequence[str]) -> str | None:
    """The title folder (root + first component) holding a link, or None outside every root."""
    path = PurePosixPath(dst_path)
    for root in roots:
        base = PurePosixPath(os.path.normpath(root))
        if is_within(base, path) and len(path.relative_to(base).parts) >= 2:
            return str(base / path.relative_to(base).parts[0])
    return None
