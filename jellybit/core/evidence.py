"""What the download's evidence says about each candidate, in words a human checks at a glance.

The review screen shows, on every candidate, the facts that agree or disagree with what was read:
"year 2011", "country US (from your context)", "season 3 has 12 episodes, the torrent has 10".
Computed once per recognition from the reading, the plan and the candidate's details, stored in
`details["evidence"]`, and shown by every client as it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace

from jellybit.core.confidence import (
    Reading,
    candidate_countries,
    candidate_names,
    reading_country,
    season_counts,
    untagged,
)
from jellybit.core.context_use import Stated
from jellybit.core.numbering import Overrides
from jellybit.core.providers import provider_name
from jellybit.core.records import Candidate, MediaType, PlanItem, Role
from jellybit.core.title_match import titles_distance

MATCH = "match"
MISMATCH = "mismatch"
INFO = "info"
CLOSE_TITLE = 0.15            # a title distance a human still reads as the same name
MAX_SEASONS_SHOWN = 4


@dataclass(frozen=True)
class Evidence:
    """One fact about a candidate: `match`, `mismatch` or `info`, the words, and whose statement it checks."""

    verdict: str
    text: str
    source: str | None = None


def evidence_sources(stated: Stated, overrides: Overrides) -> dict[str, str]:
    """Which reading fields a human stated, and where: `your correction`, `your context`, `your hint`."""
    found: dict[str, str] = {}
    for name in ("year", "country", "season", "media_type", "titles"):
        index = stated.winners.get(name)
        if index is not None and index < len(stated.saids):
            found[name] = stated.saids[index].who
    for name, value in (("year", overrides.year), ("season", overrides.season),
                        ("media_type", overrides.media_type), ("titles", overrides.title)):
        if value is not None:
            found[name] = "your correction"
    return found


def _year(reading: Reading, candidate: Candidate, source: str | None) -> Evidence | None:
    ours = reading.year
    first = candidate.details.get("first_year")
    first = first if isinstance(first, int) else candidate.year
    if ours is None or first is None:
        return None
    told = source or "the release"
    if candidate.media_type is not MediaType.SERIES:
        if ours == first:
            return Evidence(MATCH, f"year {first}", source)
        return Evidence(MISMATCH, f"year {first}; {told} says {ours}", source)
    last = candidate.details.get("last_year")
    last = last if isinstance(last, int) and last >= first else None
    span = f"{first}–{last}" if last and last != first else (f"{first}–" if last is None else str(first))
    if ours == first:
        return Evidence(MATCH, f"first aired {first}", source)
    if first <= ours <= (last if last is not None else ours):
        return Evidence(MATCH, f"on air in {ours} ({span})", source)
    return Evidence(MISMATCH, f"aired {span}; {told} says {ours}", source)


def _country(reading: Reading, candidate: Candidate, source: str | None) -> Evidence | None:
    ours = reading_country(reading)
    if ours is None:
        return None
    origins = candidate_countries(candidate)
    told = source or "the release name"
    if not origins:
        return Evidence(INFO, f"no country given; {told} says {ours}", source)
    theirs = "/".join(origins)
    if ours in origins:
        return Evidence(MATCH, f"country {theirs}", source)
    return Evidence(MISMATCH, f"country {theirs}; {told} says {ours}", source)


def _type(reading: Reading, candidate: Candidate, source: str | None) -> Evidence | None:
    if reading.media_type is None or candidate.media_type in (None, reading.media_type):
        return None
    words = {MediaType.MOVIE: "a film", MediaType.SERIES: "a series"}
    return Evidence(MISMATCH, f"{words[candidate.media_type]}; the download looks like "
                    f"{words[reading.media_type]}", source)


def _title(reading: Reading, candidate: Candidate, source: str | None) -> Evidence | None:
    if not reading.titles:
        return None
    country = reading_country(reading)
    distance, ours, theirs = titles_distance(untagged(reading.titles, country),
                                             untagged(candidate_names(candidate)))
    if distance == 0:
        return Evidence(MATCH, f"title “{theirs}”", source)
    verdict = INFO if distance <= CLOSE_TITLE else MISMATCH
    return Evidence(verdict, f"title “{theirs}”; {source or 'the release'} says “{ours}”", source)


def _seasons(items: Sequence[PlanItem], candidate: Candidate) -> list[Evidence]:
    if candidate.media_type is not MediaType.SERIES:
        return []
    held: dict[int, set[int]] = {}
    for item in items:
        if item.role is Role.VIDEO and item.season is not None and item.episodes:
            held.setdefault(item.season, set()).update(item.episodes)
    counts = season_counts(candidate)
    if not held or not counts:
        return []
    who = provider_name(candidate.provider)
    found: list[Evidence] = []
    fine: list[int] = []
    for season in sorted(held):
        episodes = held[season]
        name = "specials" if season == 0 else f"season {season}"
        if season not in counts:
            found.append(Evidence(MISMATCH, f"{who} has no {name}"))
        elif max(episodes) > counts[season]:
            found.append(Evidence(MISMATCH, f"{name} has {counts[season]} episodes; the torrent has "
                                  f"episode {max(episodes)}"))
        elif len(episodes) < counts[season]:
            found.append(Evidence(INFO, f"{name} has {counts[season]} episodes; the torrent has "
                                  f"{len(episodes)}"))
        else:
            fine.append(season)
    if len(fine) == 1:
        season = fine[0]
        name = "specials" if season == 0 else f"season {season}"
        found.insert(0, Evidence(MATCH, f"{name}: all {counts[season]} episodes"))
    elif fine:
        found.insert(0, Evidence(MATCH, f"seasons {_span(fine)} complete"))
    return found[:MAX_SEASONS_SHOWN]


def _span(numbers: Iterable[int]) -> str:
    ordered = sorted(numbers)
    if ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"{ordered[0]}–{ordered[-1]}"
    return ", ".join(str(n) for n in ordered)


def candidate_evidence(candidate: Candidate, reading: Reading, items: Sequence[PlanItem],
                       sources: Mapping[str, str]) -> tuple[Evidence, ...]:
    """What agrees and what disagrees between the reading, the plan and one candidate."""
    found = [
        _title(reading, candidate, sources.get("titles")),
        _year(reading, candidate, sources.get("year")),
        _country(reading, candidate, sources.get("country")),
        _type(reading, candidate, sources.get("media_type")),
        *_seasons(items, candidate),
    ]
    return tuple(e for e in found if e is not None)


def with_evidence(candidates: Iterable[Candidate], reading: Reading, items: Sequence[PlanItem],
                  sources: Mapping[str, str]) -> list[Candidate]:
    """The candidates with `details["evidence"]` set (a list of {verdict, text, source})."""
    return [replace(c, details={**c.details, "evidence": [
        asdict(e) for e in candidate_evidence(c, reading, items, sources)]}) for c in candidates]
