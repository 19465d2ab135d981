"""A torrent's files one by one: which are complete, and whether qBittorrent's settings let a
complete file be laid out before the whole torrent is (issue 25, docs/qbittorrent.md §Early layout).

qBittorrent reports a file's `progress` at piece granularity: 1 means every piece the file
touches is downloaded and passed its hash check. A file left at priority 0 ("do not download")
is never laid out, whatever its progress says (pieces it shares with a wanted neighbour make it
look partly there). The names qBittorrent lists are the final names: with "append .!qB to
incomplete files" on, the file on disk is `name.!qB` until it completes, then renamed in place
(same inode). With "keep incomplete torrents in" (`temp_path`), the files sit under the
torrent's `download_path` until the whole torrent completes, then move to `save_path`: a rename
on one filesystem (same inode, so a link made early stays the seeded file), a copy on two (a new
inode: a link made early would be a second copy of the data), which is why early layout is then
off and files are laid out on completion.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jellybit.core.ports import PathPlace, TorrentFile, TorrentInfo

INCOMPLETE_SUFFIX = ".!qB"
SKIPPED_PRIORITY = 0


Place = Callable[[str], PathPlace]


def wanted(file: TorrentFile) -> bool:
    """Tell whether qBittorrent downloads this file (not left at priority 0)."""
    return file.priority != SKIPPED_PRIORITY


def complete_sources(files: Iterable[TorrentFile]) -> frozenset[str]:
    """The names of the wanted files whose every piece is downloaded and verified."""
    return frozenset(f.name for f in files if wanted(f) and f.progress >= 1)


def final_name(name: str) -> str:
    """A file's name without qBittorrent's incomplete suffix (`.!qB`)."""
    return name[:-len(INCOMPLETE_SUFFIX)] if name.endswith(INCOMPLETE_SUFFIX) else name


def on_disk_name(name: str, *, complete: bool, incomplete_suffix: bool) -> str:
    """The name qBittorrent gives the file on disk now (`name.!qB` while incomplete, if that is on)."""
    return name if complete or not incomplete_suffix else name + INCOMPLETE_SUFFIX


def _moves(temp: str, save: str, place: Place, where: str) -> str | None:
    """Why files downloaded under `temp` and moved to `save` on completion cannot be laid out early."""
    temp_at, save_at = place(temp), place(save)
    if temp_at.device is None or save_at.device is None:
        return (f"{where} keeps incomplete torrents in {temp}; Jellybit cannot tell whether it is on the "
                f"same filesystem as {save}")
    if temp_at.device != save_at.device:
        return (f"{where} keeps incomplete torrents in {temp}, on another filesystem than {save}: "
                "completed torrents are copied there (a new file), so a file linked early would not be "
                "the file qBittorrent seeds")
    if not temp_at.inside_downloads:
        return (f"{where} keeps incomplete torrents in {temp} ({temp_at.local} here), outside "
                "paths.downloads: Jellybit cannot read a file there before it moves")
    return None


def early_layout_problems(preferences: Mapping[str, Any], place: Place) -> tuple[str, ...]:
    """What in qBittorrent's application preferences makes early layout unsafe (empty: it is safe)."""
    problems: list[str] = []
    temp = str(preferences.get("temp_path") or "").strip()
    save = str(preferences.get("save_path") or "").strip()
    if preferences.get("temp_path_enabled") is True and temp and save:
        found = _moves(temp, save, place, "qBittorrent (Options → Downloads)")
        if found:
            problems.append(found)
    return tuple(problems)


def torrent_problem(torrent: TorrentInfo, place: Place) -> str | None:
    """Why this torrent's files cannot be laid out early (its own download path), or None."""
    if not torrent.download_path or not torrent.save_path:
        return None
    if torrent.download_path.rstrip("/") == torrent.save_path.rstrip("/"):
        return None
    return _moves(torrent.download_path, torrent.save_path, place, "this torrent")
