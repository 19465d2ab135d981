"""Benchmark: lay out a synthetic season pack with LayoutEngine.apply against `cp -al` of the same tree.

Run: .venv/bin/python bench/layout.py [--files 5000] [--runs 3] [--dir /path/on/the/media/filesystem]

Both are measured in the same run on the same filesystem: `cp -al` hardlinks the pack's folder
into a scratch copy (and `rm -r` removes it again); LayoutEngine.apply journals the batch in
SQLite, checks every source and target, links every file into the series library and commits;
then LayoutEngine.undo takes the same batch back. Each run starts from a fresh directory; with
several runs the medians are printed last.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
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
COLUMNS = ("cp -al", "apply", "ratio", "rm -r", "undo", "undo ratio")


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


def time_cp_al(paths: PathsConfig) -> tuple[float, float]:
    """Seconds `cp -al` takes to hardlink the pack's tree into a scratch folder, and `rm -r` to remove it."""
    scratch = paths.downloads.parent / "cp-al"
    started = time.perf_counter()
    subprocess.run(["cp", "-al", str(paths.downloads / PACK), str(scratch)], check=True)
    cp_seconds = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run(["rm", "-r", str(scratch)], check=True)
    return cp_seconds, time.perf_counter() - started


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
        if not undone.complete or len(undone.removed) != len(plan.items):
            raise SystemExit(f"undo left files behind: {undone.refused[:3]}")
    finally:
        await store.close()
    return apply_seconds, undo_seconds


def run(base: Path, files: int) -> tuple[float, ...]:
    """One run in a fresh directory: (cp -al, apply, ratio, rm -r, undo, undo ratio), times in ms."""
    media = base / "media"
    paths = PathsConfig(downloads=media / "downloads", movies=media / "movies", series=media / "series")
    for root in (paths.downloads, paths.movies, paths.series):
        root.mkdir(parents=True)
    plan = make_pack(paths.downloads, files)
    cp_seconds, rm_seconds = time_cp_al(paths)
    apply_seconds, undo_seconds = asyncio.run(time_engine(base, paths, plan))
    return (cp_seconds * 1000, apply_seconds * 1000, apply_seconds / cp_seconds,
            rm_seconds * 1000, undo_seconds * 1000, undo_seconds / rm_seconds)


def _row(label: str, values: tuple[float, ...]) -> str:
    cells = [f"{v:8.2f}x" if "ratio" in c else f"{v:7.1f} ms" for c, v in zip(COLUMNS, values, strict=True)]
    return f"{label:8s}" + "".join(f"{c:>12s}" for c in cells)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the benchmark in throwaway directories."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=5000, help="files in the pack (videos + subtitles)")
    parser.add_argument("--runs", type=int, default=1, help="runs, each from a fresh directory")
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory (default: system temp)")
    args = parser.parse_args(argv)
    print(f"files {max(1, args.files // 2) * 2}")
    print(f"{'':8s}" + "".join(f"{c:>12s}" for c in COLUMNS))
    results = []
    for number in range(1, max(1, args.runs) + 1):
        with tempfile.TemporaryDirectory(dir=args.dir, prefix="jellybit-bench-") as scratch:
            results.append(run(Path(scratch), args.files))
        print(_row(f"run {number}", results[-1]), flush=True)
    if len(results) > 1:
        print(_row("median", tuple(statistics.median(column) for column in zip(*results, strict=True))))


if __name__ == "__main__":
    sys.exit(main())
