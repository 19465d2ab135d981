"""Each outside service's health as `<base>/info` tells it: reachable, refused (a bad key or token),
unreachable, or not configured, always with what to do about it.

The worker builds these from what it saw (qBittorrent by its polls, the others by their pings); the
panel, Home Assistant and `jellybit healthcheck` only show them.
"""

from __future__ import annotations

from typing import Any

from jellybit.config import Config
from jellybit.core.providers import PROVIDERS
from jellybit.protocol import SystemStatus

OK, REFUSED, UNREACHABLE, OFF, STARTING = "ok", "refused", "unreachable", "not configured", "starting"

# Where each keyed service's secret goes, for the hints (a metadata provider's: the provider table).
_KEYS = {
    **{name: facts.key_setting for name, facts in PROVIDERS.items() if facts.key_setting},
    "llm": "llm.api_key (JELLYBIT_LLM_API_KEY)",
    "jellyfin": "jellyfin.api_key (JELLYBIT_JELLYFIN_API_KEY; Jellyfin: Dashboard → API Keys)",
    "telegram": "the bot token (JELLYBIT_TELEGRAM_TOKEN, from @BotFather)",
}


def _status(state: str, detail: str | None, hint: str | None = None, *, enabled: bool = True,
            version: str | None = None) -> SystemStatus:
    connected = {OK: True, REFUSED: False, UNREACHABLE: False}.get(state)
    return SystemStatus(enabled=enabled, connected=connected, version=version, detail=detail,
                        state=state, hint=hint)


EARLY_LAYOUT_HINT = ("to lay out each file as it completes, keep qBittorrent's folder for incomplete "
                     "torrents (Options → Downloads) on the filesystem of its save path, inside "
                     "paths.downloads, or turn it off (docs/qbittorrent.md, Early layout)")


def qbittorrent_status(config: Config, reachable: bool | None, error: str | None,
                       version: str | None = None, early_layout: str | None = None) -> SystemStatus:
    """qBittorrent as the last poll saw it (and, when it is reachable, why files wait for their
    whole torrent instead of being laid out as each completes)."""
    return qbittorrent_health(config.qbittorrent.url, reachable, error, version, early_layout)


def qbittorrent_health(url: str, reachable: bool | None, error: str | None, version: str | None = None,
                       early_layout: str | None = None) -> SystemStatus:
    """qBittorrent at `url` as the last poll saw it (for a face that holds only its URL: Telegram)."""
    if reachable is None:
        return _status(STARTING, "not polled yet", version=version)
    if reachable:
        if early_layout:
            return _status(OK, f"reachable at {url}; files are laid out when their torrent completes: "
                           f"{early_layout}", EARLY_LAYOUT_HINT, version=version)
        return _status(OK, f"reachable at {url}", version=version)
    if error and " refused" in error:
        return _status(REFUSED, error, "check qbittorrent.username and the password "
                       "(JELLYBIT_QBITTORRENT_PASSWORD) against qBittorrent's WebUI settings")
    return _status(UNREACHABLE, error or f"cannot reach {url}",
                   f"start qBittorrent, or set qbittorrent.url (now {url}) to where the worker reaches "
                   "its WebUI (in compose: not 127.0.0.1, which is the worker's own container)")


def provider_status(config: Config, name: str, service: Any | None) -> SystemStatus:
    """A metadata provider from its ping (`service`: an adapters ServiceStatus; None = not configured)."""
    section = getattr(config.metadata, name)
    if service is None or not section.enabled:
        facts = PROVIDERS[name]
        return _status(OFF, "no key" if facts.needs_key else "disabled", facts.off_hint, enabled=False)
    if service.ok:
        return _status(OK, service.message)
    if getattr(service, "refused", False):
        return _status(REFUSED, service.message, f"the key was refused: check {_KEYS[name]}")
    return _status(UNREACHABLE, service.message,
                   f"cannot reach {section.base_url}: check this machine's network or "
                   f"metadata.{name}.proxy; recognition waits for it and retries")


def llm_status(config: Config, *, ok: bool | None, message: str, refused: bool = False) -> SystemStatus:
    """The LLM server from its ping (`ok` None: the LLM is off)."""
    if not config.llm.enabled or ok is None:
        return _status(OFF, "disabled", "optional: set llm.enabled = true and llm.base_url to an "
                       "OpenAI-compatible server (docs/llm.md)", enabled=False)
    if ok:
        return _status(OK, message)
    if refused:
        return _status(REFUSED, message, f"the key was refused: check {_KEYS['llm']}")
    return _status(UNREACHABLE, message, f"start the LLM server at llm.base_url ({config.llm.base_url}) "
                   "or fix that URL, or set llm.enabled = false; recognition goes on without it")


def jellyfin_status(config: Config, service: Any | None) -> SystemStatus:
    """Jellyfin from its ping (None or disabled: not configured)."""
    if service is None or not config.jellyfin.enabled:
        return _status(OFF, "disabled", "optional: set jellyfin.enabled = true, jellyfin.url and "
                       f"{_KEYS['jellyfin']} to refresh the library after each download", enabled=False)
    if service.ok:
        return _status(OK, service.message, version=service.version)
    if getattr(service, "refused", False):
        return _status(REFUSED, service.message, f"the key was refused: check {_KEYS['jellyfin']}")
    return _status(UNREACHABLE, service.message,
                   f"start Jellyfin or fix jellyfin.url ({config.jellyfin.url})")


MISCONFIGURED = "misconfigured"     # reachable, but set up so that it cannot do its part (a warning)


def jellyfin_uncovered(status: SystemStatus, problems: list[str]) -> SystemStatus:
    """Jellyfin answering while a library root is in no Jellyfin library of its type: a warning, not ok."""
    if not problems:
        return status
    detail = "; ".join(part for part in (status.detail, *problems) if part)
    if status.state != OK:           # down or refused says more; the roots are named all the same
        return status.model_copy(update={"detail": detail})
    return status.model_copy(update={"detail": detail, "state": MISCONFIGURED, "hint": (
        "add each library root to a Jellyfin library of its type, or map Jellyfin's path for it in "
        "jellyfin.path_map (docs/jellyfin.md); until then Jellyfin will not list what Jellybit lays out")})


def telegram_status(config: Config, *, running: bool, error: str | None, refused: bool) -> SystemStatus:
    """The bot from its receiving loop (`running`: it has reached Telegram at least once)."""
    if not config.telegram.enabled:
        return _status(OFF, "disabled", "optional: docs/telegram.md", enabled=False)
    if refused:
        return _status(REFUSED, error or "Telegram refused the bot token",
                       f"Telegram refused {_KEYS['telegram']}: check it")
    if error:
        return _status(UNREACHABLE, error, f"cannot reach {config.telegram.base_url}: check this "
                       "machine's network or telegram.proxy")
    if not running:
        return _status(STARTING, "connecting")
    return _status(OK, "receiving")
