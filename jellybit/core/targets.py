"""Jellyfin naming: give every plan item its library and target path (pure, no disk access).

Entry points: title_folder, parse_title_folder (re-exported from names), layout_targets and
layout_reasons. Targets are relative POSIX paths under the library root; every component is
sanitized (jellybit.core.sanitize). adapters.containment.resolve_target is still the last gate.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from jellybit.core.frozen import evolve
from jellybit.core.names import (
    MOVIES,
    SERIES,
    avoid_ignored,
    episode_code,
    extras_folder,
    library_for,
    parse_title_folder,
    part_suffix,
    season_folder,
    source_ext,
    source_stem,
    source_without_suffix,
    title_folder,
    version_label,
)
from jellybit.core.reasons import reason
from jellybit.core.records import MediaType, Plan, PlanItem, Reason, Role, Work
from jellybit.core.sanitize import (
    MAX_COMPONENT_BYTES,
    clean_text,
    sanitize_component,
    sanitize_filename,
    truncate_utf8,
)
from jellybit.core.sidecars import sidecar_name

__all__ = [
    "MOVIES",
    "NOTE_PREFIX",
    "SERIES",
    "layout_reasons",
    "layout_targets",
    "parse_title_folder",
    "title_folder",
]

NOTE_PREFIX = "layout: "
PLANNED = "planned"
COLLISION = "collision"
SKIPPED = "skipped"
_EXTRA_STEM_BYTES = 180
_MAX_TRIES = 1000
_UNNUMBERED = "no season/episode numbering"
_PRIMARY = (Role.VIDEO, Role.EXTRA)
_FOLLOWERS = (Role.SUBTITLE, Role.AUDIO)


def _note(*parts: str | None) -> str | None:
    if not any(parts):
        return None
    return NOTE_PREFIX + "; ".join([p for p in parts if p])


def _keep_note(item: PlanItem) -> str | None:
    """A note someone else wrote survives; what layout wrote before is recomputed."""
    note = (item.note or "").split(" | " + NOTE_PREFIX)[0]
    return None if not note or note.startswith(NOTE_PREFIX) else note


def _join_note(item: PlanItem, note: str | None) -> str | None:
    own = _keep_note(item)
    return f"{own} | {note}" if own and note else (note or own)


@dataclass
class _Placed:
    """Where a primary item landed: its folder, stem and extension (followers build on it)."""

    library: str
    folder: str                 # relative POSIX path of sanitized components
    stem: str
    ext: str
    status: str


class _Hosts:
    """Finds the video a subtitle/audio file belongs to by name, numbers or uniqueness, in O(1)."""

    def __init__(self, plan: Plan, work_of: Callable[[PlanItem], Work | None]) -> None:
        self.work_of = work_of
        self.by_stem: dict[str, str] = {}
        self.by_numbers: dict[tuple[int | None, tuple[int, ...]], list[str]] = {}
        self.by_work: dict[Work | None, list[str]] = {}
        for video in plan.items:
            if video.role is not Role.VIDEO:
                continue
            stem = source_stem(video.source).casefold()
            if stem:
                self.by_stem.setdefault(stem, video.source)
            if video.episodes:
                self.by_numbers.setdefault((video.season, video.episodes), []).append(video.source)
                self.by_numbers.setdefault((None, video.episodes), []).append(video.source)
            self.by_work.setdefault(work_of(video), []).append(video.source)

    def find(self, item: PlanItem, work: Work | None) -> str | None:
        """'<video stem>.*' or a folder named like the video, else same numbers, else the only video."""
        own = PurePosixPath(item.source)
        name = own.name.casefold()
        keys = [name[:i] for i, ch in enumerate(name) if ch == "."]      # every '.'-prefix
        keys += [part.casefold() for part in own.parent.parts]
        found = [self.by_stem[k] for k in keys if k in self.by_stem]
        if found:
            return max(found, key=lambda source: len(source_stem(source)))
        if item.episodes:
            same = self.by_numbers.get((item.season, item.episodes), [])
            if len(same) == 1:
                return same[0]
        videos = self.by_work.get(work, [])
        return videos[0] if len(videos) == 1 else None


class _Layout:
    """One pass over a plan: primaries first (videos, extras), then their subtitles and audio."""

    def __init__(self, plan: Plan, work: Work | None, folder: str | None) -> None:
        self.plan = plan
        self.work = work
        self.inherited = sanitize_component(folder) if folder else None
        self.used: dict[str, str] = {}          # casefolded target -> source holding it
        self.placed: dict[str, _Placed] = {}    # source -> placement
        self.out: list[PlanItem] = list(plan.items)
        self.folders: dict[Work, str] = {}
        self.main_folder: str | None = None     # folder_of(self.work), once known
        self.main_title: str | None = None      # series_title(self.work), once known
        self.titles: dict[Work, str] = {}
        self._hosts: _Hosts | None = None      # built on first need: most followers name their video
        self.group_n: dict[tuple[str, str], int] = {}   # (host, source sans extension) -> number

    # ------------------------------------------------------------------ folders and works

    def work_of(self, item: PlanItem) -> Work | None:
        return item.work or self.work

    def is_main(self, work: Work) -> bool:
        return self.work is not None and work == self.work

    def folder_of(self, work: Work) -> str:
        if work is self.work and self.main_folder is not None:
            return self.main_folder       # identity first: hashing a Work per item adds up in a big pack
        if work not in self.folders:
            inherited = self.inherited if self.inherited and self.is_main(work) else None
            self.folders[work] = inherited or title_folder(work)
            if work is self.work:
                self.main_folder = self.folders[work]
        return self.folders[work]

    def series_title(self, work: Work) -> str:
        """The title episode files carry: the one in the (possibly inherited) folder name."""
        if work is self.work and self.main_title is not None:
            return self.main_title
        if work not in self.titles:
            title = parse_title_folder(self.folder_of(work))[0]
            if not title or title == "_":
                title = parse_title_folder(title_folder(work))[0] or "Untitled"
            self.titles[work] = title
            if work is self.work:
                self.main_title = title
        return self.titles[work]

    # ------------------------------------------------------------------ bookkeeping

    def claim(self, target: str, source: str, library: str) -> str | None:
        """Reserve a target; return the source already holding it (case-insensitively) if any."""
        key = f"{library}/{target}".casefold()
        holder = self.used.get(key)
        if holder is None:
            self.used[key] = source
        return holder

    def set(self, index: int, **fields: object) -> None:
        self.out[index] = evolve(self.out[index], **fields)

    def skip(self, index: int, why: str) -> None:
        item = self.out[index]
        self.set(index, library=None, target=None, status=SKIPPED, note=_join_note(item, _note(why)))

    # ------------------------------------------------------------------ primaries

    def video_name(self, item: PlanItem, work: Work) -> tuple[str, str, str | None] | str:
        """(folder, stem, note) for a video, or a string saying why it cannot be named."""
        # Targets are joined as strings: every component is sanitized (non-empty, no '/', never
        # '.' or '..'), so this is exactly what PurePosixPath would print, without its cost.
        base = self.folder_of(work)
        label = version_label(item.version)
        notes: list[str] = []
        if work.media_type is MediaType.MOVIE:
            # docs media/movies: the file starts with the exact folder name.
            stem = base
            if label:
                stem += f" - {label}"
            stem += part_suffix(item.part)
            if label and item.part:
                notes.append("Jellyfin does not combine versions with parts")
            return base, stem, "; ".join(notes) or None
        numbering = self.episode_numbering(item)
        if numbering == _UNNUMBERED and item.season == 0:
            # docs media/shows "Show Specials": a special may carry a descriptive name instead.
            own = sanitize_component(truncate_utf8(clean_text(source_stem(item.source)), _EXTRA_STEM_BYTES),
                                     fallback="Special")
            return f"{base}/{season_folder(0)}", avoid_ignored(own), "special without a number keeps its name"
        if isinstance(numbering, str):
            return numbering
        season, code, note = numbering
        if note:
            notes.append(note)
        stem = f"{self.series_title(work)} {code}"
        if label:
            stem += f" - {label}"
            notes.append("Jellyfin groups episode versions only in newer releases")
        stem += part_suffix(item.part)
        return f"{base}/{season_folder(season)}", stem, "; ".join(notes) or None

    @staticmethod
    def episode_numbering(item: PlanItem) -> tuple[int, str, str | None] | str:
        """(season, code, note) for an episode: S/E numbers, then absolute numbers, then air date."""
        season = item.season
        if season is not None and season < 0:
            return "negative season number"
        episodes, absolute = item.episodes, item.absolute_episodes
        if (episodes and min(episodes) < 0) or (absolute and min(absolute) < 0):
            return "negative episode number"
        if item.episodes:
            if season is None:
                return 1, episode_code(1, item.episodes), "no season given, season 1 assumed"
            return season, episode_code(season, item.episodes), _gap_note(item.episodes)
        if item.absolute_episodes:
            # Absolute-numbered anime: season 1 carries the absolute numbers (docs/naming.md).
            s = season if season is not None else 1
            return s, episode_code(s, item.absolute_episodes), "absolute numbering laid out in one season"
        if item.air_date:
            try:
                day = dt.date.fromisoformat(item.air_date)
            except ValueError:
                return f"air date {item.air_date!r} is not an ISO date"
            # Emby.Naming EpisodeExpressions: 'yyyy-MM-dd' marks a by-date episode.
            s = season if season is not None else day.year
            return s, day.isoformat(), None
        return _UNNUMBERED

    def place_video(self, index: int, item: PlanItem, work: Work) -> None:
        named = self.video_name(item, work)
        if isinstance(named, str):
            self.skip(index, named)
            return
        folder, stem, note = named
        library = library_for(work)
        ext = source_ext(item.source)
        name = sanitize_filename(stem, ext)
        target = f"{folder}/{name}"
        holder = self.claim(target, item.source, library)
        status = PLANNED
        if holder is not None:
            status = COLLISION
            note = "; ".join(p for p in (note, f"same target as {holder}") if p)
        self.placed[item.source] = _Placed(library, folder, name[: len(name) - len(ext)], ext, status)
        self.set(index, library=library, target=target, status=status,
                 note=_join_note(item, _note(note)))

    def place_extra(self, index: int, item: PlanItem, work: Work) -> None:
        library = library_for(work)
        folder = self.folder_of(work)
        if work.media_type is MediaType.SERIES and item.season is not None and item.season >= 0:
            folder += "/" + season_folder(item.season)
        folder += "/" + extras_folder(item.extra_kind)
        ext = source_ext(item.source)
        base = sanitize_component(source_stem(item.source), fallback="extra")
        stem = avoid_ignored(sanitize_component(truncate_utf8(base, _EXTRA_STEM_BYTES), fallback="extra"))
        for n in range(1, _MAX_TRIES):
            name = sanitize_filename(stem if n == 1 else f"{stem} ({n})", ext)
            if self.claim(f"{folder}/{name}", item.source, library) is None:
                break
        else:
            self.skip(index, "no free name in its extras folder")
            return
        note = _note(f"renamed to avoid a clash ({n})") if n > 1 else None
        self.placed[item.source] = _Placed(library, folder, name[: len(name) - len(ext)], ext, PLANNED)
        self.set(index, library=library, target=f"{folder}/{name}", status=PLANNED,
                 note=_join_note(item, note))

    # ------------------------------------------------------------------ followers

    def host_of(self, item: PlanItem) -> str | None:
        """The primary source a subtitle/audio file follows (attached_to, then name, then numbers)."""
        if item.attached_to:
            return item.attached_to
        if self._hosts is None:
            self._hosts = _Hosts(self.plan, self.work_of)
        return self._hosts.find(item, self.work_of(item))

    def place_follower(self, index: int, item: PlanItem) -> None:
        host_source = self.host_of(item)
        if host_source is None:
            self.skip(index, "no video to follow")
            return
        host = self.placed.get(host_source)
        if host is None:
            self.skip(index, f"its video {host_source} is not laid out")
            return
        # Files of one stream (VobSub 'x.idx' + 'x.sub') keep one number, so they stay a pair.
        group = (host_source, source_without_suffix(item.source).casefold())
        for n in range(self.group_n.get(group, 1), _MAX_TRIES):
            named = sidecar_name(host.stem, item, n, MAX_COMPONENT_BYTES)
            if named is None:
                self.skip(index, "name too long for its video")
                return
            name, note = named
            # A follower of a colliding video is not laid: it must not take a name from others.
            target = f"{host.folder}/{name}"
            if host.status == COLLISION or self.claim(target, item.source, host.library) is None:
                break
        else:
            self.skip(index, "no free name next to its video")
            return
        self.group_n.setdefault(group, n)
        notes = [note] if note else []
        status = host.status
        if status == COLLISION:
            notes.append(f"follows {host_source}, which collides")
        self.set(index, library=host.library, target=target, status=status,
                 note=_join_note(item, _note(*notes)))

    # ------------------------------------------------------------------ driver

    def run(self) -> Plan:
        for index, item in enumerate(self.plan.items):
            if item.role in (Role.IGNORED, Role.SAMPLE):
                self.set(index, library=None, target=None, status=None, note=_keep_note(item))
                continue
            if item.role not in _PRIMARY:
                continue
            work = self.work_of(item)
            if work is None:
                self.skip(index, "no matched title")
            elif item.role is Role.VIDEO:
                self.place_video(index, item, work)
        # Extras after videos, followers last: a video never loses its name to an extra or a
        # subtitle, and followers see every host.
        for index, item in enumerate(self.plan.items):
            work = self.work_of(item)
            if item.role is Role.EXTRA and work is not None:
                self.place_extra(index, item, work)
        for index, item in enumerate(self.plan.items):
            if item.role in _FOLLOWERS:
                self.place_follower(index, item)
        # a movie pack has a folder per film, none for the pack
        folder = self.folder_of(self.work) if self.work is not None and not self.plan.films else None
        plan = replace(self.plan, items=tuple(self.out), folder=folder)
        return plan


def _gap_note(episodes: tuple[int, ...]) -> str | None:
    if len(episodes) == 1:
        return None
    eps = sorted(set(episodes))
    if len(eps) > 1 and eps[-1] - eps[0] + 1 != len(eps):
        return f"episodes {eps} are not contiguous; named as a range"
    return None


def layout_targets(plan: Plan, work: Work | None, *, folder: str | None = None) -> Plan:
    """Return the plan with library and target set on every video, subtitle, audio and extra.

    `work` is the matched title (items of a movie pack may carry their own); `folder` is an
    inherited title folder name (folder convergence) that replaces the computed one for `work`.
    Laid items get status 'planned'; a video whose target another item already holds gets
    'collision' (its subtitles too); an item that cannot be named gets 'skipped', target None.
    Notes written here start with NOTE_PREFIX. Ignored and sample items get no target.
    """
    return _Layout(plan, work, folder).run()


def layout_reasons(plan: Plan) -> tuple[Reason, ...]:
    """Reasons a laid-out plan cannot be applied automatically (collisions, unplaced videos)."""
    reasons: list[Reason] = []
    for item in plan.items:
        if item.status == COLLISION:
            reasons.append(reason("target_collision", f"{item.source} → {item.target}: {item.note}"))
        elif item.status == SKIPPED and item.target is None and NOTE_PREFIX in (item.note or ""):
            code = "unplaced_file" if item.role is Role.VIDEO else "unplaced_track"
            reasons.append(reason(code, f"{item.source}: {item.note}"))
    return tuple(reasons)

