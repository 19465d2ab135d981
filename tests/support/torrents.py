"""Making real .torrent files (v1 with torf, v2 and hybrid with torrentfile) from a test folder."""

from __future__ import annotations

import os
from pathlib import Path

import torf
from torrentfile.torrent import TorrentFileHybrid, TorrentFileV2


def make_content(root: Path, name: str, files: dict[str, int | bytes], seed: int = 0) -> Path:
    """Create `root/name/<relative path>` files: of a size (pseudo-random bytes) or with given bytes."""
    base = root / name
    for relative, size in files.items():
        path = base / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(size, bytes):
            path.write_bytes(size)
            continue
        rng = bytes((i * 31 + seed + len(relative)) % 251 for i in range(min(size, 4096)))
        with path.open("wb") as handle:
            remaining = size
            while remaining > 0:
                chunk = rng[: min(remaining, len(rng))] or b"\0"
                handle.write(chunk)
                remaining -= len(chunk)
    return base


def make_torrent(content: Path, kind: str = "v1") -> bytes:
    """Return the bytes of a trackerless torrent of `content` (a folder); kind v1 | v2 | hybrid."""
    if kind == "v1":
        torrent = torf.Torrent(path=content, trackers=[], private=False, created_by=None)
        torrent.generate()
        return torrent.dump()
    out = content.parent / f".{content.name}.{kind}.torrent"
    cls = TorrentFileHybrid if kind == "hybrid" else TorrentFileV2
    cls(path=os.fspath(content), outfile=os.fspath(out), progress=0).write()
    try:
        return out.read_bytes()
    finally:
        out.unlink()
