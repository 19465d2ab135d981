"""The recognizer: classify → parse → LLM → metadata → plan → confidence, into a RecognitionDraft."""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from jellybit.config import RecognitionConfig
from jellybit.core.classify import classify
from jellybit.core.confidence import (
    Reading,
    candidate_names,
    label,
    numbering_reasons,
    reason,
    recommend,
    season_counts,
)
from jellybit.core.context import ContextReading
from jellybit.core.context_use import Stated, read_stated, with_episode
from jellybit.core.evidence import evidence_sources, with_evidence
from jellybit.core.numbering import (
    Overrides,
    apply_llm_roles,
    apply_roles,
    group_films,
    number_series,
    plan_film,
    read_overrides,
)
from jellybit.core.path_numbering import Disagreement, read_paths, settle
from jellybit.core.ports import (
    LlmAnswer,
    LlmClient,
    LlmFileAnswer,
    LlmQuestion,
    MetadataProvider,
    PromptFile,
    RecognitionRequest,
    SubtitleSampler,
)
from jellybit.core.providers import FILMS_NEED_TMDB, Provider, provider_name
from jellybit.core.records import (
    Candidate,
    MediaType,
    Plan,
    PlanItem,
    Reason,
    Recognition,
    RecognitionDraft,
    Role,
)
from jellybit.core.release import Release, as_series, parse_release
from jellybit.core.title_match import titles_distance
from jellybit.engine.context_match import stated_pick, words_reasons
from jellybit.engine.film_pack import match_films
from jellybit.engine.metadata_match import Match, Matcher, describe
from jellybit.engine.track_languages import settle_tracks
from jellybit.errors import JellybitError
from jellybit.logs import for_download

log = logging.getLogger(__name__)

_HASH = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_YEARS_AT_END = re.compile(r"(?:[\s.(\[-]+(?:19|20)\d\d[)\]]?)+$")
_RESOLUTION = re.compile(r"(?i)(?:^|\s)\d{3,4}[pi]$")
LLM_TITLE_DISAGREEMENT = 0.3
PARSED_KEYS = ("media_type", "title", "alternative_titles", "year", "season", "seasons", "episodes",
               "absolute_episodes", "air_date", "part", "complete", "special")


def _series_or_movie(value: str | None) -> MediaType | None:
    if value == "movie":
        return MediaType.MOVIE
    if value in ("episode", "season_pack", "series"):
        return MediaType.SERIES
    return None


def _parser_type(torrent: Release, releases: Mapping[str, Release]) -> MediaType | None:
    own = _series_or_movie(torrent.media_type)
    numbered = sum(1 for r in releases.values() if r.episodes or r.absolute_episodes or r.air_date)
    if own is MediaType.MOVIE and numbered >= 2 and numbered * 2 > len(releases):
        return MediaType.SERIES      # a pack named like a film whose files are numbered episodes
    if own is not None:
        return own
    votes = Counter(_series_or_movie(r.media_type) for r in releases.values())
    votes.pop(None, None)
    return votes.most_common(1)[0][0] if votes else None


def _previous_answer(previous: Recognition) -> LlmAnswer | None:
    """On apply the LLM is not asked again: the previous recognition's reading stands in for it."""
    if not previous.raw_llm:
        return None
    files = tuple(
        LlmFileAnswer(path=i.source, role=i.role.value, season=i.season, episodes=i.episodes, part=i.part,
                      extra_kind=i.extra_kind, language=i.language, flags=i.flags,
                      work_title=i.work.title if i.work else None, work_year=i.work.year if i.work else None,
                      edition=_RESOLUTION.sub("", i.version or "").strip() or None)
        for i in previous.plan.items
    )
    return LlmAnswer(media_type=previous.media_type.value if previous.media_type else None,
                     title=previous.title, original_title=previous.original_title, year=previous.year,
                     files=files, raw=previous.raw_llm)


