"""LayoutEngine end to end: real hardlinks under a temp /srv/media, a real SQLite store."""

from __future__ import annotations

import errno
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
from jellybit.adapters.library.disk import inspect
from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.core.links import BatchStatus, LinkStatus
from jellybit.core.models import Download, NewDownload
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role
from jellybit.core.states import Actor, State
from jellybit.errors import UnsafePath

_names = itertools.count(1)
FARGO = ("tvdb", "269613")
ROOT = Path(__file__).resolve().parents[3]   # the repository: the crash child imports this checkout


def _failing_link(code: int):
    def link(src, dst, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(src), None, str(dst))

    return link


async def _download(store, media, name: str) -> Download:
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{next(_names):040x}", name, "")
    )
    return await store.update_download(
        created.download.id, save_path=str(media.downloads), content_path=str(media.downloads / name)
    )


async def _season(store, media, name, *, title="Fargo", year=2014, ids=FARGO, season=1,
                  episodes=range(1, 4), ext=".mkv", subtitles=False):
    """A season pack on disk, its download and its current recognition."""
    download = await _download(store, media, name)
    items = []
    for episode in episodes:
        video = f"{name}/{name}.S{season:02d}E{episode:02d}{ext}"
        media.source(video, f"{name} episode {episode}".encode())
        items.append(PlanItem(video, 10, Role.VIDEO, season=season, episodes=(episode,)))
        if subtitles:
            sub = f"{name}/{name}.S{season:02d}E{episode:02d}.en.srt"
            media.source(sub, b"1\n00:00:01,000 --> 00:00:02,000\nhi\n")
            items.append(PlanItem(sub, 1, Role.SUBTITLE, language="en", attached_to=video))
    media.source(f"{name}/{name}.nfo", b"release notes")
    items.append(PlanItem(f"{name}/{name}.nfo", 13, Role.IGNORED))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.SERIES, title=title, year=year, plan=Plan(tuple(items)),
        provider=ids[0], provider_id=ids[1],
    ))
    return download, recognition


async def _to_done(store, download: Download) -> Download:
    for state in (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE):
        download, _ = await store.transition(download.id, state, reason="test", actor=Actor.WORKER)
    return download


def _ino(path: Path) -> int:
    return os.lstat(path).st_ino


def _read(path: str | Path) -> bytes:
    return Path(path).read_bytes()


def _write(path: str | Path, data: bytes) -> None:
    Path(path).write_bytes(data)


def _inside(path: str | Path, root: Path) -> bool:
    return Path(path).resolve().is_relative_to(root.resolve())


FOLDER = "Fargo (2014) [tvdbid-269613]"


@pytest.fixture
def engine(store, media):
    return LayoutEngine(store, media.paths)


# ---------------------------------------------------------------------------- apply


