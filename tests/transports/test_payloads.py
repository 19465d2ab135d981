"""The worker's trusted rows and the protocol's models agree: what `download_row` and `list_row` send,
the models read back unchanged, so a list page needs no model per row on the worker and one validation on
the client (that `list_row` equals `download_row` is checked over a real store in
tests/adapters/store/test_views.py)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from jellybit.core.models import Download, Infohash
from jellybit.core.records import Candidate, MediaType, Plan, PlanItem, Recognition, Role
from jellybit.core.states import State
from jellybit.core.store_records import DownloadRow, RowPage
from jellybit.protocol import Command, DownloadPayload, PlanItemPayload, Provider, Response, response_model
from jellybit.transports.payloads import download_row, list_page, plan_data

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
MAYBE_INT = st.none() | st.integers(min_value=0, max_value=2**53)
STAMP = st.just("2026-12-03T07:20:44.123456Z")
HASHES = st.lists(st.from_regex(r"[0-9a-f]{40}", fullmatch=True), max_size=2, unique=True)


@st.composite
def downloads(draw: st.DrawFn) -> Download:
    """Any download as the store returns it, with Cyrillic and other non-Latin names."""
    error = draw(st.none() | st.sampled_from(["stalled", "layout_io", "torrent_error"]))
    return Download(
        id=draw(st.from_regex(r"[0-9a-hjkmnp-tv-z]{26}", fullmatch=True)), source_type="magnet",
        source_ref=draw(TEXT), display_name=draw(TEXT), context=draw(TEXT),
        state=draw(st.sampled_from(State)),
        qbt_tag="jb", created_at=draw(STAMP), updated_at=draw(STAMP),
        infohashes=tuple(Infohash(h, "v1") for h in draw(HASHES)),
        error_code=error, error_msg=draw(TEXT) if error else None, total_size=draw(MAYBE_INT),
        progress=draw(st.floats(min_value=0, max_value=1)), dl_speed=draw(st.integers(0, 2**40)),
        eta=draw(MAYBE_INT), torrent_state=draw(st.none() | st.sampled_from(["stalledDL", "metaDL"])),
        num_seeds=draw(MAYBE_INT), num_peers=draw(MAYBE_INT), defer_until=draw(st.none() | STAMP),
        settled_at=draw(st.none() | STAMP), awaiting_files=draw(st.booleans()),
        files_in_library=draw(st.integers(0, 5000)), **draw(jellyfin_fields()),
    )


@st.composite
def jellyfin_fields(draw: st.DrawFn) -> dict[str, str | None]:
    """Jellyfin's confirmation of a download: never asked, pending, found (item and link) or a note."""
    status = draw(st.sampled_from([None, "pending", "found", "missing", "unreachable"]))
    if status is None:
        return {}
    found = status == "found"
    return {"jellyfin_status": status, "jellyfin_item_id": "a" * 32 if found else None,
            "jellyfin_url": f"http://jf.lan/web/#/details?id={'a' * 32}" if found else None,
            "jellyfin_note": None if found else draw(st.none() | TEXT),
            "jellyfin_checked_at": draw(st.none() | STAMP)}


@st.composite
def recognitions(draw: st.DrawFn) -> Recognition | None:
    """A current recognition's headline (no plan items), or none yet."""
    if draw(st.booleans()):
        return None
    provider = draw(st.sampled_from(Provider))
    media_type = draw(st.none() | st.sampled_from(MediaType))
    poster = Candidate(provider=provider.value, provider_id="603", media_type=media_type, title=draw(TEXT),
                       poster_url="https://image.tmdb.org/t/p/w342/x.jpg", chosen=True)
    return Recognition(media_type=media_type, title=draw(st.none() | TEXT),
                       year=draw(st.none() | st.integers(1870, 2200)),
                       plan=Plan(folder=draw(st.none() | TEXT)),
                       original_title=draw(st.none() | TEXT), provider=provider.value, provider_id="603",
                       candidates=(poster,) if draw(st.booleans()) else ())


@settings(max_examples=150, deadline=None)
@given(downloads(), recognitions(), st.lists(TEXT, max_size=2))
def test_the_model_reads_every_row_back_unchanged(download: Download, recognition: Recognition | None,
                                                   warnings: list[str]) -> None:
    row = download_row(download, recognition, warnings)
    model = DownloadPayload.model_validate(row)
    assert model.model_dump(mode="json") == row
    assert model.state is download.state


