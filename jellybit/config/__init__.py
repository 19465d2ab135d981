"""Configuration: one TOML file validated into pydantic models (`sections.py`, one per table); every key may
also come from the environment (`JELLYBIT_<SECTION>_<KEY>`), which wins over the file."""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel, Field, ValidationError

from jellybit.config.sections import (
    JellyfinConfig,
    JellyfinPathMapping,
    KeyedProvider,
    LayoutConfig,
    LlmConfig,
    LogConfig,
    MetadataConfig,
    MqttConfig,
    MqttTlsConfig,
    PanelConfig,
    PathMapping,
    PathsConfig,
    QbittorrentConfig,
    RecognitionConfig,
    Section,
    StorageConfig,
    TelegramConfig,
    TmdbConfig,
    TvdbConfig,
    TvmazeConfig,
    UpgradePolicy,
    WorkerConfig,
)
from jellybit.errors import ConfigError

__all__ = [
    "ACCOUNT_ENV",
    "CONFIG_ENV",
    "ENV_PREFIX",
    "SECRET_ENV",
    "Config",
    "JellyfinConfig",
    "JellyfinPathMapping",
    "KeyedProvider",
    "LayoutConfig",
    "LlmConfig",
    "LogConfig",
    "MetadataConfig",
    "MqttConfig",
    "MqttTlsConfig",
    "PanelConfig",
    "PathMapping",
    "PathsConfig",
    "QbittorrentConfig",
    "RecognitionConfig",
    "Section",
    "StorageConfig",
    "TelegramConfig",
    "TmdbConfig",
    "TvdbConfig",
    "TvmazeConfig",
    "UpgradePolicy",
    "WorkerConfig",
    "config_path",
    "env_key",
    "env_overrides",
    "load_config",
    "parse_config",
]

CONFIG_ENV = "JELLYBIT_CONFIG"


class Config(Section):
    """The whole configuration file."""

    qbittorrent: QbittorrentConfig = Field(default_factory=QbittorrentConfig, description="qBittorrent.")
    paths: PathsConfig = Field(default_factory=PathsConfig, description="Paths.")
    storage: StorageConfig = Field(default_factory=StorageConfig, description="Storage.")
    layout: LayoutConfig = Field(default_factory=LayoutConfig, description="Layout.")
    mqtt: MqttConfig = Field(default_factory=MqttConfig, description="MQTT.")
    llm: LlmConfig = Field(default_factory=LlmConfig, description="LLM.")
    metadata: MetadataConfig = Field(default_factory=MetadataConfig, description="Metadata providers.")
    jellyfin: JellyfinConfig = Field(default_factory=JellyfinConfig, description="Jellyfin.")
    worker: WorkerConfig = Field(default_factory=WorkerConfig, description="Worker.")
    recognition: RecognitionConfig = Field(default_factory=RecognitionConfig, description="Recognition.")
    telegram: TelegramConfig = Field(default_factory=TelegramConfig, description="Telegram.")
    panel: PanelConfig = Field(default_factory=PanelConfig, description="Panel.")
    log: LogConfig = Field(default_factory=LogConfig, description="Logging.")


# Every key can come from the environment: JELLYBIT_<SECTION>_<KEY> (JELLYBIT_MQTT_URL,
# JELLYBIT_METADATA_TMDB_API_KEY, JELLYBIT_MQTT_TLS_CA_FILE); the environment wins over the file.
# One config file then serves the worker, the panel and the CLI, each with its own account and
# secrets (docker-compose.yml, scripts/run-local). The secrets, named here for the docs and tests:
ENV_PREFIX = "JELLYBIT_"
SECRET_ENV: dict[str, tuple[str, ...]] = {
    "JELLYBIT_QBITTORRENT_PASSWORD": ("qbittorrent", "password"),
    "JELLYBIT_MQTT_PASSWORD": ("mqtt", "password"),
    "JELLYBIT_LLM_API_KEY": ("llm", "api_key"),
    "JELLYBIT_METADATA_TMDB_API_KEY": ("metadata", "tmdb", "api_key"),
    "JELLYBIT_METADATA_TVDB_API_KEY": ("metadata", "tvdb", "api_key"),
    "JELLYBIT_METADATA_TVDB_PIN": ("metadata", "tvdb", "pin"),
    "JELLYBIT_JELLYFIN_API_KEY": ("jellyfin", "api_key"),
    "JELLYBIT_TELEGRAM_TOKEN": ("telegram", "token"),
    "JELLYBIT_PANEL_PASSWORD": ("panel", "password"),
    "JELLYBIT_PANEL_STORAGE_SECRET": ("panel", "storage_secret"),
}
ACCOUNT_ENV: dict[str, tuple[str, ...]] = {
    "JELLYBIT_MQTT_USERNAME": ("mqtt", "username"),
}


