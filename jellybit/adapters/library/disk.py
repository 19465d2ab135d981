"""Compare a plan with the disk (read-only): sources, targets, collisions and merge top-up skips."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jellybit.adapters.library import files as fs
from jellybit.adapters.library.roots import PATH_MAX, Roots, resolve_target
from jellybit.config import PathMapping, PathsConfig
from jellybit.core.classify import EXTENSIONS
from jellybit.core.frozen import evolve
from jellybit.core.links import FileLink, LinkStatus, NewLink, episode_numbers
from jellybit.core.models import Download
from jellybit.core.path_map import translate_path
from jellybit.core.ports import PathPlace
from jellybit.core.reasons import reason
from jellybit.core.records import Plan, PlanItem, Reason, Role
from jellybit.core.sanitize import is_sanitized, is_within
from jellybit.core.store_records import ReconcileItem
from jellybit.errors import AdapterError, JellybitError, UnsafePath
from jellybit.logs import for_download

log = logging.getLogger(__name__)

LAID_ROLES = frozenset({Role.VIDEO, Role.SUBTITLE, Role.AUDIO, Role.EXTRA})
VIDEO_EXTENSIONS = EXTENSIONS[Role.VIDEO]
PLANNED, EXISTS, COLLISION, SKIPPED = "planned", "exists", "collision", "skipped"
_KIND = {role: role.value for role in Role}     # a plan item's role as the journal stores it
HELD = "held"                               # a better-copy question waits for a human (upgrades.py)
_NOT_PLAIN = frozenset({"", ".", ".."})    # components a plain relative path never has
_MAX_LISTED = 20


def translate(path: str | None, mappings: list[PathMapping]) -> Path | None:
    """Map a path as qBittorrent reports it to this machine's path (longest prefix wins)."""
    return Path(translate_path(path, mappings)) if path else None


def place_of(path: str, paths: PathsConfig) -> PathPlace:
    """Where a path qBittorrent reports is here: the filesystem of it or its nearest existing folder,
    and whether it lies inside paths.downloads."""
    local = translate(path, paths.path_map) or Path(path)
    inside = is_within(Path(paths.downloads), local, or_equal=True)
    probe, device = local, None
    while device is None:
        try:
            device = os.stat(probe).st_dev
        except OSError:
            if probe.parent == probe:
                break
            probe = probe.parent
    return PathPlace(str(local), device, inside)