@st.composite
def plain_rows(draw: st.DrawFn) -> DownloadRow:
    """Any list row as the store hands it (`DownloadRow`): a download's columns and its headline's."""
    download, recognition = draw(downloads()), draw(recognitions())
    return {
        "id": download.id, "source_type": download.source_type, "source_ref": download.source_ref,
        "display_name": download.display_name, "context": download.context, "state": download.state.value,
        "error_code": download.error_code, "error_msg": download.error_msg,
        "total_size": download.total_size, "progress": download.progress, "dl_speed": download.dl_speed,
        "eta": download.eta, "torrent_state": download.torrent_state, "num_seeds": download.num_seeds,
        "num_peers": download.num_peers, "defer_until": download.defer_until,
        "created_at": download.created_at, "updated_at": download.updated_at,
        "settled_at": download.settled_at, "infohashes": sorted(download.hashes()),
        "jellyfin_status": download.jellyfin_status, "jellyfin_item_id": download.jellyfin_item_id,
        "jellyfin_url": download.jellyfin_url, "jellyfin_note": download.jellyfin_note,
        "jellyfin_checked_at": download.jellyfin_checked_at, "awaiting_files": int(download.awaiting_files),
        "files_in_library": download.files_in_library,
        "media_type": recognition.media_type.value if recognition and recognition.media_type else None,
        "title": recognition.title if recognition else None,
        "original_title": recognition.original_title if recognition else None,
        "year": recognition.year if recognition else None,
        "provider": recognition.provider if recognition else None,
        "provider_id": recognition.provider_id if recognition else None,
        "folder": recognition.plan.folder if recognition else None,
        "poster_url": draw(st.none() | st.just("https://image.tmdb.org/t/p/w342/x.jpg")),
    }


@settings(max_examples=50, deadline=None)
@given(st.lists(plain_rows(), max_size=5, unique_by=lambda row: row["id"]), st.integers(1, 500),
       st.integers(0, 10_000))
def test_a_list_page_is_one_validation_on_the_client(rows: list[DownloadRow], limit: int,
                                                     offset: int) -> None:
    data = list_page(RowPage(tuple(rows), total=len(rows) + 7), limit, offset)
    body = Response.ok(data, "tx").model_dump_json()
    answer = response_model(Command.LIST).model_validate_json(body)
    assert answer.data is not None
    assert [item.id for item in answer.data.items] == [row["id"] for row in rows]
    assert [item.state.value for item in answer.data.items] == [row["state"] for row in rows]
    assert (answer.data.total, answer.data.limit, answer.data.offset) == (len(rows) + 7, limit, offset)
    assert json.loads(answer.model_dump_json(exclude_unset=True)) == json.loads(body)


PLAN_ITEMS = st.builds(
    PlanItem, source=TEXT, size=st.integers(0, 2**53), role=st.sampled_from(Role),
    season=st.none() | st.integers(0, 3000), episodes=st.lists(st.integers(0, 5000), max_size=3).map(tuple),
    language=st.none() | TEXT, library=st.none() | st.sampled_from(["movies", "series"]),
    target=st.none() | TEXT, status=st.none() | st.sampled_from(["planned", "exists", "collision"]),
    note=st.none() | TEXT)


@settings(max_examples=100, deadline=None)
@given(st.lists(PLAN_ITEMS, max_size=4))
def test_a_plan_as_plain_rows_is_what_its_models_dump(items: list[PlanItem]) -> None:
    recognition = Recognition(media_type=MediaType.SERIES, title="x", year=2001, plan=Plan(tuple(items)))
    rows = plan_data(recognition)
    assert rows == [PlanItemPayload.model_validate(row).model_dump(mode="json") for row in rows]
    assert [PlanItemPayload.model_validate(row) for row in rows] == [
        PlanItemPayload(source=i.source, size=i.size, role=i.role.value, season=i.season,
                        episodes=list(i.episodes), language=i.language, library=i.library, target=i.target,
                        status=i.status, note=i.note) for i in items]


def test_a_movie_packs_review_carries_its_films_and_recommends_the_unsure_films_pick() -> None:
    from jellybit.core.records import Film, Reason, Recommendation
    from jellybit.protocol import ReviewPayload
    from jellybit.transports.payloads import recommended, review_payload
    picks = (Candidate("tmdb", "2103", MediaType.MOVIE, "Solaris", 2002, distance=0.19, chosen=True,
                       details={"film": "T/Solaris.mkv"}, id="c1"),
             Candidate("tmdb", "593", MediaType.MOVIE, "Solaris", 1972, distance=0.2,
                       details={"film": "T/Solaris.mkv"}, id="c2"),
             Candidate("tmdb", "1398", MediaType.MOVIE, "Stalker", 1979, distance=0.0, chosen=True,
                       details={"film": "T/Stalker.mkv"}, id="c3"))
    films = (Film("T/Stalker.mkv", "Stalker", 1979, ("T/Stalker.mkv",), "tmdb", "1398", "Stalker", 1979, 1.0,
                  Recommendation.STRONG),
             Film("T/Solaris.mkv", "Solaris", None, ("T/Solaris.mkv",), "tmdb", "2103", "Solaris", 2002, 0.85,
                  Recommendation.MEDIUM, (Reason("small_margin", "close", 0.15, True),)))
    pack = Recognition(MediaType.MOVIE, "Duology", None, Plan(films=films), candidates=picks, id="r",
                       download_id="d")
    assert recommended(pack) is picks[0]                 # not Stalker's, which is sure already
    review = Download(id="d", source_type="magnet", source_ref="m", display_name="Duology", context="",
                      state=State.REVIEW, qbt_tag="jb", created_at="t", updated_at="t")
    payload = ReviewPayload.model_validate_json(review_payload(review, pack, []).model_dump_json())
    assert [(f.title, f.confirmed, [r.code for r in f.reasons]) for f in payload.films] == [
        ("Stalker", True, []), ("Solaris", False, ["small_margin"])]
    assert [c.film for c in payload.candidates] == ["T/Solaris.mkv", "T/Solaris.mkv", "T/Stalker.mkv"]
