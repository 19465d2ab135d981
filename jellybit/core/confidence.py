"""Confidence, explained: named, weighted penalties → a distance → a beets-style recommendation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from jellybit.config import RecognitionConfig
from jellybit.core.plan import Candidate, MediaType, PlanItem, Reason, Recommendation, Role
from jellybit.core.titles import titles_distance


@dataclass(frozen=True)
class Penalty:
    """One named penalty: its full weight, whether it stops automation, and what it means."""

    code: str
    weight: float
    blocking: bool
    meaning: str


# Every penalty Jellybit knows, in one table (docs/recognition.md describes the same list).
PENALTIES: dict[str, Penalty] = {p.code: p for p in (
    # the reading itself
    Penalty("no_title", 1.0, True, "neither the release name nor the LLM gives a title"),
    Penalty("llm_unavailable", 0.10, True, "the LLM is configured but could not be asked"),
    Penalty("hints_unused", 0.0, False, "hints were given, but only an LLM reads them and none is set up"),
    Penalty("llm_answer_dropped", 0.10, True, "parts of the LLM's answer named missing files or bad values"),
    Penalty("llm_type", 0.20, False, "the parser and the LLM disagree on movie vs series"),
    Penalty("llm_title", 0.15, False, "the parser and the LLM disagree on the title"),
    Penalty("llm_year", 0.10, False, "the parser and the LLM disagree on the year"),
    Penalty("llm_season", 0.15, False, "the parser and the LLM disagree on the season"),
    Penalty("llm_episodes", 0.15, False, "the parser and the LLM number some files differently"),
    # the match
    Penalty("no_provider", 1.0, True, "no metadata provider is configured"),
    Penalty("provider_error", 0.05, False, "a metadata provider failed; its candidates are missing"),
    Penalty("no_candidate", 1.0, True, "no provider found a candidate"),
    Penalty("title_distance", 0.50, False, "the best candidate's names differ from the title read"),
    Penalty("year_distance", 0.30, False, "the best candidate's year differs from the year read"),
    Penalty("year_unknown", 0.05, False, "the release gives no year to tell films of one title apart"),
    Penalty("type_mismatch", 0.35, False, "the best candidate is of the other media type"),
    Penalty("small_margin", 0.15, True, "the runner-up is nearly as good as the best candidate"),
    # the numbering
    Penalty("season_not_found", 0.30, True, "a season in the plan does not exist at the provider"),
    Penalty("episode_not_in_season", 0.30, True, "an episode number is beyond the provider's season"),
    Penalty("seasons_unknown", 0.05, False, "the provider gave no episode counts to check against"),
    Penalty("season_assumed", 0.05, False, "no season in the names; season 1 assumed"),
    Penalty("absolute_mapped", 0.05, False, "absolute numbers were mapped onto the provider's seasons"),
    Penalty("unmapped_video", 0.40, True, "a video file has no season/episode (or film) assigned"),
    Penalty("duplicate_episode", 0.40, True, "two video files claim the same episode"),
    Penalty("movie_pack", 0.0, True, "several films in one torrent are confirmed by a human once"),
    Penalty("unattached_track", 0.0, False, "a subtitle or audio file matches no video and is left out"),
    Penalty("subtitle_language_unknown", 0.0, False, "a subtitle's language is in neither its name, the "
            "LLM's answer nor (readably) its text; it is linked without a language tag"),
    Penalty("llm_role_refused", 0.0, False, "the LLM's file roles would leave no main video; not used"),
)}

PROVIDER_NAMES = {"tmdb": "TMDB", "tvdb": "TVDB", "tvmaze": "TVMaze", "imdb": "IMDb"}
SERIES_YEAR_SCALE = 0.5          # a series' release year is often a later season's


def reason(code: str, message: str, scale: float = 1.0) -> Reason:
    """A Reason for penalty `code`, its weight scaled (0..1) by how bad it is."""
    penalty = PENALTIES[code]
    return Reason(code, message, round(penalty.weight * max(0.0, min(scale, 1.0)), 4), penalty.blocking)


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
