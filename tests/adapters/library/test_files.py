"""The filesystem edge with real hardlinks in tmp_path; os.link is made to fail for the fallback."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.roots import inside
from jellybit.core.links import LinkStatus
from jellybit.errors import AdapterError


def _failing_link(code: int):
    def link(src, dst, *args, **kwargs):
        raise OSError(code, os.strerror(code), str(src), None, str(dst))

    return link


def _temps(directory: Path) -> list[str]:
    return [n for n in os.listdir(directory) if n.startswith(fs.TEMP_PREFIX)]


def test_link_makes_a_hardlink_of_the_source(media):
    src = media.source("Show/e01.mkv")
    dst = media.series / "Show (2020)" / "Season 01" / "Show S01E01.mkv"
    outcome = fs.link_file(src, dst)
    assert outcome.status is LinkStatus.LINKED
    assert outcome.warning is None
    assert os.stat(dst).st_ino == os.stat(src).st_ino == outcome.dst_ino
    assert os.stat(src).st_nlink == 2


def test_linking_again_reports_exists(media):
    src = media.source("Show/e01.mkv")
    dst = media.series / "Show" / "e01.mkv"
    fs.link_file(src, dst)
    again = fs.link_file(src, dst)
    assert again.status is LinkStatus.EXISTS
    assert again.dst_ino == os.stat(src).st_ino
    assert os.stat(src).st_nlink == 2


def test_a_different_file_is_a_collision_and_is_never_overwritten(media):
    src = media.source("Movie/movie.mkv")
    dst = media.movies / "Movie (2001)" / "Movie (2001).mkv"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"somebody else's film")
    outcome = fs.link_file(src, dst)
    assert outcome.status is LinkStatus.COLLISION
    assert dst.read_bytes() == b"somebody else's film"
    assert os.stat(src).st_nlink == 1


@pytest.mark.parametrize("code", [errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP])
def test_no_hardlink_possible_copies_visibly(media, monkeypatch, code):
    src = media.source("Movie/movie.mkv", b"x" * 100_000)
    dst = media.movies / "Movie (2001)" / "Movie (2001).mkv"
    monkeypatch.setattr(os, "link", _failing_link(code))
    noted: list[int] = []
    outcome = fs.link_file(src, dst, tag="row1", on_copy=noted.append)
    assert outcome.status is LinkStatus.COPIED
    assert outcome.warning
    assert "copied" in outcome.warning
    assert errno.errorcode[code] in outcome.warning
    assert dst.read_bytes() == src.read_bytes()
    assert os.stat(dst).st_ino != os.stat(src).st_ino
    assert noted == [os.stat(dst).st_ino]             # the journal learns the copy's inode first
    assert os.stat(dst).st_mtime_ns == os.stat(src).st_mtime_ns
    assert _temps(dst.parent) == []


def test_copy_fallback_never_replaces_a_file_that_is_there(media, monkeypatch):
    src = media.source("Movie/movie.mkv", b"new")
    dst = media.movies / "Movie" / "Movie.mkv"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"old, keep me")
    monkeypatch.setattr(os, "link", _failing_link(errno.EXDEV))
    outcome = fs.link_file(src, dst)
    assert outcome.status is LinkStatus.COLLISION
    assert dst.read_bytes() == b"old, keep me"
    assert _temps(dst.parent) == []


def test_copy_fallback_of_the_same_file_twice_is_a_collision_with_the_first_copy(media, monkeypatch):
    src = media.source("Movie/movie.mkv")
    dst = media.movies / "Movie" / "Movie.mkv"
    monkeypatch.setattr(os, "link", _failing_link(errno.EXDEV))
    first = fs.link_file(src, dst)
    second = fs.link_file(src, dst)
    assert first.status is LinkStatus.COPIED
    # A copy is a different inode: only the journal can tell it is ours (the engine does).
    assert second.status is LinkStatus.COLLISION
    assert second.dst_ino == first.dst_ino


def test_other_link_errors_are_domain_errors(media, monkeypatch):
    src = media.source("Movie/movie.mkv")
    dst = media.movies / "Movie" / "Movie.mkv"
    monkeypatch.setattr(os, "link", _failing_link(errno.EIO))
    with pytest.raises(AdapterError, match="cannot link"):
        fs.link_file(src, dst)
    assert not dst.exists()


def test_directories_are_0755_whatever_the_umask(media):
    src = media.source("Show/e01.mkv")
    dst = media.series / "Show (2020)" / "Season 01" / "Show S01E01.mkv"
    old = os.umask(0o077)
    try:
        fs.link_file(src, dst)
    finally:
        os.umask(old)
    for directory in (media.series / "Show (2020)", dst.parent):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o755


def _identity(path: Path) -> tuple[int, int]:
    st = os.lstat(path)
    return st.st_dev, st.st_ino


def test_with_the_journaled_identity_a_link_costs_one_lstat_of_the_new_target(media, monkeypatch):
    src = media.source("Show/e01.mkv")
    dst = media.series / "Show" / "e01.mkv"
    dst.parent.mkdir(parents=True)
    expect = _identity(src)
    seen: list[str] = []
    real_lstat = os.lstat

    def lstat(path, *args, **kwargs):
        seen.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", lstat)
    outcome = fs.link_file(src, dst, expect=expect)
    monkeypatch.undo()
    assert seen == [str(dst)]
    assert (outcome.status, outcome.dst_dev, outcome.dst_ino) == (LinkStatus.LINKED, *expect)


def test_a_source_replaced_since_it_was_journaled_leaves_no_link(media):
    src = media.source("Show/e01.mkv")
    expect = _identity(src)
    media.forget(src)
    fresh = src.with_name("fresh.part")
    fresh.write_bytes(b"a new file under the old name")
    os.replace(fresh, src)
    dst = media.series / "Show" / "e01.mkv"
    with pytest.raises(fs.SourceMissing, match="replaced since it was planned"):
        fs.link_file(src, dst, expect=expect)
    assert not os.path.lexists(dst)
    assert os.stat(src).st_nlink == 1
    assert src.read_bytes() == b"a new file under the old name"


def test_a_source_turned_symlink_since_it_was_journaled_leaves_no_link(media, tmp_path):
    src = media.source("Show/e01.mkv")
    expect = _identity(src)
    media.forget(src)
    outside = tmp_path / "secret"
    outside.write_text("secret")
    src.unlink()
    src.symlink_to(outside)
    dst = media.series / "Show" / "e01.mkv"
    with pytest.raises(fs.SourceMissing, match="not a regular file"):
        fs.link_file(src, dst, expect=expect)
    assert not os.path.lexists(dst)
    assert os.stat(outside).st_nlink == 1


def test_with_the_journaled_identity_an_existing_target_is_judged_against_it(media):
    src = media.source("Show/e01.mkv")
    dst = media.series / "Show" / "e01.mkv"
    fs.link_file(src, dst)
    assert fs.link_file(src, dst, expect=_identity(src)).status is LinkStatus.EXISTS
    other = media.source("Show/e02.mkv")
    assert fs.link_file(other, dst, expect=_identity(other)).status is LinkStatus.COLLISION
    assert os.stat(dst).st_ino == os.stat(src).st_ino


def test_a_symlinked_or_missing_source_is_refused(media, tmp_path):
    outside = tmp_path / "secret"
    outside.write_text("secret")
    link = media.downloads / "evil.mkv"
    link.symlink_to(outside)
    media.allow(link)
    dst = media.movies / "Evil" / "Evil.mkv"
    with pytest.raises(fs.SourceMissing):
        fs.link_file(link, dst)
    with pytest.raises(fs.SourceMissing):
        fs.link_file(media.downloads / "nothing.mkv", dst)
    with pytest.raises(fs.SourceMissing):
        fs.stat_source(link)
    assert not dst.exists()
    assert os.stat(outside).st_nlink == 1


def test_stat_source_reports_identity(media):
    src = media.source("a.mkv", b"12345")
    info = fs.stat_source(src)
    st = os.stat(src)
    assert (info.dev, info.ino, info.size, info.mtime_ns) == (st.st_dev, st.st_ino, 5, st.st_mtime_ns)


def test_remove_link_removes_a_surplus_hardlink(media):
    src = media.source("a.mkv")
    dst = media.movies / "A" / "A.mkv"
    outcome = fs.link_file(src, dst)
    removed = fs.remove_link(dst, outcome.dst_ino, src)
    assert removed.removed
    assert not removed.refused
    assert not dst.exists()
    assert os.stat(src).st_nlink == 1
    assert fs.remove_link(dst, outcome.dst_ino, src).gone


def test_remove_link_refuses_the_last_copy(media):
    src = media.source("a.mkv")
    dst = media.movies / "A" / "A.mkv"
    dst.parent.mkdir(parents=True)
    dst.write_bytes(b"the only copy")
    outcome = fs.remove_link(dst, os.stat(dst).st_ino, src)
    assert outcome.refused
    assert "last copy" in outcome.reason
    assert dst.read_bytes() == b"the only copy"


def test_remove_link_refuses_a_replaced_file(media):
    src = media.source("a.mkv")
    dst = media.movies / "A" / "A.mkv"
    laid = fs.link_file(src, dst)
    dst.unlink()
    dst.write_bytes(b"a human put a better file here")
    outcome = fs.remove_link(dst, laid.dst_ino, src)
    assert outcome.refused
    assert "replaced" in outcome.reason
    assert dst.read_bytes() == b"a human put a better file here"


def test_remove_link_of_a_copy_needs_the_source_unchanged(media, monkeypatch):
    src = media.source("a.mkv", b"original")
    dst = media.movies / "A" / "A.mkv"
    with monkeypatch.context() as patch:
        patch.setattr(os, "link", _failing_link(errno.EXDEV))
        copy = fs.link_file(src, dst)
    size = os.stat(src).st_size
    media.forget(src)
    src.write_bytes(b"original plus more")     # the torrent client rewrote it
    refused = fs.remove_link(dst, copy.dst_ino, src, copied=True, size=size)
    assert refused.refused
    assert "changed" in refused.reason
    src.unlink()
    refused = fs.remove_link(dst, copy.dst_ino, src, copied=True, size=size)
    assert refused.refused
    assert "last one" in refused.reason
    assert dst.read_bytes() == b"original"


def test_remove_link_of_a_copy_with_its_source_present(media, monkeypatch):
    src = media.source("a.mkv", b"original")
    dst = media.movies / "A" / "A.mkv"
    monkeypatch.setattr(os, "link", _failing_link(errno.EXDEV))
    copy = fs.link_file(src, dst)
    assert fs.remove_link(dst, copy.dst_ino, src, copied=True, size=len(b"original")).removed
    assert not dst.exists()


def test_prune_empty_dirs_stops_at_the_root_and_at_content(media):
    deep = media.series / "Show" / "Season 01" / "extras"
    deep.mkdir(parents=True)
    (media.series / "Show" / "tvshow.nfo").write_text("jellyfin wrote this")
    removed = fs.prune_empty_dirs(deep, media.series)
    assert removed == [deep, deep.parent]
    assert (media.series / "Show").is_dir()
    (media.series / "Show" / "tvshow.nfo").unlink()
    assert fs.prune_empty_dirs(media.series / "Show", media.series) == [media.series / "Show"]
    assert media.series.is_dir()
    assert fs.prune_empty_dirs(media.series, media.series) == []


def test_inside_sees_through_symlinked_parents(media, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (media.series / "Show").symlink_to(outside, target_is_directory=True)
    assert inside(media.series / "Real" / "x.mkv", media.series)
    assert not inside(media.series / "Show" / "x.mkv", media.series)
    assert not inside(Path("relative/x.mkv"), media.series)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(existing=st.sampled_from(["none", "same", "other"]), fallback=st.booleans())
def test_link_file_never_changes_an_existing_target(tmp_path_factory, existing, fallback):
    root = tmp_path_factory.mktemp("prop")
    src = root / "src.bin"
    src.write_bytes(b"source")
    dst = root / "lib" / "dst.bin"
    dst.parent.mkdir()
    if existing == "same":
        os.link(src, dst)
    elif existing == "other":
        dst.write_bytes(b"other")
    before = dst.read_bytes() if dst.exists() else None
    real_link = os.link
    if fallback:
        os.link = _failing_link(errno.EXDEV)
    try:
        outcome = fs.link_file(src, dst)
    finally:
        os.link = real_link
    expected = {"none": {LinkStatus.LINKED, LinkStatus.COPIED}, "same": {LinkStatus.EXISTS},
                "other": {LinkStatus.COLLISION}}[existing]
    assert outcome.status in expected
    if before is not None:
        assert dst.read_bytes() == before
    assert dst.read_bytes() in (b"source", b"other")
    assert src.read_bytes() == b"source"
    assert _temps(dst.parent) == []
