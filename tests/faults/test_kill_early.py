"""kill -9 while a download recognized early waits: in review, and after a human's apply. A real
`jellybit run` process, real qbittorrent-nox and mosquitto, the fake TMDB; the CLI as the human.

After each restart the download is where it was (the question is not asked again, the decision is
not lost), and when the files arrive it is laid out as decided, once.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_metadata import Catalogue, FakeTitle, FakeTmdb
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent, wait_for
from tests.support.worker_process import WorkerProcess, run_cli, tmdb_worker

NAME = "The.Matrix.1080p.BluRay.x264"
RELOADED = "The Matrix Reloaded (2003) [tmdbid-604]"


@pytest.fixture
def early(tmp_path: Path, mosquitto: Broker, qbittorrent: QbittorrentInstance, fake_catalogue: Catalogue,
          fake_tmdb: FakeTmdb) -> Iterator[tuple[WorkerProcess, Path]]:
    """A worker whose TMDB knows two films called The Matrix, so a name without a year needs a human."""
    fake_catalogue.add(FakeTitle("movie", "The Matrix", 2031, tmdb_id=9603, slug="the-matrix-2031",
                                 overview="A remake.", network="Remake Pictures", country="GB"))
    with tmdb_worker(tmp_path, mosquitto.url, qbittorrent, fake_tmdb) as started:
        yield started


def shown(worker: WorkerProcess, ident: str) -> dict[str, Any]:
    """`jellybit show --json`: the download's detail."""
    answer = run_cli(worker.config, "show", ident, "--json")
    assert answer.returncode == 0, answer.stderr
    return json.loads(answer.stdout)["data"]


def restart(worker: WorkerProcess) -> None:
    """kill -9, then start it again and wait until it answers."""
    worker.kill()
    worker.start()
    wait_for(lambda: run_cli(worker.config, "list", "--timeout", "2").returncode == 0, timeout=60)


def resting(worker: WorkerProcess, ident: str, state: str) -> dict[str, Any]:
    """The detail once the download is in `state` with its files still downloading."""
    def probe() -> dict[str, Any] | None:
        detail = shown(worker, ident)
        download = detail["download"]
        return detail if download["state"] == state and download["awaiting_files"] else None
    return wait_for(probe, timeout=60)


def test_kill_9_in_review_and_after_an_apply_keeps_the_question_and_the_decision(
        early: tuple[WorkerProcess, Path], qbittorrent: QbittorrentInstance) -> None:
    worker, root = early
    seeded = seeded_torrent(root / "downloads", NAME, {f"{NAME}.mkv": 120_000})
    away = root / "away"
    shutil.move(seeded.content, away)               # qBittorrent gets the file list, not the bytes
    torrent = root / "matrix.torrent"
    torrent.write_bytes(seeded.torrent)
    added = run_cli(worker.config, "add", "--torrent", str(torrent))
    assert added.returncode == 0, added.stderr
    ident = added.stdout.split()[0]

    before = resting(worker, ident, "review")
    assert "still downloading" in run_cli(worker.config, "show", ident).stdout
    restart(worker)
    after = resting(worker, ident, "review")
    assert after["timeline"] == before["timeline"]        # not recognized or asked again

    chosen = run_cli(worker.config, "apply", ident, "--candidate", "3")
    assert chosen.returncode == 0, chosen.stderr
    resting(worker, ident, "applying")
    restart(worker)
    resting(worker, ident, "applying")
    assert not (root / "movies").exists() or not any((root / "movies").iterdir())

    shutil.move(away, seeded.content)
    with qbittorrent.process.admin() as admin:
        admin.post("torrents/recheck", data={"hashes": seeded.infohash_v1}).raise_for_status()
    wait_for(lambda: shown(worker, ident)["download"]["state"] == "done", timeout=60)
    detail = shown(worker, ident)
    assert [t["to"] for t in detail["timeline"]].count("review") == 1
    assert not detail["download"]["awaiting_files"]
    assert sorted(p.relative_to(root / "movies").as_posix() for p in (root / "movies").rglob("*.mkv")) == [
        f"{RELOADED}/{RELOADED}.mkv"]
