"""Confidence, explained: named, weighted penalties → a distance → a beets-style recommendation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from jellybit.config import RecognitionConfig
from jellybit.core.plan import Candidate, MediaType, PlanItem, Reason, Recommendation, Role
from jellybit.core.reasons import reason
from jellybit.core.titles import titles_distance

PROVIDER_NAMES = {"tmdb": "TMDB", "tvdb": "TVDB", "tvmaze": "TVMaze", "imdb": "IMDb"}
SERIES_YEAR_SCALE = 0.5          # a series' release year is often a later season's


def provider_name(provider: str) -> str:
    """TMDB, TVDB, TVMaze as humans write them."""
    return PROVIDER_NAMES.get(provider, provider)


def label(candidate: Candidate) -> str:
    """`'Fargo' (2014)` for messages."""
    return f"'{candidate.title}'" + (f" ({candidate.year})" if candidate.year else "")


@dataclass(frozen=True)
class Reading:
    """What the download is believed to be before metadata: the evidence candidates are scored on."""

    media_type: MediaType | None
    titles: tuple[str, ...]
    year: int | None = None
    season: int | None = None
    country: str | None = None


def candidate_names(candidate: Candidate) -> tuple[str, ...]:
    """Title, original title and aliases of a candidate."""
    aliases = candidate.details.get("aliases") or ()
    names = [candidate.title, candidate.original_title, *(a for a in aliases if isinstance(a, str))]
    return tuple(n for n in dict.fromkeys(names) if n)


def candidate_reasons(reading: Reading, candidate: Candidate) -> tuple[Reason, ...]:
    """The penalties one candidate earns against the reading (title, year, type)."""
    who = f"{provider_name(candidate.provider)}'s {label(candidate)}"
    found: list[Reason] = []
    distance, ours, theirs = titles_distance(reading.titles, candidate_names(candidate))
    if distance > 0:
        found.append(reason("title_distance", f"{who} is not exactly the title read: '{ours}' vs "
                            f"'{theirs}' (title distance {distance:.2f})", distance))
    series = candidate.media_type is MediaType.SERIES
    if reading.year is not None and candidate.year is not None and reading.year != candidate.year:
        gap = abs(reading.year - candidate.year)
        scale = 0.25 if gap == 1 else 1.0
        if series:
            scale *= SERIES_YEAR_SCALE if (reading.season or 1) <= 1 else 0.1
        found.append(reason("year_distance", f"the release says {reading.year} but {who} is from "
                            f"{candidate.year}", scale))
    elif reading.year is None and not series and reading.media_type is not MediaType.SERIES:
        found.append(reason("year_unknown", f"the release gives no year; {who} is taken on its title"))
    if reading.media_type is not None and candidate.media_type not in (None, reading.media_type):
        found.append(reason("type_mismatch", f"{who} is a {candidate.media_type.value} but this download "
                            f"looks like a {reading.media_type.value}"))
    return tuple(found)


def distance_of(reasons: Iterable[Reason]) -> float:
    """The sum of the weights, capped at 1."""
    return round(min(1.0, sum(r.weight for r in reasons)), 4)


def same_work(a: Candidate, b: Candidate) -> bool:
    """The same film/show listed twice (e.g. by TMDB and TVDB): same type, year and a shared name."""
    if a.provider == b.provider:
        return a.provider_id == b.provider_id
    if a.media_type != b.media_type or (a.year and b.year and abs(a.year - b.year) > 1):
        return False
    return titles_distance(candidate_names(a), candidate_names(b))[0] <= 0.05


def margin_reason(best: Candidate, runner_up: Candidate | None, min_margin: float) -> Reason | None:
    """`small_margin` when the runner-up (another work) is within `min_margin` of the best."""
    if runner_up is None or best.distance is None or runner_up.distance is None:
        return None
    margin = round(runner_up.distance - best.distance, 4)
    if margin >= min_margin:
        return None
    return reason("small_margin", f"{provider_name(best.provider)}'s best match {label(best)} is only "
                  f"{margin:.2f} ahead of {label(runner_up)}")


def season_counts(candidate: Candidate) -> dict[int, int] | None:
    """The provider's episode count per season (details['seasons']), or None when not given."""
    raw = candidate.details.get("seasons")
    if not isinstance(raw, Mapping):
        return None
    counts: dict[int, int] = {}
    for key, value in raw.items():
        try:
            counts[int(key)] = int(value)
        except (TypeError, ValueError):
            continue
    return counts


