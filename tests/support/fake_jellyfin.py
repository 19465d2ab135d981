"""A local fake of Jellyfin's `/Library/Refresh` and `/System/Info/Public` (fixture `fake_jellyfin`)."""

from __future__ import annotations

from typing import Any

from jellybit.config import JellyfinConfig
from tests.support.fake_http import FakeHttpServer, LoggedRequest, Reply


class FakeJellyfin(FakeHttpServer):
    """Jellyfin's `/Library/Refresh` and `/System/Info/Public`."""

    API_KEY = "jellyfin-api-key-5c1e"

    def config(self, **overrides: Any) -> JellyfinConfig:
        """An enabled JellyfinConfig pointed at this fake."""
        return JellyfinConfig(**{"enabled": True, "url": self.origin, "api_key": self.API_KEY,
                                 "debounce_seconds": 0.05, **overrides})

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
        if r.path == "/Library/Refresh" and r.method == "POST":
            return Reply(204) if self._authorized(r) else Reply(401, "")
        return Reply(404, "")
