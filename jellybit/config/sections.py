"""The configuration's sections: one pydantic model per TOML table (`jellybit.config` assembles them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from jellybit.core.addresses import AllowList
from jellybit.errors import ConfigError


class Section(BaseModel):
    """Base of every section: unknown keys are errors, values are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _opt_secret(description: str) -> Any:
    return Field(default=None, description=description)


class QbittorrentConfig(Section):
    """How to reach qBittorrent's WebUI API."""

    url: str = Field("http://127.0.0.1:8080", description="WebUI base URL.")
    username: str = Field("admin", description="WebUI user name.")
    password: SecretStr | None = _opt_secret(
        "WebUI password (env JELLYBIT_QBITTORRENT_PASSWORD). Empty when localhost auth is off."
    )
    category: str = Field("jellybit", description="Category given to every torrent Jellybit adds; "
                          "torrents added by hand under it are adopted.")
    tag_prefix: str = Field("jellybit-", description="Prefix of the per-download tag (prefix + id).")
    save_path: str | None = Field(None, description="Save path for added torrents, as qBittorrent "
                                  "sees it; empty = qBittorrent's default.")
    completion_hook: bool = Field(False, description="Set qBittorrent's 'Run external program on "
                                  "torrent finished' to `completion_command`, so a finished torrent "
                                  "is picked up at once instead of at the next poll.")
    completion_command: str = Field("jellybit notify %I", min_length=1, max_length=1000,
                                    description="The program qBittorrent runs (on its machine) when a "
                                    "torrent finishes; %I is the torrent's infohash. It must reach the "
                                    "broker: `jellybit notify %I` or `mosquitto_pub -h BROKER -t "
                                    "jellybit/request/notify -m %I`.")
    timeout: float = Field(10.0, gt=0, description="HTTP timeout in seconds.")
    verify_tls: bool = Field(True, description="Verify the WebUI's TLS certificate (https URLs).")
    allow_private_hosts: list[str] = Field(default_factory=list, description="Hosts (names, addresses "
                                           "or networks such as 192.168.1.0/24) that a source's URL, "
                                           "trackers, web seeds and peers may point to although they are "
                                           "not public: a tracker of your own. Everything else on "
                                           "loopback, private, link-local or multicast addresses is "
                                           "refused.")

    @field_validator("allow_private_hosts")
    @classmethod
    def _allow_list(cls, value: list[str]) -> list[str]:
        AllowList.parse(value)      # raises ValueError naming the bad entry
        return value


class PathMapping(Section):
    """One prefix translation from qBittorrent's paths to this machine's paths."""

    qbittorrent: str = Field(description="Path prefix as qBittorrent reports it.")
    local: str = Field(description="The same directory as Jellybit sees it.")


class PathsConfig(Section):
    """Where downloads are and where the libraries are."""

    downloads: Path = Field(Path("/srv/media/downloads"), description="Where qBittorrent saves "
                            "data (as Jellybit sees it). Never written to.")
    movies: Path = Field(Path("/srv/media/movies"), description="Jellyfin movies library root.")
    series: Path = Field(Path("/srv/media/series"), description="Jellyfin shows library root.")
    path_map: list[PathMapping] = Field(default_factory=list, description="Translate qBittorrent's "
                                        "paths (e.g. inside its container) to local ones.")


UpgradePolicy = Literal["ask", "keep_both", "replace_if_better"]


class LayoutConfig(Section):
    """What to do with a better (or another) copy of a film or episode already in the library."""

    upgrades: UpgradePolicy = Field("ask", description="When a new download's target is held by "
                                    "another download's file of the same film or episode: ask (review "
                                    "with Keep both / Replace / Skip), keep_both (lay the new copy as a "
                                    "Jellyfin version beside it), or replace_if_better (replace the old "
                                    "library link when the new copy is better by resolution, then source, "
                                    "then a same-group REPACK/PROPER; skip it when it is not better; ask "
                                    "when the names do not tell). The old download is never touched.")


class StorageConfig(Section):
    """The SQLite database."""

    database: Path = Field(Path("/var/lib/jellybit/jellybit.db"), description="SQLite file path.")


class MqttTlsConfig(Section):
    """TLS for the broker connection (used when the URL scheme is mqtts)."""

    ca_file: Path | None = Field(None, description="CA bundle; empty = system trust store.")
    cert_file: Path | None = Field(None, description="Client certificate (mutual TLS).")
    key_file: Path | None = Field(None, description="Client key (mutual TLS).")
    insecure: bool = Field(False, description="Skip hostname verification (testing only).")


