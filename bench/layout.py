"""Benchmark: lay out a synthetic season pack with LayoutEngine.apply against `cp -al` of the same tree.

Run: .venv/bin/python bench/layout.py [--files 2000] [--dir /path/on/the/media/filesystem]

Both are measured in the same run on the same filesystem: `cp -al` hardlinks the pack's folder
into a scratch copy; LayoutEngine.apply journals the batch in SQLite, checks every source and
target, links every file into the series library and commits. Undo of the same batch is timed too.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from jellybit.adapters.store import Store
from jellybit.config import PathsConfig
from jellybit.core.models import NewDownload
from jellybit.core.plan import MediaType, Plan, PlanItem, RecognitionDraft, Role
from jellybit.engine.layout import LayoutEngine

PACK = "Big.Show.S01-S20.1080p.WEB-DL"


def make_pack(downloads: Path, files: int) -> Plan:
    """Write `files` small files (episodes plus one subtitle each) and return their plan."""
    items: list[PlanItem] = []
    episodes = max(1, files // 2)
    per_season = 100
    for n in range(episodes):
        season, episode = n // per_season + 1, n % per_season + 1
        stem = f"{PACK}/Season {season:02d}/Big.Show.S{season:02d}E{episode:03d}.1080p"
        video, subtitle = f"{stem}.mkv", f"{stem}.en.srt"
        for relative, data in ((video, b"v" * 1024), (subtitle, b"s" * 64)):
            path = downloads / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        items.append(PlanItem(video, 1024, Role.VIDEO, season=season, episodes=(episode,)))
        items.append(PlanItem(subtitle, 64, Role.SUBTITLE, language="en", attached_to=video))
    return Plan(tuple(items))


def time_cp_al(paths: PathsConfig) -> float:
    """Seconds `cp -al` takes to hardlink the pack's tree into a scratch folder (removed after)."""
    scratch = paths.downloads.parent / "cp-al"
    started = time.perf_counter()
    subprocess.run(["cp", "-al", str(paths.downloads / PACK), str(scratch)], check=True)
    seconds = time.perf_counter() - started
    shutil.rmtree(scratch)
    return seconds


async def time_engine(base: Path, paths: PathsConfig, plan: Plan) -> tuple[float, float]:
    """Seconds LayoutEngine.apply and then undo take for the whole pack (one batch)."""
    store = Store(base / "bench.db")
    await store.open()
    try:
        new = NewDownload("magnet", "magnet:?xt=bench", PACK, "")
        created = await store.create_download_if_no_active(new)
        download = await store.update_download(
            created.download.id, save_path=str(paths.downloads), content_path=str(paths.downloads / PACK)
        )
        recognition = await store.save_recognition(download.id, RecognitionDraft(
            media_type=MediaType.SERIES, title="Big Show", year=2001, plan=plan, provider="tvdb",
            provider_id="4242",
        ))
        engine = LayoutEngine(store, paths)
        started = time.perf_counter()
        result = await engine.apply(download, recognition)
        apply_seconds = time.perf_counter() - started
        if result.outcome != "done" or result.linked != len(plan.items):
            raise SystemExit(f"apply did not lay every file: {result}")
        started = time.perf_counter()
        undone = await engine.undo(download)
        undo_seconds = time.perf_counter() - started
        if not undone.complete:
            raise SystemExit(f"undo left files behind: {undone.refused[:3]}")
    finally:
        await store.close()
    return apply_seconds, undo_seconds


def run(base: Path, files: int) -> None:
    """Build the pack, time cp -al and LayoutEngine.apply/undo on it, print the comparison."""
    media = base / "media"
    paths = PathsConfig(downloads=media / "downloads", movies=media / "movies", series=media / "series")
    for root in (paths.downloads, paths.movies, paths.series):
        root.mkdir(parents=True)
    plan = make_pack(paths.downloads, files)
    cp_seconds = time_cp_al(paths)
    apply_seconds, undo_seconds = asyncio.run(time_engine(base, paths, plan))
    print(f"files                 {len(plan.items)}")
    print(f"cp -al                {cp_seconds * 1000:8.1f} ms")
    print(f"LayoutEngine.apply    {apply_seconds * 1000:8.1f} ms")
    print(f"ratio apply / cp -al  {apply_seconds / cp_seconds:8.2f}x")
    print(f"LayoutEngine.undo     {undo_seconds * 1000:8.1f} ms")


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the benchmark in a throwaway directory."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the pack (videos + subtitles)")
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory (default: system temp)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="jellybit-bench-") as scratch:
        run(Path(scratch), args.files)


if __name__ == "__main__":
    sys.exit(main())
