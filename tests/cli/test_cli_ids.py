"""Every verb that takes a download id takes a unique start of it (`show 01jf…`); an ambiguous start
is answered with the downloads it matches; `add FILE.torrent` points to --torrent. A real worker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from jellybit.cli.remote import add_remote_commands
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import magnet
from tests.support.worker_process import WorkerProcess, run_cli, worker_config

# Fixed hashes, so the ids differ but the test does not depend on the id generator's randomness.
HASHES = ["1" * 40, "2" * 40, "3" * 40]


@pytest.fixture
def worker(tmp_path: Path, mosquitto: Broker) -> Iterator[WorkerProcess]:
    process = WorkerProcess(worker_config(tmp_path, mqtt_url=mosquitto.url), tmp_path / "worker.log")
    process.start()
    process.wait_online()
    yield process
    process.close()


def added(worker: WorkerProcess, infohash: str, name: str) -> str:
    result = run_cli(worker.config, "add", magnet(infohash, name))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()[0]


def id_verbs() -> list[str]:
    """Every remote verb whose first argument is a download id."""
    import argparse

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    add_remote_commands(sub, lambda args: 0)
    return sorted(name for name, p in sub.choices.items()
                  if any(a.dest == "id" for a in p._actions))


def test_a_unique_prefix_stands_for_the_id_and_an_ambiguous_one_lists_the_matches(
        worker: WorkerProcess) -> None:
    ids = [added(worker, h, f"Prefix.Test.{n}") for n, h in enumerate(HASHES)]
    assert set(id_verbs()) >= {"show", "apply", "refine", "reject", "defer", "undo", "retry", "relink",
                               "cancel"}
    first = ids[0]
    unique = next(first[:n] for n in range(4, 27) if sum(i.startswith(first[:n]) for i in ids) == 1)

    shown = run_cli(worker.config, "show", unique.lower())
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(first)
    cancelled = run_cli(worker.config, "cancel", unique)
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.startswith(first)

    common = ids[1][:2]           # ULIDs made the same second share their first characters
    assert all(i.startswith(common) for i in ids)
    ambiguous = run_cli(worker.config, "show", common)
    assert ambiguous.returncode == 2
    assert f"{common!r} is the start of 3 download ids" in ambiguous.stderr
    for download_id in ids:
        assert download_id in ambiguous.stderr
    assert "Prefix.Test.2" in ambiguous.stderr

    nothing = run_cli(worker.config, "retry", "zzzz")
    assert nothing.returncode == 2
    assert "no download id starts with 'zzzz'" in nothing.stderr


def test_add_with_a_torrent_file_as_the_source_points_to_the_option(tmp_path: Path) -> None:
    torrent = tmp_path / "Some.Film.2001.torrent"
    torrent.write_bytes(b"d4:infod4:name1:xee")
    config = worker_config(tmp_path, mqtt_url="mqtt://127.0.0.1:9")
    for source in (str(torrent), "missing.torrent"):
        result = run_cli(config, "add", source)
        assert result.returncode == 2
        assert f"add a .torrent file with `jellybit add --torrent {source}`" in result.stderr
    url = run_cli(config, "add", "http://127.0.0.1:9/some.torrent", "--timeout", "1")
    assert "--torrent" not in url.stderr            # a URL is a source, even one ending in .torrent
