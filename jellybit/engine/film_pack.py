"""Movie packs: several films in one torrent, each matched on its own; laid out once every film is sure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from jellybit.config import RecognitionConfig
from jellybit.core.confidence import Reading, reason, recommend
from jellybit.core.names import source_name
from jellybit.core.numbering import Overrides, plan_film
from jellybit.core.ports import LlmFileAnswer
from jellybit.core.records import Candidate, Film, MediaType, PlanItem, Reason, Recommendation, Role, Work
from jellybit.core.release import Release, parse_release
from jellybit.engine.metadata_match import Matcher

MAX_FILMS = 20               # films of a movie pack searched one by one
_ORDER = (Recommendation.NONE, Recommendation.LOW, Recommendation.MEDIUM, Recommendation.STRONG)


@dataclass
class PackOutcome:
    """Every film matched: the plan items with their works, the films, candidates and the pack's reasons."""

    items: list[PlanItem]
    films: list[Film] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    reasons: list[Reason] = field(default_factory=list)

    def recommendation(self, pack: Recommendation) -> Recommendation:
        """The pack's: its own reasons' capped by its least sure film."""
        return min((pack, *(f.recommendation for f in self.films)), key=_ORDER.index)

    def confidence(self, pack: float) -> float:
        """The pack's: its own reasons' capped by its least sure film."""
        return min((pack, *(f.confidence for f in self.films if f.confidence is not None)))


def _read(sources: Sequence[str], releases: Mapping[str, Release], llm: Mapping[str, LlmFileAnswer],
          year: int | None) -> tuple[str | None, int | None]:
    """The title and year to search a film by: the LLM's, else its file's own name, else the path's."""
    hint = llm.get(sources[0])
    if hint is not None and hint.work_title:
        return hint.work_title, hint.work_year
    # `Tarkovsky.Duology.1972-1979/Solaris.mkv`: the folder names the pack, the file the film
    own = parse_release(source_name(sources[0]))
    if own.title and own.media_type in (None, "movie") and not own.episodes:
        return own.title, own.year
    first = releases.get(sources[0])
    return (first.title if first else None), year


async def _match_one(matcher: Matcher, config: RecognitionConfig, title: str, year: int | None,
                     pin: tuple[str, str] | None) -> tuple[Candidate | None, bool, list[Reason],
                                                          list[Candidate]]:
    reading = Reading(MediaType.MOVIE, (title,), year)
    outcome = await matcher.match(reading, MediaType.MOVIE)
    reasons = list(outcome.reasons)
    if pin is not None:
        # A human's choice is the match; the automatic pick's doubts no longer apply.
        reasons = [r for r in reasons if r.code == "provider_error"]
        pick = await matcher.pinned(pin[0], pin[1], MediaType.MOVIE, outcome.candidates, title, year, reasons)
        return pick, True, reasons, [*outcome.candidates, pick]
    if outcome.pick is None:
        shown = f"'{title}'" + (f" ({year})" if year else "")
        reasons.append(reason("no_candidate", f"no match for the film {shown}"))
    return outcome.pick, outcome.confirmed, reasons, list(outcome.candidates)


def _pin(sources: Sequence[str], overrides: Overrides) -> tuple[str, str] | None:
    for source in sources:
        pinned = overrides.files.get(source)
        if pinned is not None and pinned.provider and pinned.provider_id:
            return pinned.provider, pinned.provider_id
    return None


def _merged(groups: Mapping[tuple[str, int | None], list[str]], picks: Mapping[str, Candidate | None]
            ) -> dict[str, list[str]]:
    """Films keyed by their first video; two groups that matched one film are its versions."""
    films: dict[str, list[str]] = {}
    by_match: dict[tuple[str, str], str] = {}
    for sources in groups.values():
        pick = picks.get(sources[0])
        key = (pick.provider, pick.provider_id) if pick is not None else None
        if key is not None and key in by_match:
            films[by_match[key]].extend(sources)
            continue
        films[sources[0]] = list(sources)
        if key is not None:
            by_match[key] = sources[0]
    return films


