"""The containment gate on real directories and symlinks."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.adapters.containment import resolve_target
from jellybit.core.sanitize import sanitize_component
from jellybit.errors import UnsafePath


def snapshot(top: Path) -> list[tuple[str, bool]]:
    """Every path under top (links not followed), to prove a refusal changed nothing."""
    out = []
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            out.append((str(path.relative_to(top)), path.is_symlink()))
    return sorted(out)


@pytest.fixture
def media(tmp_path: Path) -> Path:
    """A /srv/media stand-in: a library with one title, and an outside directory to escape to."""
    (tmp_path / "movies" / "Film (2010)").mkdir(parents=True)
    (tmp_path / "movies" / "Film (2010)" / "Film (2010).mkv").write_bytes(b"x")
    (tmp_path / "outside").mkdir()
    (tmp_path / "downloads").mkdir()
    (tmp_path / "downloads" / "source.mkv").write_bytes(b"src")
    return tmp_path


def test_normal_nested_paths_resolve_without_touching_the_disk(media: Path) -> None:
    root = media / "movies"
    before = snapshot(media)
    got = resolve_target(root, "Film (2010)/Film (2010).en.srt")
    assert got == root / "Film (2010)" / "Film (2010).en.srt"
    assert resolve_target(root, "New (2020)/extras/deep/Новый фильм.mkv") == (
        root / "New (2020)" / "extras" / "deep" / "Новый фильм.mkv"
    )
    got = resolve_target(root, PurePosixPath("Film (2010)/trailers/t.mkv"))
    assert got == root / "Film (2010)/trailers/t.mkv"
    # an existing regular file as the target is fine: the layouter decides exists/collision
    assert resolve_target(root, "Film (2010)/Film (2010).mkv") == root / "Film (2010)" / "Film (2010).mkv"
    assert snapshot(media) == before


@pytest.mark.parametrize(
    "relative",
    [
        "..", "../outside/x.mkv", "Film (2010)/../../outside/x.mkv", "/etc/passwd", "/", "", ".",
        "./x.mkv", "a/./b.mkv", "a//b.mkv", "a/b/", "a\\..\\..\\x", "a/\x00b", "CON/x.mkv", "a/nul.srt",
        "a/b:c.mkv", "a/b .mkv ", "a/trailing.", " lead/x", "a/\u202eevil.mkv", "a/" + "x" * 256,
        PurePosixPath("/etc/passwd"), PurePosixPath("a/../../outside"), PurePosixPath("."),
    ],
)
def test_escapes_and_unsanitized_targets_are_refused(media: Path, relative: str | PurePosixPath) -> None:
    before = snapshot(media)
    with pytest.raises(UnsafePath):
        resolve_target(media / "movies", relative)
    assert snapshot(media) == before


def test_symlinked_parent_leading_out_is_refused(media: Path) -> None:
    root = media / "movies"
    (root / "Evil (2020)").symlink_to(media / "outside", target_is_directory=True)
    with pytest.raises(UnsafePath, match="parent is a symlink"):
        resolve_target(root, "Evil (2020)/Evil (2020).mkv")
    with pytest.raises(UnsafePath, match="parent is a symlink"):
        resolve_target(root, "Evil (2020)/sub/deeper/x.mkv")
    assert not any((media / "outside").iterdir())


def test_symlinked_parent_inside_the_root_is_refused_too(media: Path) -> None:
    root = media / "movies"
    (root / "Film (2010)" / "alias").symlink_to(root / "Film (2010)", target_is_directory=True)
    with pytest.raises(UnsafePath, match="symlink"):
        resolve_target(root, "Film (2010)/alias/x.mkv")


def test_dangling_symlink_parent_is_refused(media: Path) -> None:
    root = media / "movies"
    (root / "Gone (2001)").symlink_to(media / "nowhere")
    with pytest.raises(UnsafePath, match="symlink"):
        resolve_target(root, "Gone (2001)/x.mkv")


def test_symlink_as_the_target_itself_is_refused(media: Path) -> None:
    # a planted link to the source would look like "same inode, already done" to a following stat
    root = media / "movies"
    (root / "Film (2010)" / "Film (2010) - 720p.mkv").symlink_to(media / "downloads" / "source.mkv")
    with pytest.raises(UnsafePath, match="target is a symlink"):
        resolve_target(root, "Film (2010)/Film (2010) - 720p.mkv")


def test_parent_that_is_a_file_is_refused(media: Path) -> None:
    with pytest.raises(UnsafePath, match="not a directory"):
        resolve_target(media / "movies", "Film (2010)/Film (2010).mkv/x.srt")


def test_symlinked_root_is_trusted_and_spelled_as_configured(media: Path) -> None:
    # NAS setups mount shares and link the library root: that link is configuration, not input.
    link = media / "movies-link"
    link.symlink_to(media / "movies", target_is_directory=True)
    got = resolve_target(link, "Film (2010)/Film (2010).en.srt")
    assert got == link / "Film (2010)" / "Film (2010).en.srt"
    assert Path(os.path.realpath(got.parent)) == (media / "movies" / "Film (2010)").resolve()


@pytest.mark.parametrize("problem", ["missing", "file", "relative"])
def test_bad_roots_are_refused(media: Path, problem: str) -> None:
    root = {"missing": media / "unmounted", "file": media / "downloads" / "source.mkv",
            "relative": Path("movies")}[problem]
    with pytest.raises(UnsafePath):
        resolve_target(root, "Film (2010)/x.mkv")
    assert not (media / "unmounted").exists()


def test_overlong_path_is_refused(media: Path) -> None:
    parts = ["x" * 250] * 20
    with pytest.raises(UnsafePath, match="longer"):
        resolve_target(media / "movies", "/".join(parts))


def test_error_is_a_domain_error_with_a_stable_code(media: Path) -> None:
    with pytest.raises(UnsafePath) as caught:
        resolve_target(media / "movies", "../x")
    assert caught.value.code == "unsafe_path"
    assert "'..'" in caught.value.message


@pytest.fixture(scope="module")
def trap(tmp_path_factory) -> tuple[Path, Path]:
    """A library root with a link leading out and a link inside, for the property test."""
    top = tmp_path_factory.mktemp("trap")
    root, outside = top / "series", top / "outside"
    (root / "Show (2000)" / "Season 01").mkdir(parents=True)
    outside.mkdir()
    (root / "Out").symlink_to(outside, target_is_directory=True)
    (root / "Show (2000)" / "Loop").symlink_to(root, target_is_directory=True)
    return root, outside


pieces = st.sampled_from(["..", ".", "", "Out", "Loop", "Show (2000)", "Season 01", "x.mkv", "\x00", "a\\b",
                          "CON", "Ёлки", "/", " ", "a.", "\u202e"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(pieces, st.text(max_size=12)), min_size=0, max_size=6).map("/".join))
def test_nothing_accepted_ever_leaves_the_root(trap: tuple[Path, Path], relative: str) -> None:
    root, outside = trap
    try:
        got = resolve_target(root, relative)
    except UnsafePath:
        return
    real = Path(os.path.realpath(got))
    assert real != root
    assert real.is_relative_to(root)
    assert not real.is_relative_to(outside)
    assert all(sanitize_component(p) == p for p in relative.split("/"))
    probe = root
    for part in relative.split("/")[:-1]:
        probe = probe / part
        assert not probe.is_symlink()
