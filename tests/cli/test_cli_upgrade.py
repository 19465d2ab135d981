"""The CLI and a better copy: `add --wait` ends in review saying what the library has and the three
commands; `upgrade ID replace` lays it; `undo` brings the old copy back. A real worker process, real
qBittorrent and mosquitto, the fake TMDB."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fake_metadata import FakeTmdb
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentInstance, seeded_torrent, wait_for
from tests.support.worker_process import WorkerProcess, run_cli, tmdb_worker

OLD = "The.Matrix.1999.1080p.WEB-DL.DDP5.1.H.264-NTb"
NEW = "The.Matrix.1999.2160p.UHD.BluRay.REMUX.HDR.HEVC-FGT"
TARGET = Path("The Matrix (1999) [tmdbid-603]") / "The Matrix (1999) [tmdbid-603].mkv"


@pytest.fixture
def worker(tmp_path: Path, mosquitto: Broker, qbittorrent: QbittorrentInstance,
           fake_tmdb: FakeTmdb) -> Iterator[tuple[WorkerProcess, Path]]:
    """A worker with the default `layout.upgrades = "ask"`."""
    with tmdb_worker(tmp_path, mosquitto.url, qbittorrent, fake_tmdb) as started:
        yield started


def _add(worker: WorkerProcess, root: Path, name: str, seed: int) -> tuple[str, str]:
    seeded = seeded_torrent(root / "downloads", name, {f"{name}.mkv": 120_000 + seed}, seed=seed)
    torrent = root / f"{name}.torrent"
    torrent.write_bytes(seeded.torrent)
    added = run_cli(worker.config, "add", "--torrent", str(torrent), "--wait", "--wait-timeout", "60")
    assert added.returncode == 0, added.stderr
    return added.stdout.split()[0], added.stdout


def _state(worker: WorkerProcess, ident: str) -> str:
    shown = run_cli(worker.config, "show", ident, "--json")
    return json.loads(shown.stdout)["data"]["download"]["state"]


def test_a_better_copy_is_asked_about_and_replaced_then_undone(worker: tuple[WorkerProcess, Path]) -> None:
    process, root = worker
    first, _ = _add(process, root, OLD, 1)
    assert _state(process, first) == "done"
    second, out = _add(process, root, NEW, 2)
    assert "Already in your library:" in out
    assert (f"{NEW}/{NEW}.mkv: already in your library as 1080p WEB-DL by NTb from {OLD}, laid out " in out
            or f"{NEW}.mkv: already in your library as 1080p WEB-DL by NTb from {OLD}, laid out " in out), out
    assert "this copy is 2160p Remux by FGT: better" in out
    for choice in ("keep-both", "replace", "skip"):
        assert f"jellybit upgrade {second} {choice}" in out
    assert "[held]" in run_cli(process.config, "show", second).stdout

    refused = run_cli(process.config, "upgrade", second, "overwrite")
    assert refused.returncode == 2
    assert "invalid choice: 'overwrite'" in refused.stderr
    wrong = run_cli(process.config, "upgrade", first, "replace")
    assert wrong.returncode != 0
    assert "upgrade is not possible in state done" in wrong.stderr + wrong.stdout

    chosen = run_cli(process.config, "upgrade", second, "replace")
    assert chosen.returncode == 0, chosen.stderr
    wait_for(lambda: _state(process, second) == "done", timeout=30)
    after = run_cli(process.config, "show", second, "--json")
    links = json.loads(after.stdout)["data"]["links"]
    assert [link["status"] for link in links] == ["linked"]
    old_links = json.loads(run_cli(process.config, "show", first, "--json").stdout)["data"]["links"]
    assert [link["status"] for link in old_links] == ["replaced"]

    undone = run_cli(process.config, "undo", second)
    assert undone.returncode == 0, undone.stderr
    old_links = json.loads(run_cli(process.config, "show", first, "--json").stdout)["data"]["links"]
    assert [link["status"] for link in old_links] == ["linked"]
    assert Path(old_links[0]["target"]).name == TARGET.name