class Sources:
    """Where a download's torrent files are on this machine; every one must be inside downloads."""

    def __init__(self, download: Download, paths: PathsConfig) -> None:
        save = translate(download.save_path, paths.path_map)
        content = translate(download.content_path, paths.path_map)
        self.bases: list[str] = []
        for base in (save, content, content.parent if content else None):
            if base is not None and str(base) not in self.bases:
                self.bases.append(str(base))
        # os.path.join(base, source) for a relative source, without the call per file.
        self._prefixes = [b if b.endswith("/") else b + "/" for b in self.bases]
        self.download_id = download.id
        self.downloads = paths.downloads
        self.guard = Roots([paths.downloads])

    def path(self, source: str) -> Path:
        """The local path of one torrent file, or UnsafePath / SourceMissing."""
        return Path(self._find(source)[0])

    def stat(self, source: str) -> tuple[str, fs.SourceStat]:
        """The local path of one torrent file and its identity (one lstat); UnsafePath / SourceMissing."""
        chosen, st = self._find(source)
        if st is None:
            return chosen, fs.stat_source(Path(chosen))     # raises why it is not there
        if not stat.S_ISREG(st.st_mode):
            raise fs.SourceMissing(f"source is not a regular file: {chosen}")
        return chosen, fs.SourceStat(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def _find(self, source: str) -> tuple[str, os.stat_result | None]:
        if not source or "\0" in source or source[0] == "/" or not _NOT_PLAIN.isdisjoint(source.split("/")):
            raise UnsafePath(f"source path {source!r} is not a plain path inside the torrent")
        if not self.bases:
            raise fs.SourceMissing(f"download {self.download_id} has no save path yet")
        # qBittorrent's file names are relative to save_path; a plan may also be relative to content_path.
        chosen, st = "", None
        for prefix in self._prefixes:
            candidate = prefix + source
            try:
                st = os.lstat(candidate)
            except OSError:
                chosen = chosen or candidate
                continue
            chosen = candidate
            break
        if self.guard.root_of(chosen) is None:
            raise UnsafePath(f"source {chosen} is outside the downloads directory {self.downloads}")
        return chosen, st


NOT_A_DIRECTORY = "not a directory"    # what a target's lstat says when a file stands for its folder
TargetStat = os.stat_result | str | None


class TargetGate:
    """`resolve_target` per parent folder, once; each file name still gets the gate's own checks.

    A season pack puts thousands of files in a few folders: the folder chain is proven inside
    the root once, and the last component is checked like resolve_target checks it. The one
    `lstat` of the target is handed back for comparing with the source; a target in a folder
    that does not exist yet needs none (inspect writes nothing, so nothing can be there).
    """

    def __init__(self) -> None:
        self._parents: dict[tuple[Path, str], tuple[str, bool]] = {}   # -> (absolute folder, exists)

    def resolve(self, root: Path, target: str) -> Path:
        """Return the absolute target inside root, or raise UnsafePath."""
        return Path(self.resolve_stat(root, target)[0])

    def resolve_stat(self, root: Path, target: str) -> tuple[str, TargetStat]:
        """The absolute target inside root and its lstat (None: nothing there), or UnsafePath."""
        parent, sep, name = target.rpartition("/")
        if not sep or not parent:
            dst = str(resolve_target(root, target))
            return dst, _lstat(dst, target)
        key = (root, parent)
        known = self._parents.get(key)
        if known is None:
            base = resolve_target(root, parent)
            try:
                exists = stat.S_ISDIR(os.lstat(base).st_mode)
                if not exists:
                    raise UnsafePath(f"parent is not a directory: {parent!r}")
            except FileNotFoundError:
                exists = False
            known = self._parents[key] = (str(base), exists)
        if name in (".", "..") or "\0" in name or not is_sanitized(name):
            raise UnsafePath(f"target component is not sanitized: {name!r}")
        dst = known[0] + "/" + name
        if (len(dst) if dst.isascii() else len(os.fsencode(dst))) >= PATH_MAX:
            raise UnsafePath(f"target path is longer than {PATH_MAX} bytes")
        return dst, (_lstat(dst, target) if known[1] else None)


def _lstat(dst: str, target: str) -> TargetStat:
    try:
        st = os.lstat(dst)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return NOT_A_DIRECTORY
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(f"target is a symlink: {target!r}")
    return st


def episodes_on_disk(directory: Path) -> dict[tuple[int, int], list[Path]]:
    """Episodes present as video files in one season folder, by (season, episode)."""
    found: dict[tuple[int, int], list[Path]] = {}
    try:
        entries = list(os.scandir(directory))
    except (FileNotFoundError, NotADirectoryError):
        return found
    for entry in entries:
        if not entry.is_file(follow_symlinks=False):
            continue
        if os.path.splitext(entry.name)[1].lower() not in VIDEO_EXTENSIONS:
            continue
        for key in episode_numbers(entry.name):
            found.setdefault(key, []).append(Path(entry.path))
    return found


@dataclass(frozen=True)
class Upgrades:
    """The better-copy decisions an inspection follows (adapters/library/upgrades.py)."""

    decisions: Mapping[str, str]                 # video source -> held | keep_both | replace | skip
    replaced: Mapping[str, FileLink]             # video source -> the other download's row it replaces
    title_at: Mapping[str, FileLink]             # absolute target -> the title's live row there
    notes: Mapping[str, str] = field(default_factory=dict)   # video source -> what is there, in words

    def attached(self, item: PlanItem) -> str | None:
        """The decision that applies to this item: its own (a video) or its video's (a track)."""
        return self.decisions.get(item.attached_to or item.source) if item.role is not Role.VIDEO \
            else self.decisions.get(item.source)


@dataclass
class Inspection:
    """A plan checked against the disk: statuses set, sources resolved, problems listed."""

    plan: Plan
    sources: dict[int, tuple[str, fs.SourceStat]] = field(default_factory=dict)    # item index ->
    targets: dict[int, str] = field(default_factory=dict)                          # item index ->
    existing: dict[int, int] = field(default_factory=dict)      # item index -> inode already there
    collisions: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    own_copies: dict[str, tuple[int, int | None, int | None]] = field(default_factory=dict)
    # ^ dst_path -> (inode of a live copy, its source's dev, its source's inode)
    replaces: dict[int, FileLink] = field(default_factory=dict)   # item index -> the row it replaces

    def reasons(self) -> list[Reason]:
        """The blocking reasons a human must see before this plan may be applied."""
        reasons = []
        if self.unsafe:
            reasons.append(reason("unsafe_path", "unsafe target or source: " + _listed(self.unsafe)))
        if self.missing:
            reasons.append(reason("source_missing", "source files are missing: " + _listed(self.missing)))
        if self.collisions:
            reasons.append(reason("collision", "a different file already holds: " + _listed(self.collisions)))
        return reasons

    def laid(self) -> list[int]:
        """Indexes of the items that will be journaled (planned, exists or skipped)."""
        return [i for i in self.targets if self.plan.items[i].status in (PLANNED, EXISTS, SKIPPED)]

    def new_links(self) -> list[NewLink]:
        """The journal rows of the laid items, in plan order (one loop: a pack has thousands)."""
        items, sources, targets = self.plan.items, self.sources, self.targets
        existing, replaces = self.existing, self.replaces
        rows: list[NewLink] = []
        add, pending = rows.append, LinkStatus.PENDING
        for index in self.laid():
            item = items[index]
            src, st = sources[index]
            if item.status == PLANNED:
                status, dst_ino, message = pending, None, None
            elif item.status == EXISTS:
                status, dst_ino, message = LinkStatus.EXISTS, existing.get(index), item.note
            else:
                assert item.status == SKIPPED
                status, dst_ino, message = LinkStatus.SKIPPED, None, item.note
            old = replaces.get(index)
            add(NewLink(src, targets[index], _KIND[item.role], st.size, st.dev, st.ino, st.mtime_ns, status,
                        dst_ino, message, None if old is None else old.id))
        return rows


def _listed(values: list[str]) -> str:
    shown = ", ".join(values[:_MAX_LISTED])
    return shown + (f" and {len(values) - _MAX_LISTED} more" if len(values) > _MAX_LISTED else "")


def inspect(
    download: Download, plan: Plan, paths: PathsConfig, roots: Mapping[str, Path], *,
    merge: bool, own_copies: Mapping[str, tuple[int, int | None, int | None]] | None = None,
    upgrades: Upgrades | None = None, only: frozenset[str] | None = None,
) -> Inspection:
    """Resolve every target and source and compare with the disk; never writes anything.

    `only`: look at just these sources (the files complete while the rest downloads).
    """
    result = Inspection(plan=plan, own_copies=dict(own_copies or {}))
    upgrades = upgrades or Upgrades({}, {}, {})
    items = list(plan.items)
    seen: dict[str, int] = {}
    season_dirs: dict[str, dict[tuple[int, int], list[Path]]] = {}
    gate, sources = TargetGate(), Sources(download, paths)
    for index, item in enumerate(items):
        if item.role not in LAID_ROLES or not item.target or not item.library or item.status == COLLISION:
            continue  # naming left it unplaced, or already reports the clash (layout_reasons)
        if only is not None and item.source not in only:
            continue
        decision = upgrades.attached(item) if upgrades.decisions else None
        if decision == HELD:
            items[index] = evolve(item, status=HELD, note=upgrades.notes.get(item.source)
                                  or "waits for Keep both / Replace / Skip on its video")
            continue
        root = roots.get(item.library)
        try:
            if root is None:
                raise UnsafePath(f"unknown library {item.library!r}")
            dst, dst_st = gate.resolve_stat(root, item.target)
            src, src_stat = sources.stat(item.source)
        except UnsafePath as exc:
            result.unsafe.append(exc.message)
            continue
        except JellybitError as exc:
            result.missing.append(exc.message)
            continue
        if dst in seen:
            result.collisions.append(f"{dst} (planned twice)")
            items[index] = evolve(item, status=COLLISION, note="another file of this plan has this target")
            continue
        seen[dst] = index
        result.sources[index] = (src, src_stat)
        result.targets[index] = dst
        if decision == "skip":
            items[index] = evolve(item, status=SKIPPED, note="a copy is already in the library; skipped")
            continue
        old = _replaced(item, dst, dst_st, src_stat, upgrades) if decision == "replace" else None
        if old is not None:
            result.replaces[index] = old
            items[index] = evolve(item, status=PLANNED, note=f"replaces {os.path.basename(old.src_path)}")
            continue
        items[index] = _compare(item, src_stat, dst, dst_st, merge and decision is None, result.own_copies,
                                season_dirs)
        if items[index].status == COLLISION:
            result.collisions.append(dst)
        elif items[index].status == EXISTS and isinstance(dst_st, os.stat_result):
            result.existing[index] = dst_st.st_ino
    skipped_videos = {i.source for i in items if i.role is Role.VIDEO and i.status == SKIPPED}
    for index, item in enumerate(items):
        if item.attached_to in skipped_videos and item.status in (PLANNED, COLLISION):
            if item.status == COLLISION:
                result.collisions.remove(result.targets[index])
            items[index] = evolve(item, status=SKIPPED, note="its video is already present")
    result.plan = Plan(items=tuple(items), folder=plan.folder, films=plan.films)
    return result


def _replaced(item: PlanItem, dst: str, st: TargetStat, src: fs.SourceStat,
              upgrades: Upgrades) -> FileLink | None:
    """The other download's row this item replaces, or None (nothing to replace, or not that file)."""
    if isinstance(st, os.stat_result) and (st.st_dev, st.st_ino) == (src.dev, src.ino):
        return None                   # already this very file: it exists, nothing to replace
    if item.role is Role.VIDEO:
        old = upgrades.replaced.get(item.source)
        if old is not None and (st is None or old.dst_path == dst):
            return old if st is None or (isinstance(st, os.stat_result) and st.st_ino == old.dst_ino) \
                else None
    held = upgrades.title_at.get(dst)
    if held is not None and isinstance(st, os.stat_result) and st.st_ino == held.dst_ino:
        return held                   # a subtitle or track of the old copy at this very path
    return None


def _compare(
    item: PlanItem, src: fs.SourceStat, dst: str, st: TargetStat, merge: bool,
    own_copies: Mapping[str, tuple[int, int | None, int | None]],
    season_dirs: dict[str, dict[tuple[int, int], list[Path]]],
) -> PlanItem:
    if st == NOT_A_DIRECTORY:
        return evolve(item, status=COLLISION, note="a file stands where a folder of the target should be")
    if isinstance(st, os.stat_result):
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == (src.dev, src.ino):
            return evolve(item, status=EXISTS, note="already linked")
        if stat.S_ISREG(st.st_mode) and own_copies.get(dst) == (st.st_ino, src.dev, src.ino):
            return evolve(item, status=EXISTS, note="already copied by an earlier batch")
        if merge:
            return evolve(item, status=SKIPPED, note="already present as another file")
        return evolve(item, status=COLLISION, note="a different file is there")
    if merge and item.role is Role.VIDEO and item.season is not None and item.episodes:
        folder = os.path.dirname(dst)
        if folder not in season_dirs:
            season_dirs[folder] = episodes_on_disk(Path(folder))
        present = season_dirs[folder]
        if all((item.season, e) in present for e in item.episodes):
            names = sorted({p.name for e in item.episodes for p in present[(item.season, e)]})
            return evolve(item, status=SKIPPED, note="already present as " + ", ".join(names))
    return item if item.status == PLANNED else evolve(item, status=PLANNED)


def targets_in_place(items: Sequence[ReconcileItem]) -> dict[str, bool | None]:
    """Per download: is any live target still its recorded inode (None: nothing laid, or unreadable)."""
    found: dict[str, bool | None] = {}
    for item in items:
        if not item.links:
            found[item.id] = None
            continue
        try:
            found[item.id] = any(fs.target_inode(path) == ino for path, ino in item.links)   # type: ignore[arg-type]
        except AdapterError as exc:        # a folder turned into a file, no permission: judge it later
            log.warning("cannot check the library files: %s", exc.message, **for_download(item.id))
            found[item.id] = None
    return found
