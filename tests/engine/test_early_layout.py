"""Each file into the library as it completes: a real qbittorrent-nox downloading a season pack from a
second one over loopback, file by file; the real worker loop, the real layouter (hardlinks in a temp
library, the SQLite journal), an in-test recognizer that reads the pack as a season."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig
from jellybit.core.links import LinkStatus
from jellybit.core.states import State
from tests.support.engine import EngineFactory
from tests.support.qbittorrent import SeededTorrent, eventually
from tests.support.qbittorrent_pair import QbittorrentPair
from tests.support.services import unavailable

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 500_000                  # bytes/s: a 500 kB episode a second
EARLY = {"recognize_early": True, "early_layout": True, "poll_interval": 0.2, "file_poll_interval": 0.1}


def _pack(pair: QbittorrentPair, name: str, episodes: int = 4, seed: int = 0) -> SeededTorrent:
    return pair.seed(name, {f"{name}.E{n:02d}.mkv": 500_000 for n in range(1, episodes + 1)}, seed=seed)


def _paths(pair: QbittorrentPair, tmp_path: Path) -> PathsConfig:
    for name in ("movies", "series"):
        (tmp_path / name).mkdir(exist_ok=True)
    return PathsConfig(downloads=pair.leecher.data_root.resolve(), movies=tmp_path / "movies",
                       series=tmp_path / "series")


def _library_inodes(paths: PathsConfig) -> dict[int, str]:
    found = {}
    for folder, _dirs, names in os.walk(paths.series):
        for name in names:
            found[os.stat(os.path.join(folder, name)).st_ino] = name
    return found


def _device(path: Path) -> int:
    return os.stat(path).st_dev


def _videos(folder: Path) -> list[Path]:
    return list(folder.rglob("*.mkv"))


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


async def _start(engine, pair: QbittorrentPair, torrent: SeededTorrent, save: Path, *,
                 skip: tuple[int, ...] = ()) -> str:
    """The user adds the pack to qBittorrent (some files deselected), then to Jellybit, which finds it
    by its infohash; then it downloads from the seeder, file by file."""
    pair.add_paused(torrent, save, skip=skip)
    pair.pace(torrent, limit=LIMIT)
    added = await engine.commands.add(torrent=torrent.torrent)
    try:
        await engine.poll_until(lambda: engine.state_is(added.download.id, State.APPLYING))
    except pytest.fail.Exception:
        history = await engine.store.transitions(added.download.id)
        recognition = await engine.store.current_recognition(added.download.id)
        pytest.fail(f"not decided while downloading: {[(t.to_state.value, t.reason) for t in history]} "
                    f"{[r.message for r in recognition.reasons] if recognition else ''}")
    pair.resume(torrent)
    pair.connect(torrent)
    return added.download.id


async def _present(pair: QbittorrentPair, torrent: SeededTorrent) -> bool:
    return pair.torrent(torrent) is not None


@pytest.mark.parametrize("settings", [
    {"incomplete_files_ext": True},
    {"incomplete_files_ext": False},
    {"incomplete_files_ext": True, "temp_path_enabled": True, "temp_path": "INCOMPLETE"},
], ids=["qB-suffix", "no-suffix", "incomplete-folder"])
async def test_each_file_is_in_the_library_while_the_rest_downloads(
    pair: QbittorrentPair, make_engine: EngineFactory, store: Store, tmp_path: Path, settings: dict,
) -> None:
    paths = _paths(pair, tmp_path)
    if settings.get("temp_path") == "INCOMPLETE":
        settings = {**settings, "temp_path": str(paths.downloads / f"incomplete-{tmp_path.name}")}
    pair.preferences(**settings)
    engine = await make_engine(pair.instance(paths.downloads).config(), worker=EARLY,
                               layouter=LayoutEngine(store, paths), paths=paths)
    engine.recognizer.series = True
    torrent = _pack(pair, f"Early.{tmp_path.name[-6:]}", seed=len(settings))
    download_id = await _start(engine, pair, torrent, paths.downloads, skip=(3,))      # E04 deselected

    laid_while_downloading: set[str] = set()
    counts: set[int] = set()

    async def step() -> bool:
        await engine.worker.poll_once()
        info = pair.torrent(torrent)
        download = await store.get_download(download_id)
        if info["progress"] < 1 and download.state is not State.DONE:
            laid_while_downloading.update(_library_inodes(paths).values())
            counts.add(download.files_in_library)
        return download.state is State.DONE

    await eventually(step, within=90, interval=0.05)
    # Files reached the library before the pack was complete, and the deselected one never did.
    assert laid_while_downloading
    assert max(counts) >= 1             # the views were told how many are in the library already
    final = _library_inodes(paths)
    assert len(final) == 3
    assert not any("E04" in name or "Episode 4" in name or "E04" in name for name in final.values())
    # Each episode in the library is the very file qBittorrent seeds (same inode, after any move).
    save = Path(pair.torrent(torrent)["save_path"])
    for n in (1, 2, 3):
        assert _inode(save / torrent.name / f"{torrent.name}.E{n:02d}.mkv") in final
    rows = await store.links_for_download(download_id)
    early_rows = [r for r in rows if r.status is LinkStatus.SUPERSEDED]
    assert early_rows, "no file was journaled before completion"
    assert len({r.src_ino for r in rows if r.status is LinkStatus.LINKED}) == len(
        [r for r in rows if r.status is LinkStatus.LINKED])      # no file linked twice
    assert (await store.get_download(download_id)).state is State.DONE


CHILD = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from jellybit.adapters.library.layouter import LayoutEngine
    from jellybit.adapters.qbittorrent import QbittorrentClient
    from jellybit.adapters.store import Store
    from jellybit.config import PathsConfig, QbittorrentConfig, WorkerConfig
    from jellybit.engine.events import EventBus
    from jellybit.engine.worker import Worker
    from tests.support.engine import ScriptedRecognizer

    async def main(args):
        store = Store(Path(args["db"]))
        await store.open()
        paths = PathsConfig(**args["paths"])
        qbt = QbittorrentConfig(**args["qbt"])
        worker = Worker(store, EventBus(), QbittorrentClient(qbt), ScriptedRecognizer(series=True),
                        LayoutEngine(store, paths), worker=WorkerConfig(**args["worker"]), qbittorrent=qbt,
                        paths=paths, reconnect_grace=0.0)
        print("running", flush=True)
        await worker.run(reconcile=False)

    asyncio.run(main(json.loads(sys.argv[1])))
""")


