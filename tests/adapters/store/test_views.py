"""A request's reads in one trip: the same answers as the per-table methods, over a real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jellybit import clock
from jellybit.adapters.store import Store, views
from jellybit.core.links import LinkStatus, LinkUpdate, NewLink
from jellybit.core.models import Infohash, NewDownload
from jellybit.core.records import Candidate, MediaType, Plan, PlanItem, Reason, RecognitionDraft, Role
from jellybit.core.states import Actor, State
from jellybit.transports.payloads import download_row, list_row, poster_of

NAMES = ["Фарго 2014", "Fargo.S01.1080p", "100%_done", "Тьма \\ Dark", "Сериал", "The Office (US)"]


async def populate(store: Store) -> list[str]:
    """Downloads in several states, with hashes, recognitions, candidates, hints, overrides and links."""
    ids = []
    for n, name in enumerate(NAMES * 3):
        hashes = (Infohash(f"{n + 1:040x}", "v1"),) + ((Infohash(f"{n + 1:064x}", "v2"),) if n % 2 else ())
        created = await store.create_download_if_no_active(
            NewDownload("magnet", f"magnet:?xt=urn:btih:{n + 1:040x}", name, f"контекст {n}", hashes))
        download_id = created.download.id
        ids.append(download_id)
        path = [State.DOWNLOADING, State.RECOGNIZING, State.REVIEW][: n % 4]
        if n % 5 == 0:
            path = [State.DOWNLOADING, State.RECOGNIZING, State.APPLYING, State.DONE]
        for state in path:
            await store.transition(download_id, state, reason="test", actor=Actor.WORKER)
        if n % 3:
            plan = Plan((PlanItem(f"{name}/a.mkv", 10, Role.VIDEO, season=1, episodes=(1,),
                                  target="x/Season 01/x S01E01.mkv", library="series", status="planned"),),
                        folder=f"{name} (2014) [tvdbid-{n}]")
            await store.save_recognition(download_id, RecognitionDraft(
                MediaType.SERIES, name, 2014, plan, provider="tvdb", provider_id=str(n),
                reasons=(Reason("no_match", "не найдено", 1.0, True),),
                candidates=(Candidate("tvdb", str(n + 1), MediaType.SERIES, name, 2014,
                                      poster_url=f"https://img/{n}.jpg", chosen=n % 2 == 0),
                            Candidate("tvdb", str(n), MediaType.SERIES, name, 2014, details={"a": [1]},
                                      poster_url=f"https://img/{n}-own.jpg" if n % 7 else None))))
        if n % 4 == 3:
            await store.add_hint(download_id, f"подсказка {n}")
            await store.set_overrides(download_id, {"season": 2, "title": "Название"})
        if n % 8 == 3:
            await store.update_download(download_id, defer_until="2999-01-01T00:00:00.000000Z")
        if n % 5 == 0:
            batch, rows = await store.open_batch(download_id, [
                NewLink(f"/d/{n}.mkv", f"/s/Сериал/{n}.mkv", "video", 1, src_dev=1, src_ino=n + 1)])
            await store.finish_links([LinkUpdate(rows[0].id, LinkStatus.LINKED, n + 1, None)])
            await store.commit_batch(batch.id)
    return ids


async def test_a_record_is_what_the_per_table_methods_say_in_one_trip(store: Store) -> None:
    ids = await populate(store)
    for download_id in ids:
        trips = store.reader.trips
        record = await store.download_record(download_id)
        assert store.reader.trips == trips + 1
        assert record is not None
        assert record.download == await store.get_download(download_id)
        assert list(record.transitions) == await store.transitions(download_id)
        assert record.recognition == await store.current_recognition(download_id)
        assert list(record.hints) == await store.hints(download_id)
        assert record.overrides == await store.overrides(download_id)
        assert list(record.links) == await store.links_for_download(download_id)
    assert await store.download_record("0" * 26) is None


async def test_a_view_has_the_headline_or_in_review_everything(store: Store) -> None:
    for download_id in await populate(store):
        view = await store.download_view(download_id)
        assert view is not None
        download, full = view.download, await store.current_recognition(download_id)
        assert download == await store.get_download(download_id)
        if full is None:
            assert view.recognition is None
        elif download.state is State.REVIEW:
            assert view.recognition == full
            assert list(view.hints) == [h.text for h in await store.hints(download_id)]
            history = await store.transitions(download_id)
            asked = [t for t in history if t.to_state is State.REVIEW][-1]
            assert view.review_requested_at == asked.created_at
        else:
            headline = view.recognition
            assert headline is not None
            shown = (headline.title, headline.year, headline.media_type, headline.provider,
                     headline.provider_id, headline.plan.folder, headline.id, headline.reasons,
                     poster_of(headline))
            assert shown == (full.title, full.year, full.media_type, full.provider, full.provider_id,
                             full.plan.folder, full.id, full.reasons, poster_of(full))
            assert headline.plan.items == ()


@pytest.mark.parametrize("states", [None, [State.REVIEW], [State.DONE, State.QUEUED], []])
@pytest.mark.parametrize("text", [None, "фарго", "100%", "_", "\\", "Dark"])
async def test_pages_by_offset_and_by_keyset_match_the_old_listing(store: Store, states, text) -> None:
    await populate(store)
    total = await store.count_downloads(states=states, text=text)
    expected = await store.list_downloads(states=states, text=text, limit=1000)
    by_offset, after, walked = [], None, []
    for offset in range(0, total + 4, 4):
        page = await store.download_page(states=states, text=text, limit=4, offset=offset)
        assert page.total == total
        by_offset.extend(page.items)
        keyset = await store.download_page(states=states, text=text, limit=4, after=after, with_total=False)
        walked.extend(keyset.items)
        after = keyset.items[-1].id if keyset.items else after
        for download in page.items:
            full = await store.current_recognition(download.id)
            headline = page.headlines.get(download.id)
            shown = (headline.title, headline.plan.folder) if headline else None
            assert shown == ((full.title, full.plan.folder) if full else None)
    assert by_offset == expected
    assert walked == expected


async def wire_rows(store: Store, states: list[State] | None, text: str | None, limit: int,
                    offset: int) -> tuple[list[dict], int]:
    """What `list` sends for a page, built from the page's models, one trip's worth."""
    page = await store.download_page(states=states, text=text, limit=limit, offset=offset)
    return [download_row(d, page.headlines.get(d.id)) for d in page.items], page.total


@pytest.mark.parametrize("states", [None, [State.REVIEW], [State.DONE, State.QUEUED], []])
@pytest.mark.parametrize("text", [None, "фарго", "100%", "_", "\\", "Dark"])
async def test_plain_rows_are_the_wire_rows_of_the_same_page(store: Store, states, text) -> None:
    await populate(store)
    total = await store.count_downloads(states=states, text=text)
    for offset in range(0, total + 4, 4):
        trips = store.reader.trips
        page = await store.download_rows(states=states, text=text, limit=4, offset=offset)
        assert store.reader.trips == trips + 1
        assert ([list_row(row) for row in page.rows], page.total) == await wire_rows(
            store, states, text, 4, offset)


FREE_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=FREE_TEXT, context=FREE_TEXT, message=FREE_TEXT, title=st.none() | FREE_TEXT,
       folder=st.none() | FREE_TEXT, error=st.none() | st.sampled_from(["stalled", "layout_io"]),
       seeds=st.none() | st.integers(0, 2**40), progress=st.floats(0, 1), poster=st.booleans())
async def test_any_download_reads_the_same_as_plain_row_and_as_models(
        store: Store, name: str, context: str, message: str, title: str | None, folder: str | None,
        error: str | None, seeds: int | None, progress: float, poster: bool) -> None:
    n = await store.count_downloads()
    hashes = (Infohash(f"{n + 1:064x}", "v2"), Infohash(f"{n + 1:040x}", "v1"))
    created = await store.create_download_if_no_active(
        NewDownload("magnet", f"magnet:?xt=urn:btih:{n + 1:040x}&dn={name}", name, context, hashes))
    download_id = created.download.id
    await store.update_download(download_id, error_code=error, error_msg=message if error else None,
                                num_seeds=seeds, num_peers=seeds, progress=progress, total_size=seeds)
    if title is not None:
        await store.save_recognition(download_id, RecognitionDraft(
            MediaType.MOVIE, title, 1999, Plan(folder=folder), original_title=message, provider="tmdb",
            provider_id="603", candidates=(Candidate("tmdb", "603", MediaType.MOVIE, title, 1999,
                                                     poster_url="https://img/603.jpg" if poster else None),)))
    page = await store.download_rows(limit=1)
    assert ([list_row(row) for row in page.rows], page.total) == await wire_rows(store, None, None, 1, 0)
    assert page.rows[0]["id"] == download_id


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=12))
async def test_any_search_text_finds_what_the_old_listing_finds(store: Store, text: str) -> None:
    if not await store.count_downloads():
        await populate(store)
    page = await store.download_page(text=text, limit=500)
    assert list(page.items) == await store.list_downloads(text=text, limit=500)
    assert page.total == await store.count_downloads(text=text)


async def test_the_summary_counts_states_the_undeferred_review_queue_and_the_last_done(store: Store) -> None:
    ids = await populate(store)
    record = await store.summary_record(clock.now())
    assert record.counts == await store.count_by_state()
    reviews = await store.list_downloads(states=[State.REVIEW], limit=500)
    now = clock.now()
    assert record.review_queue == sum(1 for d in reviews if not d.defer_until or d.defer_until <= now)
    assert record.last_done is not None
    assert record.last_done[0] == await store.last_settled(State.DONE)
    assert record.last_done[0].id in ids
    waiting = (await store.summary_record(now, waiting=3)).waiting
    undeferred = sorted((d for d in reviews if not d.defer_until or d.defer_until <= now),
                        key=lambda d: d.updated_at)
    assert [d.id for d, _ in waiting] == [d.id for d in undeferred[:3]]
    assert len(waiting) == 1 < len(reviews)
    for download, headline in waiting:
        full = await store.current_recognition(download.id)
        shown = (headline.reasons, headline.title) if headline else None
        assert shown == ((full.reasons, full.title) if full else None)


async def test_the_reader_sees_every_commit_and_writes_nothing(store: Store) -> None:
    created = await store.create_download_if_no_active(NewDownload("magnet", "magnet:?x", "Новый", ""))
    view = await store.download_view(created.download.id)
    assert view is not None
    assert view.download.display_name == "Новый"
    await store.update_download(created.download.id, display_name="Переименован")
    view = await store.download_view(created.download.id)
    assert view is not None
    assert view.download.display_name == "Переименован"
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        await store.reader.run(lambda conn: conn.execute("DELETE FROM download"))
    assert await store.count_downloads() == 1


async def test_small_reads_run_on_the_loop_and_big_ones_on_the_readers_thread(store: Store) -> None:
    """A `get` of a small download and a `list` page without a text search are answered inline; a text
    search, a long page and a plan of thousands of files go to the reader's thread, with the same answers."""
    ids = await populate(store)
    big = ids[1]
    items = tuple(PlanItem(f"Pack/Season 01/Pack.S01E{e:04d}.1080p.mkv", 10, Role.VIDEO, season=1,
                           episodes=(e,), target=f"Pack/Season 01/Pack S01E{e:04d}.mkv", library="series",
                           status="planned")
                  for e in range(1, 400))
    plan = Plan(items, folder="Pack")
    await store.save_recognition(big, RecognitionDraft(MediaType.SERIES, "Pack", 2014, plan))
    for download_id, inline in ((ids[2], 1), (big, 0)):
        trips, before = store.reader.trips, store.reader.inline
        record = await store.download_record(download_id)
        assert (store.reader.trips - trips, store.reader.inline - before) == (1, inline)
        assert record is not None
        assert record.recognition == await store.current_recognition(download_id)
    queries = (({}, 1), ({"states": [State.REVIEW]}, 1), ({"text": "фарго"}, 0), ({"limit": 500}, 0))
    for query, inline in queries:
        before = store.reader.inline
        page = await store.download_rows(**query)
        assert store.reader.inline - before == inline
        assert [list_row(row) for row in page.rows] == [
            list_row(row) for row in (await store.reader.run(
                lambda conn, q=query: views.read_rows(conn, q.get("states"), q.get("text"),
                                                      q.get("limit", 50), 0))).rows]
