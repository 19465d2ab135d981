"""Better copies: a film or episode already laid out by another download (real hardlinks, real SQLite)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.core.links import BatchStatus, LinkStatus
from jellybit.core.models import Download, NewDownload
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role
from jellybit.core.states import Actor, State

_names = itertools.count(1)
ROOT = Path(__file__).resolve().parents[3]
HEAT = ("tmdb", "949")
FOLDER = "Heat (1995) [tmdbid-949]"
FARGO = ("tvdb", "269613")
SEASON = "Fargo (2014) [tvdbid-269613]/Season 01"


async def _film(store, media, name: str, *, subtitle: bool = True):
    """A film download on disk (video and an English subtitle) with its current recognition."""
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{next(_names):040x}", name, ""))
    download = await store.update_download(created.download.id, save_path=str(media.downloads),
                                           content_path=str(media.downloads / name))
    video = f"{name}/{name}.mkv"
    media.source(video, f"picture of {name}".encode())
    items = [PlanItem(video, 10, Role.VIDEO)]
    if subtitle:
        sub = f"{name}/{name}.en.srt"
        media.source(sub, f"1\n00:00:01,000 --> 00:00:02,000\n{name}\n".encode())
        items.append(PlanItem(sub, 1, Role.SUBTITLE, language="en", attached_to=video))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.MOVIE, title="Heat", year=1995, plan=Plan(tuple(items)),
        provider=HEAT[0], provider_id=HEAT[1]))
    return download, recognition


async def _episode(store, media, name: str, episode: int = 2):
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{next(_names):040x}", name, ""))
    download = await store.update_download(created.download.id, save_path=str(media.downloads),
                                           content_path=str(media.downloads / name))
    video = f"{name}/{name}.mkv"
    media.source(video, f"picture of {name}".encode())
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Fargo", year=2014,
        plan=Plan((PlanItem(video, 10, Role.VIDEO, season=1, episodes=(episode,)),)),
        provider=FARGO[0], provider_id=FARGO[1]))
    return download, recognition


async def _done(store, download: Download) -> None:
    for state in (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE):
        download, _ = await store.transition(download.id, state, reason="test", actor=Actor.WORKER)


def _engine(store, media, policy: str = "ask") -> LayoutEngine:
    return LayoutEngine(store, media.paths, upgrades=policy)


def _ino(path: Path) -> int:
    return os.lstat(path).st_ino


async def _laid_1080p(store, media, engine):
    old, rec = await _film(store, media, "Heat.1995.1080p.WEB-DL.DDP5.1-NTb")
    assert (await engine.apply(old, rec)).outcome == "done"
    await _done(store, old)
    return old


async def test_ask_holds_the_better_copy_and_says_what_is_there(store, media):
    engine = _engine(store, media)
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    preview = await engine.preview(new, rec)
    assert [i.status for i in preview.plan.items] == ["held", "held"]
    [question] = [r for r in preview.reasons if r.code == "better_copy"]
    assert question.blocking
    assert "already in your library as 1080p WEB-DL by NTb from Heat.1995.1080p.WEB-DL.DDP5.1-NTb" \
        in question.message
    assert "this copy is 2160p Remux by FGT: better" in question.message
    assert (await engine.apply(new, rec)).outcome == "collision"      # a plain Apply lays nothing
    assert await store.batches_for_download(new.id) == []
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}


async def test_keep_both_lays_a_jellyfin_version_with_its_subtitle(store, media):
    engine = _engine(store, media, "keep_both")
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    preview = await engine.preview(new, rec)
    assert not [r for r in preview.reasons if r.blocking]
    assert any(r.code == "copy_kept" for r in preview.reasons)
    assert (await engine.apply(new, rec)).outcome == "done"
    assert media.library_files() == {
        f"movies/{FOLDER}/{FOLDER}.mkv", f"movies/{FOLDER}/{FOLDER}.en.srt",
        f"movies/{FOLDER}/{FOLDER} - 2160p.mkv", f"movies/{FOLDER}/{FOLDER} - 2160p.en.srt",
    }
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}


async def test_replace_swaps_the_old_link_and_undo_brings_it_back(store, media):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    before = {p: _ino(media.root / p) for p in media.library_files()}
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    assert (await engine.apply(new, rec)).outcome == "done"
    await _done(store, new)
    video = media.movies / FOLDER / f"{FOLDER}.mkv"
    assert video.read_bytes() == b"picture of Heat.1995.2160p.UHD.BluRay.REMUX-FGT"
    assert media.library_files() == set(before)                         # same paths, no duplicate
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.REPLACED}
    # The old download's data is untouched; only its library link went.
    assert (media.downloads / "Heat.1995.1080p.WEB-DL.DDP5.1-NTb" /
            "Heat.1995.1080p.WEB-DL.DDP5.1-NTb.mkv").stat().st_nlink == 1

    undone = await engine.undo(new)
    assert undone.complete
    assert {p: _ino(media.root / p) for p in media.library_files()} == before
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}
    assert not [r for r in await store.links_for_download(new.id) if r.live]
    assert not list(media.root.rglob(f"{fs.TEMP_PREFIX}*"))


async def test_replace_if_better_skips_a_worse_copy(store, media):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.720p.HDTV.x264-LOL")
    preview = await engine.preview(new, rec)
    assert [i.status for i in preview.plan.items] == ["skipped", "skipped"]
    assert any(r.code == "copy_skipped" for r in preview.reasons)
    result = await engine.apply(new, rec)
    assert (result.outcome, result.linked, result.skipped) == ("done", 0, 2)
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}


async def test_the_human_choice_wins_over_the_policy(store, media):
    engine = _engine(store, media)
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.720p.HDTV.x264-LOL")
    await store.set_overrides(new.id, {"upgrade": "replace"})
    assert (await engine.apply(new, rec)).outcome == "done"
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.REPLACED}


async def test_a_repack_of_an_episode_is_a_question_and_replaces_it(store, media):
    engine = _engine(store, media)
    old, rec_old = await _episode(store, media, "Fargo.S01E02.1080p.WEB-DL-GRP")
    assert (await engine.apply(old, rec_old)).outcome == "done"
    await _done(store, old)
    new, rec = await _episode(store, media, "Fargo.S01E02.REPACK.1080p.WEB-DL-GRP")
    preview = await engine.preview(new, rec)
    [question] = [r for r in preview.reasons if r.code == "better_copy"]
    assert "1080p WEB-DL REPACK by GRP: better" in question.message
    await store.set_overrides(new.id, {"upgrade": "replace"})
    assert (await engine.apply(new, rec)).outcome == "done"
    target = media.series / SEASON / "Fargo S01E02.mkv"
    assert target.read_bytes() == b"picture of Fargo.S01E02.REPACK.1080p.WEB-DL-GRP"
    assert len(media.library_files()) == 1


async def test_an_episode_that_is_not_better_stays_merge_top_up(store, media):
    engine = _engine(store, media)
    old, rec_old = await _episode(store, media, "Fargo.S01E02.1080p.WEB-DL-GRP")
    await engine.apply(old, rec_old)
    new, rec = await _episode(store, media, "Fargo.S01E02.720p.HDTV-LOL")
    preview = await engine.preview(new, rec)
    assert [i.status for i in preview.plan.items] == ["skipped"]
    assert not [r for r in preview.reasons if r.blocking]


async def test_undoing_the_replaced_download_first_keeps_it_out_for_good(store, media):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    await engine.apply(new, rec)
    assert await store.title_download_ids(*HEAT) == sorted([old.id, new.id])
    await engine.undo(old)               # its file was replaced: nothing on disk changes
    assert len(media.library_files()) == 2
    assert (await engine.undo(new)).complete
    assert media.library_files() == set()      # the replaced file does not come back


async def test_whole_title_delete_removes_every_copy(store, media):
    engine = _engine(store, media, "replace_if_better")
    await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    await engine.apply(new, rec)
    result = await engine.delete_title(*HEAT)
    assert all(undo.complete for _, undo in result.results)
    assert media.library_files() == set()


async def test_undo_keeps_the_better_copy_when_the_replaced_source_is_gone(store, media):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    await engine.apply(new, rec)
    # The user removed the old torrent's data in qBittorrent: the old copy cannot come back,
    # so undo keeps the new one instead of leaving the film missing.
    gone = media.downloads / "Heat.1995.1080p.WEB-DL.DDP5.1-NTb" / "Heat.1995.1080p.WEB-DL.DDP5.1-NTb.mkv"
    media.forget(gone)
    gone.unlink()
    undone = await engine.undo(new)
    assert not undone.complete
    assert (media.movies / FOLDER / f"{FOLDER}.mkv").read_bytes().startswith(b"picture of Heat.1995.2160p")
    assert {r.status for r in await store.links_for_download(old.id) if r.kind == "video"} == {
        LinkStatus.REPLACED}


# ---------------------------------------------------------------------------- crash safety

CHILD = textwrap.dedent("""
    import asyncio, json, os, signal, sys
    args = json.loads(sys.argv[1])
    from jellybit.adapters.store import Store
    from jellybit.config import PathsConfig
    from jellybit.adapters.library.layouter import LayoutEngine

    real_rename = os.rename
    calls = {"rename": 0}

    def rename(src, dst, *a, **k):
        calls["rename"] += 1
        if args["when"] == "before" and calls["rename"] == args["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)
        real_rename(src, dst, *a, **k)
        if args["when"] == "after" and calls["rename"] == args["kill_at"]:
            os.kill(os.getpid(), signal.SIGKILL)

    os.rename = rename

    async def main():
        store = Store(args["db"])
        await store.open()
        engine = LayoutEngine(store, PathsConfig(**args["paths"]), upgrades="replace_if_better")
        download = await store.get_download(args["download"])
        if args["op"] == "apply":
            await engine.apply(download, await store.current_recognition(download.id))
        else:
            await engine.undo(download)

    asyncio.run(main())
    sys.exit(3)  # the kill must come first
""")


def _crash(store, media, download: Download, op: str, when: str, kill_at: int) -> None:
    args = {"db": str(store.path), "download": download.id, "op": op, "when": when, "kill_at": kill_at,
            "paths": {k: str(v) for k, v in media.paths.model_dump().items() if k != "path_map"}}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=ROOT, capture_output=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()


def _contents(media) -> dict[str, bytes]:
    """Every library file's bytes, without a swap's temporary file (recovery removes it)."""
    return {p: (media.root / p).read_bytes() for p in media.library_files()
            if not Path(p).name.startswith(fs.TEMP_PREFIX)}


@pytest.mark.parametrize(("when", "kill_at"), [("before", 1), ("after", 1), ("before", 2), ("after", 2)])
async def test_a_kill_during_a_replace_loses_nothing(store, media, when, kill_at):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    before = _contents(media)
    new, _rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    _crash(store, media, new, "apply", when, kill_at)
    # Killed: the library holds each file once, the old one or the new one, never nothing.
    assert set(_contents(media)) == set(before)
    await engine.recover()
    after = _contents(media)
    assert set(after) == set(before)
    assert not list(media.root.rglob(f"{fs.TEMP_PREFIX}*"))
    [batch] = await store.batches_for_download(new.id)
    assert batch.status is BatchStatus.COMMITTED
    assert all(data.startswith((b"picture of Heat.1995.2160p", b"1\n")) for data in after.values())
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.REPLACED}
    assert (await engine.undo(new)).complete
    assert _contents(media) == before
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}


@pytest.mark.parametrize(("when", "kill_at"), [("before", 1), ("after", 1), ("after", 2)])
async def test_a_kill_during_the_undo_of_a_replace_loses_nothing(store, media, when, kill_at):
    engine = _engine(store, media, "replace_if_better")
    old = await _laid_1080p(store, media, engine)
    before = _contents(media)
    new, rec = await _film(store, media, "Heat.1995.2160p.UHD.BluRay.REMUX-FGT")
    await engine.apply(new, rec)
    await _done(store, new)
    replaced = _contents(media)
    _crash(store, media, new, "undo", when, kill_at)
    assert set(_contents(media)) == set(before)          # never a missing or doubled file
    assert all(_contents(media)[p] in (before[p], replaced[p]) for p in before)
    # Undo is not journaled: sending it again settles it.
    assert (await engine.undo(new)).complete
    assert _contents(media) == before
    assert not list(media.root.rglob(f"{fs.TEMP_PREFIX}*"))
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}
    assert not [r for r in await store.links_for_download(new.id) if r.live]
