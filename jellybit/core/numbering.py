"""The plan, file by file: season/episode numbers for series, parts/versions/films for movies."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jellybit.core.classify import EXTENSIONS, by_convention
from jellybit.core.confidence import reason
from jellybit.core.editions import edition_label
from jellybit.core.languages import language_code
from jellybit.core.limits import MAX_READ_EPISODE, MAX_READ_SEASON
from jellybit.core.names import source_ext, source_name
from jellybit.core.ports import LlmFileAnswer
from jellybit.core.providers import PROVIDERS
from jellybit.core.records import PlanItem, Reason, Role
from jellybit.core.release import Release, parse_release
from jellybit.core.title_match import normalize_title

TRACK_FLAGS = ("default", "forced", "sdh")
VIDEO_EXTENSIONS = EXTENSIONS[Role.VIDEO]


@dataclass(frozen=True)
class FileOverride:
    """A human's pinned numbering, role, and (subtitle/audio) language and flags for one source file."""

    season: int | None = None
    episodes: tuple[int, ...] = ()
    role: Role | None = None
    language: str | None = None
    flags: tuple[str, ...] | None = None     # None: not pinned; () pins "no flags"
    provider: str | None = None              # movie packs: the film this video is
    provider_id: str | None = None


@dataclass(frozen=True)
class Overrides:
    """Fields a human pinned; they win over everything Jellybit reads."""

    media_type: str | None = None
    title: str | None = None
    year: int | None = None
    provider: str | None = None
    provider_id: str | None = None
    season: int | None = None
    files: Mapping[str, FileOverride] = field(default_factory=dict)


