"""Benchmark: lay out a synthetic season pack as the pipeline does, against `cp -al` of the same tree.

Run: .venv/bin/python bench/layout.py [--files 5000 50000] [--rounds 5] [--dir /on/the/media/fs] [--json]

Both are measured in the same run on the same filesystem, in interleaved rounds (cp first in odd
rounds, Jellybit first in even ones), and medians are compared:

  cp -al     hardlinks the pack's folder into a scratch copy (the baseline); `rm -r` removes it
  preview    LayoutEngine.preview of the recognition (naming, convergence, one lstat per source
             and target), what the pipeline does before it decides
  apply      LayoutEngine.apply of the stored, previewed recognition right after (reusing the
             preview): journal the batch in SQLite, link every file, finish and commit
  cold       LayoutEngine.apply of a recognition nobody previewed (it inspects first)
  undo       LayoutEngine.undo of the batch (against `rm -r` of the cp copy)

With --phases it also says where the apply after preview spends its time (each phase summed over
the apply, medians), beside three floors measured in the same rounds on the same pack: a bare
Python loop of `link` + `lstat` per file, the `fsync` of each folder after it, and SQLite inserting
the batch's journal rows (prebuilt, as the store writes them) on a plain connection.

The pack (episodes plus one subtitle each, 100 episodes per season folder) is written once per
size; each round lays it into fresh libraries with a fresh SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Row, Samples, describe_load, emit, load, ms, timed

from jellybit.adapters.library import files as library_files
from jellybit.adapters.library import journal
from jellybit.adapters.library.disk import Inspection
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.store import Store
from jellybit.config import PathsConfig
from jellybit.core.models import NewDownload
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role

PACK = "Big.Show.S01-S20.1080p.WEB-DL"
GOAL = 2.0


def make_pack(downloads: Path, files: int) -> Plan:
    """Write `files` small files (episodes plus one subtitle each) and return their plan."""
    items: list[PlanItem] = []
    per_season = 100
    for n in range(max(1, files // 2)):
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


class Round:
    """The measurements of one size."""

    def __init__(self) -> None:
        self.cp, self.rm = Samples("cp -al"), Samples("rm -r")
        self.preview, self.apply = Samples("preview"), Samples("apply after preview")
        self.cold, self.undo = Samples("apply, not previewed"), Samples("undo")
        self.phases: dict[str, Samples] = {}     # --phases: name -> per-apply sums
        self.floors = {"link": Samples("bare link + lstat loop"),
                       "fsync": Samples("bare fsync of the folders"),
                       "rows": Samples("bare SQLite insert of the journal rows")}


# The apply's phases, as (owner, attribute, label): wrapped only while a --phases apply runs.
PHASES = (
    (Inspection, "new_links", "journal rows built (Python)"),
    (Store, "open_batch", "journal written (SQLite, before any link)"),
    (journal, "lay_rows", "links laid (link + lstat + folder fsync)"),
    (library_files, "fsync_dir", "  of which folder fsync"),
    (Store, "commit_batch", "commit (mark linked, supersede)"),
)


class Phases:
    """Sum the time each phase takes during one apply (a benchmark's instrument, not the product's)."""

    def __init__(self, result: Round) -> None:
        self.result, self.spent = result, {label: 0.0 for _, _, label in PHASES}
        self.saved: list[tuple[object, str, object]] = []

    def _wrap(self, function: object, label: str) -> object:
        spent = self.spent
        if asyncio.iscoroutinefunction(function):
            async def timed_async(*args: object, **kwargs: object) -> object:
                started = time.perf_counter()
                try:
                    return await function(*args, **kwargs)
                finally:
                    spent[label] += time.perf_counter() - started
            return timed_async

        def timed_sync(*args: object, **kwargs: object) -> object:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - started
        return timed_sync

    def __enter__(self) -> Phases:
        for owner, name, label in PHASES:
            original = getattr(owner, name)
            self.saved.append((owner, name, original))
            setattr(owner, name, self._wrap(original, label))
        return self

    def __exit__(self, *exc: object) -> None:
        for owner, name, original in reversed(self.saved):
            setattr(owner, name, original)
        for label, seconds in self.spent.items():
            self.result.phases.setdefault(label, Samples(label)).add(seconds)


def floors(downloads: Path, scratch: Path, plan: Plan, result: Round) -> None:
    """What a layout cannot beat: link and lstat each file, fsync each folder, insert the journal's rows.

    The rows go into a migrated journal as the store writes them (64 per `INSERT`, folders and
    batch by number), but prebuilt and on a plain `sqlite3` connection: SQLite's own work.
    """
    pairs = [(str(downloads / item.source), str(scratch / item.source)) for item in plan.items]
    folders = sorted({os.path.dirname(dst) for _, dst in pairs})
    for folder in folders:
        os.makedirs(folder, exist_ok=True)
    link, lstat = os.link, os.lstat
    with timed(result.floors["link"]):
        for src, dst in pairs:
            link(src, dst, follow_symlinks=False)
            lstat(dst)
    with timed(result.floors["fsync"]):
        for folder in folders:
            descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)
    database = scratch / "journal.db"
    asyncio.run(_journal_file(database))
    numbers = {folder: n for n, folder in enumerate({os.path.dirname(p) for pair in pairs for p in pair}, 1)}
    rows = [(n, 1, numbers[os.path.dirname(src)], os.path.basename(src), numbers[os.path.dirname(dst)],
             os.path.basename(dst), "video", "pending", 1024, 1, n, 1, None, None)
            for n, (src, dst) in enumerate(pairs, 1)]
    per, marks = 64, "(" + ", ".join("?" * 14) + ")"
    insert = ("INSERT INTO file_link (id, batch, src_folder, src_name, dst_folder, dst_name, kind, status,"
              " size, src_dev, src_ino, src_mtime_ns, dst_ino, message) VALUES ")
    statement = insert + ", ".join([marks] * per)
    full = len(rows) - len(rows) % per
    flat = [value for row in rows[:full] for value in row]
    values = [flat[at:at + per * 14] for at in range(0, len(flat), per * 14)]
    connection = sqlite3.connect(database, isolation_level=None)
    try:
        for pragma in ("journal_mode = WAL", "synchronous = NORMAL", "foreign_keys = ON"):
            connection.execute(f"PRAGMA {pragma}")
        connection.executemany("INSERT INTO link_folder (id, path) VALUES (?, ?)",
                               [(n, folder) for folder, n in numbers.items()])
        with timed(result.floors["rows"]):
            connection.execute("BEGIN IMMEDIATE")
            connection.executemany(statement, values)
            for row in rows[full:]:
                connection.execute(insert + marks, row)
            connection.execute("COMMIT")
    finally:
        connection.close()
    shutil.rmtree(scratch)


async def _journal_file(path: Path) -> None:
    """A migrated database with one download and one open batch (number 1), for the rows floor."""
    store = Store(path)
    await store.open()
    try:
        new = NewDownload("magnet", "magnet:?xt=floor", PACK, "")
        created = await store.create_download_if_no_active(new)
        async with store.write() as conn:
            await conn.execute("INSERT INTO apply_batch (seq, id, download_id, status, created_at)"
                               " VALUES (1, 'floor', ?, 'open', '2026-01-01T00:00:00.000000Z')",
                               (created.download.id,))
    finally:
        await store.close()


def cp_al(downloads: Path, scratch: Path, result: Round) -> None:
    """Time `cp -al` of the pack and `rm -r` of the copy."""
    with timed(result.cp):
        subprocess.run(["cp", "-al", str(downloads / PACK), str(scratch)], check=True)
    with timed(result.rm):
        subprocess.run(["rm", "-r", str(scratch)], check=True)


async def engine_round(base: Path, downloads: Path, plan: Plan, result: Round, *, previewed: bool,
                       phases: bool = False) -> None:
    """One layout into fresh libraries: preview, store, apply (timed), then undo (timed)."""
    paths = PathsConfig(downloads=downloads, movies=base / "movies", series=base / "series")
    for root in (paths.movies, paths.series):
        root.mkdir(parents=True)
    store = Store(base / "bench.db")
    await store.open()
    try:
        new = NewDownload("magnet", "magnet:?xt=bench", PACK, "")
        created = await store.create_download_if_no_active(new)
        download = await store.update_download(created.download.id, save_path=str(downloads),
                                               content_path=str(downloads / PACK))
        draft = RecognitionDraft(media_type=MediaType.SERIES, title="Big Show", year=2001, plan=plan,
                                 provider="tvdb", provider_id="4242")
        engine = LayoutEngine(store, paths)
        if previewed:
            with timed(result.preview):
                preview = await engine.preview(download, draft)
            recognition = await store.save_recognition(download.id, replace(draft, plan=preview.plan,
                                                                            reasons=preview.reasons))
            with Phases(result) if phases else nullcontext(), timed(result.apply):
                outcome = await engine.apply(download, recognition)
            if engine.previews.reused != 1:
                raise SystemExit("apply did not reuse its preview")
        else:
            recognition = await store.save_recognition(download.id, draft)
            with timed(result.cold):
                outcome = await engine.apply(download, recognition)
        if outcome.outcome != "done" or outcome.linked != len(plan.items):
            raise SystemExit(f"apply did not lay every file: {outcome}")
        if previewed:
            with timed(result.undo):
                undone = await engine.undo(download)
            if not undone.complete or len(undone.removed) != len(plan.items):
                raise SystemExit(f"undo left files behind: {undone.refused[:3]}")
    finally:
        await store.close()
        shutil.rmtree(base, ignore_errors=True)


def measure(scratch: Path, files: int, rounds: int, *, phases: bool = False) -> Round:
    """Interleaved rounds for one pack size."""
    downloads = scratch / "downloads"
    plan = make_pack(downloads, files)
    result = Round()
    for number in range(rounds):
        steps = [lambda: cp_al(downloads, scratch / "cp", result),
                 lambda: asyncio.run(engine_round(scratch / "lib", downloads, plan, result, previewed=True,
                                                  phases=phases)),
                 lambda: asyncio.run(engine_round(scratch / "lib", downloads, plan, result, previewed=False))]
        if phases:
            steps.append(lambda: floors(downloads, scratch / "floor", plan, result))
        for step in steps if number % 2 == 0 else reversed(steps):
            step()
    shutil.rmtree(downloads)
    return result


def report(files: int, result: Round, as_json: bool) -> None:
    """Print the medians and ratios of one size."""
    cp = result.cp.median()
    print(f"\n{files:,} files, {len(result.cp.values)} rounds (medians)")
    for samples, base in ((result.cp, None), (result.preview, cp), (result.apply, cp), (result.cold, cp),
                          (result.rm, None), (result.undo, result.rm.median())):
        ratio = f"{samples.median() / base:6.2f}x" if base else ""
        value = ms(samples.median())
        print(f"  {samples.name:24} {value:9.1f} ms {value * 1000 / files:7.1f} us/file {ratio}")
    if result.phases:
        print("  where the apply after preview goes (per apply, medians), and the floors beside it:")
        for samples in [*result.phases.values(), *result.floors.values()]:
            value = ms(samples.median())
            print(f"    {samples.name:44} {value:7.1f} ms {samples.median() / cp:6.2f}x")
        floor = sum(samples.median() for samples in result.floors.values())
        print(f"    {'floors together':44} {ms(floor):7.1f} ms {floor / cp:6.2f}x")
    apply = result.apply.median()
    emit(Row(f"layout apply, {files:,} files", ms(apply), "ms", ms(cp), "cp -al", f"<= {GOAL:g}x",
             apply / cp <= GOAL, f"preview {ms(result.preview.median()):.0f} ms; not previewed "
             f"{ms(result.cold.median()):.0f} ms ({result.cold.median() / cp:.1f}x)"), as_json)


def main(argv: list[str] | None = None) -> None:
    """Parse arguments and run the benchmark in throwaway directories."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[5000, 50000],
                        help="pack sizes (videos + subtitles)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds per size")
    parser.add_argument("--dir", type=Path, default=None, help="scratch directory (default: system temp)")
    parser.add_argument("--json", action="store_true", help="also print BENCH lines for bench/all.py")
    parser.add_argument("--phases", action="store_true",
                        help="also time the apply's phases and the floors beside them (link + lstat, "
                             "folder fsync, journal rows)")
    args = parser.parse_args(argv)
    before = load()
    per_file = {}
    for files in args.files:
        with tempfile.TemporaryDirectory(dir=args.dir, prefix="jellybit-bench-") as scratch:
            result = measure(Path(scratch), files, max(1, args.rounds), phases=args.phases)
        report(files, result, args.json)
        per_file[files] = result.apply.median() / files
    if len(per_file) > 1:
        small, large = min(per_file), max(per_file)
        print(f"\napply per file at {large:,} / at {small:,}: {per_file[large] / per_file[small]:.2f} "
              "(1.00 = linear)")
    print(describe_load(before, load()))


if __name__ == "__main__":
    sys.exit(main())