async def test_season_pack_is_hardlinked_and_journaled(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01", subtitles=True)
    preview = await engine.preview(download, recognition)
    planned = [i for i in preview.plan.items if i.target]
    assert {i.status for i in planned} == {"planned"}
    assert not [r for r in preview.reasons if r.blocking]
    assert media.library_files() == set()                  # preview writes nothing

    result = await engine.apply(download, recognition)
    assert (result.outcome, result.linked, result.copied, result.existing) == ("done", 6, 0, 0)
    season = media.series / FOLDER / "Season 01"
    for episode in (1, 2, 3):
        video = season / f"Fargo S01E{episode:02d}.mkv"
        source = media.downloads / "Fargo.S01" / f"Fargo.S01.S01E{episode:02d}.mkv"
        assert _ino(video) == _ino(source)
        assert os.stat(source).st_nlink == 2
        assert (season / f"Fargo S01E{episode:02d}.en.srt").exists()
    assert not any(p.endswith(".nfo") for p in media.library_files())
    batch = await store.get_batch(result.batch_id)
    assert batch.status is BatchStatus.COMMITTED
    rows = await store.links_for_batch(result.batch_id)
    assert {r.status for r in rows} == {LinkStatus.LINKED}
    assert all(r.dst_ino == r.src_ino and r.src_mtime_ns for r in rows)

    again = await engine.apply(download, recognition)        # idempotent: same inodes are there
    assert (again.outcome, again.linked, again.existing) == ("done", 0, 6)
    first = await store.links_for_batch(result.batch_id)
    assert {r.status for r in first} == {LinkStatus.SUPERSEDED}
    media.check_sources()


async def test_movie_with_subtitles_and_extras(engine, store, media):
    download = await _download(store, media, "Heat.1995.1080p")
    base = "Heat.1995.1080p"
    for path in (f"{base}/Heat.1995.1080p.mkv", f"{base}/Heat.1995.1080p.rus.srt",
                 f"{base}/Heat.1995.1080p.eng.forced.srt", f"{base}/Featurettes/Making of.mkv"):
        media.source(path)
    video = f"{base}/Heat.1995.1080p.mkv"
    plan = Plan((
        PlanItem(video, 1, Role.VIDEO),
        PlanItem(f"{base}/Heat.1995.1080p.rus.srt", 1, Role.SUBTITLE, language="ru", attached_to=video),
        PlanItem(f"{base}/Heat.1995.1080p.eng.forced.srt", 1, Role.SUBTITLE, language="en",
                 flags=("forced",), attached_to=video),
        PlanItem(f"{base}/Featurettes/Making of.mkv", 1, Role.EXTRA, extra_kind="featurettes"),
    ))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.MOVIE, title="Heat", year=1995, plan=plan, provider="tmdb", provider_id="949"))
    result = await engine.apply(download, recognition)
    assert (result.outcome, result.linked) == ("done", 4)
    folder = "movies/Heat (1995) [tmdbid-949]"
    assert media.library_files() == {
        f"{folder}/Heat (1995) [tmdbid-949].mkv", f"{folder}/Heat (1995) [tmdbid-949].ru.srt",
        f"{folder}/Heat (1995) [tmdbid-949].en.forced.srt", f"{folder}/featurettes/Making of.mkv",
    }


