"""Two real qbittorrent-nox on loopback, one seeding a pack to the other: files complete one by one.

The seeder holds the content and completes it by hash check; the leecher is told the seeder's
address (`torrents/addPeers`: DHT, LSD and PeX are off) and downloads with a download limit,
sequentially, so the pack's files complete in order, seconds apart. File priorities, the `.!qB`
suffix and a folder for incomplete torrents (`temp_path`) are set per test on the leecher.
Both processes are stopped at the end of the module whatever happened (`qbittorrent_pair`), and
every torrent and preference a test changed is undone after it (`pair`).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.qbittorrent import QbittorrentInstance, QbittorrentProcess, SeededTorrent, seeded_torrent

DEFAULT_PREFERENCES = {"incomplete_files_ext": False, "temp_path_enabled": False}


@dataclass
class QbittorrentPair:
    """A seeder and a leecher; `share` puts a pack on the first and starts the second on it."""

    seeder: QbittorrentProcess
    leecher: QbittorrentProcess

    def start(self) -> None:
        """Start both (either may have been stopped by a test)."""
        self.seeder.start()
        self.leecher.start()

    def stop(self) -> None:
        """Stop both, each even when the other fails to stop."""
        try:
            self.seeder.stop()
        finally:
            self.leecher.stop()

    def instance(self, data_dir: Path) -> QbittorrentInstance:
        """The leecher as the code under test sees it (its save path = `data_dir`)."""
        p = self.leecher
        return QbittorrentInstance(p.url, p.username, p.password, data_dir, p)

    def preferences(self, **values: Any) -> None:
        """Set the leecher's application preferences (e.g. incomplete_files_ext, temp_path)."""
        with self.leecher.admin() as client:
            reply = client.post("app/setPreferences", data={"json": json.dumps(values)})
            reply.raise_for_status()

    def seed(self, name: str, files: dict[str, int | bytes], *, seed: int = 0) -> SeededTorrent:
        """Create the pack in the seeder's data folder and seed it (complete by hash check)."""
        folder = Path(tempfile.mkdtemp(prefix="seed-", dir=self.seeder.data_root))
        torrent = seeded_torrent(folder, name, files, seed=seed)
        with self.seeder.admin() as client:
            client.post("torrents/add", data={"savepath": str(folder), "paused": "false"},
                        files={"torrents": ("x.torrent", torrent.torrent, "application/x-bittorrent")})
            deadline = time.monotonic() + 30
            while True:
                found = client.get("torrents/info", params={"hashes": torrent.infohash_v1}).json()
                if found and found[0]["progress"] >= 1 and found[0]["state"] in ("uploading", "stalledUP"):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the seeder did not complete {name} by hash check")
                time.sleep(0.05)
        return torrent

    def add_paused(self, torrent: SeededTorrent, save_path: Path, *, skip: tuple[int, ...] = ()) -> None:
        """Add the torrent to the leecher paused (files in `skip` at priority 0), as a user would
        before handing it over; start it with `resume`."""
        with self.leecher.admin() as client:
            client.post("torrents/add", data={"savepath": str(save_path), "paused": "true"},
                        files={"torrents": ("x.torrent", torrent.torrent, "application/x-bittorrent")})
            deadline = time.monotonic() + 30
            while not client.get("torrents/files", params={"hash": torrent.infohash_v1}).is_success:
                if time.monotonic() > deadline:
                    raise RuntimeError("the leecher did not list the added torrent")
                time.sleep(0.05)
        if skip:
            self.file_priority(torrent, list(skip), 0)

    def resume(self, torrent: SeededTorrent) -> None:
        """Start the torrent on the leecher."""
        with self.leecher.admin() as client:
            client.post("torrents/resume", data={"hashes": torrent.infohash_v1}).raise_for_status()

    def connect(self, torrent: SeededTorrent) -> None:
        """Tell the leecher where the seeder is, until it has a peer (it forgets a refused address);
        waits for the torrent to be on the leecher first."""
        with self.leecher.admin() as client:
            deadline = time.monotonic() + 30
            while True:
                client.post("torrents/addPeers", data={"hashes": torrent.infohash_v1,
                                                       "peers": f"127.0.0.1:{self.seeder.torrent_port}"})
                info = client.get("torrents/info", params={"hashes": torrent.infohash_v1}).json()
                if info and (info[0]["num_seeds"] > 0 or info[0]["progress"] >= 1):
                    return
                if time.monotonic() > deadline:
                    raise RuntimeError("the leecher did not connect to the seeder")
                time.sleep(0.2)

    def wait_listed(self, torrent: SeededTorrent, within: float = 30.0) -> None:
        """Wait until the leecher lists the torrent (someone else, e.g. the worker, adds it)."""
        deadline = time.monotonic() + within
        while self.torrent(torrent) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the leecher never listed the torrent")
            time.sleep(0.05)

    def pace(self, torrent: SeededTorrent, *, limit: int, sequential: bool = True) -> None:
        """Limit the leecher's download speed for the torrent (bytes/s), sequential by default."""
        with self.leecher.admin() as client:
            client.post("torrents/setDownloadLimit",
                        data={"hashes": torrent.infohash_v1, "limit": str(limit)})
            info = client.get("torrents/info", params={"hashes": torrent.infohash_v1}).json()
            if info and bool(info[0].get("seq_dl")) != sequential:
                client.post("torrents/toggleSequentialDownload", data={"hashes": torrent.infohash_v1})

    def file_priority(self, torrent: SeededTorrent, indexes: list[int], priority: int) -> None:
        """Set the priority of some of the torrent's files on the leecher (0: do not download)."""
        with self.leecher.admin() as client:
            client.post("torrents/filePrio", data={"hash": torrent.infohash_v1,
                                                   "id": "|".join(str(i) for i in indexes),
                                                   "priority": str(priority)}).raise_for_status()

    def files(self, torrent: SeededTorrent) -> list[dict[str, Any]]:
        """The leecher's `torrents/files` answer, as qBittorrent sends it."""
        with self.leecher.admin() as client:
            return client.get("torrents/files", params={"hash": torrent.infohash_v1}).json()

    def torrent(self, torrent: SeededTorrent) -> dict[str, Any] | None:
        """The leecher's `torrents/info` entry for the torrent."""
        with self.leecher.admin() as client:
            found = client.get("torrents/info", params={"hashes": torrent.infohash_v1}).json()
        return found[0] if found else None

    def reset(self) -> None:
        """Remove every torrent from both; the leecher's preferences back to the defaults."""
        self.start()
        self.seeder.reset()
        self.leecher.reset()
        self.preferences(**DEFAULT_PREFERENCES)
        with self.leecher.admin() as client:
            client.post("transfer/setDownloadLimit", data={"limit": "0"})


@pytest.fixture(scope="module")
def qbittorrent_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QbittorrentPair]:
    """A seeder and a leecher for the module, both stopped at its end (even after a failure)."""
    root = tmp_path_factory.mktemp("qbt-pair")
    pair = QbittorrentPair(QbittorrentProcess(root / "seeder"), QbittorrentProcess(root / "leecher"))
    try:
        pair.start()
        yield pair
    finally:
        pair.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pair(qbittorrent_pair: QbittorrentPair) -> Iterator[QbittorrentPair]:
    """The module's pair, with every torrent and leecher preference a test changed undone after it."""
    qbittorrent_pair.start()
    yield qbittorrent_pair
    qbittorrent_pair.reset()
