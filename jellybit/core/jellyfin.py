"""Jellyfin's side of a layout (pure): which library covers a root, which item a download became, what to say.

Paths here are local (as Jellybit sees them): the adapter translates Jellyfin's paths through
`jellyfin.path_map` before they arrive. docs/jellyfin.md describes the checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Protocol

from jellybit.core.providers import facts
from jellybit.core.sanitize import is_within


class Confirmation(StrEnum):
    """Whether Jellyfin has the download: stored in `download.jellyfin_status`."""

    PENDING = "pending"            # laid out; Jellyfin has not listed it yet, still within the wait
    FOUND = "found"                # Jellyfin lists it: `jellyfin_item_id` names the item
    MISSING = "missing"            # not listed within `confirm_within_seconds` (checked again, slower)
    UNREACHABLE = "unreachable"    # Jellyfin could not be asked within the wait (checked again, slower)


# Jellyfin's CollectionType each media type belongs in; a mixed library (no type) takes both.
EXPECTED_COLLECTION = {"movie": "movies", "series": "tvshows"}
MIXED = frozenset({"", "mixed"})


@dataclass(frozen=True)
class Library:
    """One Jellyfin library (`/Library/VirtualFolders`), its folders as Jellybit sees them."""

    name: str
    collection_type: str          # "movies", "tvshows", "mixed" or "" (older servers: no type = mixed)
    locations: tuple[str, ...]
    item_id: str = ""             # the library's own item id (the `ParentId` of its items)


@dataclass(frozen=True)
class Item:
    """One Jellyfin item from `/Items` (path local, provider-id keys lower-cased)."""

    id: str
    name: str
    type: str                     # Movie | Series | Episode | ...
    path: str | None = None
    provider_ids: Mapping[str, str] = field(default_factory=dict)
    series_id: str | None = None
    series_name: str | None = None


@dataclass(frozen=True)
class RootCheck:
    """Whether a Jellybit library root is in a Jellyfin library of the right type."""

    kind: str                     # "movie" | "series"
    root: str
    library: str | None = None    # the covering library's name
    problem: str | None = None    # in words, with what to check; None = covered

    @property
    def ok(self) -> bool:
        """True when a library of a fitting type covers the whole root."""
        return self.problem is None


@dataclass(frozen=True)
class Wanted:
    """What a done download should have become in Jellyfin (local paths)."""

    download_id: str
    media_type: str | None        # "movie" | "series"
    folder: str | None            # the title folder, absolute
    videos: frozenset[str] = frozenset()     # the video files laid out, absolute
    provider: str | None = None
    provider_id: str | None = None


@dataclass(frozen=True)
class Found:
    """The item a download became and how it was recognized ("path" or "provider id")."""

    item_id: str
    name: str
    how: str


class JellyfinLookup(Protocol):
    """What the confirmer asks Jellyfin (adapters/jellyfin_library.py implements it)."""

    async def libraries(self) -> list[Library]:
        """Every library; raises AdapterError when Jellyfin cannot be asked."""

    async def find(self, wanted: Wanted, library: Library, since: str, *, thorough: bool) -> Found | None:
        """The item the download became in that library, or None; raises AdapterError."""

    async def check(self) -> list[RootCheck]:
        """Compare the libraries with Jellybit's roots (logged once per problem); raises AdapterError."""


def _within(root: str, path: str) -> bool:
    return is_within(PurePosixPath(root), PurePosixPath(path), or_equal=True)


def covering(libraries: Iterable[Library], path: str) -> Library | None:
    """The library one of whose folders holds `path` (the deepest folder wins)."""
    best: tuple[int, Library] | None = None
    for library in libraries:
        for location in library.locations:
            if _within(location, path) and (best is None or len(location) > best[0]):
                best = (len(location), library)
    return best[1] if best else None


def fits(library: Library, media_type: str | None) -> bool:
    """True when the library's type takes this media type (a mixed library takes both)."""
    kind = library.collection_type.lower()
    return kind in MIXED or media_type is None or EXPECTED_COLLECTION.get(media_type) == kind


def check_roots(roots: Mapping[str, str], libraries: Iterable[Library]) -> list[RootCheck]:
    """One check per root (media type -> local root): covered by a library of a fitting type, or why not."""
    libraries = list(libraries)
    checks: list[RootCheck] = []
    for kind, root in roots.items():
        library = covering(libraries, root)
        expected = EXPECTED_COLLECTION.get(kind, "")
        if library is None:
            inside = sorted(f"{lib.name!r} ({loc})" for lib in libraries for loc in lib.locations
                            if _within(root, loc))
            what = (f"only parts of it are in libraries: {', '.join(inside)}" if inside else
                    "no Jellyfin library has it among its folders")
            checks.append(RootCheck(kind, root, None, (
                f"{root} ({kind} root): {what}. Add it to a {expected} library in Jellyfin, or map "
                "Jellyfin's path for it in jellyfin.path_map if Jellyfin sees it under another name")))
        elif not fits(library, kind):
            checks.append(RootCheck(kind, root, library.name, (
                f"{root} ({kind} root) is in the library {library.name!r} of type "
                f"{library.collection_type or 'mixed'}, not {expected}: Jellyfin will not read the names "
                f"Jellybit writes there as {kind}s")))
        else:
            checks.append(RootCheck(kind, root, library.name))
    return checks


def pick(items: Iterable[Item], wanted: Wanted) -> Found | None:
    """The item the download became: a laid-out video's item, else one inside the title folder, else
    one with the recognized provider id. An episode stands for its series."""
    by_folder: Found | None = None
    by_provider: Found | None = None
    known = facts(wanted.provider)            # Jellyfin's ProviderIds key (compared case-insensitively)
    key = known.jellyfin_key if known else None
    for item in items:
        target_id = item.series_id if item.type == "Episode" and item.series_id else item.id
        name = item.series_name if item.type == "Episode" and item.series_name else item.name
        if item.path and item.path in wanted.videos:
            return Found(target_id, name, "path")
        if by_folder is None and item.path and wanted.folder and _within(wanted.folder, item.path):
            by_folder = Found(target_id, name, "path")
        if (by_provider is None and key and wanted.provider_id and item.type != "Episode"
                and item.provider_ids.get(key) == wanted.provider_id):
            by_provider = Found(target_id, name, "provider id")
    return by_folder or by_provider


def item_url(base: str, item_id: str) -> str:
    """The item's page in Jellyfin's web client."""
    return f"{base.rstrip('/')}/web/#/details?id={item_id}"


def missing_note(seconds: float, folder: str | None) -> str:
    """The warning when Jellyfin has not listed a download in time: what to check, in words."""
    where = f" {folder}" if folder else ""
    wait = f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"
    return (f"Jellyfin has not listed it {wait} after the layout. Check that the library "
            f"folder{where} is visible inside Jellyfin (its container's volume mapping and "
            "jellyfin.path_map), that the library rescan ran (Dashboard > Libraries > Scan All "
            "Libraries), and that Jellyfin's user may read the files.")


def unreachable_note(why: str) -> str:
    """The note while Jellyfin cannot be asked: the download stays done; Jellybit asks again later."""
    return f"Jellyfin could not be asked whether it has this ({why}); Jellybit asks again later."


def uncovered_note(folder: str | None) -> str:
    """The note when no Jellyfin library holds the download's folder."""
    return (f"No Jellyfin library holds {folder or 'its folder'}: add the library root to a Jellyfin "
            "library of the right type, or fix jellyfin.path_map.")
