"""Fault injection: a pack on disk, a child process running one layout operation that is killed
with SIGKILL at a random moment, and the invariants checked after every fault.

Shared by the fast suite (`tests/faults/`) and the heavy one (`bench/faults.py`). The invariants
are the spec's: no source touched, no lost or duplicate link, every record matching the disk,
nothing half-done left behind once the worker has recovered.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from jellybit.adapters.library import files as fs
from jellybit.adapters.store import Store
from jellybit.core.links import FileLink, LinkStatus
from jellybit.core.models import Download, NewDownload
from jellybit.core.records import MediaType, Plan, PlanItem, Recognition, RecognitionDraft, Role
from tests.support.media import Media

ROOT = Path(__file__).resolve().parents[2]
PROVIDER = ("tvdb", "81189")
LIVE = (LinkStatus.LINKED, LinkStatus.COPIED, LinkStatus.EXISTS)

# One layout operation in a child process; it says "go" just before it starts, so the parent's
# random delay measures the operation and not the interpreter's start.
CHILD = textwrap.dedent("""
    import asyncio, errno, json, os, sys
    args = json.loads(sys.argv[1])
    from jellybit.adapters.store import Store
    from jellybit.config import PathsConfig
    from jellybit.adapters.library.layouter import LayoutEngine

    if args["copy"]:
        def link(src, dst, *a, **k):
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(src), None, str(dst))
        os.link = link

    async def main():
        store = Store(args["db"])
        await store.open()
        engine = LayoutEngine(store, PathsConfig(**args["paths"]), chunk=args["chunk"])
        download = await store.get_download(args["download"])
        print("go", flush=True)
        if args["op"] == "apply":
            await engine.apply(download, await store.current_recognition(download.id))
        elif args["op"] == "undo":
            await engine.undo(download)
        else:
            await engine.recover()
        await store.close()

    asyncio.run(main())