class MqttConfig(Section):
    """The MQTT bus."""

    url: str = Field("mqtt://127.0.0.1:1883", description="Broker URL: mqtt://host:port or "
                     "mqtts://host:port.")
    username: str | None = Field(None, description="Broker user name.")
    password: SecretStr | None = _opt_secret("Broker password (env JELLYBIT_MQTT_PASSWORD).")
    client_id: str = Field("jellybit-worker", description="MQTT client identifier.")
    base_topic: str = Field("jellybit", description="Prefix of every Jellybit topic.")
    discovery_prefix: str = Field("homeassistant", description="Home Assistant discovery prefix.")
    discovery: bool = Field(True, description="Publish Home Assistant discovery.")
    keepalive: int = Field(30, gt=0, description="Keepalive interval in seconds.")
    retention_hours: float = Field(72.0, ge=0, description="How long a settled download keeps "
                                   "its retained topic before it is cleared.")
    max_payload_bytes: int = Field(16 * 1024 * 1024, gt=0, description="Largest request payload "
                                   "accepted (a base64 .torrent must fit).")
    response_prefix: str | None = Field(None, description="Topic prefix every response must start "
                                        "with; an MQTT 5 response topic outside it is refused. "
                                        "Empty = <base_topic>/response/.")
    queue_per_client: int = Field(16, ge=1, le=10_000, description="Requests one client (one response "
                                  "topic) may have waiting or running; past it the answer is `busy`.")
    queue_total: int = Field(256, ge=1, le=100_000, description="Requests waiting or running in all; "
                             "past it the answer is `busy`.")
    tls: MqttTlsConfig = Field(default_factory=MqttTlsConfig, description="TLS options.")

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if not value.startswith(("mqtt://", "mqtts://")):
            raise ValueError("must start with mqtt:// or mqtts://")
        return value

    @field_validator("response_prefix")
    @classmethod
    def _prefix(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip("/") or any(c in value for c in "+#\0")):
            raise ValueError("must be a topic prefix without wildcards, such as jellybit/response/")
        return value or None


class LlmConfig(Section):
    """Any OpenAI-compatible chat completions endpoint (Ollama, llama.cpp, LM Studio, OpenAI)."""

    enabled: bool = Field(False, description="Use the LLM in recognition.")
    base_url: str = Field("http://127.0.0.1:11434/v1", description="API base URL (ends in /v1).")
    model: str = Field("qwen2.5:7b-instruct", description="Model name.")
    api_key: SecretStr | None = _opt_secret("API key (env JELLYBIT_LLM_API_KEY); any value for "
                                            "local servers.")
    timeout: float = Field(120.0, gt=0, description="Request timeout in seconds.")
    max_prompt_files: int = Field(300, gt=0, description="File lines in the prompt before runs "
                                  "of sibling episodes are collapsed.")


class KeyedProvider(Section):
    """A provider that needs a key: unless `enabled` is set, it is on exactly when a key is given."""

    @model_validator(mode="before")
    @classmethod
    def _on_with_a_key(cls, data: Any) -> Any:
        # So that JELLYBIT_METADATA_TMDB_API_KEY alone (docker compose, run-local) turns TMDB on.
        if isinstance(data, dict) and data.get("enabled") is None:
            key = data.get("api_key")
            value = key.get_secret_value() if isinstance(key, SecretStr) else key
            return {**data, "enabled": bool(value)}
        return data


class TmdbConfig(KeyedProvider):
    """TMDB v3."""

    enabled: bool = Field(False, description="Use TMDB. Unset: on when an api_key is given (here or in "
                          "the environment).")
    api_key: SecretStr | None = _opt_secret("v3 API key or v4 read token (env "
                                            "JELLYBIT_METADATA_TMDB_API_KEY).")
    base_url: str = Field("https://api.themoviedb.org/3", description="API base URL.")
    image_base_url: str = Field("https://image.tmdb.org/t/p/w342", description="Poster URL prefix.")
    language: str = Field("en-US", description="Language of titles and overviews.")
    proxy: str | None = Field(None, description="HTTP(S) proxy URL for this provider.")
    timeout: float = Field(15.0, gt=0, description="Request timeout in seconds.")


class TvdbConfig(KeyedProvider):
    """TVDB v4."""

    enabled: bool = Field(False, description="Use TVDB. Unset: on when an api_key is given (here or in "
                          "the environment).")
    api_key: SecretStr | None = _opt_secret("Project API key (env JELLYBIT_METADATA_TVDB_API_KEY).")
    pin: SecretStr | None = _opt_secret("Subscriber PIN, if the key needs one "
                                        "(env JELLYBIT_METADATA_TVDB_PIN).")
    base_url: str = Field("https://api4.thetvdb.com/v4", description="API base URL.")
    proxy: str | None = Field(None, description="HTTP(S) proxy URL for this provider.")
    timeout: float = Field(15.0, gt=0, description="Request timeout in seconds.")


