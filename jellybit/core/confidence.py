"""Confidence, explained: named, weighted penalties → a distance → a beets-style recommendation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from jellybit.core.countries import country_code, split_country
from jellybit.core.providers import provider_name
from jellybit.core.reasons import PENALTIES, reason
from jellybit.core.records import Candidate, MediaType, PlanItem, Reason, Recommendation, Role
from jellybit.core.title_match import PREFIX_DISTANCE, titles_distance

SERIES_YEAR_SCALE = 0.5          # a series' release year is often a later season's
# The margin that suffices when the best candidate carries exactly the title read and the runner-up
# only contains it ("The Matrix" against "The Matrix Reloaded"): what a title prefix costs.
EXACT_TITLE_MARGIN = round(PREFIX_DISTANCE * PENALTIES["title_distance"].weight, 4)


def label(candidate: Candidate) -> str:
    """`'Shameless' (2011, US, Showtime)` for messages: what tells one work from another of its name."""
    network = candidate.details.get("network")
    parts = [str(candidate.year) if candidate.year else "", "/".join(candidate_countries(candidate)),
             network if isinstance(network, str) else ""]
    shown = ", ".join(p for p in parts if p)
    return f"'{candidate.title}'" + (f" ({shown})" if shown else "")


@dataclass(frozen=True)
class Reading:
    """What the download is believed to be before metadata: the evidence candidates are scored on."""

    media_type: MediaType | None
    titles: tuple[str, ...]
    year: int | None = None
    season: int | None = None
    country: str | None = None           # ISO 3166-1 alpha-2, from the release name or the context
    last_episodes: tuple[tuple[int, int], ...] = ()   # (season, highest episode) the files number


def candidate_names(candidate: Candidate) -> tuple[str, ...]:
    """Title, original title and aliases of a candidate."""
    aliases = candidate.details.get("aliases") or ()
    names = [candidate.title, candidate.original_title, *(a for a in aliases if isinstance(a, str))]
    return tuple(n for n in dict.fromkeys(names) if n)


def reading_country(reading: Reading) -> str | None:
    """The country the download is of: the reading's own, else a country tag ending one of its titles."""
    if reading.country:
        return country_code(reading.country)
    return next((code for _, code in map(split_country, reading.titles) if code), None)


def candidate_countries(candidate: Candidate) -> tuple[str, ...]:
    """A candidate's origin countries (alpha-2): from its details, else a tag ending its title."""
    raw = candidate.details.get("countries") or [candidate.details.get("country")]
    codes = [country_code(c) for c in raw if isinstance(c, str)] if isinstance(raw, list) else []
    if not any(codes):
        codes = [split_country(n)[1] for n in (candidate.title, candidate.original_title) if n]
    return tuple(dict.fromkeys(c for c in codes if c))


def untagged(names: Iterable[str], country: str | None = None) -> tuple[str, ...]:
    """The names, each followed by itself without a trailing country tag (only `country`'s, if given).

    `House of Cards US` and `The Office (US)` then compare equal to `House of Cards` and `The
    Office`; which country is meant is the country penalty's business, not the title distance's.
    """
    found: list[str] = []
    for name in names:
        found.append(name)
        base, code = split_country(name)
        if code is not None and (country is None or code == country):
            found.append(base)
    return tuple(dict.fromkeys(found))


def _year_scale(ours: int, theirs: int, season: int | None, candidate: Candidate) -> float:
    """How much of `year_distance` the gap between the year read and the candidate's year costs."""
    gap = ours - theirs
    scale = 0.25 if abs(gap) == 1 else 1.0
    if candidate.media_type is not MediaType.SERIES:
        return scale
    last = candidate.details.get("last_year")
    ended = isinstance(last, int) and ours > last + 1
    if gap > 0 and (season or 1) > 1 and not ended:
        return scale * 0.1           # a later season's release year, while the show ran
    if abs(gap) == 1:
        return scale * SERIES_YEAR_SCALE
    # Season 1 (or a show named with its year) and a year far off: another show of that name.
    return scale


