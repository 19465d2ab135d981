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
    reading_country,
    reason,
    untagged,
)
from jellybit.core.ports import MetadataProvider, MetadataQuery
from jellybit.core.providers import preferred, provider_name, serves
from jellybit.core.records import Candidate, MediaType, Reason
from jellybit.core.works import combine, group_works, listing_ids, merge
from jellybit.errors import AdapterError, JellybitError

log = logging.getLogger(__name__)

# Candidate penalties that only rank: on the chosen match the numbering says it, and blocks
RANKING_ONLY = frozenset({"season_absent", "episodes_absent"})
DETAILS_FOR = 3              # works whose listings get their details (seasons, aliases, ids)
MAX_QUERIES = 3              # searches per reading: the title, then other names while nothing fits
MAX_KEPT = 12                # candidates kept on the recognition
MAX_DATES = 1000             # air dates looked up per recognition (about four years of a daily show)


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
        self.failed: set[str] = set()             # every provider that failed, transient or not
        self.answered: set[str] = set()           # every provider that answered at least once

    async def _call(self, provider: MetadataProvider, coro: object) -> tuple[object, Reason | None]:
        try:
            answer = await coro  # type: ignore[misc]
        except AdapterError as exc:
            log.warning("metadata provider %s failed: %s", provider.name, exc.message, extra=self.log_extra)
            self.failed.add(provider.name)
            if exc.transient:
                self.unavailable.setdefault(provider.name, exc.message)
            return None, _failure(provider.name, exc)
        except Exception as exc:     # a provider bug must not cost the download its recognition
            log.exception("metadata provider %s crashed", provider.name, extra=self.log_extra)
            self.failed.add(provider.name)
            return None, _failure(provider.name, exc)
        self.answered.add(provider.name)
        return answer, None

    async def search(self, query: MetadataQuery, reasons: list[Reason]) -> list[Candidate]:
        """Ask every provider that has this kind of title, concurrently; results in provider order."""
        wanted = [p for p in self.providers if serves(p.name, query.media_type)]
        answers = await asyncio.gather(*(self._call(p, p.search(query)) for p in wanted))
        found: list[Candidate] = []
        for result, failure in answers:
            if failure is not None:
                reasons.append(failure)
            found.extend(c for c in (result or []) if isinstance(c, Candidate))  # type: ignore[union-attr]
        return found

    async def details(self, candidate: Candidate, reasons: list[Reason]) -> Candidate:
        """The candidate completed by its provider's details (seasons, aliases, ids); unchanged on error."""
        provider = next((p for p in self.providers if p.name == candidate.provider), None)
        if provider is None or candidate.media_type is None or "seasons" in candidate.details:
            return candidate
        fetched, failure = await self._call(
            provider, provider.details(candidate.media_type.value, candidate.provider_id))
        if failure is not None:
            reasons.append(failure)
        if not isinstance(fetched, Candidate):
            return candidate
        # The fresh details win for this provider's own fields; names and ids are the union.
        return combine(replace(fetched, url=candidate.url or fetched.url), candidate)

    def score(self, reading: Reading, candidates: Sequence[Candidate]) -> list[Candidate]:
        """Each candidate with its distance, best first (ties: the preferred provider, then search order)."""
        preference = preferred(reading.media_type)
        scored = [replace(c, distance=distance_of(candidate_reasons(reading, c))) for c in candidates]
        order = {id(c): i for i, c in enumerate(scored)}
        rank = {name: i for i, name in enumerate(preference)}
        return sorted(scored, key=lambda c: (c.distance, rank.get(c.provider, 9), order[id(c)]))

    def works(self, reading: Reading, listings: Sequence[Candidate]
              ) -> list[tuple[Candidate, list[Candidate]]]:
        """The listings as works (one merged candidate each, with its listings), best first."""
        groups = group_works(listings)
        merged = [merge(g, preferred(g[0].media_type or reading.media_type))
                  for g in groups]
        position = {_key(c): i for i, c in enumerate(merged)}
        return [(c, groups[position[_key(c)]]) for c in self.score(reading, merged)]

    async def match(self, reading: Reading, search_type: MediaType | None,
                    original_title: str | None = None) -> Match:
        """Search by the reading's names (more names only while nothing fits), group into works, pick."""
        outcome = Match()
        if not reading.titles:
            return outcome
        listings: dict[tuple[str, str, str], Candidate] = {}
        # `House of Cards US` is searched as `House of Cards` too: providers rarely carry the tag.
        names = list(untagged(reading.titles, reading_country(reading)))
        first_original = original_title or next((n for n in names[1:]), None)
        queries = [(names[0], first_original)] + [(n, None) for n in names[1:] if n != first_original]
        for title, original in queries[:MAX_QUERIES]:
            query = MetadataQuery(title=title, media_type=search_type.value if search_type else None,
                                  year=reading.year, original_title=original)
            for candidate in await self.search(query, outcome.reasons):
                listings.setdefault(_key(candidate), candidate)
            ranked = self.works(reading, list(listings.values()))
            if ranked and (ranked[0][0].distance or 0.0) <= self.medium_distance:
                break
        wanted = [_key(listing) for _, group in self.works(reading, list(listings.values()))[:DETAILS_FOR]
                  for listing in group]
        fetched = await asyncio.gather(*(self.details(listings[key], outcome.reasons) for key in wanted))
        listings.update(zip(wanted, fetched, strict=True))
        outcome.candidates = [c for c, _ in self.works(reading, list(listings.values()))][:MAX_KEPT]
        if not outcome.candidates:
            return outcome
        best = outcome.candidates[0]
        # Every other candidate is another work: listings of one work were merged above.
        runner_up = outcome.candidates[1] if len(outcome.candidates) > 1 else None
        margin = margin_reason(best, runner_up, self.min_margin, reading)
        outcome.reasons.extend(r for r in candidate_reasons(reading, best) if r.code not in RANKING_ONLY)
        if margin is not None:
            outcome.reasons.append(margin)
        if (best.distance or 0.0) <= self.low_distance:
            outcome.pick, outcome.confirmed = best, margin is None
        return outcome

    async def pinned(self, provider: str, provider_id: str, media_type: MediaType | None,
                     known: Sequence[Candidate], fallback_title: str, year: int | None,
                     reasons: list[Reason]) -> Candidate:
        """The candidate a human pinned by provider id: from the search, the provider, or built bare.

        A merged candidate is found by any of its providers' ids; it then speaks for the pinned
        provider, whose id the folder will carry.
        """
        for candidate in known:
            if candidate.provider == provider and candidate.provider_id == provider_id:
                return await self.details(candidate, reasons)
        for candidate in known:
            same_type = media_type in (None, candidate.media_type)
            if same_type and listing_ids(candidate).get(provider) == provider_id:
                links = candidate.details.get("links") or {}
                url = links.get(provider) if isinstance(links, dict) else None
                return replace(candidate, provider=provider, provider_id=provider_id,
                               url=url if isinstance(url, str) else None, distance=None)
        source = next((p for p in self.providers if p.name == provider), None)
        if source is not None and media_type is not None:
            fetched, failure = await self._call(source, source.details(media_type.value, provider_id))
            if isinstance(fetched, Candidate):
                return fetched
            if failure is not None:
                reasons.append(failure)
        return Candidate(provider=provider, provider_id=provider_id, media_type=media_type,
                         title=fallback_title, year=year)


    async def aired(self, candidate: Candidate, dates: Sequence[str], reasons: list[Reason]
                    ) -> dict[str, tuple[tuple[int, int], ...]] | None:
        """The episodes each date aired, by the candidate's provider (another of its work's if that fails).

        None when no provider with air dates could be asked: then no date is numbered.
        """
        ids = listing_ids(candidate)
        order = [candidate.provider, *(p for p in preferred(MediaType.SERIES) if p != candidate.provider)]
        for name in order:
            provider = next((p for p in self.providers if p.name == name), None)
            ask = getattr(provider, "aired", None)
            if provider is None or ask is None or name not in ids:
                continue
            answer, failure = await self._call(provider, ask(ids[name], list(dates)[:MAX_DATES]))
            if failure is not None:
                reasons.append(failure)
            elif isinstance(answer, dict):
                return answer
        return None


def _key(candidate: Candidate) -> tuple[str, str, str]:
    """A listing's identity: provider, type (TMDB numbers films and shows separately) and id."""
    kind = candidate.media_type.value if candidate.media_type else ""
    return candidate.provider, kind, candidate.provider_id


def describe(candidate: Candidate) -> str:
    """`TMDB 'Fargo' (2014)` for logs and messages."""
    return f"{provider_name(candidate.provider)} {label(candidate)}"
