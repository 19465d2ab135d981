"""`jellybit run` as a real process: it drives downloads, survives SIGKILL, stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from jellybit.adapters.store import Store
from jellybit.engine.ingest import ingest
from tests.support.qbittorrent import QbittorrentInstance, magnet, seeded_torrent, wait_for
from tests.support.services import free_port
from tests.support.worker_process import checked, process_env


def write_config(tmp_path: Path, qbittorrent: QbittorrentInstance) -> Path:
    """A config for one worker process: the test's qBittorrent, a private database and libraries."""
    for name in ("movies", "series"):
        (tmp_path / name).mkdir(exist_ok=True)
    config = tmp_path / "jellybit.toml"
    config.write_text(f"""
[qbittorrent]
url = "{qbittorrent.url}"
username = "{qbittorrent.username}"
password = "{qbittorrent.password}"
save_path = "{qbittorrent.data_dir}"

[paths]
downloads = "{qbittorrent.data_dir}"
movies = "{tmp_path / 'movies'}"
series = "{tmp_path / 'series'}"

[storage]
database = "{tmp_path / 'jellybit.db'}"

[mqtt]
url = "mqtt://127.0.0.1:{free_port()}"

[metadata.tvmaze]
enabled = false

[worker]
poll_interval = 0.1
source_miss_threshold = 3

[log]
level = "INFO"
""")
    return config


class WorkerProcess:
    """One `jellybit run` child process."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "jellybit", "--config", str(checked(self.config)),
                 "run"],
                stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=process_env(),
            )

    def signal(self, sig: int) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        return self.proc.wait(30)


@pytest.fixture
def worker_process(tmp_path: Path, qbittorrent: QbittorrentInstance) -> Iterator[WorkerProcess]:
    process = WorkerProcess(write_config(tmp_path, qbittorrent), tmp_path / "worker.log")
    yield process
    if process.proc is not None and process.proc.poll() is None:
        process.proc.kill()
        process.proc.wait(10)


def state_of(db: Path, download_id: str) -> str | None:
    """Read a download's state through a separate connection (as a second process would)."""
    with sqlite3.connect(db, timeout=5) as conn:
        row = conn.execute("SELECT state FROM download WHERE id = ?", (download_id,)).fetchone()
    return row[0] if row else None


def tagged(qbittorrent: QbittorrentInstance, tag: str) -> int:
    with qbittorrent.process.admin() as admin:
        return len(admin.get("torrents/info", params={"tag": tag}).json())


async def add(db: Path, **source: object) -> tuple[str, str]:
    """Ingest a source into the worker's database from outside the worker process."""
    store = Store(db)
    await store.open()
    try:
        result = await ingest(store, max_torrent_bytes=10_000_000, **source)  # type: ignore[arg-type]
        return result.download.id, result.download.qbt_tag
    finally:
        await store.close()


async def test_the_worker_process_survives_sigkill_and_stops_cleanly_on_sigterm(
    worker_process: WorkerProcess, qbittorrent: QbittorrentInstance, tmp_path: Path
) -> None:
    db = tmp_path / "jellybit.db"
    worker_process.start()
    wait_for(lambda: db.exists(), timeout=20)
    first, first_tag = await add(db, source=magnet(name="Slow.Magnet"))
    wait_for(lambda: state_of(db, first) == "downloading", timeout=20)

    assert worker_process.signal(signal.SIGKILL) == -signal.SIGKILL
    seeded = seeded_torrent(qbittorrent.data_dir, "While.Dead", {"a.mkv": 30_000})
    second, second_tag = await add(db, torrent=seeded.torrent)
    assert state_of(db, second) == "queued"

    worker_process.start()
    # No metadata provider is configured: a complete download ends in review.
    wait_for(lambda: state_of(db, second) == "review", timeout=30)
    await asyncio.sleep(0.5)               # several polls of the resumed worker
    assert state_of(db, first) == "downloading"
    assert tagged(qbittorrent, first_tag) == 1
    assert tagged(qbittorrent, second_tag) == 1

    assert worker_process.signal(signal.SIGTERM) == 0
    text = worker_process.log.read_text()
    assert '"message": "jellybit stopped"' in text
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        history = [r[0] for r in conn.execute(
            "SELECT to_state FROM state_transition WHERE download_id = ? ORDER BY created_at, id", (first,))]
    assert history == ["queued", "downloading"]
