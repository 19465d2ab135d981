"""Ask Jellyfin to rescan its libraries: debounced, in the background, never failing the caller."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

import httpx
from pydantic import BaseModel

from jellybit import __version__
from jellybit.adapters.status import ServiceStatus
from jellybit.config import JellyfinConfig
from jellybit.errors import ConfigError

log = logging.getLogger(__name__)

RETRY_DELAYS = (30.0, 120.0, 300.0)     # a failed refresh is owed, retried this often, then dropped


class _PublicInfo(BaseModel):
    ServerName: str | None = None
    Version: str | None = None
    ProductName: str | None = None


def api_headers(config: JellyfinConfig) -> dict[str, str]:
    """The headers every Jellyfin request carries (the API key in both spellings)."""
    key = config.api_key.get_secret_value() if config.api_key else ""
    # Jellyfin 12 ignores X-Emby-Token unless legacy authorization is on; older servers and
    # Emby read it. The MediaBrowser form carries the token only (a Device would rebind it).
    return {
        "Authorization": f'MediaBrowser Token="{key}"',
        "X-Emby-Token": key,
        "User-Agent": f"Jellybit/{__version__}",
    }


class JellyfinRefresher:
    """`POST /Library/Refresh` after layouts, coalescing bursts within `debounce_seconds`."""

    def __init__(
        self, config: JellyfinConfig, *, retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        key = config.api_key.get_secret_value() if config.api_key else ""
        if config.enabled and not key:
            raise ConfigError("jellyfin is enabled but has no api_key "
                              "(set it or JELLYBIT_JELLYFIN_API_KEY)")
        self.config = config
        self.retry_delays = tuple(retry_delays)
        self._headers = api_headers(config)
        self._client: httpx.AsyncClient | None = None
        self._task: asyncio.Task[None] | None = None
        self._pending = False
        self._posting = False
        self._failing = False
        self._closed = False
        self.sent = 0                 # refreshes Jellyfin accepted (for the status page and tests)

    @property
    def available(self) -> bool:
        """False while the last refresh attempt failed."""
        return not self._failing

    def request_refresh(self, reason: str = "") -> None:
        """Owe Jellyfin a rescan; returns at once and never raises."""
        try:
            if not self.config.enabled or self._closed:
                return
            loop = asyncio.get_running_loop()
            self._pending = True
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._run(), name="jellyfin-refresh")
            log.debug("jellyfin refresh requested", extra={"reason": reason})
        except Exception:  # the caller is laying out a download; a rescan is never worth failing it
            log.exception("jellyfin refresh could not be scheduled")

    async def _run(self) -> None:
        delay = self.config.debounce_seconds
        failures = 0
        try:
            while self._pending and not self._closed:
                await asyncio.sleep(delay)
                self._pending = False
                self._posting = True
                try:
                    ok = await self._post()
                finally:
                    self._posting = False
                if ok:
                    failures, delay = 0, self.config.debounce_seconds
                elif failures < len(self.retry_delays):
                    self._pending = True
                    delay = self.retry_delays[failures]
                    failures += 1
                else:
                    log.debug("jellyfin refresh dropped after %d retries", failures)
                    failures, delay = 0, self.config.debounce_seconds
        except Exception:
            log.exception("jellyfin refresh loop failed")

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                base_url=self.config.url.rstrip("/"), timeout=self.config.timeout, headers=self._headers,
            )
        return self._client

    async def _post(self) -> bool:
        try:
            response = await self._http().post("/Library/Refresh")
        except httpx.TimeoutException:
            return self._failed(f"no answer within {self.config.timeout:g} s")
        except httpx.HTTPError as exc:
            return self._failed(f"unreachable ({type(exc).__name__})")
        if response.status_code in (401, 403):
            return self._failed(f"the API key was rejected (HTTP {response.status_code})")
        if response.status_code >= 300:
            return self._failed(f"HTTP {response.status_code}")
        self.sent += 1
        if self._failing:
            self._failing = False
            log.info("jellyfin is reachable again; library refresh sent")
        else:
            log.info("jellyfin library refresh sent")
        return True

    def _failed(self, why: str) -> bool:
        if not self._failing:
            self._failing = True
            log.warning("jellyfin library refresh failed: %s", why)
        else:
            log.debug("jellyfin library refresh still failing: %s", why)
        return False

    async def close(self) -> None:
        """Stop the background task; a refresh still owed is sent once now unless Jellyfin is failing."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None and not task.done():
            if not self._posting:
                task.cancel()        # waiting out the debounce: the owed refresh is flushed below
            with contextlib.suppress(asyncio.CancelledError):
                await task           # a POST in flight finishes (bounded by the timeout)
        if self._pending and not self._failing and self.config.enabled:
            self._pending = False
            await self._post()
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def ping(self) -> ServiceStatus:
        """`GET /System/Info/Public`, then `/System/Info` (which needs the key) for the status page;
        never raises."""
        if not self.config.enabled:
            return ServiceStatus("jellyfin", False, "disabled", enabled=False)
        try:
            response = await self._http().get("/System/Info/Public")
            response.raise_for_status()
            info = _PublicInfo.model_validate_json(response.content)
            private = await self._http().get("/System/Info")
            if private.status_code in (401, 403):
                return ServiceStatus("jellyfin", False, "the API key was rejected "
                                     f"(HTTP {private.status_code})", refused=True,
                                     version=(info.Version or None))
        except httpx.HTTPStatusError as exc:
            return ServiceStatus("jellyfin", False, f"answered HTTP {exc.response.status_code}")
        except httpx.HTTPError as exc:
            return ServiceStatus("jellyfin", False, f"unreachable ({type(exc).__name__})")
        except ValueError:
            return ServiceStatus("jellyfin", False, "answered something that is not Jellyfin's JSON")
        message = "reachable" if self.available else "reachable, but the last library refresh failed"
        return ServiceStatus("jellyfin", True, message, version=(info.Version or None))