async def test_a_file_completing_after_a_kill_is_laid_out_once_after_restart(
    pair: QbittorrentPair, make_engine: EngineFactory, store: Store, tmp_path: Path,
) -> None:
    paths = _paths(pair, tmp_path)
    qbt = pair.instance(paths.downloads).config()
    torrent = _pack(pair, f"Kill.{tmp_path.name[-6:]}", episodes=5, seed=9)
    engine = await make_engine(qbt, worker=EARLY, layouter=LayoutEngine(store, paths), paths=paths)
    download_id = (await engine.commands.add(torrent=torrent.torrent)).download.id
    # A worker in a child process adds it, decides and lays out what completes, then dies by SIGKILL.
    args = {"db": str(store.path), "paths": json.loads(paths.model_dump_json()),
            "qbt": {**json.loads(qbt.model_dump_json()), "password": qbt.password.get_secret_value()},
            "worker": EARLY}
    log = (tmp_path / "child.log").open("wb")
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", CHILD, json.dumps(args), cwd=ROOT,
                                                 stdout=subprocess.DEVNULL, stderr=log)
    try:
        await eventually(lambda: _present(pair, torrent), within=30)
        pair.pace(torrent, limit=LIMIT)
        pair.connect(torrent)
        await eventually(lambda: _linked_some(paths), within=60)
        assert pair.torrent(torrent)["progress"] < 1, "the pack completed before the kill: slow it down"
        child.send_signal(signal.SIGKILL)
        await asyncio.wait_for(child.wait(), 10)
    finally:
        if child.returncode is None:
            child.kill()
            await asyncio.wait_for(child.wait(), 10)
        log.close()
    before = set(_library_inodes(paths))
    # More files complete while no worker runs.
    await eventually(lambda: _more_complete(pair, torrent, before), within=60)
    restarted = await make_engine(qbt, worker=EARLY, layouter=LayoutEngine(store, paths), paths=paths)
    restarted.recognizer.series = True
    await restarted.settle(download_id, State.DONE, within=90)
    final = _library_inodes(paths)
    assert len(final) == 5
    assert before < set(final)
    rows = await store.links_for_download(download_id)
    linked = [r for r in rows if r.status in (LinkStatus.LINKED, LinkStatus.SUPERSEDED)]
    # Every episode was linked exactly once, whichever worker did it (the others found it in place).
    assert sorted(r.src_ino for r in linked) == sorted({r.src_ino for r in linked})
    assert len({r.src_ino for r in linked}) == 5


async def _linked_some(paths: PathsConfig) -> bool:
    await asyncio.sleep(0)
    return bool(_library_inodes(paths))


async def _more_complete(pair: QbittorrentPair, torrent: SeededTorrent, laid: set[int]) -> bool:
    complete = [f for f in pair.files(torrent) if f["progress"] >= 1]
    return len(complete) > len(laid)


async def test_an_incomplete_folder_on_another_filesystem_falls_back_to_the_completion(
    pair: QbittorrentPair, make_engine: EngineFactory, store: Store, tmp_path: Path,
) -> None:
    """qBittorrent copies a completed torrent from /dev/shm to the save path (new inodes): nothing is
    linked early, and on completion every file is linked from its final place."""
    paths = _paths(pair, tmp_path)
    shm = Path(tempfile.mkdtemp(prefix="jb-incomplete-", dir="/dev/shm"))
    try:
        if _device(shm) == _device(paths.downloads):
            unavailable("a second filesystem: /dev/shm is on the same filesystem as the downloads here")
        pair.preferences(temp_path_enabled=True, temp_path=str(shm))
        engine = await make_engine(pair.instance(paths.downloads).config(), worker=EARLY,
                                   layouter=LayoutEngine(store, paths), paths=paths)
        engine.recognizer.series = True
        torrent = _pack(pair, f"Shm.{tmp_path.name[-6:]}", seed=11)
        download_id = await _start(engine, pair, torrent, paths.downloads)
        assert not engine.worker.early.safe

        early_links: list[str] = []

        async def step() -> bool:
            await engine.worker.poll_once()
            if pair.torrent(torrent)["progress"] < 1:
                early_links.extend(_library_inodes(paths).values())
            return (await store.get_download(download_id)).state is State.DONE

        await eventually(step, within=90, interval=0.05)
        assert early_links == []                       # nothing laid out while it downloaded
        final = _library_inodes(paths)
        save = Path(pair.torrent(torrent)["save_path"]) / torrent.name
        assert sorted(final) == sorted(_inode(p) for p in save.iterdir())   # the seeded files themselves
        assert _videos(shm) == []                      # moved away: copied, then removed
        assert (await store.get_download(download_id)).files_in_library == 0
    finally:
        shutil.rmtree(shm, ignore_errors=True)
