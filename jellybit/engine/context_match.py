"""A provider id or IMDb id from the user's context or hints picks the match, as a pinned one does."""

from __future__ import annotations

from jellybit.core.confidence import Reading
from jellybit.core.context import ContextReading
from jellybit.core.context_use import imdb_pick
from jellybit.core.records import Candidate, MediaType, Reason
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
