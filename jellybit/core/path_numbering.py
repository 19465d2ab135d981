"""A video's numbering read three ways — its file name alone, its folder alone, the whole path — and settled.

guessit reads a path as a whole and merges what its parts say: `Evening.Show.2019.03.11.720p.HDTV/
evening.show.2019.03.11.mkv` came out as "episode 3, aired 2019-03-11" (the folder's month taken as
an episode). Reading the parts alone shows what each says; when they disagree on the numbering (a
date against an episode, two seasons, an absolute number against SxxEyy) the provider's data must
settle it — an air date that maps to exactly one of its episodes, an episode count that fits only
one reading — or a human does (`numbering_conflict`). A name read as a date is numbered through the
provider's air dates (`air_date_unlisted` when it lists none), never as season 1 by assumption.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from jellybit.core.numbering import map_absolute
from jellybit.core.reasons import reason
from jellybit.core.records import PlanItem, Reason, Role
from jellybit.core.release import Release, parse_many, parse_release

# date -> the (season, episode) pairs the provider lists as aired that day; None: could not be asked
Aired = Mapping[str, tuple[tuple[int, int], ...]]
MAX_SHOWN = 3


@dataclass(frozen=True)
class Option:
    """One reading's numbering of a video: a season and episodes, an absolute number, or an air date."""

    where: str                           # "the file name" | "the folder"
    season: int | None = None            # named by the reading (never the convention's assumed 1)
    episodes: tuple[int, ...] = ()
    absolute: tuple[int, ...] = ()
    air_date: str | None = None

    def describe(self) -> str:
        """`S01E05`, `E41`, `absolute 47`, `aired 2019-03-11`, `season 2`."""
        if self.episodes:
            ends = dict.fromkeys((self.episodes[0], self.episodes[-1]))
            counted = list(self.episodes) == list(range(self.episodes[0], self.episodes[-1] + 1))
            # `E01-E03` is a range, `E01+E03` two episodes
            numbers = "-".join(f"E{e:02d}" for e in ends) if counted else "+".join(f"E{e:02d}" for e in
                                                                                   self.episodes)
            return f"S{self.season:02d}{numbers}" if self.season is not None else numbers
        if self.absolute:
            return f"absolute episode {self.absolute[0]}" + (f"-{self.absolute[-1]}" if len(self.absolute) > 1
                                                             else "")
        if self.air_date:
            return f"aired {self.air_date}"
        return f"season {self.season}"


@dataclass(frozen=True)
class Disagreement:
    """The readings of one video that number it differently."""

    source: str
    options: tuple[Option, ...]

    def describe(self) -> str:
        """`the file name says aired 2019-03-11, the folder says S01E05`; `the file name says S01E01+E03 or
        S01E01-E03` when one name reads two ways."""
        if len({o.where for o in self.options}) == 1:
            return f"{self.options[0].where} says " + " or ".join(o.describe() for o in self.options)
        return ", ".join(f"{o.where} says {o.describe()}" for o in self.options)


def option_of(release: Release | None, where: str) -> Option | None:
    """The numbering one reading gives, or None when it numbers nothing."""
    if release is None:
        return None
    season = None if release.season_assumed else release.season
    if not (release.episodes or release.absolute_episodes or release.air_date or season is not None):
        return None
    return Option(where, season, release.episodes, release.absolute_episodes, release.air_date)


def folder_of(path: str) -> str | None:
    """The nearest folder of a path inside the torrent, or None for a file at the top."""
    parts = [p for p in path.split("/") if p]
    return parts[-2] if len(parts) > 1 else None


def _conflict(file: Option, folder: Option, folder_release: Release) -> bool:
    if file.air_date and not file.episodes and not file.absolute:
        other_date = bool(folder.air_date) and folder.air_date != file.air_date
        return bool(folder.episodes or folder.absolute) or other_date
    if folder.air_date and not folder.episodes and not folder.absolute:
        return bool(file.episodes or file.absolute) and file.air_date != folder.air_date
    if file.season is not None and folder.season is not None:
        if folder.episodes:
            # a folder naming a pack's range (`S02E01-E10`) holds each of its files' episodes
            within = file.season == folder.season and set(file.episodes) <= set(folder.episodes)
            return bool(file.episodes) and not within
        return file.season not in (folder_release.seasons or (folder.season,))
    if file.absolute and not file.episodes and folder.season is not None and folder.episodes:
        return True
    return False