def _int(value: Any, low: int, high: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else None


def _text(value: Any, limit: int = 300) -> str | None:
    return " ".join(value.split())[:limit] or None if isinstance(value, str) else None


def read_overrides(raw: Mapping[str, Any] | None) -> Overrides:
    """The overrides as stored (already validated by the commands); odd values are ignored, never fatal."""
    raw = raw if isinstance(raw, Mapping) else {}
    files: dict[str, FileOverride] = {}
    per_file = raw.get("files")
    for path, value in (per_file.items() if isinstance(per_file, Mapping) else ()):
        if not isinstance(path, str) or not isinstance(value, Mapping):
            continue
        episodes = value.get("episodes") or ()
        numbers = tuple(e for e in episodes if _int(e, 0, MAX_READ_EPISODE) is not None) \
            if isinstance(episodes, list | tuple) else ()
        role = value.get("role")
        flags = value.get("flags")
        files[path] = FileOverride(
            season=_int(value.get("season"), 0, MAX_READ_SEASON),
            episodes=numbers,
            role=Role(role) if role in {r.value for r in Role} else None,
            language=language_code(value.get("language"), any_code=True),
            flags=tuple(f for f in TRACK_FLAGS if f in flags) if isinstance(flags, list | tuple) else None,
            **_pinned_work(value),
        )
    media = raw.get("media_type")
    provider = raw.get("provider")
    return Overrides(
        media_type=media if media in ("movie", "series") else None,
        title=_text(raw.get("title")),
        year=_int(raw.get("year"), 1870, 2200),
        provider=provider if _known(provider) else None,
        provider_id=_text(raw.get("provider_id"), 32),
        season=_int(raw.get("season"), 0, MAX_READ_SEASON),
        files=files,
    )


def _known(provider: object) -> bool:
    return isinstance(provider, str) and provider in PROVIDERS


def _pinned_work(value: Mapping[str, Any]) -> dict[str, str]:
    provider, provider_id = value.get("provider"), _text(value.get("provider_id"), 32)
    if _known(provider) and provider_id:
        return {"provider": provider, "provider_id": provider_id}
    return {}


def apply_roles(items: Sequence[PlanItem], overrides: Overrides) -> list[PlanItem]:
    """Pinned roles win over the classifier's."""
    out = []
    for item in items:
        pinned = overrides.files.get(item.source)
        if pinned is not None and pinned.role is not None and pinned.role is not item.role:
            item = item.with_(role=pinned.role, note="role pinned by a human")
        out.append(item)
    return out


def map_absolute(numbers: Sequence[int], counts: Mapping[int, int]) -> tuple[int, tuple[int, ...]] | None:
    """Absolute episode numbers → (season, episodes) on the provider's seasons (specials excluded)."""
    regular = [(s, c) for s, c in sorted(counts.items()) if s > 0 and c > 0]
    placed: list[tuple[int, int]] = []
    for number in numbers:
        offset = 0
        for season, count in regular:
            if number <= offset + count:
                placed.append((season, number - offset))
                break
            offset += count
        else:
            return None
    seasons = {s for s, _ in placed}
    if len(seasons) != 1 or not placed:
        return None
    return seasons.pop(), tuple(e for _, e in placed)


def _beyond_first_season(parsed: Release | None, season: int | None, default: int | None,
                         episodes: tuple[int, ...], counts: Mapping[int, int] | None) -> bool:
    """An episode number with an assumed season that season 1 of the provider cannot hold."""
    if parsed is None or not parsed.season_assumed or season is not None or default is not None:
        return False
    first = counts.get(1) if counts else None
    return bool(first and episodes and max(episodes) > first)


@dataclass
class SeriesNumbering:
    """The outcome of numbering a series' videos: items plus what the numbering had to assume."""

    items: list[PlanItem]
    reasons: list[Reason]
    disagreements: list[str]


def number_series(
    items: Sequence[PlanItem],
    releases: Mapping[str, Release],
    llm: Mapping[str, LlmFileAnswer],
    torrent: Release,
    overrides: Overrides,
    counts: Mapping[int, int] | None,
) -> SeriesNumbering:
    """Season/episodes for every video: pinned > parser (the LLM must agree) > LLM > absolute mapping."""
    named_default = None if torrent.season_assumed else torrent.single_season
    default_season = overrides.season if overrides.season is not None else named_default
    numbered: dict[str, tuple[int | None, tuple[int, ...], str | None]] = {}
    assumed, mapped, disagree = [], [], []
    for item in items:
        if item.role is not Role.VIDEO:
            continue
        parsed = releases.get(item.source)
        answer = llm.get(item.source)
        pinned = overrides.files.get(item.source)
        # a season the parser only assumed (`Show.E05` is season 1) yields to the torrent's or the LLM's
        parsed_season = season = parsed.season if parsed and not parsed.season_assumed else None
        if overrides.season is not None:
            season = overrides.season
        episodes = parsed.episodes if parsed else ()
        absolute = parsed.absolute_episodes if parsed else ()
        air_date = parsed.air_date if parsed else None
        if answer is not None and answer.episodes:
            if episodes:
                other_season = None not in (answer.season, parsed_season) and answer.season != parsed_season
                if tuple(answer.episodes) != episodes or other_season:
                    disagree.append(item.source)
                elif season is None:
                    season = answer.season        # the names give no season; the LLM's agrees with them
            elif not air_date:
                season = answer.season if answer.season is not None and overrides.season is None else season
                episodes, absolute = tuple(answer.episodes), ()
        if _beyond_first_season(parsed, season, default_season, episodes, counts):
            # `Show.E0987`: no season is named and season 1 is too short, so the number is absolute
            episodes, absolute = (), episodes
        if not episodes and absolute:
            spot = map_absolute(absolute, counts) if counts and overrides.season is None else None
            if spot is not None:
                season, episodes = spot
                mapped.append(item.source)
            else:
                episodes = absolute
        if not episodes and not air_date and parsed and parsed.part and parsed.media_type == "movie":
            episodes = (parsed.part,)        # a mini-series' "Part 3" is its third episode
        if pinned is not None and (pinned.season is not None or pinned.episodes):
            season = pinned.season if pinned.season is not None else season
            episodes = pinned.episodes or episodes
        if episodes and season is None:
            season = default_season
            if season is None:
                season = 1
                assumed.append(item.source)
        if any(e > MAX_READ_EPISODE or e < 0 for e in episodes) or \
                (season is not None and season > MAX_READ_SEASON):
            season, episodes = None, ()
        numbered[item.source] = (season, tuple(sorted(set(episodes))), air_date if not episodes else None)
    out: list[PlanItem] = []
    for item in items:
        if item.source in numbered:
            season, episodes, air_date = numbered[item.source]
            item = item.with_(season=season, episodes=episodes, air_date=air_date,
                              absolute_episodes=releases[item.source].absolute_episodes
                              if item.source in releases else ())
        elif item.attached_to in numbered:
            season, episodes, air_date = numbered[item.attached_to]
            item = item.with_(season=season, episodes=episodes, air_date=air_date)
        out.append(item)
    reasons: list[Reason] = []
    if assumed:
        reasons.append(reason("season_assumed", f"{len(assumed)} video file(s) name no season; "
                              "season 1 assumed"))
    if mapped:
        reasons.append(reason("absolute_mapped", f"{len(mapped)} file(s) with absolute episode numbers "
                              "were mapped onto the provider's seasons"))
    return SeriesNumbering(out, reasons, disagree)


# ------------------------------------------------------------------------------------------- movies


def film_key(release: Release | None, answer: LlmFileAnswer | None) -> tuple[str, int | None] | None:
    """Which film a video is, as (normalized title, year); the LLM's work title wins when it has one.

    The file's own name comes before its path: in `Sci-Fi.Classics/Solaris.mkv` and
    `Sci-Fi.Classics/Dune.mkv` the folder names the pack, the files the films.
    """
    if answer is not None and answer.work_title:
        return normalize_title(answer.work_title), answer.work_year
    if release is None:
        return None
    own = parse_release(source_name(release.name)) if "/" in release.name else release
    if own.title and own.media_type in (None, "movie") and not own.episodes:
        return normalize_title(own.title), own.year
    if not release.title:
        return None
    return normalize_title(release.title), release.year


def group_films(
    items: Sequence[PlanItem], releases: Mapping[str, Release], llm: Mapping[str, LlmFileAnswer],
) -> dict[tuple[str, int | None], list[str]]:
    """Videos grouped by the film they are: one group is one film, several are a movie pack."""
    groups: dict[tuple[str, int | None], list[str]] = defaultdict(list)
    for item in items:
        if item.role is Role.VIDEO:
            key = film_key(releases.get(item.source), llm.get(item.source)) or ("", None)
            groups[key].append(item.source)
    # A group without a year joins the one film of that title that has one.
    for (title, year) in [k for k in groups if k[1] is None]:
        dated = [k for k in groups if k[0] == title and k[1] is not None]
        if len(dated) == 1:
            groups[dated[0]].extend(groups.pop((title, year)))
    return dict(groups)


def plan_film(
    items: Sequence[PlanItem], sources: Sequence[str], releases: Mapping[str, Release],
    llm: Mapping[str, LlmFileAnswer],
) -> dict[str, PlanItem]:
    """Parts or versions of one film's videos; several videos that are neither are left unmapped."""
    chosen = [i for i in items if i.source in sources]
    if len(chosen) <= 1:
        return {i.source: i for i in chosen}
    parts = [(llm[i.source].part if i.source in llm and llm[i.source].part else None)
             or (releases[i.source].part if i.source in releases else None) for i in chosen]
    if all(parts) and len(set(parts)) == len(parts):
        return {i.source: i.with_(part=p) for i, p in zip(chosen, parts, strict=True)}
    sizes = [releases[i.source].screen_size if i.source in releases else None for i in chosen]
    labels = version_labels([_edition(releases.get(i.source), llm.get(i.source)) for i in chosen], sizes)
    counts = Counter(labels)
    # Jellyfin takes a file named exactly like its folder as one more version: one may go unlabelled.
    bare = counts[None] == 1 and all(n == 1 for n in counts.values())
    return {i.source: i if label is None and bare else
            i.with_(note="unmapped") if counts[label] > 1 or not label else i.with_(version=label)
            for i, label in zip(chosen, labels, strict=True)}


def _edition(release: Release | None, answer: LlmFileAnswer | None) -> str | None:
    """The names' edition; the LLM's only where the names state none."""
    return (release.edition if release else None) or (answer.edition if answer else None)


def version_labels(editions: Sequence[str | None], resolutions: Sequence[str | None]) -> list[str | None]:
    """Jellyfin version labels: the edition first, the resolution second, and only when needed.

    A video's edition alone names it when no other video has that edition; a resolution is added
    where two share it (`Directors Cut 2160p`), and a video without an edition is named by its
    resolution (`2160p`). A label that is still not unique, or empty, leaves the video unmapped.
    """
    shared = Counter(editions)
    labels: list[str | None] = []
    for edition, resolution in zip(editions, resolutions, strict=True):
        words = [edition_label(edition)] if edition else []
        if resolution and (not edition or shared[edition] > 1):
            words.append(resolution)
        labels.append(" ".join(w for w in words if w) or None)
    return labels


# ------------------------------------------------------------------------------------------- the LLM's roles

JUDGED_ROLES = frozenset({Role.VIDEO, Role.EXTRA, Role.SAMPLE})      # a classifier's judgement for videos
LLM_VIDEO_ROLES = frozenset({Role.VIDEO, Role.EXTRA, Role.SAMPLE, Role.IGNORED})


def apply_llm_roles(
    items: Sequence[PlanItem], llm: Mapping[str, LlmFileAnswer], overrides: Overrides, *,
    source: str = "the LLM",
) -> tuple[list[PlanItem], list[Reason]]:
    """The LLM's role for a video file wins where the classifier's is a judgement (sizes, words, folders).

    Below a human's pinned role; never against a naming convention (extras/sample folders,
    `-trailer`); never for subtitles, audio or other files (their extension decides); and never
    so that no main video is left: then the classifier's roles stay and a note says why.
    """
    out = list(items)
    changed: dict[int, PlanItem] = {}
    for index, item in enumerate(items):
        answer = llm.get(item.source)
        pinned = overrides.files.get(item.source)
        if answer is None or item.role not in JUDGED_ROLES or (pinned and pinned.role is not None):
            continue
        role = Role(answer.role) if answer.role in {r.value for r in LLM_VIDEO_ROLES} else None
        if role is None or role is item.role or source_ext(item.source) not in VIDEO_EXTENSIONS \
                or by_convention(item.source):
            continue
        kind = (answer.extra_kind or "extras") if role is Role.EXTRA else None
        note = f"role {role.value} from {source} (the classifier said {item.role.value})"
        out[index] = item.with_(role=role, extra_kind=kind, note=note)
        changed[index] = item
    reasons: list[Reason] = []
    if changed and not any(i.role is Role.VIDEO for i in out) and any(i.role is Role.VIDEO for i in items):
        demoted = [index for index, before in changed.items() if before.role is Role.VIDEO]
        for index in demoted:
            said = out[index].role.value
            out[index] = changed[index].with_(note=f"{source} called it {said}; kept as the main video")
        names = ", ".join(repr(items[i].source) for i in demoted[:3])
        reasons.append(reason("llm_role_refused", f"{source} would leave no main video ({names}); the "
                              "classifier's roles were kept"))
    return out, reasons