async def test_collision_goes_to_review_and_lays_nothing(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    taken = media.series / FOLDER / "Season 01" / "Fargo S01E02.mkv"
    taken.parent.mkdir(parents=True)
    taken.write_bytes(b"a file somebody else put here")
    preview = await engine.preview(download, recognition)
    assert [i.status for i in preview.plan.items if i.target] == ["planned", "collision", "planned"]
    assert any(r.code == "collision" and r.blocking and str(taken) in r.message for r in preview.reasons)

    result = await engine.apply(download, recognition)
    assert result.outcome == "collision"
    assert result.collisions == (str(taken),)
    assert taken.read_bytes() == b"a file somebody else put here"
    assert media.library_files() == {f"series/{FOLDER}/Season 01/Fargo S01E02.mkv"}
    assert await store.batches_for_download(download.id) == []


async def test_a_collision_appearing_mid_batch_rolls_everything_back(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01", episodes=range(1, 6))
    real_link = os.link
    calls = []

    def racing_link(src, dst, *args, **kwargs):
        calls.append(dst)
        if len(calls) == 3:      # somebody drops a file there between planning and linking
            Path(dst).write_bytes(b"raced in")
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", racing_link)
    result = await engine.apply(download, recognition)
    assert result.outcome == "collision"
    assert result.collisions == (str(calls[2]),)
    assert media.library_files() == {str(Path(calls[2]).relative_to(media.root))}
    assert _read(calls[2]) == b"raced in"
    assert (await store.get_batch(result.batch_id)).status is BatchStatus.ROLLED_BACK
    rows = await store.links_for_batch(result.batch_id)
    assert not [r for r in rows if r.live]


async def test_an_io_error_mid_batch_fails_and_rolls_back(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01", episodes=range(1, 6))
    real_link = os.link
    calls = []

    def failing_third(src, dst, *args, **kwargs):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(errno.EIO, "I/O error", str(src), None, str(dst))
        return real_link(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "link", failing_third)
    result = await engine.apply(download, recognition)
    assert result.outcome == "failed"
    assert "I/O error" in result.message
    assert media.library_files() == set()
    assert not (media.series / FOLDER).exists()              # emptied folders are pruned
    assert (await store.get_batch(result.batch_id)).status is BatchStatus.ROLLED_BACK


async def test_copy_fallback_is_visible_and_undoable(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01")
    monkeypatch.setattr(os, "link", _failing_link(errno.EXDEV))
    result = await engine.apply(download, recognition)
    assert (result.outcome, result.copied, result.linked) == ("done", 3, 0)
    assert len(result.warnings) == 3
    assert all("EXDEV" in w for w in result.warnings)
    season = media.series / FOLDER / "Season 01"
    assert not [n for n in os.listdir(season) if n.startswith(fs.TEMP_PREFIX)]
    rows = await store.links_for_batch(result.batch_id)
    assert {r.status for r in rows} == {LinkStatus.COPIED}
    assert all(r.dst_ino != r.src_ino and "copied" in r.message for r in rows)

    again = await engine.apply(download, recognition)      # our own copies are recognised
    assert (again.outcome, again.existing, again.copied) == ("done", 3, 0)

    undone = await engine.undo(download)
    assert undone.complete
    assert len(undone.removed) == 3
    assert media.library_files() == set()


async def test_undo_refuses_a_copy_whose_source_changed(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01", episodes=[1])
    with monkeypatch.context() as patch:
        patch.setattr(os, "link", _failing_link(errno.EPERM))
        assert (await engine.apply(download, recognition)).copied == 1
    source = media.downloads / "Fargo.S01" / "Fargo.S01.S01E01.mkv"
    media.forget(source)
    with source.open("ab") as handle:          # qBittorrent rechecked and rewrote the source
        handle.write(b" and more")
    undone = await engine.undo(download)
    assert not undone.complete
    assert "changed" in undone.refused[0][1]
    assert (media.series / FOLDER / "Season 01" / "Fargo S01E01.mkv").exists()


# ---------------------------------------------------------------------------- undo


async def test_undo_removes_only_its_batch_and_prunes_to_the_root(engine, store, media):
    first, rec1 = await _season(store, media, "Fargo.S01")
    second, rec2 = await _season(store, media, "Fargo.S02", season=2)
    other, rec3 = await _season(store, media, "Other.S01", title="Other", year=2001, ids=("tvdb", "7"))
    for download, recognition in ((first, rec1), (second, rec2), (other, rec3)):
        assert (await engine.apply(download, recognition)).outcome == "done"
    undone = await engine.undo(second)
    assert undone.complete
    assert len(undone.removed) == 3
    assert not (media.series / FOLDER / "Season 02").exists()
    assert len(list((media.series / FOLDER / "Season 01").iterdir())) == 3
    assert len(list((media.series / "Other (2001) [tvdbid-7]" / "Season 01").iterdir())) == 3
    assert (await store.batches_for_download(second.id))[0].status is BatchStatus.UNDONE

    await engine.undo(first)
    await engine.undo(other)
    assert media.library_files() == set()
    assert list(media.series.iterdir()) == []
    assert media.series.is_dir()
    assert (await engine.undo(first)).complete                 # nothing left: still complete


async def test_undo_refuses_the_last_copy_and_a_replaced_file(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    await engine.apply(download, recognition)
    season = media.series / FOLDER / "Season 01"
    gone = media.downloads / "Fargo.S01" / "Fargo.S01.S01E01.mkv"
    media.forget(gone)
    gone.unlink()                                    # the torrent's data was deleted: nlink 1
    replaced = season / "Fargo S01E02.mkv"
    replaced.unlink()
    replaced.write_bytes(b"a human's better encode")
    undone = await engine.undo(download)
    assert not undone.complete
    refused = dict(undone.refused)
    assert "last copy" in refused[str(season / "Fargo S01E01.mkv")]
    assert "replaced" in refused[str(replaced)]
    assert undone.removed == (str(season / "Fargo S01E03.mkv"),)
    assert (season / "Fargo S01E01.mkv").read_bytes() == b"Fargo.S01 episode 1"
    assert replaced.read_bytes() == b"a human's better encode"
    live = await store.links_for_download(download.id, [LinkStatus.LINKED])
    assert len(live) == 2
    assert all("undone refused" in r.message for r in live)


async def test_supersede_moves_ownership_to_the_newer_download(engine, store, media):
    old, recognition = await _season(store, media, "Fargo.S01")
    await engine.apply(old, recognition)
    # The same torrent added again months later: same files, same recognition.
    new = await _download(store, media, "Fargo.S01")
    rec = await store.save_recognition(new.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Fargo", year=2014, plan=recognition.plan,
        provider=FARGO[0], provider_id=FARGO[1]))
    result = await engine.apply(new, rec)
    assert (result.outcome, result.existing, result.linked) == ("done", 3, 0)
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.SUPERSEDED}
    assert (await engine.undo(old)).complete
    assert media.library_files()
    assert (await engine.undo(new)).removed
    assert media.library_files() == set()


# ---------------------------------------------------------------------------- convergence and merge


async def test_second_season_converges_into_the_first_seasons_folder(engine, store, media):
    s1, rec1 = await _season(store, media, "Fargo.S01")
    await engine.apply(s1, rec1)
    s2, rec2 = await _season(store, media, "Fargo.S02", title="Фарго", year=2015, season=2)
    preview = await engine.preview(s2, rec2)
    assert any(r.code == "folder_inherited" for r in preview.reasons)
    assert {i.target.split("/")[0] for i in preview.plan.items if i.target} == {FOLDER}
    assert (await engine.apply(s2, rec2)).linked == 3
    assert sorted(p.name for p in (media.series / FOLDER).iterdir()) == ["Season 01", "Season 02"]
    assert [p.name for p in media.series.iterdir()] == [FOLDER]


async def test_a_deleted_folder_is_no_anchor(engine, store, media):
    s1, rec1 = await _season(store, media, "Fargo.S01")
    await engine.apply(s1, rec1)
    for path in sorted((media.series / FOLDER).rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (media.series / FOLDER).rmdir()                    # Jellyfin (or a human) removed the folder
    s2, rec2 = await _season(store, media, "Fargo.S02", title="Фарго", year=2015, season=2)
    assert (await engine.apply(s2, rec2)).outcome == "done"
    assert [p.name for p in media.series.iterdir()] == ["Фарго (2015) [tvdbid-269613]"]


async def test_several_live_folders_block(engine, store, media):
    a, rec_a = await _season(store, media, "Fargo.S01")
    await engine.apply(a, rec_a)
    b, rec_b = await _season(store, media, "Fargo.S02", title="Фарго", year=2015, season=2, ids=("tvdb", "1"))
    await engine.apply(b, rec_b)
    # b was matched wrongly at first; its re-recognition now says the same show as a.
    await store.save_recognition(b.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Фарго", year=2015, plan=rec_b.plan,
        provider=FARGO[0], provider_id=FARGO[1]))
    c, rec_c = await _season(store, media, "Fargo.S03", season=3)
    preview = await engine.preview(c, rec_c)
    blocking = [r for r in preview.reasons if r.blocking]
    assert [r.code for r in blocking] == ["several_title_folders"]
    assert FOLDER in blocking[0].message
    assert "Фарго (2015)" in blocking[0].message
    before = media.library_files()
    result = await engine.apply(c, rec_c)
    assert result.outcome == "collision"
    assert "several live folders" in result.message
    assert media.library_files() == before


async def test_merge_top_up_lays_only_missing_episodes(engine, store, media):
    old, rec_old = await _season(store, media, "Fargo.S01.720p", episodes=range(1, 6))
    await engine.apply(old, rec_old)
    # The complete season, another release of the same quality (a better one is a question:
    # test_upgrades.py): E01-E04 as .mp4 (other names), E05 same name.
    new = await _download(store, media, "Fargo.S01.720p-OTHER")
    items = []
    for episode in range(1, 11):
        ext = ".mp4" if episode < 5 else ".mkv"
        path = f"Fargo.S01.720p-OTHER/Fargo.S01E{episode:02d}.720p{ext}"
        media.source(path, f"1080p {episode}".encode())
        items.append(PlanItem(path, 10, Role.VIDEO, season=1, episodes=(episode,)))
    rec_new = await store.save_recognition(new.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Fargo", year=2014, plan=Plan(tuple(items)),
        provider=FARGO[0], provider_id=FARGO[1]))
    preview = await engine.preview(new, rec_new)
    assert [i.status for i in preview.plan.items] == ["skipped"] * 5 + ["planned"] * 5
    assert not [r for r in preview.reasons if r.blocking]
    result = await engine.apply(new, rec_new)
    assert (result.outcome, result.linked, result.skipped) == ("done", 5, 5)
    season = media.series / FOLDER / "Season 01"
    for episode in range(1, 6):
        expected = f"Fargo.S01.720p episode {episode}".encode()
        assert (season / f"Fargo S01E{episode:02d}.mkv").read_bytes() == expected
    for episode in range(6, 11):
        assert (season / f"Fargo S01E{episode:02d}.mkv").read_bytes() == f"1080p {episode}".encode()
    assert not list(season.glob("*.mp4"))
    assert {r.status for r in await store.links_for_download(old.id)} == {LinkStatus.LINKED}   # still A's
    # Ownership is per path: undoing the top-up removes only E06-E10.
    assert len((await engine.undo(new)).removed) == 5
    assert len(list(season.iterdir())) == 5


# ---------------------------------------------------------------------------- titles


async def test_title_groups_and_whole_title_delete(engine, store, media):
    s1, rec1 = await _season(store, media, "Fargo.S01")
    s2, rec2 = await _season(store, media, "Fargo.S02", title="Фарго", season=2, episodes=[1, 2])
    other, rec3 = await _season(store, media, "Other", title="Other", year=2001, ids=("tvdb", "7"))
    for download, recognition in ((s1, rec1), (s2, rec2), (other, rec3)):
        await engine.apply(download, recognition)
    groups = {g.provider_id: g for g in await engine.title_groups()}
    fargo = groups[FARGO[1]]
    assert {m.download_id for m in fargo.members} == {s1.id, s2.id}
    assert fargo.folders == (str(media.series / FOLDER),) == fargo.live_folders
    assert fargo.seasons == {1: (1, 2, 3), 2: (1, 2)}

    (media.series / FOLDER / "tvshow.nfo").write_text("Jellyfin's metadata")
    result = await engine.delete_title(*FARGO)
    assert set(result.reverted) == set(result.torrents) == {s1.id, s2.id}
    assert all(r.complete for _, r in result.results)
    assert result.kept_folders
    assert "not empty" in result.kept_folders[0][1]
    assert not result.complete
    assert media.library_files() == {f"series/{FOLDER}/tvshow.nfo"} | {
        f"series/Other (2001) [tvdbid-7]/Season 01/Other S01E0{e}.mkv" for e in (1, 2, 3)}

    (media.series / FOLDER / "tvshow.nfo").unlink()
    s3, rec4 = await _season(store, media, "Fargo.S03", season=3, episodes=[1])
    await engine.apply(s3, rec4)
    again = await engine.delete_title(*FARGO)
    assert again.removed_folders == (str(media.series / FOLDER),)
    assert again.complete
    assert not (media.series / FOLDER).exists()
    assert [g.provider_id for g in await engine.title_groups()] == ["7"]


# ---------------------------------------------------------------------------- reconciliation


async def test_reconciliation_transitions_and_relink(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    assert await engine.targets_present(download) is None
    await engine.apply(download, recognition)
    download = await _to_done(store, download)
    assert await engine.targets_present(download) is True
    assert await engine.reconcile(download, torrent_present=True) is None
    assert await engine.reconcile(download, torrent_present=False) is State.ORPHANED

    season = media.series / FOLDER / "Season 01"
    for path in season.iterdir():
        path.unlink()
    assert await engine.targets_present(download) is False
    assert await engine.reconcile(download, torrent_present=True) is State.TARGET_MISSING
    assert await engine.reconcile(download, torrent_present=False) is State.DELETED
    download, _ = await store.transition(download.id, State.TARGET_MISSING, reason="t", actor=Actor.RECONCILE)
    assert await engine.reconcile(download, torrent_present=True) is None
    assert await engine.reconcile(download, torrent_present=False) is State.DELETED

    result = await engine.relink(download)
    assert (result.outcome, result.linked) == ("done", 3)
    assert len(list(season.iterdir())) == 3
    assert await engine.reconcile(download, torrent_present=True) is State.DONE
    removed = [r for r in await store.links_for_download(download.id) if r.status is LinkStatus.REMOVED]
    assert len(removed) == 3
    assert all("relinked" in r.message for r in removed)


async def test_orphaned_becomes_deleted_when_the_files_go(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01", episodes=[1])
    await engine.apply(download, recognition)
    download = await _to_done(store, download)
    download, _ = await store.transition(download.id, State.ORPHANED, reason="t", actor=Actor.RECONCILE)
    assert await engine.reconcile(download, torrent_present=False) is None
    (media.series / FOLDER / "Season 01" / "Fargo S01E01.mkv").unlink()
    assert await engine.reconcile(download, torrent_present=False) is State.DELETED


# ---------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("target", ["../../etc/passwd", "/etc/passwd", "Show/../../../x.mkv", "a\0b"])
async def test_inspect_refuses_hostile_targets(store, media, target):
    download = await _download(store, media, "Show")
    media.source("Show/e.mkv")
    plan = Plan((PlanItem("Show/e.mkv", 1, Role.VIDEO, library="series", target=target, status="planned"),))
    result = inspect(download, plan, media.paths, {"series": media.series}, merge=False)
    assert result.unsafe
    assert not result.targets


@pytest.mark.parametrize("source", ["../../../etc/passwd", "/etc/passwd", "Show/../../outside.mkv"])
async def test_a_hostile_source_is_refused_and_nothing_is_written(engine, store, media, source):
    download = await _download(store, media, "Show")
    plan = Plan((PlanItem(source, 1, Role.VIDEO, season=1, episodes=(1,)),))
    recognition = await store.save_recognition(download.id, RecognitionDraft(
        media_type=MediaType.SERIES, title="Show", year=2020, plan=plan, provider="tvdb", provider_id="5"))
    preview = await engine.preview(download, recognition)
    assert any(r.code == "unsafe_path" and r.blocking for r in preview.reasons)
    with pytest.raises(UnsafePath):
        await engine.apply(download, recognition)
    assert media.library_files() == set()
    assert list(media.series.iterdir()) == []
    assert await store.batches_for_download(download.id) == []


async def test_a_symlinked_title_folder_is_refused(engine, store, media, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (media.series / FOLDER).symlink_to(outside, target_is_directory=True)
    download, recognition = await _season(store, media, "Fargo.S01")
    with pytest.raises(UnsafePath, match="symlink"):
        await engine.apply(download, recognition)
    assert list(outside.iterdir()) == []
    assert await store.batches_for_download(download.id) == []


def _after_journaling(store, monkeypatch, action) -> None:
    """Run `action` once the batch's rows are written, before the first link."""
    real_open = store.open_batch

    async def open_batch(*args, **kwargs):
        opened = await real_open(*args, **kwargs)
        action()
        return opened

    monkeypatch.setattr(store, "open_batch", open_batch)


@pytest.mark.parametrize("existed", [True, False])
async def test_a_folder_swapped_for_a_symlink_after_planning_is_refused(
    engine, store, media, tmp_path, monkeypatch, existed
):
    outside = tmp_path / "outside"
    outside.mkdir()
    title = media.series / FOLDER
    if existed:
        (title / "Season 01").mkdir(parents=True)
    download, recognition = await _season(store, media, "Fargo.S01")

    def swap() -> None:
        if existed:
            (title / "Season 01").rmdir()
            title.rmdir()
        title.symlink_to(outside, target_is_directory=True)

    _after_journaling(store, monkeypatch, swap)
    result = await engine.apply(download, recognition)
    assert result.outcome == "failed"
    assert "symlink" in result.message
    assert list(outside.iterdir()) == []
    [batch] = await store.batches_for_download(download.id)
    assert batch.status is BatchStatus.ROLLED_BACK
    assert not [r for r in await store.links_for_batch(batch.id) if r.live]


async def test_a_source_replaced_after_planning_is_not_linked(engine, store, media, monkeypatch):
    download, recognition = await _season(store, media, "Fargo.S01")
    source = media.downloads / "Fargo.S01" / "Fargo.S01.S01E02.mkv"
    media.forget(source)

    def recheck() -> None:          # a new file under the old name: a new inode
        fresh = source.with_name("fresh.part")
        fresh.write_bytes(b"rewritten by a recheck")
        os.replace(fresh, source)

    _after_journaling(store, monkeypatch, recheck)
    result = await engine.apply(download, recognition)
    assert result.outcome == "failed"
    assert "replaced since it was planned" in result.message
    assert media.library_files() == set()
    assert source.read_bytes() == b"rewritten by a recheck"


async def test_undo_refuses_targets_behind_a_folder_swapped_for_a_symlink(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    assert (await engine.apply(download, recognition)).outcome == "done"
    season, moved = media.series / FOLDER / "Season 01", media.series / FOLDER / "Moved"
    season.rename(moved)
    season.symlink_to(moved, target_is_directory=True)      # inside the root, still never followed
    undone = await engine.undo(download)
    assert not undone.complete
    assert len(undone.refused) == 3
    assert all("symlink" in why for _, why in undone.refused)
    assert len(list(moved.iterdir())) == 3


async def test_undo_with_an_unmounted_library_refuses_and_keeps_the_journal(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01")
    assert (await engine.apply(download, recognition)).outcome == "done"
    away = media.root / "series-unmounted"
    media.series.rename(away)                      # the share is gone: nothing looks present
    undone = await engine.undo(download)
    assert not undone.complete
    assert len(undone.refused) == 3
    assert all("not reachable" in why for _, why in undone.refused)
    assert len(await store.links_for_download(download.id, [LinkStatus.LINKED])) == 3
    away.rename(media.series)                      # mounted again: the undo goes through
    assert (await engine.undo(download)).complete
    assert media.library_files() == set()


async def test_new_folders_and_their_parents_are_made_durable_once(engine, store, media, monkeypatch):
    synced: list[Path] = []
    real_fsync_dir = fs.fsync_dir

    def fsync_dir(path) -> None:
        synced.append(Path(path).resolve())
        real_fsync_dir(path)

    monkeypatch.setattr(fs, "fsync_dir", fsync_dir)
    download, recognition = await _season(store, media, "Fargo.S01", subtitles=True)
    assert (await engine.apply(download, recognition)).linked == 6
    folders = (media.series, media.series / FOLDER, media.series / FOLDER / "Season 01")
    assert {p.resolve() for p in folders} <= set(synced)
    assert len(synced) == len(set(synced))


async def test_a_hostile_title_stays_inside_the_library(engine, store, media, tmp_path):
    download, recognition = await _season(store, media, "Evil", title="../../../etc/passwd",
                                          ids=("tvdb", "66"))
    result = await engine.apply(download, recognition)
    assert result.outcome == "done"
    rows = await store.links_for_download(download.id)
    assert rows
    for row in rows:
        assert _inside(row.dst_path, media.series)
        assert ".." not in Path(row.dst_path).parts
    outside = {p.name for p in tmp_path.iterdir()} - {"media"}
    assert outside <= {"jellybit.db", "jellybit.db-wal", "jellybit.db-shm"}


# ---------------------------------------------------------------------------- crash safety

CHILD = textwrap.dedent("""
    import asyncio, errno, json, os, signal, sys
    args = json.loads(sys.argv[1])
    from jellybit.adapters.store import Store
    from jellybit.config import PathsConfig
    from jellybit.adapters.library.layouter import LayoutEngine

    real_link, real_fsync = os.link, os.fsync
    calls = {"link": 0, "fsync": 0}

    def link(src, dst, *a, **k):
        if args["mode"] == "exdev":
            raise OSError(errno.EXDEV, "Invalid cross-device link", str(src), None, str(dst))
        real_link(src, dst, *a, **k)
        calls["link"] += 1
        if calls["link"] == args["kill_after"]:
            os.kill(os.getpid(), signal.SIGKILL)

    def fsync(fd):
        real_fsync(fd)
        calls["fsync"] += 1
        if args["mode"] == "exdev" and calls["fsync"] == args["kill_after"]:
            os.kill(os.getpid(), signal.SIGKILL)

    os.link, os.fsync = link, fsync

    async def main():
        store = Store(args["db"])
        await store.open()
        engine = LayoutEngine(store, PathsConfig(**args["paths"]), chunk=3)
        download = await store.get_download(args["download"])
        await engine.apply(download, await store.current_recognition(download.id))

    asyncio.run(main())
    sys.exit(3)  # the kill must come first
""")


def _crash(store, media, download: Download, mode: str, kill_after: int) -> None:
    args = {"db": str(store.path), "download": download.id, "mode": mode, "kill_after": kill_after,
            "paths": {k: str(v) for k, v in media.paths.model_dump().items() if k != "path_map"}}
    proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=ROOT, capture_output=True,
                          timeout=60)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()


async def _snapshot(store, media, download_id: str):
    rows = sorted((r.dst_path, r.status, r.dst_ino) for r in await store.links_for_download(download_id))
    batches = sorted((b.id, b.status) for b in await store.batches_for_download(download_id))
    files = sorted((p, os.lstat(media.root / p).st_ino) for p in media.library_files())
    temps = [p for p in media.root.rglob(f"{fs.TEMP_PREFIX}*")]
    return rows, batches, files, temps


async def test_a_kill_mid_batch_is_rolled_forward_by_recover(engine, store, media):
    download, recognition = await _season(store, media, "Fargo.S01", episodes=range(1, 11))
    _crash(store, media, download, "link", kill_after=7)
    [batch] = await store.open_batches()
    statuses = [r.status for r in await store.links_for_batch(batch.id)]
    # Plain links stay pending until the commit marks them; recovery settles them from the disk.
    assert statuses == [LinkStatus.PENDING] * 10
    assert len(media.library_files()) == 7

    await engine.recover()
    assert (await store.get_batch(batch.id)).status is BatchStatus.COMMITTED
    rows = await store.links_for_batch(batch.id)
    assert [r.status for r in rows] == [LinkStatus.LINKED] * 10
    assert all(_ino(Path(r.dst_path)) == r.src_ino for r in rows)
    assert len(media.library_files()) == 10
    assert len({r.dst_path for r in rows}) == 10
    first = await _snapshot(store, media, download.id)
    await engine.recover()
    assert await _snapshot(store, media, download.id) == first
    # The worker re-runs apply for a download left in `applying`: nothing new, nothing doubled.
    again = await engine.apply(download, recognition)
    assert (again.outcome, again.existing, again.linked) == ("done", 10, 0)
    assert len(media.library_files()) == 10
    assert (await engine.undo(download)).complete
    assert media.library_files() == set()


async def test_a_kill_mid_batch_is_rolled_back_when_it_cannot_complete(engine, store, media):
    download, _recognition = await _season(store, media, "Fargo.S01", episodes=range(1, 8))
    _crash(store, media, download, "link", kill_after=4)
    [batch] = await store.open_batches()
    pending = [r for r in await store.links_for_batch(batch.id) if r.status is LinkStatus.PENDING]
    blocker = Path(pending[-1].dst_path)
    _write(blocker, b"appeared while we were down")
    await engine.recover()
    assert (await store.get_batch(batch.id)).status is BatchStatus.ROLLED_BACK
    assert media.library_files() == {str(blocker.relative_to(media.root))}
    assert _read(blocker) == b"appeared while we were down"
    assert not [r for r in await store.links_for_batch(batch.id) if r.live]
    first = await _snapshot(store, media, download.id)
    await engine.recover()
    assert await _snapshot(store, media, download.id) == first


@pytest.mark.parametrize("kill_after", [6, 7])
async def test_a_kill_mid_copy_leaves_no_temp_file_and_no_duplicate(engine, store, media, kill_after):
    download, _recognition = await _season(store, media, "Fargo.S01", episodes=range(1, 6))
    _crash(store, media, download, "exdev", kill_after=kill_after)
    await engine.recover()
    rows = await store.links_for_download(download.id)
    assert all(r.status in (LinkStatus.COPIED, LinkStatus.LINKED) for r in rows)
    assert len(rows) == 5
    assert sum(r.status is LinkStatus.COPIED for r in rows) >= 3
    assert len(media.library_files()) == 5
    assert not list(media.root.rglob(f"{fs.TEMP_PREFIX}*"))
    for row in rows:
        assert _ino(Path(row.dst_path)) == row.dst_ino
        assert _read(row.dst_path) == _read(row.src_path)
    first = await _snapshot(store, media, download.id)
    await engine.recover()
    assert await _snapshot(store, media, download.id) == first
    assert (await engine.undo(download)).complete
    assert media.library_files() == set()