def reconcile(videos: Sequence[str], releases: Mapping[str, Release], files: Mapping[str, Release],
              folders: Mapping[str, Release]) -> tuple[dict[str, Release], dict[str, Disagreement]]:
    """Each video's whole-path reading corrected by its parts, and the videos whose parts disagree.

    `files`: each video's file name read alone; `folders`: each nearest folder's name read alone.
    A file name read as a date alone keeps the date: episode numbers only the merged path reading
    has are dropped, so the date is what gets numbered.
    """
    fixed: dict[str, Release] = dict(releases)
    found: dict[str, Disagreement] = {}
    for source in videos:
        whole = releases.get(source)
        alone = files.get(source)
        folder_name = folder_of(source)
        folder_release = folders.get(folder_name) if folder_name else None
        file = option_of(alone, "the file name")
        folder = option_of(folder_release, "the folder")
        if whole is None or file is None:
            continue
        if file.air_date and not file.episodes and not file.absolute:
            season = folder.season if folder is not None and not folder.episodes else None
            fixed[source] = replace(whole, episodes=(), absolute_episodes=(), air_date=file.air_date,
                                    season=season, seasons=(season,) if season is not None else (),
                                    season_assumed=False)
        if folder is not None and folder_release is not None and _conflict(file, folder, folder_release):
            if file.season is not None and not folder.episodes and not folder.air_date:
                folder = replace(folder, episodes=file.episodes)        # `Show.S02/Show.S03E04`: S02E04?
            found[source] = Disagreement(source, (file, folder))
    return fixed, found


def _placed(option: Option, counts: Mapping[int, int] | None, aired: Aired | None
            ) -> tuple[int, tuple[int, ...]] | None:
    """Where the provider puts one reading, or None when its data does not have it."""
    if option.air_date and not option.episodes and not option.absolute:
        listed = (aired or {}).get(option.air_date) or ()
        return (listed[0][0], (listed[0][1],)) if len(listed) == 1 else None
    if not counts:
        return None
    if option.episodes and option.season is not None:
        have = counts.get(option.season)
        return (option.season, option.episodes) if have and all(1 <= e <= have for e in option.episodes) \
            else None
    if option.absolute:
        return map_absolute(option.absolute, counts)
    return None


def _places(disagreement: Disagreement, counts: Mapping[int, int] | None, aired: Aired | None
            ) -> set[tuple[int, tuple[int, ...]]]:
    """Where the provider puts each reading; a pack's range that holds the one episode is no rival."""
    places = {p for p in (_placed(o, counts, aired) for o in disagreement.options) if p is not None}
    singles = {p for p in places if len(p[1]) == 1}
    ranges = places - singles
    if singles and ranges and all(any(s == r[0] and set(e) <= set(r[1]) for r in ranges) for s, e in singles):
        return singles
    return places


def _by_date(item: PlanItem, listed: tuple[tuple[int, int], ...]) -> PlanItem:
    season, episode = listed[0]
    assert item.air_date is not None
    if season == dt.date.fromisoformat(item.air_date).year:
        # the provider numbers by year: Jellyfin's date naming (`Season 2019/Show 2019-03-11`)
        return item.with_(season=season, episodes=(), air_date=item.air_date)
    return item.with_(season=season, episodes=(episode,), air_date=None)