def _title_disagreement(understanding: _Understanding, match: Candidate | None) -> list[Reason]:
    """`llm_title` when the parser's and the LLM's titles differ, unless both name the matched work.

    `Shingeki no Kyojin` and `Attack on Titan` are one show: when both are names (title, original
    title or an alias from any provider) of the confirmed candidate, they agree through it.
    """
    ours, theirs = understanding.parsed_titles, understanding.llm_titles
    if not ours or not theirs:
        return []
    gap, mine, llms = titles_distance(ours, theirs)
    if gap <= LLM_TITLE_DISAGREEMENT:
        return []
    if match is not None:
        names = candidate_names(match)
        if (titles_distance(ours, names)[0] <= LLM_TITLE_DISAGREEMENT
                and titles_distance(theirs, names)[0] <= LLM_TITLE_DISAGREEMENT):
            return []
    return [reason("llm_title", f"the release name says '{mine}', the LLM says '{llms}'")]


def _years_agree(understanding: _Understanding, match: Candidate | None) -> bool:
    """The LLM's year is the matched show's and the name's a later year of its run (a season's release)."""
    parsed, llm = understanding.years
    if match is None or match.media_type is not MediaType.SERIES or None in (parsed, llm, match.year):
        return False
    last = match.details.get("last_year")
    end = last if isinstance(last, int) else parsed
    return bool(llm == match.year and parsed is not None and match.year is not None
                and match.year <= parsed <= (end or parsed))


def _last_episodes(releases: Iterable[Release], season: int | None) -> tuple[tuple[int, int], ...]:
    """The highest episode the files number in each season (plain numbering, not absolute).

    A season the parser only assumed (`Show.E0987`) says nothing: the number may be absolute.
    """
    last: dict[int, int] = {}
    for release in releases:
        own = None if release.season_assumed else release.single_season
        number = own if own is not None else season
        if number and release.episodes:
            last[number] = max(last.get(number, 0), max(release.episodes))
    return tuple(sorted(last.items()))


def _outage(matcher: Matcher, outcome: Match, decided: bool) -> list[Reason]:
    """`provider_unavailable` when a provider was down and nothing else confirmed a match.

    A transient outage must not need a human: the pipeline sends the download to review with this
    blocking reason and recognizes it again by itself, with backoff, until the providers answer.
    """
    if not matcher.unavailable or decided or (outcome.pick is not None and outcome.confirmed):
        return []
    down = "; ".join(matcher.unavailable.values())
    return [reason("provider_unavailable", f"could not ask every metadata provider ({down[:300]}); "
                   "Jellybit tries again by itself when they are back")]


@dataclass(frozen=True)
class _Understanding:
    """The reading before metadata, with the type to search for (None: both)."""

    reading: Reading
    search_type: MediaType | None
    original_title: str | None
    parsed_titles: tuple[str, ...] = ()
    llm_titles: tuple[str, ...] = ()
    years: tuple[int | None, int | None] = (None, None)      # the release name's, the LLM's