class TvmazeConfig(Section):
    """TVMaze (no key needed, so on by default: without a provider nothing is ever confirmed)."""

    enabled: bool = Field(True, description="Use TVMaze (on by default; it needs no key).")
    base_url: str = Field("https://api.tvmaze.com", description="API base URL.")
    proxy: str | None = Field(None, description="HTTP(S) proxy URL for this provider.")
    timeout: float = Field(15.0, gt=0, description="Request timeout in seconds.")


class MetadataConfig(Section):
    """Metadata providers, each optional."""

    tmdb: TmdbConfig = Field(default_factory=TmdbConfig, description="TMDB v3.")
    tvdb: TvdbConfig = Field(default_factory=TvdbConfig, description="TVDB v4.")
    tvmaze: TvmazeConfig = Field(default_factory=TvmazeConfig, description="TVMaze.")
    cache_hours: float = Field(24.0, ge=0, description="How long provider answers are cached.")


class JellyfinPathMapping(Section):
    """One prefix translation from Jellyfin's paths (inside its container) to this machine's paths."""

    jellyfin: str = Field(description="Path prefix as Jellyfin sees it (a library folder's location).")
    local: str = Field(description="The same directory as Jellybit sees it.")


class JellyfinConfig(Section):
    """Ask Jellyfin to rescan after a layout, check its libraries, and confirm it picked the download up."""

    enabled: bool = Field(False, description="Send POST /Library/Refresh after a download is done.")
    url: str = Field("http://127.0.0.1:8096", description="Jellyfin base URL.")
    api_key: SecretStr | None = _opt_secret("API key (env JELLYBIT_JELLYFIN_API_KEY).")
    debounce_seconds: float = Field(10.0, ge=0, description="Coalesce refreshes within this window.")
    timeout: float = Field(10.0, gt=0, description="Request timeout in seconds.")
    public_url: str | None = Field(None, description="Jellyfin's address as people open it (links to "
                                   "items); empty = `url`.")
    path_map: list[JellyfinPathMapping] = Field(default_factory=list, description="Translate Jellyfin's "
                                                "library paths (e.g. inside its container) to local ones.")
    confirm: bool = Field(True, description="After a layout, look the download up in Jellyfin and keep "
                          "its item id.")
    confirm_within_seconds: float = Field(300.0, gt=0, description="Warn when Jellyfin has not picked a "
                                          "download up this long after it was laid out.")
    check_interval: float = Field(15.0, gt=0, description="Seconds between two look-ups of the downloads "
                                  "Jellyfin has not confirmed yet.")


class WorkerConfig(Section):
    """The worker loop."""

    poll_interval: float = Field(2.0, gt=0, description="Seconds between qBittorrent polls.")
    fast_poll_interval: float = Field(0.25, gt=0, description="Seconds between polls while a download "
                                      "is near completion (see near_completion_eta).")
    near_completion_eta: float = Field(10.0, ge=0, description="A download whose ETA is at most this "
                                       "many seconds is near completion: poll every fast_poll_interval "
                                       "(0 = never poll faster).")
    early_layout: bool = Field(True, description="Lay out each file of a decided download as soon as "
                               "qBittorrent has all its pieces, while the rest still downloads (off by "
                               "itself when qBittorrent's settings make that unsafe: docs/qbittorrent.md).")
    file_poll_interval: float = Field(0.5, gt=0, description="Seconds between polls while a decided "
                                      "download is downloading, so a completed file reaches the library "
                                      "soon (early_layout).")
    stall_timeout: float = Field(6 * 3600.0, gt=0, description="Fail a download whose progress "
                                 "has not moved for this many seconds.")
    metadata_timeout: float = Field(3600.0, gt=0, description="Fail a magnet whose metadata has "
                                    "not arrived after this many seconds.")
    source_miss_threshold: int = Field(5, ge=1, description="Consecutive polls a torrent may be "
                                       "missing from qBittorrent before the download fails.")
    retry_max_backoff: float = Field(60.0, gt=0, description="Longest wait between attempts to "
                                     "reach qBittorrent.")
    reconcile_interval: float = Field(3600.0, gt=0, description="Seconds between reconciliations "
                                      "of done downloads.")
    provider_retry: float = Field(60.0, gt=0, description="After a metadata provider outage sent a "
                                  "download to review, seconds until it is recognized again by itself "
                                  "(doubling on each failure).")
    provider_retry_max: float = Field(3600.0, gt=0, description="Longest wait between those attempts.")
    max_torrent_bytes: int = Field(10 * 1024 * 1024, gt=0, description="Largest .torrent accepted.")
    parse_timeout: float = Field(10.0, gt=0, description="Seconds a .torrent may take to read before "
                                 "it is refused (it is read off the event loop).")
    parse_memory_mib: int = Field(128, ge=16, le=65536, description="MiB of memory reading one .torrent "
                                  "may take (one is read at a time); past it the file is refused.")
    restart_backoff_max: float = Field(60.0, gt=0, description="Longest wait before a crashed "
                                       "background loop (poll, MQTT) is started again.")
    max_restarts: int = Field(10, ge=1, description="Consecutive crashes of one background loop after "
                              "which the worker exits with status 1, so systemd or compose restart it.")
    adopt: bool = Field(True, description="Adopt torrents added by hand under the category.")
    recognize_early: bool = Field(True, description="Recognize a download as soon as qBittorrent lists "
                                  "its files, and ask for a review while it downloads (false: only once "
                                  "it is complete).")


