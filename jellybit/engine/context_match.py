"""The user's words against the match: a stated id picks it; other words confirm it, or are weighed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from jellybit.core.confidence import Reading, candidate_names
from jellybit.core.context import ContextReading
from jellybit.core.context_use import Stated, imdb_pick
from jellybit.core.numbering import Overrides
from jellybit.core.records import Candidate, MediaType, Reason
from jellybit.core.release import Release
from jellybit.engine.metadata_match import Match, Matcher


async def stated_pick(matcher: Matcher, stated: ContextReading, reading: Reading, outcome: Match,
                      unused_ids: list[str]) -> bool:
    """Make the stated id's candidate the confirmed match; False (and `unused_ids` says why) if none is.

    A TMDB/TVDB/TVMaze id is looked up like a human's pinned one (among the candidates, else at
    its provider); an id that neither the search nor its provider knows is not used. An IMDb id
    selects the candidate whose external ids carry it.
    """
    pick: Candidate | None = None
    if stated.provider and stated.provider_id:
        kind = MediaType(stated.provider_kind) if stated.provider_kind else reading.media_type
        failures: list[Reason] = []
        pick = await matcher.pinned(stated.provider, stated.provider_id, kind, outcome.candidates,
                                    reading.titles[0] if reading.titles else "", reading.year, failures)
        if pick.url is None and not pick.details:     # built bare: nobody confirmed this id
            outcome.reasons.extend(failures)
            pick = None
            unused_ids.append("provider")
    if pick is None and stated.imdb:
        pick = imdb_pick(outcome.candidates, stated.imdb)
        if pick is None:
            unused_ids.append("imdb")
    if pick is None:
        return False
    # The user named the work: the automatic pick's doubts no longer apply.
    outcome.reasons = [r for r in outcome.reasons if r.code == "provider_error"]
    outcome.pick, outcome.confirmed = pick, True
    return True


# Reasons that say the name evidence is not exact: the user's stray words may then matter.
INEXACT = frozenset({"title_distance", "year_distance", "year_unknown", "type_mismatch", "country_mismatch",
                     "llm_title", "llm_type", "llm_year", "llm_season"})


def words_reasons(stated: Stated, name: str, reading: Reading, outcome: Match, llm_read: bool,
                   unused_ids: list[str], torrent: Release, releases: Mapping[str, Release],
                   overrides: Overrides, reasons: Sequence[Reason]) -> list[Reason]:
    """The user's words against the chosen work: its names and people confirm, stray words are weighed."""
    match = outcome.pick
    chosen = candidate_names(match) if match else ()
    names = (name, *reading.titles, *chosen)
    if match is None:        # nothing chosen: every candidate's names may be what the words meant
        names = (*names, *(n for c in outcome.candidates for n in candidate_names(c)))
    others = [n for c in outcome.candidates if match is None or c.provider_id != match.provider_id
              for n in candidate_names(c)] if match is not None else []
    listed = match.details.get("people") if match else None
    people = [p for p in listed or () if isinstance(p, str)]
    exact = (match is not None and outcome.confirmed and not any(r.blocking for r in reasons)
             and not any(r.code in INEXACT for r in reasons))
    return stated.reasons(names, llm_read, unused_ids, torrent, releases.values(),
                          overrides.season is not None, people=people, others=others, exact=exact)
