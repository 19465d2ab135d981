"""The journal's link loop on real files: every target passes the containment gate before a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jellybit.adapters.library import journal
from jellybit.core.links import FileLink, LinkStatus
from jellybit.errors import UnsafePath


def row(link_id: int, src: Path, dst: str) -> FileLink:
    st = os.lstat(src) if src.exists() else None
    return FileLink(link_id, "d", "b", str(src), dst, "video", LinkStatus.PENDING, 3,
                    st.st_dev if st else 1, st.st_ino if st else 1, st.st_mtime_ns if st else 1, None, None)


@pytest.fixture
def media(tmp_path: Path) -> Path:
    (tmp_path / "series").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "downloads").mkdir()
    for name in ("a.mkv", "b.mkv"):
        (tmp_path / "downloads" / name).write_bytes(b"src")
    return tmp_path


def test_rows_in_one_folder_are_linked_and_proven(media: Path) -> None:
    root = media / "series"
    rows = [row(n, media / "downloads" / name, f"{root}/Show/Season 01/{name}")
            for n, name in enumerate(("a.mkv", "b.mkv"), 1)]
    done = journal.lay_rows(rows, [root], None)
    assert done.error is None
    assert done.linked == [1, 2]
    assert os.lstat(rows[1].dst_path).st_ino == rows[1].src_ino


@pytest.mark.parametrize("target", [
    "{root}/Show/..", "{root}/Show/.", "{root}/Show/a\x00b.mkv", "{media}/outside/b.mkv",
])
def test_a_row_the_gate_refuses_stops_the_chunk_after_the_rows_before_it(media: Path, target: str) -> None:
    """A bad name in a folder the gate already proved, or a target outside every root."""
    root = media / "series"
    rows = [row(1, media / "downloads" / "a.mkv", f"{root}/Show/a.mkv"),
            row(2, media / "downloads" / "b.mkv", target.format(root=root, media=media))]
    done = journal.lay_rows(rows, [root], None)
    assert isinstance(done.error, UnsafePath)
    assert done.linked == [1]
    assert sorted(os.listdir(root / "Show")) == ["a.mkv"]
    assert os.listdir(media / "outside") == []


def test_the_first_row_goes_through_the_gate_whatever_its_folder(media: Path) -> None:
    """A target directly under `/` has the empty folder: it must still be proven (and refused).

    The source is missing, so even a loop that skipped the gate could not write at `/`: it would
    report the missing source instead of the unsafe target.
    """
    root = media / "series"
    missing = row(1, media / "downloads" / "missing.mkv", "/jellybit-never.mkv")
    done = journal.lay_rows([missing], [root], None)
    assert isinstance(done.error, UnsafePath)
    assert done.linked == []
