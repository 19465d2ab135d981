"""Whether qBittorrent's settings let files be laid out as they complete, read from a real
qbittorrent-nox: said once on the worker's status (and so `info`, the panel and `healthcheck`)."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.cli.health import service_checks
from jellybit.config import Config, PathsConfig
from jellybit.protocol import InfoPayload
from jellybit.transports import service_health as health
from tests.support.engine import EngineFactory
from tests.support.qbittorrent_pair import QbittorrentPair
from tests.support.services import unavailable


def _same_filesystem(a: Path, b: Path) -> bool:
    return a.stat().st_dev == b.stat().st_dev


def _second_filesystem(downloads: Path) -> None:
    """/dev/shm must be another filesystem than the downloads: skip locally, fail in CI."""
    if not Path("/dev/shm").is_dir() or _same_filesystem(Path("/dev/shm"), downloads):
        unavailable("a second filesystem: /dev/shm is missing or on the downloads' filesystem here")


@pytest.fixture
def library(pair: QbittorrentPair, store, tmp_path: Path) -> LayoutEngine:
    downloads = pair.leecher.data_root.resolve()
    paths = PathsConfig(downloads=downloads, movies=tmp_path / "movies", series=tmp_path / "series")
    return LayoutEngine(store, paths)


async def test_an_incomplete_folder_on_another_filesystem_turns_early_layout_off(
    pair: QbittorrentPair, library: LayoutEngine, make_engine: EngineFactory, caplog,
) -> None:
    _second_filesystem(pair.leecher.data_root)
    engine = await make_engine(pair.instance(pair.leecher.data_root).config(), layouter=library)
    same = pair.leecher.data_root.resolve() / "incomplete"
    pair.preferences(temp_path_enabled=True, temp_path=str(same))
    assert await engine.worker.poll_once()
    assert engine.worker.early.safe
    assert (await engine.commands.status()).qbittorrent.early_layout is None

    with tempfile.TemporaryDirectory(dir="/dev/shm") as elsewhere:
        pair.preferences(temp_path_enabled=True, temp_path=elsewhere)
        caplog.set_level(logging.WARNING, logger="jellybit.engine.early_layout")
        await engine.worker.early.check()
        await engine.worker.early.check()          # said once, not at every check
        said = [r for r in caplog.records if "laid out only when their torrent completes" in r.message]
        assert len(said) == 1
        assert not engine.worker.early.safe
        status = (await engine.commands.status()).qbittorrent
        assert "another filesystem" in status.early_layout
        assert elsewhere in status.early_layout

        # The worker's info (what the panel's status page and `jellybit healthcheck` show).
        system = health.qbittorrent_status(Config(), True, None, status.version, status.early_layout)
        assert system.state == "ok"
        assert "laid out when their torrent completes" in system.detail
        assert system.hint == health.EARLY_LAYOUT_HINT
        info = InfoPayload(version="t", started_at="t", qbittorrent=system)
        (check,) = [c for c in service_checks(info) if c.name == "qbittorrent"]
        assert check.ok          # a warning, not a failed health check
        assert "another filesystem" in check.detail
        assert "Early layout" in check.detail

    pair.preferences(temp_path_enabled=False)
    await engine.worker.early.check()
    assert engine.worker.early.safe
    assert (await engine.commands.status()).qbittorrent.early_layout is None


async def test_an_incomplete_folder_outside_downloads_turns_it_off(
    pair: QbittorrentPair, library: LayoutEngine, make_engine: EngineFactory,
) -> None:
    engine = await make_engine(pair.instance(pair.leecher.data_root).config(), layouter=library)
    outside = pair.leecher.root.resolve() / "elsewhere"
    pair.preferences(temp_path_enabled=True, temp_path=str(outside))
    await engine.worker.poll_once()
    assert "outside paths.downloads" in (await engine.commands.status()).qbittorrent.early_layout
