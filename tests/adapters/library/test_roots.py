"""The containment gate on real directories and symlinks."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.adapters.library.roots import FolderGate, resolve_target
from jellybit.core.sanitize import sanitize_component
from jellybit.errors import AdapterError, UnsafePath


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


# ---------------------------------------------------------------------------- the per-batch folder gate


def test_folder_gate_makes_missing_folders_0755_and_reports_them(media: Path) -> None:
    root = media / "movies"
    gate = FolderGate([media / "series", root], create=True)
    old = os.umask(0o077)
    try:
        assert gate.root_of(str(root / "New (2020)" / "extras" / "x.mkv")) == root
    finally:
        os.umask(old)
    made = [root / "New (2020)", root / "New (2020)" / "extras"]
    assert [Path(p) for p in gate.created] == made
    assert all(oct(p.stat().st_mode & 0o777) == "0o755" for p in made)
    assert gate.root_of(root / "Film (2010)" / "Film (2010).mkv") == root      # existing: nothing made
    assert len(gate.created) == 2


def test_folder_gate_walks_each_folder_once(media: Path, monkeypatch) -> None:
    root = media / "movies"
    gate = FolderGate([root])
    calls = []
    real_lstat = os.lstat
    monkeypatch.setattr(os, "lstat", lambda p, *a, **k: calls.append(p) or real_lstat(p, *a, **k))
    for n in range(50):
        gate.root_of(f"{root}/Film (2010)/Film (2010).{n}.srt")
    real = os.path.realpath(root)
    below = [c for c in calls if str(c).startswith(f"{real}/")]
    assert below == [f"{real}/Film (2010)"]       # one folder below the root: one lstat, for 50 targets


@pytest.mark.parametrize("create", [False, True])
def test_folder_gate_refuses_symlinked_or_file_parents_and_creates_nothing(media: Path, create: bool) -> None:
    root = media / "movies"
    (root / "Out").symlink_to(media / "outside", target_is_directory=True)
    (root / "Film (2010)" / "alias").symlink_to(root / "Film (2010)", target_is_directory=True)
    (root / "Gone").symlink_to(media / "nowhere")
    before = snapshot(media)
    gate = FolderGate([root], create=create)
    for target in ("Out/x.mkv", "Out/new/x.mkv", "Film (2010)/alias/x.mkv", "Gone/x.mkv",
                   "Film (2010)/Film (2010).mkv/x.srt"):
        with pytest.raises(UnsafePath, match=r"symlink|not a directory"):
            gate.root_of(f"{root}/{target}")
    assert snapshot(media) == before
    assert gate.created == []


@pytest.mark.parametrize("target", [
    "/etc/passwd", "{root}", "{root}/", "{root}/../outside/x.mkv", "{root}/a//b.mkv", "{root}/./x.mkv",
    "{root}/a/..", "{root}x/y.mkv", "relative/x.mkv", "{root}/a\x00b/x.mkv",
])
def test_folder_gate_refuses_targets_that_are_not_plainly_inside_a_root(media: Path, target: str) -> None:
    root = media / "movies"
    before = snapshot(media)
    with pytest.raises(UnsafePath):
        FolderGate([root], create=True).root_of(target.format(root=root))
    assert snapshot(media) == before


@pytest.mark.parametrize("name", ["..", ".", "", "a\x00b"])
def test_folder_gate_refuses_bad_names_in_a_folder_it_already_proved(media: Path, name: str) -> None:
    root = media / "movies"
    gate = FolderGate([root])
    assert gate.root_of(f"{root}/Film (2010)/ok.srt") == root
    with pytest.raises(UnsafePath):
        gate.root_of(f"{root}/Film (2010)/{name}")


def test_a_new_gate_sees_a_folder_swapped_for_a_symlink(media: Path) -> None:
    root = media / "movies"
    target = root / "Film (2010)" / "Film (2010).en.srt"
    assert FolderGate([root], create=True).root_of(target) == root
    (root / "Film (2010)").rename(media / "outside" / "moved")
    (root / "Film (2010)").symlink_to(media / "outside" / "moved", target_is_directory=True)
    with pytest.raises(UnsafePath, match="symlink"):
        FolderGate([root], create=True).root_of(target)


def test_folder_gate_checks_a_folder_that_appeared_while_it_made_it(media: Path, monkeypatch) -> None:
    root = media / "movies"

    def racing_mkdir(path, mode=0o777):
        os.symlink(media / "outside", path)      # somebody else won the race, with a link
        raise FileExistsError(17, "File exists", path)

    monkeypatch.setattr(os, "mkdir", racing_mkdir)
    with pytest.raises(UnsafePath, match="symlink"):
        FolderGate([root], create=True).root_of(root / "Raced (2000)" / "x.mkv")
    assert list((media / "outside").iterdir()) == []


def test_folder_gate_reports_a_folder_it_cannot_make(media: Path, monkeypatch) -> None:
    def full_disk(path, mode=0o777):
        raise OSError(28, "No space left on device", path)

    monkeypatch.setattr(os, "mkdir", full_disk)
    with pytest.raises(AdapterError, match="No space left"):
        FolderGate([media / "movies"], create=True).root_of(media / "movies" / "New" / "x.mkv")


def test_folder_gate_without_create_accepts_missing_folders_and_a_linked_root(media: Path) -> None:
    link = media / "movies-link"
    link.symlink_to(media / "movies", target_is_directory=True)
    before = snapshot(media)
    gate = FolderGate([link])
    assert gate.root_of(link / "Never (1999)" / "Season 01" / "x.mkv") == link
    assert gate.created == []
    assert snapshot(media) == before
    with pytest.raises(UnsafePath, match="not reachable"):
        FolderGate([media / "unmounted"]).root_of(media / "unmounted" / "x" / "y.mkv")
