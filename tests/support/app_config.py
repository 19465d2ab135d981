"""A worker's `Config` for tests that build the app in this process (`build_app`): a private database
and libraries under one folder, qBittorrent and the broker on closed loopback ports, TVMaze off, so
nothing leaves loopback unless a test points a section somewhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jellybit.config import (
    Config,
    MetadataConfig,
    MqttConfig,
    PathsConfig,
    QbittorrentConfig,
    StorageConfig,
    TvmazeConfig,
    WorkerConfig,
)
from tests.support.services import free_port


def loopback_config(root: Path, **sections: Any) -> Config:
    """The config under `root`; `sections` replace or add whole sections (`mqtt=`, `telegram=`, …)."""
    values: dict[str, Any] = {
        "storage": StorageConfig(database=root / "jellybit.db"),
        "qbittorrent": QbittorrentConfig(url=f"http://127.0.0.1:{free_port()}", timeout=1.0),
        "paths": PathsConfig(downloads=root / "dl", movies=root / "movies", series=root / "series"),
        "mqtt": MqttConfig(url=f"mqtt://127.0.0.1:{free_port()}"),
        "metadata": MetadataConfig(tvmaze=TvmazeConfig(enabled=False)),
        **sections,
    }
    return Config(**values)


def whole_config(root: Path, qbittorrent: Any, **sections: Any) -> Config:
    """For the whole product in one process: the test's real qBittorrent (its data folder the
    downloads), the libraries created under `root`, polls every 50 ms; `sections` as above."""
    paths = PathsConfig(downloads=qbittorrent.data_dir, movies=root / "movies", series=root / "series")
    for library in (paths.movies, paths.series):
        library.mkdir()
    values = {"qbittorrent": qbittorrent.config(), "paths": paths, "worker": WorkerConfig(poll_interval=0.05),
              **sections}
    return loopback_config(root, **values)
