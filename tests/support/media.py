"""A temp directory standing in for /srv/media (downloads, movies, series) that guards its sources.

Every source file made through `Media.source` is fingerprinted (inode, size, mtime, content); the
`media` fixture asserts after each test that none of them changed and nothing new appeared
under downloads/ (invariant 1).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from jellybit.config import PathsConfig


def _fingerprint(path: Path) -> tuple[int, int, int, str]:
    st = os.lstat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass
class Media:
    """The media tree of one test."""

    root: Path
    sources: dict[Path, tuple[int, int, int, str]] = field(default_factory=dict)
    allowed: set[Path] = field(default_factory=set)

    def __post_init__(self) -> None:
        for name in ("downloads", "movies", "series"):
            (self.root / name).mkdir(parents=True, exist_ok=True)

    @property
    def downloads(self) -> Path:
        """The downloads root (sources; never written by Jellybit)."""
        return self.root / "downloads"

    @property
    def movies(self) -> Path:
        """The movies library root."""
        return self.root / "movies"

    @property
    def series(self) -> Path:
        """The shows library root."""
        return self.root / "series"

    @property
    def paths(self) -> PathsConfig:
        """The `[paths]` configuration for this tree."""
        return PathsConfig(downloads=self.downloads, movies=self.movies, series=self.series)

    def source(self, relative: str, content: bytes | None = None) -> Path:
        """Create a source file under downloads/ and remember its fingerprint."""
        path = self.downloads / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if content is not None else f"data of {relative}".encode())
        self.sources[path] = _fingerprint(path)
        return path

    def forget(self, path: Path) -> None:
        """The test itself changes or deletes this source (simulating the torrent client)."""
        self.sources.pop(path, None)
        self.allowed.add(path)

    def check_sources(self) -> None:
        """Assert every remembered source is untouched and nothing else appeared under downloads/."""
        for path, expected in self.sources.items():
            assert _fingerprint(path) == expected, f"source changed: {path}"
        present = {p for p in self.downloads.rglob("*") if p.is_file() or p.is_symlink()}
        extra = present - set(self.sources) - self.allowed
        assert not extra, f"new files under downloads: {extra}"

    def allow(self, path: Path) -> None:
        """A file the test placed under downloads/ itself that is not a fingerprinted source."""
        self.allowed.add(path)

    def library_files(self) -> set[str]:
        """Every file (or symlink) under the libraries, relative to the media root."""
        found = set()
        for library in (self.movies, self.series):
            for path in library.rglob("*"):
                if path.is_file() or path.is_symlink():
                    found.add(str(path.relative_to(self.root)))
        return found


@pytest.fixture
def media(tmp_path: Path):
    """A media tree under tmp_path; checks after the test that no source was modified."""
    tree = Media(tmp_path / "media")
    yield tree
    tree.check_sources()