async def match_films(matcher: Matcher, config: RecognitionConfig, items: list[PlanItem],
                      releases: Mapping[str, Release], llm: Mapping[str, LlmFileAnswer],
                      groups: Mapping[tuple[str, int | None], list[str]], overrides: Overrides
                      ) -> PackOutcome:
    """Match each film of a pack on its own (a human's pin wins) and give its files their Work."""
    out = PackOutcome(items=list(items))
    found: dict[str, tuple[str, int | None, Candidate | None, bool, list[Reason], list[Candidate]]] = {}
    unread: list[str] = []
    for index, ((_, year), sources) in enumerate(groups.items()):
        title, year = _read(sources, releases, llm, year)
        if index >= MAX_FILMS or not title:
            unread.extend(sources)
            continue
        pin = _pin(sources, overrides)
        pick, confirmed, reasons, candidates = await _match_one(matcher, config, title, year, pin)
        if year is None and pin is None and confirmed:
            # `Stuff/Interview.mkv` beside a film may be an extra that shares a film's name: in a pack,
            # a film read without a year is confirmed by a human (the LLM's answer usually gives one)
            confirmed = False
            reasons.append(reason("year_unknown", f"the film '{title}' is named without a year; in a "
                                  "pack a human confirms it"))
        found[sources[0]] = (title, year, pick, confirmed, reasons, candidates)
    picks = {key: value[2] for key, value in found.items()}
    works: dict[str, Work] = {}
    for key, sources in _merged({k: v for k, v in groups.items() if v[0] in found}, picks).items():
        title, year, pick, confirmed, reasons, candidates = found[key]
        distance, recommendation = recommend(reasons, config, confirmed=confirmed and pick is not None)
        out.films.append(Film(
            key=key, title=title, year=year, sources=tuple(sources),
            provider=pick.provider if pick else None, provider_id=pick.provider_id if pick else None,
            match_title=pick.title if pick else None, match_year=pick.year if pick else None,
            confidence=round(1.0 - distance, 4), recommendation=recommendation, reasons=tuple(reasons),
            candidates=tuple(dict.fromkeys(f"{c.provider}:{c.provider_id}" for c in candidates))))
        out.candidates.extend(replace(c, chosen=c is pick, details={**c.details, "film": key})
                              for c in candidates)
        work = Work(MediaType.MOVIE, pick.title if pick else title, pick.year if pick else year,
                    pick.provider if pick else None, pick.provider_id if pick else None,
                    pick.original_title if pick else None)
        planned = plan_film(out.items, sources, releases, llm)
        out.items = [planned[i.source].with_(work=work) if i.source in planned else i for i in out.items]
        works.update(dict.fromkeys(sources, work))
    out.items = [i.with_(note="unmapped") if i.source in unread else i for i in out.items]
    out.items = _followers_and_extras(out.items, works)
    out.reasons.append(reason("movie_pack", f"this torrent holds {len(groups)} films; each was matched "
                              "on its own"))
    unsure = [f for f in out.films if not f.confirmed]
    if unsure:
        shown = "; ".join(f"'{f.title}'" + (f" ({f.year})" if f.year else "") + f": {_why(f)}"
                          for f in unsure[:5])
        out.reasons.append(reason("film_uncertain", f"{len(unsure)} of {len(out.films)} films need a human "
                                  f"— {shown}"))
    return out


def _why(film: Film) -> str:
    """The film's weightiest doubt, in its own words."""
    doubts = sorted((r for r in film.reasons if r.weight or r.blocking),
                    key=lambda r: (not r.blocking, -r.weight))
    return doubts[0].message[:200] if doubts else "not confirmed"


def _folder(path: str) -> str:
    return path.rpartition("/")[0]


def _followers_and_extras(items: list[PlanItem], works: Mapping[str, Work]) -> list[PlanItem]:
    """Subtitles follow their video's film; an extra goes to the one film whose folder holds it."""
    folders: dict[str, set[Work]] = {}
    for source, work in works.items():
        folders.setdefault(_folder(source), set()).add(work)
    out = []
    for item in items:
        if item.attached_to in works:
            item = item.with_(work=works[item.attached_to])
        elif item.role is Role.EXTRA and item.work is None:
            folder, owners = _folder(item.source), set()
            while not owners:
                owners = folders.get(folder, set())
                if not folder:
                    break
                folder = _folder(folder)
            if len(owners) == 1:
                item = item.with_(work=next(iter(owners)))
            else:
                item = item.with_(role=Role.IGNORED, note="an extra of a movie pack that no one film's "
                                  "folder holds; left out")
        out.append(item)
    return out