def _section_model(annotation: Any) -> type[BaseModel] | None:
    for candidate in (annotation, *get_args(annotation)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def env_key(name: str, model: type[BaseModel] | None = None) -> tuple[str, ...] | None:
    """The key path a `JELLYBIT_<SECTION>_<KEY>` variable sets, or None when it names no key."""
    if model is None:
        if not name.startswith(ENV_PREFIX):
            return None
        name, model = name[len(ENV_PREFIX):].lower(), Config
    for field_name, field in model.model_fields.items():
        sub = _section_model(field.annotation)
        is_table = sub is not None and get_origin(field.annotation) is not list
        if name == field_name and not is_table and model is not Config:
            return (field_name,)
        if is_table and name.startswith(field_name + "_"):
            rest = env_key(name[len(field_name) + 1:], sub)
            if rest is not None:
                return (field_name, *rest)
    return None


def _env_value(raw: str, annotation: Any) -> Any:
    # Lists (allowed_user_ids, path_map) are JSON; a plain `a,b` is a list of strings too.
    if list in (get_origin(annotation), *(get_origin(a) for a in get_args(annotation))):
        try:
            return json.loads(raw)
        except ValueError:
            return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def _field_at(path: tuple[str, ...]) -> Any:
    model: Any = Config
    for part in path[:-1]:
        model = _section_model(model.model_fields[part].annotation)
    return model.model_fields[path[-1]].annotation


def env_overrides(env: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The variables of `env` that set a config key (an empty one sets nothing) -> the key path."""
    found = {}
    for name, value in env.items():
        if value == "":
            continue
        path = env_key(name)
        if path is not None:
            found[name] = path
    return found


def _apply_env(data: dict[str, Any], env: Mapping[str, str]) -> dict[str, Any]:
    for name, path in env_overrides(env).items():
        node = data
        for key in path[:-1]:
            child = node.get(key)
            if not isinstance(child, dict):
                child = {}
                node[key] = child
            node = child
        node[path[-1]] = _env_value(env[name], _field_at(path))
    return data


def _describe(error: ValidationError, source: str, env: Mapping[str, str]) -> str:
    lines = [f"invalid configuration in {source}:"]
    from_env = {path: name for name, path in env_overrides(env).items()}
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = "unknown key"
        origin = next((name for path, name in from_env.items()
                       if tuple(map(str, item["loc"][:len(path)])) == path), None)
        lines.append(f"  {key}: {message}" + (f" (from {origin})" if origin else ""))
    return "\n".join(lines)


def parse_config(text: str, source: str = "<string>", env: dict[str, str] | None = None) -> Config:
    """Parse TOML text into a Config; errors name the key and the source."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from exc
    environment = dict(os.environ if env is None else env)
    data = _apply_env(data, environment)
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source, environment)) from exc


def config_path(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """Resolve the config file from --config, then JELLYBIT_CONFIG; None = built-in defaults."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(CONFIG_ENV)
    return Path(env) if env else None


def load_config(path: str | os.PathLike[str] | None = None, env: dict[str, str] | None = None) -> Config:
    """Load the configuration file (or defaults when none is given)."""
    resolved = config_path(path)
    if resolved is None:
        return parse_config("", "<defaults>", env)
    try:
        text = resolved.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read configuration file {resolved}: {exc.strerror}") from exc
    return parse_config(text, str(resolved), env)
