"""The library's filesystem fills up in the middle of a layout: nothing half-written stays, every
record matches the disk, the sources are untouched, and once there is room again the same layout
finishes. The library is a small tmpfs of its own (so links cross devices and the copy fallback
writes real bytes until ENOSPC). Mounting needs root: CI runs as root, and there a failure to
mount fails the test instead of skipping it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from jellybit.adapters.library.layouter import LayoutEngine
from jellybit.adapters.store import Store
from jellybit.core.links import LinkStatus
from jellybit.errors import JellybitError
from tests.support.faults import check_invariants, planned_files, season_pack
from tests.support.media import Media
from tests.support.services import unavailable

SIZE_KIB = 192


def _mount(target: Path, size_kib: int, *, remount: bool = False) -> None:
    options = f"size={size_kib}k,mode=0755" + (",remount" if remount else "")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        unavailable(f"cannot mount a {size_kib} KiB tmpfs at {target} for the disk-full test "
                    f"(it needs root and CAP_SYS_ADMIN): {done.stderr.strip() or done.returncode}")


@pytest.fixture
def small_library(media: Media) -> Iterator[Path]:
    """The shows library on a tmpfs of SIZE_KIB, unmounted after the test whatever happened."""
    _mount(media.series, SIZE_KIB)
    try:
        yield media.series
    finally:
        subprocess.run(["umount", "-l", str(media.series)], capture_output=True, check=False)


async def test_a_full_library_filesystem_mid_layout(store: Store, media: Media, small_library: Path) -> None:
    download, recognition = await season_pack(store, media, "Big", 48, size=8192)   # ~430 KiB of copies
    engine = LayoutEngine(store, media.paths, chunk=8)
    try:
        result = await engine.apply(download, recognition)
        outcome = result.outcome
    except (OSError, JellybitError) as exc:
        outcome = f"raised {type(exc).__name__}"
    assert outcome != "done", outcome                # it cannot fit
    await engine.recover()
    counts = await check_invariants(store, media, download.id)
    assert counts["live"] < planned_files(recognition)

    _mount(small_library, 4096, remount=True)       # room again
    again = await engine.apply(download, recognition)
    assert again.outcome == "done", again.message
    rows = await store.links_for_download(download.id)
    laid = {r.status for r in rows if r.status in (LinkStatus.COPIED, LinkStatus.LINKED)}
    assert laid == {LinkStatus.COPIED}
    assert (await check_invariants(store, media, download.id))["live"] == planned_files(recognition)
    assert (await engine.undo(download)).complete
    assert (await check_invariants(store, media, download.id))["live"] == 0