""")


async def season_pack(store: Store, media: Media, name: str, files: int, *,
                      size: int = 4096) -> tuple[Download, Recognition]:
    """A multi-season pack of `files` episodes (with a subtitle for every fourth) and its recognition."""
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{os.urandom(20).hex()}", name, ""))
    download = await store.update_download(created.download.id, save_path=str(media.downloads),
                                           content_path=str(media.downloads / name))
    items: list[PlanItem] = []
    for index in range(files):
        season, episode = index // 100 + 1, index % 100 + 1
        video = f"{name}/Season {season}/{name}.S{season:02d}E{episode:03d}.mkv"
        media.source(video, (f"{name} {index} ".encode() * (size // 8 + 1))[:size])
        items.append(PlanItem(video, size, Role.VIDEO, season=season, episodes=(episode,)))
        if index % 4 == 0:
            sub = f"{name}/Season {season}/{name}.S{season:02d}E{episode:03d}.ru.srt"
            media.source(sub, f"1\n00:00:01,000 --> 00:00:02,000\nСерия {index}\n".encode())
            items.append(PlanItem(sub, 40, Role.SUBTITLE, language="ru", attached_to=video))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Боевой Пакет", year=2003, plan=Plan(tuple(items)),
        provider=PROVIDER[0], provider_id=PROVIDER[1]))
    return download, recognition


@dataclass(frozen=True)
class Kill:
    """What one fault did: killed mid-operation, or the operation finished first."""

    op: str
    delay: float
    killed: bool


def kill_at_random(store_path: Path, media: Media, download_id: str, op: str, *, copy: bool,
                   rng: random.Random, within: float, chunk: int = 64) -> Kill:
    """Run `op` (apply | undo | recover) in a child and SIGKILL it after a random part of `within` s."""
    args = {"db": str(store_path), "download": download_id, "op": op, "copy": copy, "chunk": chunk,
            "paths": {k: str(v) for k, v in media.paths.model_dump().items() if k != "path_map"}}
    child = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(args)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert child.stdout is not None
    try:
        line = child.stdout.readline()
        assert line == b"go\n", (line + child.communicate(timeout=30)[1]).decode(errors="replace")
        delay = rng.uniform(0.0, within)
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        code = child.wait(60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        child.stdout.close()
        if child.stderr is not None:
            child.stderr.close()
    assert code in (0, -signal.SIGKILL), f"the child failed on its own (status {code})"
    return Kill(op, delay, code == -signal.SIGKILL)


def timed(store_path: Path, media: Media, download_id: str, op: str, *, copy: bool,
          chunk: int = 64) -> float:
    """How long `op` takes in a child when nothing kills it (the span random kills are drawn from)."""
    args = {"db": str(store_path), "download": download_id, "op": op, "copy": copy, "chunk": chunk,
            "paths": {k: str(v) for k, v in media.paths.model_dump().items() if k != "path_map"}}
    child = subprocess.Popen([sys.executable, "-c", CHILD, json.dumps(args)], cwd=ROOT,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = b"", b""
    assert child.stdout is not None
    line = child.stdout.readline()
    started = time.monotonic()
    out, err = child.communicate(timeout=300)
    took = time.monotonic() - started
    assert line == b"go\n", (line + out + err).decode(errors="replace")
    assert child.returncode == 0, (out + err).decode(errors="replace")
    return took


async def check_invariants(store: Store, media: Media, download_id: str, *,
                           undo_interrupted: bool = False) -> dict[str, int]:
    """Assert the spec's invariants for one download after recovery; return the live link count.

    `undo_interrupted`: an undo was killed. Undo is not journaled: it removes a batch's links, then
    records that in one transaction, so a kill in between leaves rows of links already gone until
    the undo (never acknowledged to its sender) is sent again — a target may then be missing, but
    never another file, and finishing the undo must settle it.

    - no source changed, and nothing new appeared under downloads/ (invariant 1);
    - no batch is left open (recovery finished every interrupted one);
    - no two live rows hold one target, and no target holds two rows' files (no duplicate link);
    - every live row's target exists with the recorded inode; a link is the source's inode and a
      copy has the source's bytes (no lost link, no half-written copy);
    - every library file is a live row's target and no temporary file is left.
    """
    media.check_sources()
    assert await store.open_batches() == [], "a batch was left open after recovery"
    rows = await store.links_for_download(download_id)
    live = [r for r in rows if r.status in LIVE]
    gone = _check_disk(media, live, undo_interrupted)
    return {"live": len(live), "rows": len(rows), "undone_unrecorded": gone}


def _check_disk(media: Media, live: list[FileLink], undo_interrupted: bool) -> int:
    doubled = [path for path, n in Counter(r.dst_path for r in live).items() if n > 1]
    assert not doubled, f"two live rows hold {doubled[:3]}"
    gone = 0
    for row in live:
        target = Path(row.dst_path)
        if undo_interrupted and not os.path.lexists(target):
            gone += 1
            continue
        assert target.exists(), f"a live row's target is missing: {target}"
        st = os.lstat(target)
        assert st.st_ino == row.dst_ino, f"{target} is not the recorded file"
        if row.status is LinkStatus.LINKED:
            assert st.st_ino == row.src_ino, f"{target} is not a link to its source"
        elif row.status is LinkStatus.COPIED:
            assert target.read_bytes() == Path(row.src_path).read_bytes(), f"{target} is not a full copy"
    laid = {str(Path(r.dst_path).relative_to(media.root)) for r in live}
    strays = media.library_files() - laid
    assert not strays, f"library files without a live row: {sorted(strays)[:3]}"
    if not undo_interrupted:
        assert media.library_files() == laid
    assert not list(media.root.rglob(f"{fs.TEMP_PREFIX}*")), "a temporary copy was left behind"
    return gone


def planned_files(recognition: Recognition) -> int:
    """How many files of a plan are laid out (videos and their subtitles)."""
    return sum(1 for item in recognition.plan.items if item.role in (Role.VIDEO, Role.SUBTITLE))


def summary(kills: list[Kill]) -> str:
    """`N kills (M mid-operation)` for a report line."""
    return f"{len(kills)} kills ({sum(k.killed for k in kills)} mid-operation)"