def settle(items: Sequence[PlanItem], disagreements: Mapping[str, Disagreement],
           counts: Mapping[int, int] | None, aired: Aired | None,
           who: str) -> tuple[list[PlanItem], list[Reason]]:
    """Number dated videos by the provider's air dates and settle disagreements, or say why not.

    `who`: the provider and title, for the messages. A video whose readings disagree is numbered
    by the one reading the provider's data fits; with none or several, `numbering_conflict`.
    """
    numbered: dict[str, PlanItem] = {}
    conflicts: list[str] = []
    unlisted: list[str] = []
    for item in items:
        if item.role is not Role.VIDEO:
            continue
        disagreement = disagreements.get(item.source)
        if disagreement is not None:
            places = _places(disagreement, counts, aired)
            if len(places) == 1:
                season, episodes = places.pop()
                dated = next((o.air_date for o in disagreement.options if o.air_date and not o.episodes
                              and (aired or {}).get(o.air_date) == ((season, episodes[0]),)), None)
                numbered[item.source] = _by_date(item.with_(air_date=dated), ((season, episodes[0]),)) \
                    if dated else item.with_(season=season, episodes=episodes, air_date=None)
            else:
                why = "fits neither" if not places else "fits both"
                conflicts.append(f"'{item.source.rsplit('/', 1)[-1][:80]}': {disagreement.describe()} "
                                 f"({who} {why})")
            continue
        if item.air_date and not item.episodes:
            listed = (aired or {}).get(item.air_date) or ()
            if len(listed) == 1:
                numbered[item.source] = _by_date(item, listed)
            elif aired is None or item.air_date not in aired:
                unlisted.append(f"no answer for {item.air_date} (too many dates)" if aired is not None
                                else item.air_date)
            else:
                unlisted.append(f"{f'{len(listed)} episodes' if listed else 'no episode'} on {item.air_date}")
    out = []
    for item in items:
        if item.source in numbered:
            item = numbered[item.source]
        elif item.attached_to in numbered:
            video = numbered[item.attached_to]
            item = item.with_(season=video.season, episodes=video.episodes, air_date=video.air_date)
        out.append(item)
    found: list[Reason] = []
    if conflicts:
        shown = "; ".join(conflicts[:MAX_SHOWN]) + (f" and {len(conflicts) - MAX_SHOWN} more"
                                                    if len(conflicts) > MAX_SHOWN else "")
        found.append(reason("numbering_conflict", f"the names number {len(conflicts)} video(s) two ways: "
                            f"{shown}"))
    if unlisted:
        shown = ", ".join(unlisted[:MAX_SHOWN]) + (" …" if len(unlisted) > MAX_SHOWN else "")
        said = f"has {shown}" if aired is not None else f"gave no air dates to look {shown} up in"
        found.append(reason("air_date_unlisted", f"{len(unlisted)} video(s) are named by air date and "
                            f"{who} {said}; a date is never numbered by assumption"))
    return out, found


def read_paths(videos: Sequence[str]) -> tuple[dict[str, Release], dict[str, Disagreement]]:
    """Every video's path read whole, corrected by its file name and its folder read alone; and the
    videos whose readings disagree, or whose own name reads two ways (`name_doubts`)."""
    whole = dict(zip(videos, parse_many(videos), strict=True))
    folders = {f: parse_release(f) for f in dict.fromkeys(folder_of(v) for v in videos) if f}
    # A file name is read alone only where the comparison can find something: a dated path, or a
    # folder that names a season or a date (an anime batch folder's range alone settles nothing).
    wanted = [v for v in videos if whole[v].air_date or _telling(folders.get(folder_of(v) or ""))]
    found: dict[str, Disagreement] = {}
    if wanted:
        alone = dict(zip(wanted, parse_many([v.rsplit("/", 1)[-1] for v in wanted]), strict=True))
        whole, found = reconcile(wanted, whole, alone, folders)
    return whole, {**name_doubts(videos, whole), **found}


def name_doubts(videos: Sequence[str], releases: Mapping[str, Release]) -> dict[str, Disagreement]:
    """The videos whose own name numbers them two ways, for the provider's data to settle.

    An absolute number beside a named `SxxEyy` (`Show.S02E05.17`: the provider's seasons must put
    absolute 17 on S02E05), and a name's `ambiguous_episodes` (`S01E01E03`: episodes 1 and 3, or 1 to
    3; `Show 01-02-03`: a date, or episodes 1–3) — unless another video of the torrent numbers an
    episode only the other reading has (then it is no file of 1 to 3).
    """
    found: dict[str, Disagreement] = {}
    where = "the file name"
    numbered: dict[tuple[int | None, int], set[str]] = defaultdict(set)     # (season, episode) -> videos
    for source in videos:
        if (release := releases.get(source)) is not None:
            for episode in release.episodes:
                numbered[(release.season, episode)].add(source)
    for source in videos:
        release = releases.get(source)
        if release is None:
            continue
        named = None if release.season_assumed else release.season
        if release.episodes and release.absolute_episodes and named is not None:
            found[source] = Disagreement(source, (Option(where, named, release.episodes),
                                                  Option(where, absolute=release.absolute_episodes)))
            continue
        if not release.ambiguous_episodes:
            continue
        season = release.season if release.season is not None else 1
        extra = set(release.ambiguous_episodes) - set(release.episodes)
        if any(numbered.get((s, e), set()) - {source} for s in {release.season, None} for e in extra):
            continue
        first = Option(where, season, release.episodes) if release.episodes else \
            Option(where, air_date=release.air_date)
        found[source] = Disagreement(source, (first, Option(where, season, release.ambiguous_episodes)))
    return found


def _telling(folder: Release | None) -> bool:
    option = option_of(folder, "the folder")
    return option is not None and (option.season is not None or option.air_date is not None)