class RecognitionEngine:
    """Implements the Recognizer port; an LLM or provider outage becomes a reason, never an exception."""

    def __init__(self, *, llm: LlmClient | None, providers: Sequence[MetadataProvider],
                 config: RecognitionConfig, languages: SubtitleSampler | None = None) -> None:
        self._llm = llm
        self._languages = languages
        self._providers = list(providers)
        self._config = config

    def _matcher_for(self, download_id: str) -> Matcher:
        config = self._config
        return Matcher(self._providers, low_distance=config.low_distance,
                       medium_distance=config.medium_distance, min_margin=config.min_margin,
                       download_id=download_id)

    # ------------------------------------------------------------------------------------- LLM

    async def _ask(self, request: RecognitionRequest, items: Sequence[PlanItem], torrent: Release,
                   reasons: list[Reason]) -> LlmAnswer | None:
        if not request.use_llm:
            return _previous_answer(request.previous) if request.previous else None
        if self._llm is None:
            return None
        parsed = {k: v for k, v in torrent.to_dict().items() if k in PARSED_KEYS}
        question = LlmQuestion(
            name=request.download.display_name, context=request.download.context,
            files=tuple(PromptFile(i.source, i.size, i.role.value) for i in items),
            hints=tuple(request.hints), parsed=parsed,
        )
        try:
            answer = await self._llm.ask(question)
        except Exception as exc:
            if not isinstance(exc, JellybitError):
                log.exception("LLM client crashed", **for_download(request.download.id))
            message = exc.message if isinstance(exc, JellybitError) else f"{type(exc).__name__}: {exc}"
            reasons.append(reason("llm_unavailable", f"the LLM could not be asked ({message[:300]}); "
                                  "recognized from the names and metadata alone"))
            return None
        if answer.dropped:
            shown = "; ".join(d[:160] for d in answer.dropped[:2])
            more = f" (and {len(answer.dropped) - 2} more)" if len(answer.dropped) > 2 else ""
            reasons.append(reason("llm_answer_dropped",
                                  f"parts of the LLM's answer were discarded: {shown}{more}"))
        return answer

    # ------------------------------------------------------------------------------------- reading

    def _understand(self, torrent: Release, releases: Mapping[str, Release], answer: LlmAnswer | None,
                    overrides: Overrides, chosen: Candidate | None, stated: ContextReading,
                    reasons: list[Reason]) -> _Understanding:
        parser_type = _parser_type(torrent, releases)
        said = answer.media_type if answer else None
        llm_type = MediaType(said) if said in ("movie", "series") else None
        if overrides.media_type:
            media_type: MediaType | None = MediaType(overrides.media_type)
            search_type = media_type
        elif chosen is not None and chosen.media_type is not None:
            media_type = search_type = chosen.media_type
        elif stated.media_type:
            media_type = search_type = MediaType(stated.media_type)
        else:
            media_type = parser_type or llm_type
            search_type = media_type if None in (parser_type, llm_type) or parser_type == llm_type else None
        # a type the human's words or choice state, and the LLM agrees with, settles the parser's doubt
        # (`Show.Part.Two.WEB-DL` reads as a film's part; "mini-series" says it is an episode)
        settled = media_type is llm_type and (overrides.media_type or chosen is not None or stated.media_type)
        if parser_type and llm_type and parser_type != llm_type and not settled:
            reasons.append(reason("llm_type", f"the release name reads as a {parser_type.value}, the LLM "
                                  f"says {llm_type.value}"))
        first_file = next(iter(releases.values()), None)
        parsed_titles = torrent.titles() or (first_file.titles() if first_file else ())
        llm_titles = tuple(t for t in (answer.title, answer.original_title) if t) if answer else ()
        titles = tuple(dict.fromkeys(t for t in (overrides.title, *stated.titles, *parsed_titles, *llm_titles)
                                     if t))
        film_year = first_file.year if first_file and media_type is MediaType.MOVIE else None
        parsed_year = torrent.year or film_year
        llm_year = answer.year if answer else None
        if parsed_year and llm_year and parsed_year != llm_year:
            reasons.append(reason("llm_year",
                                  f"the release name says {parsed_year}, the LLM says {llm_year}"))
        year = overrides.year or stated.year or parsed_year or llm_year
        season = next((s for s in (overrides.season, stated.season, torrent.single_season) if s is not None),
                      None)
        llm_seasons = {f.season for f in (answer.files if answer else ()) if f.season is not None}
        named = None if torrent.season_assumed else torrent.single_season
        if named is not None and len(llm_seasons) == 1 and named not in llm_seasons:
            reasons.append(reason("llm_season", f"the release name says season {named}, the LLM "
                                  f"says season {llm_seasons.pop()}"))
        original = answer.original_title if answer else None
        # `Shameless.US.S03`: the country a name carries tells the US show from the UK one.
        country = stated.country or torrent.country or (first_file.country if first_file else None)
        reading = Reading(media_type, titles, year, season, country=country,
                          last_episodes=_last_episodes(releases.values(), next(
                              (s for s in (overrides.season, stated.season, named) if s is not None), None)))
        return _Understanding(reading, search_type, original, parsed_titles, llm_titles,
                              (parsed_year, llm_year))

    # ------------------------------------------------------------------------------------- match

    async def _match(self, matcher: Matcher, understanding: _Understanding, request: RecognitionRequest,
                     overrides: Overrides, stated: Stated, unused_ids: list[str],
                     reasons: list[Reason]) -> Match:
        reading = understanding.reading
        pinned = overrides.provider is not None and overrides.provider_id is not None
        film_without_tmdb = ((understanding.search_type or reading.media_type) is MediaType.MOVIE
                             and not any(p.name == Provider.TMDB for p in self._providers))
        if not self._providers and not pinned and request.chosen is None:
            reasons.append(reason("no_provider", FILMS_NEED_TMDB if film_without_tmdb else
                                  "no metadata provider is configured, so nothing can confirm what this "
                                  "is; a human decides"))
            return Match()
        outcome = await matcher.match(reading, understanding.search_type, understanding.original_title)
        if pinned or request.chosen is not None:
            # A human's choice is the match; the automatic pick's doubts no longer apply.
            outcome.reasons = [r for r in outcome.reasons if r.code == "provider_error"]
            if pinned:
                pick = await matcher.pinned(
                    overrides.provider or "", overrides.provider_id or "", reading.media_type,
                    outcome.candidates, overrides.title or (reading.titles[0] if reading.titles else ""),
                    overrides.year or reading.year, outcome.reasons)
            else:
                assert request.chosen is not None
                pick = await matcher.pinned(
                    request.chosen.provider, request.chosen.provider_id, request.chosen.media_type,
                    [*outcome.candidates, request.chosen], request.chosen.title, request.chosen.year,
                    outcome.reasons)
            outcome.pick, outcome.confirmed = pick, True
        elif stated.names_a_work and await stated_pick(matcher, stated.reading, reading, outcome, unused_ids):
            pass                                        # the user's words named the work
        elif not outcome.candidates:
            # name only the providers that answered; when every one asked was down for a while,
            # `provider_unavailable` says so instead (and the worker tries again by itself)
            name = reading.titles[0] if reading.titles else "this download"
            answered = [provider_name(p.name) for p in self._providers if p.name in matcher.answered]
            only_outages = bool(matcher.unavailable) and matcher.failed == set(matcher.unavailable)
            if film_without_tmdb:
                reasons.append(reason("no_candidate", FILMS_NEED_TMDB))
            elif answered or not only_outages:
                where = f" on {', '.join(answered)}" if answered else ": no metadata provider answered"
                reasons.append(reason("no_candidate", f"no match for '{name}'"
                                      + (f" ({reading.year})" if reading.year else "") + where))
        reasons.extend(outcome.reasons)
        return outcome

    # ------------------------------------------------------------------------------------- recognize

    async def recognize(self, request: RecognitionRequest) -> RecognitionDraft:
        """Work out what the download is and plan every file; see docs/recognition.md."""
        matcher = self._matcher_for(request.download.id)
        stated = read_stated(request.download.context, request.hints)
        overrides = read_overrides(request.overrides)
        items = apply_roles(classify(request.files), overrides)
        name = request.download.display_name
        if not name or _HASH.fullmatch(name):
            # a magnet without `dn=` is named by its hash; the top folder says more
            name = request.files[0].path.split("/")[0] if request.files else ""
        torrent = parse_release(name, path=False)     # a torrent's name: its slashes are its title's
        told = overrides.media_type or (request.chosen.media_type if request.chosen else None) \
            or stated.reading.media_type
        series_told = told is not None and MediaType(told) is MediaType.SERIES

        def read(videos: list[str]) -> tuple[dict[str, Release], dict[str, Disagreement]]:
            releases, disagreements = read_paths(videos)
            if series_told:
                # a mini-series' `Part.Two.2024` reads as a film's title; the user says it is an episode
                releases = {source: as_series(release) for source, release in releases.items()}
            return releases, disagreements

        if series_told:
            torrent = as_series(torrent, path=False)
        videos = [i.source for i in items if i.role is Role.VIDEO]
        releases, disagreements = read(videos)
        overrides = with_episode(stated, overrides, videos, releases)
        reasons: list[Reason] = []
        unused_ids: list[str] = []
        answer = await self._ask(request, items, torrent, reasons)
        llm_files = {f.path: f for f in answer.files} if answer else {}
        # The LLM's file roles and track languages (step 3 of docs/recognition.md), then the texts'.
        said = "the LLM" if request.use_llm else "the previous recognition"
        items, refused = apply_llm_roles(items, llm_files, overrides, source=said)
        if [i.source for i in items if i.role is Role.VIDEO] != videos:
            videos = [i.source for i in items if i.role is Role.VIDEO]
            releases, disagreements = read(videos)
        items, track_reasons = await settle_tracks(self._languages, request.download, items, overrides,
                                                   llm_files, source=said, pending=request.pending)
        reasons.extend([*refused, *track_reasons])
        understanding = self._understand(torrent, releases, answer, overrides, request.chosen, stated.reading,
                                         reasons)
        reading = understanding.reading
        decided = bool(overrides.provider and overrides.provider_id) or request.chosen is not None
        if not reading.titles and not decided and not stated.names_a_work:
            reasons.append(reason("no_title", "neither the release name nor the LLM gives a title to "
                                  "search for"))
        films = group_films(items, releases, llm_files) if reading.media_type is MediaType.MOVIE else {}
        if len(films) > 1 and not (decided or overrides.title):
            reasons.extend(stated.reasons((name, *reading.titles), answer is not None, [], torrent,
                                          releases.values(), overrides.season is not None))
            return await self._movie_pack(matcher, request, items, releases, llm_files, films, torrent,
                                          answer, overrides, reasons)
        outcome = Match()
        if reading.titles or decided or stated.names_a_work:
            outcome = await self._match(matcher, understanding, request, overrides, stated, unused_ids,
                                        reasons)
        match = outcome.pick
        reasons.extend(_title_disagreement(understanding, match))
        if _years_agree(understanding, match):
            reasons[:] = [r for r in reasons if r.code != "llm_year"]
        reasons.extend(_outage(matcher, outcome, decided))
        media_type = reading.media_type or (match.media_type if match else None)
        if media_type is MediaType.SERIES:
            default, numbered_llm = stated.numbering(torrent, releases, llm_files, overrides)
            numbering = number_series(items, releases, numbered_llm, default, overrides,
                                      season_counts(match) if match else None)
            items = await self._by_provider(matcher, match, numbering.items, disagreements, overrides,
                                            reasons)
            reasons.extend(numbering.reasons)
            if numbering.disagreements:
                reasons.append(reason("llm_episodes", f"for {len(numbering.disagreements)} file(s) the LLM's "
                                      "episode numbers differ from the file names'; the names were used"))
        elif media_type is MediaType.MOVIE:
            planned = plan_film(items, videos, releases, llm_files)
            items = [planned.get(i.source, i) for i in items]
        reasons.extend(numbering_reasons(items, match, media_type is MediaType.SERIES))
        reasons.extend(self._track_reasons(items))
        reasons.extend(words_reasons(stated, name, reading, outcome, answer is not None, unused_ids, torrent,
                                      releases, overrides, reasons))
        return self._draft(request, media_type, reading, overrides, answer, outcome, items, reasons,
                           sources=evidence_sources(stated, overrides))

    async def _by_provider(self, matcher: Matcher, match: Candidate | None, items: list[PlanItem],
                           disagreements: Mapping[str, Disagreement], overrides: Overrides,
                           reasons: list[Reason]) -> list[PlanItem]:
        """Dated videos numbered by the provider's air dates; readings that disagree settled by its data."""
        pinned = {p for p, f in overrides.files.items() if f.season is not None or f.episodes}
        open_ = {s: d for s, d in disagreements.items() if s not in pinned}
        dates = {i.air_date for i in items if i.role is Role.VIDEO and i.air_date and not i.episodes}
        dates |= {o.air_date for d in open_.values() for o in d.options if o.air_date}
        if not dates and not open_:
            return items
        aired = await matcher.aired(match, sorted(d for d in dates if d), reasons) \
            if match is not None and dates else ({} if not dates else None)
        who = f"{provider_name(match.provider)}'s {label(match)}" if match is not None else "no matched work"
        settled, found = settle(items, open_, season_counts(match) if match else None, aired, who)
        reasons.extend(found)
        return settled

    def _track_reasons(self, items: Sequence[PlanItem]) -> list[Reason]:
        loose = [i.source for i in items if i.role in (Role.SUBTITLE, Role.AUDIO) and i.attached_to is None]
        if not loose:
            return []
        return [reason("unattached_track", f"{len(loose)} subtitle/audio file(s) match no video and are "
                       "left out")]

    def _draft(self, request: RecognitionRequest, media_type: MediaType | None, reading: Reading,
               overrides: Overrides, answer: LlmAnswer | None, outcome: Match, items: Sequence[PlanItem],
               reasons: list[Reason], sources: Mapping[str, str] | None = None) -> RecognitionDraft:
        match = outcome.pick
        unique = list(dict.fromkeys(reasons))
        distance, recommendation = recommend(unique, self._config, confirmed=outcome.confirmed)
        candidates = [replace(c, chosen=match is not None and (c.provider, c.provider_id)
                              == (match.provider, match.provider_id)) for c in outcome.candidates]
        if match is not None and not any(c.chosen for c in candidates):
            candidates.append(replace(match, chosen=True))
        candidates = with_evidence(candidates, reading, items, sources or {})
        title = overrides.title or (match.title if match else None) or (reading.titles[0] if reading.titles
                                                                        else None)
        original = (match.original_title if match else None) or (answer.original_title if answer else None)
        log.info("recognized as %s %r (%s): distance %.2f, %s, %d reason(s)",
                 media_type.value if media_type else "unknown", title,
                 describe(match) if match else "no match",
                 distance, recommendation.value, len(unique), **for_download(request.download.id))
        return RecognitionDraft(
            media_type=media_type, title=title,
            year=overrides.year or (match.year if match else None) or reading.year,
            plan=Plan(items=tuple(items)), original_title=original if original != title else None,
            provider=match.provider if match else None, provider_id=match.provider_id if match else None,
            confidence=round(1.0 - distance, 4), recommendation=recommendation, reasons=tuple(unique),
            raw_llm=answer.raw if answer else None, candidates=tuple(candidates),
        )

    # ------------------------------------------------------------------------------------- movie packs

    async def _movie_pack(self, matcher: Matcher, request: RecognitionRequest, items: list[PlanItem],
                          releases: Mapping[str, Release], llm: Mapping[str, LlmFileAnswer],
                          films: Mapping[tuple[str, int | None], list[str]], torrent: Release,
                          answer: LlmAnswer | None, overrides: Overrides,
                          reasons: list[Reason]) -> RecognitionDraft:
        """Several films in one torrent: each is matched on its own (engine/film_pack.py)."""
        pack = await match_films(matcher, self._config, items, releases, llm, films, overrides)
        items = pack.items
        reasons.extend(r for f in pack.films for r in f.reasons if r.code == "provider_error")
        reasons.extend(pack.reasons)
        reasons.extend(numbering_reasons(items, None, False))
        reasons.extend(self._track_reasons(items))
        unique = list(dict.fromkeys(reasons))
        distance, recommendation = recommend(unique, self._config, confirmed=True)
        # `Tarkovsky.Duology.1972-1979`: the pack's name, without the years its films span
        title = _YEARS_AT_END.sub("", torrent.title or "").strip() or torrent.title
        return RecognitionDraft(
            media_type=MediaType.MOVIE, title=title, year=None,
            plan=Plan(items=tuple(items), films=tuple(pack.films)),
            confidence=round(pack.confidence(1.0 - distance), 4),
            recommendation=pack.recommendation(recommendation), reasons=tuple(unique),
            raw_llm=answer.raw if answer else None, candidates=tuple(pack.candidates),
        )