def candidate_reasons(reading: Reading, candidate: Candidate) -> tuple[Reason, ...]:
    """The penalties one candidate earns against the reading (title, year, type, country)."""
    who = f"{provider_name(candidate.provider)}'s {label(candidate)}"
    found: list[Reason] = []
    country = reading_country(reading)
    distance, ours, theirs = titles_distance(untagged(reading.titles, country),
                                             untagged(candidate_names(candidate)))
    if distance > 0:
        found.append(reason("title_distance", f"{who} is not exactly the title read: '{ours}' vs "
                            f"'{theirs}' (title distance {distance:.2f})", distance))
    series = candidate.media_type is MediaType.SERIES
    if reading.year is not None and candidate.year is not None and reading.year != candidate.year:
        found.append(reason("year_distance", f"the release says {reading.year} but {who} is from "
                            f"{candidate.year}", _year_scale(reading.year, candidate.year, reading.season,
                                                                  candidate)))
    elif reading.year is None and not series and reading.media_type is not MediaType.SERIES:
        found.append(reason("year_unknown", f"the release gives no year; {who} is taken on its title"))
    if reading.media_type is not None and candidate.media_type not in (None, reading.media_type):
        found.append(reason("type_mismatch", f"{who} is a {candidate.media_type.value} but this download "
                            f"looks like a {reading.media_type.value}"))
    counts = season_counts(candidate) if series else None
    if reading.season and counts and reading.season not in counts:
        found.append(reason("season_absent", f"{who} has no season {reading.season} (it has "
                            f"{len(counts)} season{'s' if len(counts) != 1 else ''})"))
    for season, last in reading.last_episodes:
        have = counts.get(season) if counts else None
        if have and have < last:
            found.append(reason("episodes_absent", f"{who} season {season} has {have} episodes "
                                f"(the files go up to {last})"))
            break
    origins = candidate_countries(candidate)
    if country and origins and country not in origins:
        found.append(reason("country_mismatch", f"{who} comes from {'/'.join(origins)}, but the download "
                            f"is the {country} one"))
    return tuple(found)


def distance_of(reasons: Iterable[Reason]) -> float:
    """The sum of the weights, capped at 1."""
    return round(min(1.0, sum(r.weight for r in reasons)), 4)


def margin_reason(best: Candidate, runner_up: Candidate | None, min_margin: float,
                  reading: Reading | None = None) -> Reason | None:
    """`small_margin` when the runner-up (another work) is within `min_margin` of the best.

    With the reading given, a best candidate whose name is exactly the title read, against a
    runner-up whose names only contain it, needs no more than `EXACT_TITLE_MARGIN`: that the title
    read is the one and not the other is evidence of its own. Likewise a best candidate with the
    exact title and exactly the year read (`Shameless.2011.S05`), against a runner-up from another
    year whose later season might have been released that year, needs only to be ahead.
    """
    if runner_up is None or best.distance is None or runner_up.distance is None:
        return None
    margin = round(runner_up.distance - best.distance, 4)
    needed = min_margin
    if reading is not None and _exact_title(reading, best):
        if not _exact_title(reading, runner_up):
            needed = min(needed, EXACT_TITLE_MARGIN)
        if reading.year is not None and best.year == reading.year and runner_up.year != reading.year:
            needed = min(needed, 0.0001)       # the year read is this one's first year: any lead will do
    if margin >= needed:
        return None
    return reason("small_margin", f"{provider_name(best.provider)}'s best match {label(best)} is only "
                  f"{margin:.2f} ahead of {label(runner_up)}")


def _exact_title(reading: Reading, candidate: Candidate) -> bool:
    country = reading_country(reading)
    return titles_distance(untagged(reading.titles, country), untagged(candidate_names(candidate)))[0] == 0.0


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


class Thresholds(Protocol):
    """The distance cut-offs a recommendation uses (the config's `[recognition]` section has them)."""

    @property
    def strong_distance(self) -> float: ...
    @property
    def medium_distance(self) -> float: ...
    @property
    def low_distance(self) -> float: ...


def recommend(reasons: Sequence[Reason], config: Thresholds, *,
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
