"""core/torrent_files: which files are complete, their names, and when early layout is unsafe."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from jellybit.core.ports import PathPlace, TorrentFile, TorrentInfo
from jellybit.core.torrent_files import (
    INCOMPLETE_SUFFIX,
    complete_sources,
    early_layout_problems,
    final_name,
    on_disk_name,
    torrent_problem,
)


def _file(name: str, progress: float, priority: int = 1) -> TorrentFile:
    return TorrentFile(index=0, name=name, size=1, progress=progress, priority=priority)


def test_complete_means_every_piece_and_wanted() -> None:
    files = [_file("a", 1.0), _file("b", 0.999), _file("c", 1.0, priority=0), _file("d", 1, priority=7)]
    assert complete_sources(files) == {"a", "d"}


@given(st.text(min_size=1).filter(lambda n: not n.endswith(INCOMPLETE_SUFFIX)), st.booleans(), st.booleans())
def test_final_name_undoes_the_suffix(name: str, complete: bool, suffix: bool) -> None:
    on_disk = on_disk_name(name, complete=complete, incomplete_suffix=suffix)
    assert final_name(on_disk) == name
    assert on_disk.endswith(INCOMPLETE_SUFFIX) == (suffix and not complete)


def _places(devices: dict[str, int | None], outside: frozenset[str] = frozenset()):
    return lambda path: PathPlace(path, devices.get(path), path not in outside)


PREFS = {"save_path": "/downloads", "temp_path": "/incomplete", "temp_path_enabled": True}


def test_a_temp_folder_on_the_same_filesystem_is_safe() -> None:
    assert early_layout_problems(PREFS, _places({"/downloads": 1, "/incomplete": 1})) == ()
    assert early_layout_problems({**PREFS, "temp_path_enabled": False}, _places({})) == ()


def test_a_temp_folder_on_another_filesystem_is_not() -> None:
    (problem,) = early_layout_problems(PREFS, _places({"/downloads": 1, "/incomplete": 2}))
    assert "another filesystem" in problem
    assert "/incomplete" in problem


def test_a_temp_folder_jellybit_cannot_see_or_measure_is_not() -> None:
    (outside,) = early_layout_problems(PREFS, _places({"/downloads": 1, "/incomplete": 1},
                                                      frozenset({"/incomplete"})))
    assert "outside paths.downloads" in outside
    (unknown,) = early_layout_problems(PREFS, _places({"/downloads": 1}))
    assert "cannot tell" in unknown


def test_a_torrent_with_its_own_download_path() -> None:
    torrent = TorrentInfo(hash="a" * 40, infohash_v1="a" * 40, infohash_v2="", name="x", state="downloading",
                          progress=0.5, dlspeed=1, eta=None, size=1, total_size=1, amount_left=1,
                          content_path="/t/x", save_path="/downloads", category="", tags=(), added_on=None,
                          completion_on=None, download_path="/t")
    assert torrent_problem(torrent, _places({"/downloads": 1, "/t": 1})) is None
    assert "another filesystem" in torrent_problem(torrent, _places({"/downloads": 1, "/t": 3}))
    assert torrent_problem(replace(torrent, download_path=""), _places({})) is None
