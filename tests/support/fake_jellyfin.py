"""A local fake of Jellyfin 10.10's API shapes (fixture `fake_jellyfin`).

Routes: `GET /System/Info/Public`, `GET /System/Info` (the key needed), `POST /Library/Refresh`,
`GET /Library/VirtualFolders` and `GET /Items`
(`ParentId`, `Recursive`, `IncludeItemTypes`, `MinDateLastSaved`, `StartIndex`, `Limit`, and `Fields`:
`Path` and `ProviderIds` are sent only when asked for, as Jellyfin's DtoService does). Query parameters
Jellyfin does not have (`Path=`, `AnyProviderIdEquals=`) are ignored, as Jellyfin ignores them.

A refresh scans the real folders a library names, the way a container sees them: `mount(jellyfin_path,
real_dir)` is the volume mapping, and a library folder with no mount is empty (the common Docker
mistake). `hide(text)` keeps files whose path contains `text` out of every scan (an item that never
appears: unreadable files), `scan_on_refresh = False` makes the rescan do nothing.
"""

from __future__ import annotations

import re
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jellybit.config import JellyfinConfig
from tests.support.fake_http import FakeHttpServer, LoggedRequest, Reply

VIDEO = {".mkv", ".mp4", ".avi", ".m4v", ".ts", ".webm"}
PROVIDER_TAG = re.compile(r"\[(tmdbid|tvdbid|imdbid|tvmazeid)[-=]([^\]]+)\]", re.IGNORECASE)
PROVIDER_NAMES = {"tmdbid": "Tmdb", "tvdbid": "Tvdb", "imdbid": "Imdb", "tvmazeid": "TvMaze"}
TITLE = re.compile(r"^(.*?)\s*(\(\d{4}\))?\s*(\[.*)?$")


@dataclass
class FakeItem:
    """One item of the fake's database."""

    id: str
    name: str
    type: str                    # Movie | Series | Episode
    path: str                    # as Jellyfin sees it
    library: str                 # the library's ItemId
    saved: datetime
    provider_ids: dict[str, str] = field(default_factory=dict)
    series_id: str | None = None
    series_name: str | None = None

    def dto(self, fields: set[str]) -> dict[str, Any]:
        """The BaseItemDto shape, with Path and ProviderIds only when asked for."""
        data: dict[str, Any] = {"Name": self.name, "ServerId": "f" * 32, "Id": self.id, "Type": self.type,
                                "IsFolder": self.type == "Series", "LocationType": "FileSystem"}
        if self.type != "Series":
            data["MediaType"] = "Video"
        if self.series_id:
            data.update(SeriesId=self.series_id, SeriesName=self.series_name)
        if "path" in fields:
            data["Path"] = self.path
        if "providerids" in fields:
            data["ProviderIds"] = dict(self.provider_ids)
        return data


def _tags(name: str) -> dict[str, str]:
    return {PROVIDER_NAMES[m.group(1).lower()]: m.group(2) for m in PROVIDER_TAG.finditer(name)}


def _title(name: str) -> str:
    match = TITLE.match(name)
    return (match.group(1) if match else name) or name


