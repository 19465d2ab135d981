"""The filesystem half of a batch: a rollback settles rows still pending from the disk."""

from __future__ import annotations

import os
from pathlib import Path

from jellybit.adapters.library import journal
from jellybit.core.links import FileLink, LinkStatus


def _row(n: int, src: Path, dst: Path) -> FileLink:
    st = os.lstat(src)
    return FileLink(n + 1, "dl", "batch", str(src), str(dst), "video", LinkStatus.PENDING, st.st_size,
                    st.st_dev, st.st_ino, st.st_mtime_ns, None, None)


def test_a_rollback_takes_back_pending_rows_laid_and_leaves_the_rest(tmp_path):
    downloads, root = tmp_path / "downloads", tmp_path / "series"
    folder = root / "Фарго (2014)" / "Season 01"
    downloads.mkdir()
    folder.mkdir(parents=True)
    sources = []
    for n in range(4):
        src = downloads / f"Fargo.S01E0{n + 1}.mkv"
        src.write_bytes(b"episode %d" % n)
        sources.append(src)
    targets = [folder / f"Фарго S01E0{n + 1}.mkv" for n in range(4)]
    os.link(sources[0], targets[0])                 # laid by this batch, not yet marked linked
    targets[1].write_bytes(b"a stranger's file")    # appeared at a row that was never laid
    (folder / ".jellybit-4.tmp").write_bytes(b"half a copy")
    rows = [_row(n, src, dst) for n, (src, dst) in enumerate(zip(sources, targets, strict=True))]

    taken = journal.roll_back(rows, [root])

    assert taken.removed == [str(targets[0])]
    assert not targets[0].exists()
    assert sources[0].read_bytes() == b"episode 0"
    assert targets[1].read_bytes() == b"a stranger's file"
    assert sorted(os.listdir(folder)) == [targets[1].name]
    assert {u.link_id: u.status for u in taken.updates} == dict.fromkeys(
        [1, 2, 3, 4], LinkStatus.REMOVED)
    assert {u.link_id: u.message for u in taken.updates}[2] == "not laid (rolled back)"
    assert all(src.exists() for src in sources)