class RecognitionConfig(Section):
    """Confidence thresholds (distances: 0 = perfect)."""

    strong_distance: float = Field(0.10, ge=0, le=1, description="At or below this distance "
                                   "(with a confirmed match and no blocker) a layout is automatic.")
    medium_distance: float = Field(0.30, ge=0, le=1, description="At or below: medium "
                                   "recommendation (review, candidate preselected).")
    low_distance: float = Field(0.60, ge=0, le=1, description="At or below: low recommendation.")
    min_margin: float = Field(0.15, ge=0, le=1, description="Distance the best candidate must be "
                              "ahead of the runner-up to count as a clear winner.")


class TelegramConfig(Section):
    """The Telegram bot: add from a chat, get pinged, decide from the phone (docs/telegram.md)."""

    enabled: bool = Field(False, description="Run the bot inside the worker.")
    token: SecretStr | None = _opt_secret("Bot token from @BotFather (env JELLYBIT_TELEGRAM_TOKEN).")
    allowed_user_ids: list[int] = Field(default_factory=list, description="Users allowed to talk "
                                        "to the bot; empty = nobody.")
    chat_ids: list[int] = Field(default_factory=list, description="Chats that get pings (review, "
                                "done, failed); empty = each allowed user's private chat with the bot.")
    base_url: str = Field("https://api.telegram.org", description="Bot API base URL (a local Bot API "
                          "server, or a test fake).")
    proxy: str | None = Field(None, description="HTTP(S) or SOCKS proxy URL for the Bot API.")
    poll_timeout: int = Field(30, ge=1, le=50, description="Long-polling wait in seconds (getUpdates).")
    webhook_url: str | None = Field(None, description="Public HTTPS URL Telegram posts updates to; "
                                    "empty = long polling (no public URL needed).")
    webhook_listen: str = Field("127.0.0.1", description="Address the webhook receiver listens on "
                                "(behind your reverse proxy).")
    webhook_port: int = Field(8443, gt=0, lt=65536, description="Port the webhook receiver listens on.")
    rate_limit_per_minute: int = Field(20, ge=1, description="Messages and button presses one user "
                                       "may send per minute; more are ignored.")
    defer_hours: float = Field(24.0, gt=0, le=24 * 365, description="How long Defer postpones a "
                               "review; the bot reminds you then.")

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("webhook_url")
    @classmethod
    def _https(cls, value: str | None) -> str | None:
        if value and not value.startswith("https://"):
            raise ValueError("must start with https:// (Telegram posts only to HTTPS)")
        return value or None

    def required_token(self) -> str:
        """The bot token, for the process that runs the bot; ConfigError when it is missing."""
        token = self.token.get_secret_value().strip() if self.token is not None else ""
        if not token:
            raise ConfigError("telegram.enabled is true, so the worker (which runs the bot) needs a bot "
                              "token: set telegram.token or JELLYBIT_TELEGRAM_TOKEN in the worker's "
                              "environment (the panel and the CLI do not need it)")
        return token


class PanelConfig(Section):
    """The NiceGUI panel."""

    host: str = Field("127.0.0.1", description="Listen address.")
    port: int = Field(8099, gt=0, lt=65536, description="Listen port.")
    base_url: str = Field("http://127.0.0.1:8099", description="Public URL, used in links sent "
                          "by notifications.")
    username: str | None = Field(None, description="Login user; required unless `open` is true.")
    password: SecretStr | None = _opt_secret("Login password (env JELLYBIT_PANEL_PASSWORD).")
    storage_secret: SecretStr | None = _opt_secret("Session cookie secret "
                                                   "(env JELLYBIT_PANEL_STORAGE_SECRET).")
    request_timeout: float = Field(10.0, gt=0, description="Seconds to wait for a response.")
    open: bool = Field(False, description="Serve the panel without a login (a trusted network only); "
                       "a warning is logged and shown on the status page. Without it the panel needs "
                       "`username` and `password`.")


class LogConfig(Section):
    """Logging."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    format: Literal["json", "text"] = Field("json", description="json = one JSON object per line.")
