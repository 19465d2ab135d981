"""qBittorrent WebUI API (v2) over httpx: login, add, incremental sync, files, delete, pause/resume.

Works with qBittorrent 4.x (WebAPI < 2.11: `pause`/`resume`, add with `paused`) and 5.x
(`stop`/`start`, add with `stopped`; 5.2 answers login with 204 and add with JSON). Every failure
becomes `AdapterError("qbittorrent", ...)`; the password never appears in a message or a log line.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from jellybit.adapters.qbittorrent_answers import (
    CATEGORIES,
    FILES,
    PREFERENCES,
    TORRENTS,
    AddAnswer,
    MainData,
    TorrentAnswer,
)
from jellybit.config import QbittorrentConfig
from jellybit.core.ports import AddTorrent, SyncSnapshot, TorrentFile, TorrentInfo
from jellybit.errors import AdapterError, InvalidArgument, TorrentRejected

log = logging.getLogger(__name__)

SYSTEM = "qbittorrent"
STOP_START_API = (2, 11)              # qBittorrent 5.0: pause/resume became stop/start
_HASH = re.compile(r"^(?:[0-9a-fA-F]{40}|[0-9a-fA-F]{64})$")
_M = TypeVar("_M")


def _version(text: str) -> tuple[int, ...]:
    parts = text.strip().lstrip("v").split(".")
    if not parts or not all(p.isdigit() for p in parts):
        raise AdapterError(SYSTEM, f"unexpected WebUI API version {text.strip()[:40]!r}")
    return tuple(int(p) for p in parts)


def _ids(hashes: Sequence[str]) -> list[str]:
    """Validate hashes and turn them into qBittorrent ids (a v2 hash cut to 40 hex digits)."""
    ids: list[str] = []
    for value in hashes:
        if not isinstance(value, str) or not _HASH.match(value):
            raise InvalidArgument(f"not an infohash: {str(value)[:80]!r}")
        ids.append(value.lower()[:40])
    return ids


def _having(torrents: list[TorrentInfo], wanted: set[str]) -> list[TorrentInfo]:
    return [t for t in torrents if t.hash in wanted or t.hashes() & wanted]


# ---------------------------------------------------------------- the client


class QbittorrentClient:
    """Async qBittorrent WebUI client implementing `jellybit.core.ports.TorrentClient`."""

    def __init__(self, config: QbittorrentConfig, *,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._config = config
        self._password = config.password.get_secret_value() if config.password is not None else None
        base = config.url.rstrip("/")
        self._base = re.sub(r"//[^/@]*@", "//", base)  # for messages: no user:password@ part
        self._http = httpx.AsyncClient(
            base_url=f"{base}/api/v2/", timeout=httpx.Timeout(config.timeout),
            verify=config.verify_tls, transport=transport, follow_redirects=False,
        )
        self._auth_lock = asyncio.Lock()
        self._sync_lock = asyncio.Lock()
        self._session = 0                  # bumped on every successful login
        self._logged_in = False
        self._api: tuple[int, ...] | None = None
        self._rid = 0
        self._raw: dict[str, dict[str, Any]] = {}
        self._view: dict[str, TorrentInfo] = {}

    async def __aenter__(self) -> QbittorrentClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ------------------------------------------------------------ plumbing

    def _error(self, message: str) -> AdapterError:
        return AdapterError(SYSTEM, self._redact(message))

    def _redact(self, text: str) -> str:
        # Very short passwords would turn every message to noise; none of our messages carries one.
        if self._password and len(self._password) >= 4:
            text = text.replace(self._password, "***")
        return text

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return await self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise self._error(f"{path}: no answer from {self._base} within "
                              f"{self._config.timeout:g} s") from exc
        except httpx.ConnectError as exc:
            raise self._error(f"cannot connect to {self._base}: {exc or type(exc).__name__}") from exc
        except httpx.HTTPError as exc:
            raise self._error(f"{path}: {type(exc).__name__}: {exc}") from exc

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send one API call; log in first if needed and once more when the session expired."""
        if not self._logged_in and self._password is not None:
            await self._login_once(self._session)
        session = self._session
        response = await self._send(method, path, **kwargs)
        if response.status_code in (401, 403):
            if self._password is None:
                raise self._error(f"{path}: HTTP {response.status_code}; qBittorrent requires a "
                                  "login but no password is configured")
            log.info("qBittorrent session expired; logging in again")
            await self._login_once(session)
            response = await self._send(method, path, **kwargs)
            if response.status_code in (401, 403):
                raise self._error(f"{path}: HTTP {response.status_code} even after logging in again")
        if response.status_code >= 500:
            raise self._error(f"{path}: HTTP {response.status_code} {response.reason_phrase}")
        return response

    def _expect_ok(self, response: httpx.Response, path: str) -> None:
        if not response.is_success:
            body = response.text.strip()[:200]
            raise self._error(f"{path}: HTTP {response.status_code}" + (f": {body}" if body else ""))

    def _parse(self, response: httpx.Response, path: str, validate: Callable[[bytes], _M]) -> _M:
        self._expect_ok(response, path)
        try:
            return validate(response.content)
        except ValidationError as exc:
            bad_json = any(e["type"] == "json_invalid" for e in exc.errors())
            what = "not JSON" if bad_json else "of an unexpected shape"
            raise self._error(f"{path}: answer is {what}") from None

    # ------------------------------------------------------------ session

    async def login(self) -> None:
        """Log in now (otherwise it happens on the first call); wrong credentials raise AdapterError.

        Without a configured password this only checks that qBittorrent lets us in.
        """
        if self._password is None:
            await self.app_version()
        else:
            await self._login_once(self._session)

    async def _login_once(self, seen_session: int) -> None:
        async with self._auth_lock:
            if self._session != seen_session and self._logged_in:
                return  # another task logged in while we waited
            self._logged_in = False
            self._http.cookies.clear()
            form = {"username": self._config.username, "password": self._password or ""}
            response = await self._send("POST", "auth/login", data=form)
            # Never echo a login answer body: some servers repeat the submitted form.
            status, body = response.status_code, response.text.strip()
            if status == 401 or (status == 200 and body == "Fails."):
                raise self._error(f"login to {self._base} refused: wrong user name or password")
            if status == 403:
                raise self._error(f"login to {self._base} refused: this address is banned after too "
                                  "many failed logins")
            if status not in (200, 204) or body not in ("", "Ok."):
                raise self._error(f"login to {self._base}: unexpected answer HTTP {status}")
            self._logged_in = True
            self._session += 1
            self._api = None  # the server may have been upgraded behind a restart
            log.debug("logged in to qBittorrent at %s", self._base)

    async def api_version(self) -> tuple[int, ...]:
        """The WebUI API version, e.g. (2, 8, 19) on 4.5.2; cached until the next login."""
        if self._api is None:
            response = await self._call("GET", "app/webapiVersion")
            self._expect_ok(response, "app/webapiVersion")
            self._api = _version(response.text)
        return self._api

    async def app_version(self) -> str:
        """qBittorrent's own version, e.g. "v4.5.2"."""
        response = await self._call("GET", "app/version")
        self._expect_ok(response, "app/version")
        return response.text.strip()

    async def _stop_start(self) -> bool:
        return await self.api_version() >= STOP_START_API

    # ------------------------------------------------------------ torrents

    async def add(self, request: AddTorrent) -> None:
        """Add by magnet, URL or .torrent bytes, with category, the per-download tag and no autoTMM."""
        sources = [s for s in (request.magnet, request.url, request.torrent_bytes) if s]
        if len(sources) != 1:
            raise InvalidArgument("add needs exactly one of magnet, url or torrent_bytes")
        paused_key = "stopped" if await self._stop_start() else "paused"
        data = {
            "category": request.category, "tags": request.tag, "autoTMM": "false",
            paused_key: "true" if request.paused else "false",
        }
        save_path = request.save_path or self._config.save_path
        if save_path:
            data["savepath"] = save_path
        files = None
        if request.torrent_bytes:
            files = {"torrents": ("jellybit.torrent", request.torrent_bytes, "application/x-bittorrent")}
        else:
            data["urls"] = request.magnet or request.url or ""
        response = await self._call("POST", "torrents/add", data=data, files=files)
        self._check_added(response)
        log.debug("added a torrent to qBittorrent with tag %s", request.tag)

    def _check_added(self, response: httpx.Response) -> None:
        status, body = response.status_code, response.text.strip()
        if status == 415:
            message = self._redact(f"not a valid torrent: {body[:200]}")
            raise TorrentRejected(SYSTEM, message, reason="invalid")
        duplicate = TorrentRejected(SYSTEM, "qBittorrent refused the torrent (it is probably already "
                                    "there)", reason="duplicate")
        if status == 409:
            raise duplicate
        self._expect_ok(response, "torrents/add")
        if body in ("", "Ok."):
            return
        if body == "Fails.":
            raise duplicate
        try:  # WebAPI 2.14+: {"success_count", "pending_count", "failure_count", "added_torrent_ids"}
            result = AddAnswer.model_validate_json(body)
        except ValidationError:
            raise self._error(f"torrents/add: unexpected answer {body[:80]!r}") from None
        if result.failure_count and not (result.success_count or result.pending_count):
            raise duplicate

    async def torrents(self, *, category: str | None = None, tag: str | None = None,
                       hashes: Sequence[str] | None = None) -> list[TorrentInfo]:
        """List torrents (`torrents/info`); `hashes` may be v1, full v2 or qBittorrent ids."""
        params: dict[str, str] = {}
        if category is not None:
            params["category"] = category
        if tag is not None:
            params["tag"] = tag
        if hashes is not None:
            wanted = {h.lower() for h in hashes}
            if not wanted:
                return []
            ids = _ids(sorted(wanted))
            matched = _having(await self._info({**params, "hashes": "|".join(ids)}), wanted)
            if wanted - {h for t in matched for h in (*t.hashes(), t.hash)}:
                # A hybrid's v1 hash is not its id, so the server-side filter cannot find it.
                matched = _having(await self._info(params), wanted)
            return matched
        return await self._info(params)

    async def _info(self, params: dict[str, str]) -> list[TorrentInfo]:
        response = await self._call("GET", "torrents/info", params=params)
        return [t.to_info() for t in self._parse(response, "torrents/info", TORRENTS.validate_json)]

    async def sync(self) -> SyncSnapshot:
        """Poll `sync/maindata` from the last `rid`; merge the deltas and say which torrents changed.

        Only the torrents the answer names are parsed again; a full answer (the first, or after
        qBittorrent restarted) names every torrent as changed. The snapshot's `torrents` is a
        read-only view of the client's running state, valid until the next `sync()`.
        """
        async with self._sync_lock:
            response = await self._call("GET", "sync/maindata", params={"rid": self._rid})
            data = self._parse(response, "sync/maindata", MainData.model_validate_json)
            previous = {} if data.full_update else self._raw
            parsed: dict[str, tuple[dict[str, Any], TorrentInfo]] = {}
            try:
                for key, partial in data.torrents.items():
                    h = key.lower()
                    if not partial and h in previous:
                        continue
                    merged = {**previous.get(h, {}), **partial, "hash": h}
                    parsed[h] = (merged, TorrentAnswer.model_validate(merged).to_info())
            except ValidationError:
                raise self._error("sync/maindata: unexpected torrent fields") from None
            # Everything is parsed: only now change the running state, so a bad answer leaves it whole.
            removed = [h.lower() for h in data.torrents_removed]
            if data.full_update:
                removed += [h for h in self._view if h not in parsed and h not in removed]
                self._raw, self._view = {}, {}
            for h in removed:
                self._raw.pop(h, None)
                self._view.pop(h, None)
            for h, (merged, info) in parsed.items():
                self._raw[h] = merged
                self._view[h] = info
            self._rid = data.rid
            return SyncSnapshot(torrents=MappingProxyType(self._view), removed=tuple(removed),
                                full_update=data.full_update, changed=frozenset(parsed))

    async def files(self, torrent_hash: str) -> list[TorrentFile]:
        """The files of one torrent (`name` relative to its save path)."""
        (torrent_id,) = _ids([torrent_hash])
        response = await self._call("GET", "torrents/files", params={"hash": torrent_id})
        if response.status_code == 404:
            raise self._error(f"torrents/files: no torrent {torrent_id}")
        entries = self._parse(response, "torrents/files", FILES.validate_json)
        return [TorrentFile(index=e.index if e.index is not None else i, name=e.name, size=e.size,
                            progress=min(max(e.progress, 0.0), 1.0)) for i, e in enumerate(entries)]

    async def delete(self, hashes: Sequence[str], *, delete_files: bool) -> None:
        """Remove torrents by id (TorrentInfo.hash), with or without their data."""
        await self._post_hashes("torrents/delete", hashes,
                                {"deleteFiles": "true" if delete_files else "false"})

    async def pause(self, hashes: Sequence[str]) -> None:
        """Pause (4.x) / stop (5.x) torrents by id."""
        await self._post_hashes("torrents/stop" if await self._stop_start() else "torrents/pause", hashes)

    async def resume(self, hashes: Sequence[str]) -> None:
        """Resume (4.x) / start (5.x) torrents by id."""
        await self._post_hashes("torrents/start" if await self._stop_start() else "torrents/resume", hashes)

    async def add_tags(self, hashes: Sequence[str], tags: Sequence[str]) -> None:
        """Add tags to torrents by id (adoption tags a hand-added torrent with its download's tag)."""
        clean = [t.strip() for t in tags if t and t.strip() and "," not in t]
        if clean:
            await self._post_hashes("torrents/addTags", hashes, {"tags": ",".join(clean)})

    async def _post_hashes(self, path: str, hashes: Sequence[str],
                           extra: dict[str, str] | None = None) -> None:
        ids = _ids(hashes)
        if not ids:
            return  # never send an empty list: qBittorrent reads "all" literally, and nothing else
        response = await self._call("POST", path, data={"hashes": "|".join(ids), **(extra or {})})
        self._expect_ok(response, path)

    async def ensure_category(self, name: str, save_path: str | None = None) -> None:
        """Create the category if it is missing; set its save path when one is given and differs."""
        response = await self._call("GET", "torrents/categories")
        existing = self._parse(response, "torrents/categories", CATEGORIES.validate_json).get(name)
        form = {"category": name, "savePath": save_path or ""}
        if existing is None:
            response = await self._call("POST", "torrents/createCategory", data=form)
            if response.status_code != 409:  # 409: someone created it meanwhile
                self._expect_ok(response, "torrents/createCategory")
        elif save_path is not None and existing.savePath.rstrip("/") != save_path.rstrip("/"):
            response = await self._call("POST", "torrents/editCategory", data=form)
            self._expect_ok(response, "torrents/editCategory")

    async def preferences(self) -> dict[str, Any]:
        """qBittorrent's application preferences (`app/preferences`)."""
        response = await self._call("GET", "app/preferences")
        return self._parse(response, "app/preferences", PREFERENCES.validate_json)

    async def set_preferences(self, values: dict[str, Any]) -> None:
        """Change some application preferences (`app/setPreferences`); the others stay as they are."""
        response = await self._call("POST", "app/setPreferences", data={"json": json.dumps(values)})
        self._expect_ok(response, "app/setPreferences")

    async def close(self) -> None:
        """Release the HTTP client."""
        await self._http.aclose()
