"""Metadata matching: search every provider, fetch details, score, pick (provider errors are reasons)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from jellybit.core.confidence import (
    Reading,
    candidate_reasons,
    distance_of,
    label,
    margin_reason,
    provider_name,
    reason,
    same_work,
)
from jellybit.core.plan import Candidate, MediaType, Reason
from jellybit.core.ports import MetadataProvider, MetadataQuery
from jellybit.errors import AdapterError, JellybitError

log = logging.getLogger(__name__)

SERIES_ONLY = frozenset({"tvdb", "tvmaze"})
# Among listings of the same work, the provider Jellyfin's folder id should name.
PREFERENCE = {MediaType.SERIES: ("tvdb", "tmdb", "tvmaze"), MediaType.MOVIE: ("tmdb", "tvdb", "tvmaze")}
DETAILS_FOR = 3              # candidates whose details (seasons, aliases) are fetched
MAX_QUERIES = 3              # searches per reading: the title, then other names while nothing fits
MAX_KEPT = 12                # candidates kept on the recognition


@dataclass
class Match:
    """The outcome of matching one reading: candidates best first, the pick and whether it is confirmed."""

    candidates: list[Candidate] = field(default_factory=list)
    pick: Candidate | None = None
    confirmed: bool = False
    reasons: list[Reason] = field(default_factory=list)


def _failure(provider: str, exc: BaseException) -> Reason:
    message = exc.message if isinstance(exc, JellybitError) else f"{type(exc).__name__}: {exc}"
    return reason("provider_error", f"{provider_name(provider)} failed: {message[:300]}")


class Matcher:
    """Searches every provider for a reading and scores what comes back."""

    def __init__(self, providers: Sequence[MetadataProvider], *, low_distance: float, medium_distance: float,
                 min_margin: float, download_id: str = "") -> None:
        self.providers = list(providers)
        self.log_extra = {"download_id": download_id} if download_id else {}
        self.low_distance = low_distance
        self.medium_distance = medium_distance
        self.min_margin = min_margin
        self.unavailable: dict[str, str] = {}     # provider -> why, for outages worth retrying

    async def _call(self, provider: MetadataProvider, coro: object) -> tuple[object, Reason | None]:
        try:
            return await coro, None  # type: ignore[misc]
        except AdapterError as exc:
            log.warning("metadata provider %s failed: %s", provider.name, exc.message, extra=self.log_extra)
            if exc.transient:
                self.unavailable.setdefault(provider.name, exc.message)
            return None, _failure(provider.name, exc)
        except Exception as exc:     # a provider bug must not cost the download its recognition
            log.exception("metadata provider %s crashed", provider.name, extra=self.log_extra)
            return None, _failure(provider.name, exc)

    async def search(self, query: MetadataQuery, reasons: list[Reason]) -> list[Candidate]:
        """Ask every provider that has this kind of title, concurrently; results in provider order."""
        wanted = [p for p in self.providers if not (query.media_type == "movie" and p.name in SERIES_ONLY)]
        answers = await asyncio.gather(*(self._call(p, p.search(query)) for p in wanted))
        found: list[Candidate] = []
        for result, failure in answers:
            if failure is not None:
                reasons.append(failure)
            found.extend(c for c in (result or []) if isinstance(c, Candidate))  # type: ignore[union-attr]
        return found

    async def details(self, candidate: Candidate, reasons: list[Reason]) -> Candidate:
        """The candidate with the provider's details merged in (seasons, aliases); unchanged on error."""
        provider = next((p for p in self.providers if p.name == candidate.provider), None)
        if provider is None or candidate.media_type is None or "seasons" in candidate.details:
            return candidate
        fetched, failure = await self._call(
            provider, provider.details(candidate.media_type.value, candidate.provider_id))
        if failure is not None:
            reasons.append(failure)
        if not isinstance(fetched, Candidate):
            return candidate
        return replace(
            candidate,
            details={**candidate.details, **fetched.details},
            original_title=candidate.original_title or fetched.original_title,
            url=candidate.url or fetched.url,
            poster_url=candidate.poster_url or fetched.poster_url,
            year=candidate.year or fetched.year,
        )

    def score(self, reading: Reading, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Each candidate with its distance, best first (ties: the preferred provider, then search order)."""
        preference = PREFERENCE[reading.media_type or MediaType.MOVIE]
        scored = [replace(c, distance=distance_of(candidate_reasons(reading, c))) for c in candidates]
        order = {id(c): i for i, c in enumerate(scored)}
        rank = {name: i for i, name in enumerate(preference)}
        return sorted(scored, key=lambda c: (c.distance, rank.get(c.provider, 9), order[id(c)]))

    async def match(self, reading: Reading, search_type: MediaType | None,
                    original_title: str | None = None) -> Match:
        """Search by the reading's names (more names only while nothing fits), fetch details, pick."""
        outcome = Match()
        if not reading.titles:
            return outcome
        seen: dict[tuple[str, str], Candidate] = {}
        names = list(reading.titles)
        first_original = original_title or next((n for n in names[1:]), None)
        queries = [(names[0], first_original)] + [(n, None) for n in names[1:] if n != first_original]
        for title, original in queries[:MAX_QUERIES]:
            query = MetadataQuery(title=title, media_type=search_type.value if search_type else None,
                                  year=reading.year, original_title=original)
            for candidate in await self.search(query, outcome.reasons):
                seen.setdefault((candidate.provider, candidate.provider_id), candidate)
            ranked = self.score(reading, list(seen.values()))
            if ranked and (ranked[0].distance or 0.0) <= self.medium_distance:
                break
        ranked = self.score(reading, list(seen.values()))
        detailed = [await self.details(c, outcome.reasons) if i < DETAILS_FOR else c
                    for i, c in enumerate(ranked)]
        outcome.candidates = self.score(reading, detailed)[:MAX_KEPT]
        if not outcome.candidates:
            return outcome
        best = outcome.candidates[0]
        runner_up = next((c for c in outcome.candidates[1:] if not same_work(c, best)), None)
        margin = margin_reason(best, runner_up, self.min_margin)
        outcome.reasons.extend(candidate_reasons(reading, best))
        if margin is not None:
            outcome.reasons.append(margin)
        if (best.distance or 0.0) <= self.low_distance:
            outcome.pick, outcome.confirmed = best, margin is None
        return outcome

    async def pinned(self, provider: str, provider_id: str, media_type: MediaType | None,
                     known: Sequence[Candidate], fallback_title: str, year: int | None,
                     reasons: list[Reason]) -> Candidate:
        """The candidate a human pinned by provider id: from the search, the provider, or built bare."""
        for candidate in known:
            if candidate.provider == provider and candidate.provider_id == provider_id:
                return await self.details(candidate, reasons)
        source = next((p for p in self.providers if p.name == provider), None)
        if source is not None and media_type is not None:
            fetched, failure = await self._call(source, source.details(media_type.value, provider_id))
            if isinstance(fetched, Candidate):
                return fetched
            if failure is not None:
                reasons.append(failure)
        return Candidate(provider=provider, provider_id=provider_id, media_type=media_type,
                         title=fallback_title, year=year)


def describe(candidate: Candidate) -> str:
    """`TMDB 'Fargo' (2014)` for logs and messages."""
    return f"{provider_name(candidate.provider)} {label(candidate)}"