def _names(paths: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(f"'{p.rsplit('/', 1)[-1][:80]}'" for p in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def numbering_reasons(items: Sequence[PlanItem], match: Candidate | None, series: bool) -> list[Reason]:
    """Unmapped videos, two files on one episode, and numbers the provider's seasons do not have."""
    videos = [i for i in items if i.role is Role.VIDEO]
    found: list[Reason] = []
    if series:
        unmapped = [v.source for v in videos if not (v.episodes or v.absolute_episodes or v.air_date)]
    else:
        unmapped = [v.source for v in videos if v.note == "unmapped"]
    if unmapped:
        found.append(reason("unmapped_video", f"{len(unmapped)} video file(s) have no "
                            f"{'episode' if series else 'film'} assigned: {_names(unmapped)}"))
    if not series:
        return found
    claims: dict[tuple[object, ...], list[str]] = defaultdict(list)
    for v in videos:
        for e in v.episodes:
            claims[(v.season, e)].append(v.source)
        if v.air_date and not v.episodes:
            claims[("date", v.air_date)].append(v.source)
    for key, sources in sorted(claims.items(), key=lambda kv: str(kv[0])):
        if len(sources) > 1:
            code = f"air date {key[1]}" if key[0] == "date" else f"S{key[0] or 0:02d}E{key[1]:02d}"
            found.append(reason("duplicate_episode", f"{len(sources)} files claim {code}: {_names(sources)}"))
    numbered = [v for v in videos if v.episodes]
    counts = season_counts(match) if match is not None else None
    if match is None or not numbered:
        return found
    who = f"{provider_name(match.provider)}'s {label(match)}"
    if counts is None:
        found.append(reason("seasons_unknown", f"{who} gave no episode counts; the numbering is unchecked"))
        return found
    missing_seasons = sorted({v.season for v in numbered if v.season is not None and v.season not in counts})
    if missing_seasons:
        listed = ", ".join(str(s) for s in missing_seasons[:5])
        found.append(reason("season_not_found", f"{who} has no season {listed}"))
    beyond = sorted({(v.season, e) for v in numbered for e in v.episodes
                     if v.season in counts and not 1 <= e <= counts[v.season]})
    if beyond:
        codes = ", ".join(f"S{s:02d}E{e:02d}" for s, e in beyond[:5]) + (" …" if len(beyond) > 5 else "")
        season = beyond[0][0]
        found.append(reason("episode_not_in_season", f"{who} season {season} has {counts[season]} episodes; "
                            f"{codes} {'is' if len(beyond) == 1 else 'are'} not among them"))
    return found


def recommend(reasons: Sequence[Reason], config: RecognitionConfig, *,
              confirmed: bool) -> tuple[float, Recommendation]:
    """Turn the reasons into (distance, recommendation) with the configured thresholds.

    beets' rule: the distance is the sum of the named penalties; the thresholds cut it into
    strong / medium / low / none. Only a strong recommendation can be automatic, and only with a
    confirmed match and no blocking reason, so a blocker caps the recommendation at medium and a
    missing or unconfirmed match caps it at medium too: a human looks at it, with the best
    candidate preselected.
    """
    distance = distance_of(reasons)
    if distance <= config.strong_distance:
        recommendation = Recommendation.STRONG
    elif distance <= config.medium_distance:
        recommendation = Recommendation.MEDIUM
    elif distance <= config.low_distance:
        recommendation = Recommendation.LOW
    else:
        recommendation = Recommendation.NONE
    blocked = any(r.blocking for r in reasons)
    if recommendation is Recommendation.STRONG and (blocked or not confirmed):
        recommendation = Recommendation.MEDIUM
    return distance, recommendation
