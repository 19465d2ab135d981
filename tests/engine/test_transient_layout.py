"""A layout that meets a database held by another process is paused, not failed: the download stays
`applying` and the next poll cycle lays it out (the journal makes the second apply idempotent)."""

from __future__ import annotations

from jellybit.adapters.store import StoreBusy
from jellybit.core.ports import ApplyResult
from jellybit.core.records import MediaType, Plan, PlanItem, RecognitionDraft, Role
from jellybit.core.states import Actor, State
from tests.support.engine import EngineFactory, ScriptedLayouter
from tests.support.qbittorrent import magnet


class BusyOnce(ScriptedLayouter):
    """The first apply finds the database locked (as the store reports it); later ones work."""

    async def apply(self, download, recognition) -> ApplyResult:  # type: ignore[no-untyped-def]
        if not self.applied:
            self.applied.append((download.id, recognition))
            raise StoreBusy("database is locked")
        return await super().apply(download, recognition)


async def test_a_busy_database_pauses_the_layout_and_the_next_poll_finishes_it(
    make_engine: EngineFactory,
) -> None:
    layouter = BusyOnce()
    engine = await make_engine(layouter=layouter)
    added = await engine.commands.add(source=magnet(name="Busy.Movie.2001"))
    download_id = added.download.id
    for state in (State.DOWNLOADING, State.RECOGNIZING, State.APPLYING):
        await engine.store.transition(download_id, state, reason="test", actor=Actor.WORKER)
    await engine.store.save_recognition(download_id, RecognitionDraft(
        MediaType.MOVIE, "Busy Movie", 2001, Plan((PlanItem("Busy.Movie.2001.mkv", 10, Role.VIDEO),)),
        provider="tmdb", provider_id="1"))
    done = await engine.settle(download_id, State.DONE)
    assert done.error_code is None
    assert len(layouter.applied) == 2
    assert State.FAILED.value not in [to for _from, to in await engine.path(download_id)]
