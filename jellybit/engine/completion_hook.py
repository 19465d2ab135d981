"""qBittorrent's "Run external program on torrent finished", pointed at Jellybit when the user wants it.

With `qbittorrent.completion_hook` on, the worker sets qBittorrent's preferences (WebUI API
`app/setPreferences`: `autorun_enabled`, `autorun_program`) to `qbittorrent.completion_command`,
each time qBittorrent becomes reachable. A program the user set there already is never replaced:
that is logged once, and polling alone goes on working (it always does; the hook only saves the
wait for the next poll). Turning the option off leaves qBittorrent's setting as it is.
"""

from __future__ import annotations

import logging

from jellybit.config import QbittorrentConfig
from jellybit.core.ports import TorrentClient
from jellybit.errors import AdapterError

log = logging.getLogger(__name__)

SET, KEPT, FOREIGN, OFF, FAILED = "set", "kept", "foreign", "off", "failed"


class CompletionHook:
    """Makes qBittorrent run `completion_command` when a torrent finishes (if configured)."""

    def __init__(self, client: TorrentClient, config: QbittorrentConfig) -> None:
        self.client = client
        self.config = config
        self.outcome: str | None = None

    async def ensure(self) -> str:
        """Set the program unless another one is there; return what happened (set, kept, foreign, …)."""
        outcome = await self._ensure()
        if outcome != self.outcome:
            if outcome == SET:
                log.info("qBittorrent runs %r when a torrent finishes", self.config.completion_command)
            elif outcome == FOREIGN:
                log.warning("qBittorrent already runs another program when a torrent finishes; it is left "
                            "as it is, and finished torrents are found by polling (docs/qbittorrent.md)")
        self.outcome = outcome
        return outcome

    async def _ensure(self) -> str:
        if not self.config.completion_hook:
            return OFF
        command = self.config.completion_command
        try:
            preferences = await self.client.preferences()
            current = str(preferences.get("autorun_program") or "").strip()
            if current and current != command:
                return FOREIGN
            if current == command and preferences.get("autorun_enabled") is True:
                return KEPT
            await self.client.set_preferences({"autorun_enabled": True, "autorun_program": command})
        except AdapterError as exc:
            log.warning("cannot set qBittorrent's completion hook: %s", exc.message)
            return FAILED
        return SET
