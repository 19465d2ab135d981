"""Per-file progress from a real qbittorrent-nox that downloads a pack from another one over loopback.

The files complete one by one (a download limit, sequential order); what `files()` says about each
file is checked against the disk at that moment: the final name once complete, `name.!qB` before
when the suffix is on, the torrent's `download_path` while a folder for incomplete torrents is set,
and a deselected file never counted complete.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from jellybit.adapters.qbittorrent import QbittorrentClient
from jellybit.core.ports import AddTorrent, TorrentFile
from jellybit.core.torrent_files import INCOMPLETE_SUFFIX, complete_sources, wanted
from tests.support.qbittorrent import SeededTorrent, eventually
from tests.support.qbittorrent_pair import QbittorrentPair

PACK = {f"Show.S01E0{i}.mkv": 600_000 for i in range(1, 5)}
LIMIT = 600_000          # bytes/s: about one file a second


@pytest.fixture
async def leecher(pair: QbittorrentPair, tmp_path: Path) -> AsyncIterator[tuple[QbittorrentClient, Path]]:
    data = pair.leecher.data_root.resolve() / tmp_path.name
    data.mkdir()
    async with QbittorrentClient(pair.instance(data).config()) as client:
        yield client, data


async def start(pair: QbittorrentPair, client: QbittorrentClient, torrent: SeededTorrent,
                *, skip: tuple[int, ...] = ()) -> str:
    await client.add(AddTorrent(tag="jb-t", category="jb", torrent_bytes=torrent.torrent, paused=True))
    info = await eventually(lambda: _find(client, torrent))
    if skip:
        pair.file_priority(torrent, list(skip), 0)
    pair.pace(torrent, limit=LIMIT)
    await client.resume([info.hash])
    pair.connect(torrent)
    return info.hash


async def _find(client: QbittorrentClient, torrent: SeededTorrent):
    found = await client.torrents(hashes=sorted(torrent.hashes()))
    return found[0] if found else None


async def watch(pair: QbittorrentPair, client: QbittorrentClient, torrent: SeededTorrent,
                torrent_hash: str) -> list[tuple[list[TorrentFile], dict]]:
    """Every `files()` answer (with the torrent's info) until the torrent is complete and settled."""
    seen = []

    async def step():
        files = await client.files(torrent_hash)
        info = pair.torrent(torrent)
        seen.append((files, info))
        return info["progress"] >= 1 and info["state"] in ("stalledUP", "uploading")

    await eventually(step, within=60, interval=0.1)
    return seen


def _on_disk(base: Path, name: str) -> set[str]:
    return {p.name for p in (base / name).parent.glob(Path(name).name + "*")}


@pytest.mark.parametrize("suffix", [True, False], ids=["qB-suffix", "no-suffix"])
async def test_files_complete_one_by_one_at_their_final_name(pair, leecher, suffix) -> None:
    client, data = leecher
    pair.preferences(incomplete_files_ext=suffix)
    torrent = pair.seed("Show.S01", PACK)
    torrent_hash = await start(pair, client, torrent, skip=(3,))
    seen = await watch(pair, client, torrent, torrent_hash)

    completed_order: list[str] = []
    partial_views = 0
    for files, _info in seen:
        assert all(INCOMPLETE_SUFFIX not in f.name for f in files)
        assert [f.priority for f in files] == [1, 1, 1, 0]
        done = complete_sources(files)
        assert "Show.S01/Show.S01E04.mkv" not in done          # deselected: never complete
        completed_order += sorted(done - set(completed_order))
        if 0 < len(done) < 3:
            partial_views += 1
    # The files completed one at a time, in order, while the rest was still downloading.
    assert completed_order == [f"Show.S01/Show.S01E0{i}.mkv" for i in (1, 2, 3)]
    assert partial_views >= 2
    final = seen[-1][0]
    assert [wanted(f) for f in final] == [True, True, True, False]
    assert all(f.piece_range is not None and f.piece_range[0] <= f.piece_range[1] for f in final)
    for f in final[:3]:
        assert (data / f.name).is_file()
        assert not (data / (f.name + INCOMPLETE_SUFFIX)).exists()
    assert not (data / "Show.S01/Show.S01E04.mkv").exists()


async def test_suffix_on_disk_until_the_file_completes(pair, leecher) -> None:
    """While a file downloads it is `name.!qB`; once reported complete it is renamed in place."""
    client, data = leecher
    pair.preferences(incomplete_files_ext=True)
    torrent = pair.seed("Suffix.S01", PACK, seed=3)
    torrent_hash = await start(pair, client, torrent)
    inodes: dict[str, int] = {}
    saw_suffix = False

    async def step():
        nonlocal saw_suffix
        files = await client.files(torrent_hash)
        for f in files:
            partial = data / (f.name + INCOMPLETE_SUFFIX)
            if f.progress < 1 and partial.exists():
                saw_suffix = True
                inodes.setdefault(f.name, partial.stat().st_ino)
            if f.progress >= 1 and f.name in inodes:
                final = await eventually(lambda p=data / f.name: _exists(p))
                assert final.st_ino == inodes[f.name]     # renamed in place: a link made now stays valid
        return all(f.progress >= 1 for f in files)

    await eventually(step, within=60, interval=0.05)
    assert saw_suffix
    assert inodes


async def _exists(path: Path):
    return _stat(path)


def _stat(path: Path):
    try:
        return path.stat()
    except FileNotFoundError:
        return None


async def test_incomplete_folder_on_the_same_filesystem_keeps_the_inode(pair, leecher) -> None:
    """With `temp_path`, a complete file waits under download_path, then moves (rename) to save_path."""
    client, data = leecher
    temp = data.parent / (data.name + "-incomplete")
    pair.preferences(temp_path_enabled=True, temp_path=str(temp), incomplete_files_ext=True)
    torrent = pair.seed("Temp.S01", PACK, seed=5)
    torrent_hash = await start(pair, client, torrent)
    first: dict[str, int] = {}

    async def step():
        files = await client.files(torrent_hash)
        info = pair.torrent(torrent)
        if info["progress"] < 1:
            assert info["download_path"].rstrip("/") == str(temp)
            for f in files:
                if f.progress >= 1 and f.name not in first and (temp / f.name).exists():
                    first[f.name] = (temp / f.name).stat().st_ino
        return info["progress"] >= 1 and info["state"] in ("stalledUP", "uploading")

    await eventually(step, within=60, interval=0.05)
    assert first, "no file was seen complete in the incomplete folder before the torrent completed"
    for name, ino in first.items():
        moved = await eventually(lambda n=name: _exists(data / n))
        assert moved.st_ino == ino
