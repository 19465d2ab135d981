"""Ask Jellyfin what it has: its libraries (`/Library/VirtualFolders`) and a download's item (`/Items`).

Jellyfin 10.9/10.10's `/Items` has no filter by path or by provider id (`AnyProviderIdEquals` is
Emby's; Jellyfin has only `HasTmdbId`-style booleans), so the look-up narrows by what it does have —
the library (`ParentId`), the item type, and `MinDateLastSaved` (items saved since the layout) — and
matches `Path` (asked with `Fields=Path,ProviderIds`) and then `ProviderIds` here. docs/jellyfin.md.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jellybit.adapters.jellyfin import api_headers
from jellybit.config import JellyfinConfig, PathsConfig
from jellybit.core.jellyfin import Found, Item, Library, RootCheck, Wanted, check_roots, pick
from jellybit.core.path_map import translate_prefixes
from jellybit.errors import AdapterError

log = logging.getLogger(__name__)

PAGE = 200                 # items per `/Items` page
THOROUGH_MAX = 20_000      # items a thorough look-up reads at most (a very large library is sampled)
RECENT_TYPES = {"movie": "Movie", "series": "Episode"}
THOROUGH_TYPES = {"movie": "Movie", "series": "Series"}


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Folder(_Answer):
    Name: str = ""
    Locations: list[str] = Field(default_factory=list)
    CollectionType: str | None = None
    ItemId: str | None = None


class _Item(_Answer):
    Id: str
    Name: str = ""
    Type: str = ""
    Path: str | None = None
    ProviderIds: dict[str, str | None] | None = None
    SeriesId: str | None = None
    SeriesName: str | None = None


class _Page(_Answer):
    Items: list[_Item] = Field(default_factory=list)
    TotalRecordCount: int = 0


class JellyfinLibraries:
    """Jellyfin's libraries and items, paths translated to local ones; failures become AdapterError."""

    def __init__(self, config: JellyfinConfig, paths: PathsConfig) -> None:
        self.config = config
        self.paths = paths
        self._pairs = tuple((m.jellyfin, m.local) for m in config.path_map)
        self._client: httpx.AsyncClient | None = None
        self._problems: frozenset[str] = frozenset()
        self.last_checks: list[RootCheck] = []     # the last root check (status page, `info`)

    def local(self, path: str) -> str:
        """A path as Jellyfin reports it, as Jellybit sees it (`jellyfin.path_map`)."""
        return translate_prefixes(path, self._pairs)

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.config.url.rstrip("/"),
                                             timeout=self.config.timeout, headers=api_headers(self.config))
        return self._client

    async def _get(self, path: str, params: dict[str, Any] | None = None) -> bytes:
        try:
            response = await self._http().get(path, params=params)
        except httpx.TimeoutException as exc:
            raise AdapterError("jellyfin", f"no answer within {self.config.timeout:g} s") from exc
        except httpx.HTTPError as exc:
            raise AdapterError("jellyfin", f"unreachable ({type(exc).__name__})") from exc
        if response.status_code in (401, 403):
            raise AdapterError("jellyfin", f"the API key was rejected (HTTP {response.status_code})")
        if response.status_code >= 300:
            raise AdapterError("jellyfin", f"{path} answered HTTP {response.status_code}")
        return response.content

    async def libraries(self) -> list[Library]:
        """Every library (`GET /Library/VirtualFolders`), its folders translated to local paths."""
        body = await self._get("/Library/VirtualFolders")
        try:
            folders = [_Folder.model_validate(f) for f in _list(body)]
        except (ValidationError, ValueError) as exc:
            raise AdapterError("jellyfin", "/Library/VirtualFolders answered something unexpected") from exc
        return [Library(f.Name, (f.CollectionType or "").lower(),
                        tuple(self.local(loc).rstrip("/") or "/" for loc in f.Locations), f.ItemId or "")
                for f in folders]

    def roots(self) -> dict[str, str]:
        """Jellybit's library roots by media type."""
        return {"movie": str(self.paths.movies), "series": str(self.paths.series)}

    async def check(self) -> list[RootCheck]:
        """Compare the libraries with Jellybit's roots; a problem is logged once, its fix once."""
        checks = check_roots(self.roots(), await self.libraries())
        problems = frozenset(c.problem for c in checks if c.problem)
        for problem in sorted(problems - self._problems):
            log.warning("jellyfin library check: %s", problem)
        if self._problems and not problems:
            log.info("jellyfin libraries cover every Jellybit root again")
        self._problems = problems
        self.last_checks = checks
        return checks

    async def find(self, wanted: Wanted, library: Library, since: str, *, thorough: bool) -> Found | None:
        """The item the download became: items of the library saved since `since` (every item of the
        title's type when `thorough`), matched by path, then by provider id."""
        media = wanted.media_type or ""
        kinds = (THOROUGH_TYPES if thorough else RECENT_TYPES).get(media, "Movie,Series" if thorough
                                                                   else "Movie,Episode")
        params: dict[str, Any] = {"Recursive": "true", "IncludeItemTypes": kinds,
                                  "Fields": "Path,ProviderIds", "EnableImages": "false",
                                  "EnableUserData": "false", "CollapseBoxSetItems": "false", "Limit": PAGE}
        if library.item_id:
            params["ParentId"] = library.item_id
        if not thorough:
            params["MinDateLastSaved"] = since
        items: list[Item] = []
        start = 0
        while start < THOROUGH_MAX:
            page = await self._page({**params, "StartIndex": start})
            items.extend(page)
            found = pick(items, wanted)
            if found is not None and found.how == "path":
                return found
            if len(page) < PAGE:
                break
            start += PAGE
        return pick(items, wanted)

    async def _page(self, params: dict[str, Any]) -> list[Item]:
        body = await self._get("/Items", params)
        try:
            page = _Page.model_validate_json(body)
        except ValidationError as exc:
            raise AdapterError("jellyfin", "/Items answered something unexpected") from exc
        return [Item(i.Id, i.Name, i.Type, self.local(i.Path) if i.Path else None,
                     {k.lower(): v for k, v in (i.ProviderIds or {}).items() if v},
                     i.SeriesId, i.SeriesName) for i in page.Items]

    async def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None


def _list(body: bytes) -> list[Any]:
    data = json.loads(body)
    if not isinstance(data, list):
        raise ValueError("not a list")
    return data


async def library_checks(config: JellyfinConfig, paths: PathsConfig) -> list[tuple[str, bool, str]]:
    """`jellybit healthcheck --jellyfin-libraries`: one (name, ok, detail) per root; never raises."""
    libraries = JellyfinLibraries(config, paths)
    try:
        checks = await libraries.check()
    except AdapterError as exc:
        return [("jellyfin libraries", False, exc.message)]
    finally:
        await libraries.close()
    return [(f"jellyfin {c.kind} root", c.ok, c.problem or f"{c.root} is in the library {c.library!r}")
            for c in checks]