class FakeJellyfin(FakeHttpServer):
    """Jellyfin's libraries, items, refresh and public info over real folders."""

    API_KEY = "jellyfin-api-key-5c1e"

    def __init__(self) -> None:
        super().__init__()
        self.folders: list[dict[str, Any]] = []
        self.mounts: dict[str, Path] = {}
        self.items: dict[str, FakeItem] = {}          # by Jellyfin path
        self.hidden: list[str] = []
        self.scan_on_refresh = True
        self._db = threading.Lock()

    def config(self, **overrides: Any) -> JellyfinConfig:
        """An enabled JellyfinConfig pointed at this fake."""
        return JellyfinConfig(**{"enabled": True, "url": self.origin, "api_key": self.API_KEY,
                                 "debounce_seconds": 0.05, **overrides})

    # ------------------------------------------------------------ setting it up

    def add_library(self, name: str, collection_type: str | None, *locations: str) -> str:
        """Add a library (Jellyfin paths); returns its ItemId."""
        item_id = uuid.uuid4().hex
        self.folders.append({"Name": name, "Locations": list(locations), "CollectionType": collection_type,
                             "LibraryOptions": {"Enabled": True, "EnableRealtimeMonitor": True},
                             "ItemId": item_id, "PrimaryImageItemId": item_id, "RefreshProgress": None,
                             "RefreshStatus": "Idle"})
        return item_id

    def mount(self, jellyfin_path: str, real: Path) -> None:
        """What Jellyfin's container sees at `jellyfin_path` (a volume mapping)."""
        self.mounts[jellyfin_path.rstrip("/")] = real

    def hide(self, text: str) -> None:
        """Never list a file whose path contains `text` (Jellyfin cannot read it)."""
        self.hidden.append(text)

    def _real(self, jellyfin_path: str) -> Path | None:
        for prefix in sorted(self.mounts, key=len, reverse=True):
            if jellyfin_path == prefix or jellyfin_path.startswith(prefix + "/"):
                return self.mounts[prefix] / jellyfin_path[len(prefix):].lstrip("/")
        return None

    # ------------------------------------------------------------ the scanner

    def scan(self) -> None:
        """What a library scan finds now (new items get a fresh id and DateLastSaved)."""
        with self._db:
            for folder in self.folders:
                for location in folder["Locations"]:
                    real = self._real(location)
                    if real is None or not real.is_dir():
                        continue
                    if folder["CollectionType"] == "tvshows":
                        self._scan_series(folder["ItemId"], location, real)
                    else:
                        self._scan_movies(folder["ItemId"], location, real)

    def _videos(self, real: Path) -> list[Path]:
        return sorted(p for p in real.rglob("*") if p.suffix.lower() in VIDEO and p.is_file()
                      and not any(h in str(p) for h in self.hidden))

    def _add(self, path: str, **kwargs: Any) -> FakeItem:
        if path not in self.items:
            self.items[path] = FakeItem(id=uuid.uuid4().hex, path=path, saved=datetime.now(UTC), **kwargs)
        return self.items[path]

    def _scan_movies(self, library: str, location: str, real: Path) -> None:
        for title in sorted(p for p in real.iterdir() if p.is_dir()):
            videos = self._videos(title)
            if videos:
                path = f"{location}/{videos[0].relative_to(real).as_posix()}"
                self._add(path, name=_title(title.name), type="Movie", library=library,
                          provider_ids=_tags(title.name))

    def _scan_series(self, library: str, location: str, real: Path) -> None:
        for show in sorted(p for p in real.iterdir() if p.is_dir()):
            videos = self._videos(show)
            if not videos:
                continue
            series = self._add(f"{location}/{show.name}", name=_title(show.name), type="Series",
                               library=library, provider_ids=_tags(show.name))
            for video in videos:
                self._add(f"{location}/{video.relative_to(real).as_posix()}", name=video.stem, type="Episode",
                          library=library, series_id=series.id, series_name=series.name)

    # ------------------------------------------------------------ HTTP

    @property
    def refreshes(self) -> int:
        """Accepted `POST /Library/Refresh` calls."""
        return sum(1 for r in self.calls("/Library/Refresh", "POST") if self._authorized(r))

    def _authorized(self, r: LoggedRequest) -> bool:
        auth = r.headers.get("authorization", "")
        return r.headers.get("x-emby-token") == self.API_KEY or f'Token="{self.API_KEY}"' in auth

    def route(self, r: LoggedRequest) -> Reply:
        """Jellyfin's routes."""
        if r.path == "/System/Info/Public" and r.method == "GET":
            return Reply(200, {"LocalAddress": self.origin, "ServerName": "fake-jellyfin",
                               "Version": "10.10.7", "ProductName": "Jellyfin Server", "Id": "f" * 32,
                               "StartupWizardCompleted": True})
        if not self._authorized(r):
            return Reply(401, "")            # Jellyfin's 401 has no body ("401 0" in its request log)
        if r.path == "/System/Info" and r.method == "GET":
            return Reply(200, {"LocalAddress": self.origin, "ServerName": "fake-jellyfin",
                               "Version": "10.10.7", "ProductName": "Jellyfin Server", "Id": "f" * 32,
                               "OperatingSystem": "Linux", "StartupWizardCompleted": True,
                               "HasPendingRestart": False, "IsShuttingDown": False})
        if r.path == "/Library/Refresh" and r.method == "POST":
            if self.scan_on_refresh:
                self.scan()
            return Reply(204)
        if r.path == "/Library/VirtualFolders" and r.method == "GET":
            return Reply(200, self.folders)
        if r.path == "/Items" and r.method == "GET":
            return Reply(200, self._items(r))
        return Reply(404, "")

    def _items(self, r: LoggedRequest) -> dict[str, Any]:
        def listed(name: str) -> set[str]:
            return {v.strip().lower() for v in (r.param(name) or "").split(",") if v.strip()}

        kinds, fields = listed("IncludeItemTypes"), listed("Fields")
        parent = (r.param("ParentId") or "").replace("-", "").lower()
        since = r.param("MinDateLastSaved")
        after = datetime.fromisoformat(since.replace("Z", "+00:00")) if since else None
        with self._db:
            found = [i for i in self.items.values()
                     if (not kinds or i.type.lower() in kinds) and (not parent or i.library == parent)
                     and (after is None or i.saved >= after)]
        if (r.param("Recursive") or "").lower() != "true":
            found = [i for i in found if i.type in ("Movie", "Series")]
        start = int(r.param("StartIndex") or 0)
        limit = int(r.param("Limit") or 10_000)
        page = found[start:start + limit]
        return {"Items": [i.dto(fields) for i in page], "TotalRecordCount": len(found), "StartIndex": start}
