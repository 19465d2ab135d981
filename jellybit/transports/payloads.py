"""Engine records -> protocol payloads (the one place that knows both shapes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from jellybit.core.confidence import label
from jellybit.core.models import Download, Transition
from jellybit.core.reasons import PENALTIES, is_blocking, meaning
from jellybit.core.records import Candidate, Film, Recognition
from jellybit.core.store_records import DownloadRow, RowPage
from jellybit.engine.events import Event
from jellybit.engine.results import (
    AddOutcome,
    DownloadDetail,
    DownloadView,
    Summary,
    UndoOutcome,
)
from jellybit.present import actions, sentence, title_line
from jellybit.protocol import (
    CandidatePayload,
    EventPayload,
    FilmPayload,
    LastCompleted,
    PlanItemPayload,
    QueueItem,
    ReasonPayload,
    ReviewPayload,
    Role,
    SummaryPayload,
    UpgradePayload,
)

VERDICTS = ("match", "mismatch", "info")


def poster_of(recognition: Recognition | None) -> str | None:
    """The poster of the recognized work: the chosen candidate's, else the matched provider id's."""
    if recognition is None:
        return None
    chosen = next((c for c in recognition.candidates if c.chosen and c.poster_url), None)
    if chosen is None and recognition.provider_id:
        chosen = next((c for c in recognition.candidates if c.poster_url and (c.provider, c.provider_id)
                       == (recognition.provider, recognition.provider_id)), None)
    return chosen.poster_url if chosen else None


def download_row(download: Download, recognition: Recognition | None = None,
                 warnings: list[str] | None = None) -> dict[str, Any]:
    """The `DownloadPayload` of a download as JSON-ready data, built straight from the store's rows.

    No model is built: a list page serializes fifty of these at once, and the client validates the
    answer. A test checks that the model reads every row back unchanged.
    """
    recognition_type = recognition.media_type if recognition else None
    return {
        "id": download.id, "name": download.display_name or download.source_ref[:200],
        "state": download.state.value, "context": download.context, "source_type": download.source_type,
        "progress": download.progress, "dl_speed": download.dl_speed, "eta": download.eta,
        "size": download.total_size, "torrent_state": download.torrent_state,
        "seeds": download.num_seeds, "peers": download.num_peers,
        "error": ({"code": download.error_code, "message": download.error_msg} if download.error_code
                  else None),
        "media_type": recognition_type.value if recognition_type else None,
        "title": recognition.title if recognition else None,
        "original_title": recognition.original_title if recognition else None,
        "year": recognition.year if recognition else None,
        "poster_url": poster_of(recognition),
        "provider": recognition.provider if recognition else None,
        "provider_id": recognition.provider_id if recognition else None,
        "target_folder": recognition.plan.folder if recognition else None,
        "warnings": list(warnings or ()), "infohashes": sorted(download.hashes()),
        "defer_until": download.defer_until, "created_at": download.created_at,
        "updated_at": download.updated_at, "settled_at": download.settled_at,
        "jellyfin": jellyfin_row(download.jellyfin_status, download.jellyfin_item_id, download.jellyfin_url,
                                 download.jellyfin_note, download.jellyfin_checked_at),
        "awaiting_files": download.awaiting_files, "files_in_library": download.files_in_library,
    }


def jellyfin_row(status: str | None, item_id: str | None, url: str | None, note: str | None,
                 checked_at: str | None) -> dict[str, Any] | None:
    """The `JellyfinPayload` of a download (None while Jellyfin was never asked about it)."""
    if not status:
        return None
    return {"status": status, "item_id": item_id, "url": url, "note": note, "checked_at": checked_at}


def plan_rows(recognition: Recognition) -> list[PlanItemPayload]:
    """The plan as source -> target rows."""
    return [PlanItemPayload.model_validate(row) for row in plan_data(recognition)]


def plan_data(recognition: Recognition) -> list[dict[str, Any]]:
    """The plan's `PlanItemPayload` rows as JSON-ready data, no model per file (a 2,000-file pack's `get`
    built and dumped 2,000 models on the event loop, 11.6 ms); a test checks the models read them back."""
    return [
        {"source": i.source, "size": i.size, "role": i.role.value, "season": i.season,
         "episodes": list(i.episodes), "language": i.language, "library": i.library, "target": i.target,
         "status": i.status, "note": i.note}
        for i in recognition.plan.items
    ]


def _described(details: dict[str, Any]) -> dict[str, Any]:
    """The details that tell works apart, only where they have the expected type."""
    kinds = {"country": str, "network": str, "first_year": int, "last_year": int, "season_count": int,
             "episode_count": int}
    found: dict[str, Any] = {k: details[k] for k, kind in kinds.items() if isinstance(details.get(k), kind)}
    links = details.get("links")
    if isinstance(links, dict):
        found["links"] = {str(k): v for k, v in links.items() if isinstance(v, str)}
    seasons = details.get("seasons")
    if isinstance(seasons, dict):
        found["seasons"] = {str(k): v for k, v in seasons.items() if isinstance(v, int)}
    if isinstance(details.get("film"), str):
        found["film"] = details["film"]
    evidence = details.get("evidence")
    if isinstance(evidence, list):
        found["evidence"] = [e for e in evidence if isinstance(e, dict) and e.get("verdict") in VERDICTS
                             and isinstance(e.get("text"), str)]
    return found


def recommended(recognition: Recognition | None) -> Candidate | None:
    """The candidate to preselect and to apply without a choice: the chosen one, else the nearest."""
    if recognition is None or not recognition.candidates:
        return None
    unsure = next((f for f in recognition.plan.films if not f.confirmed), None)
    if unsure is not None:
        # a movie pack: the pick for its first unsure film (what a one-button Apply should decide)
        offered = [c for c in recognition.candidates if c.details.get("film") == unsure.key]
        if offered:
            return next((c for c in offered if c.chosen), None) or min(
                offered, key=lambda c: 1.0 if c.distance is None else c.distance)
    chosen = next((c for c in recognition.candidates if c.chosen), None)
    if chosen is not None:
        return chosen
    return min(recognition.candidates, key=lambda c: 1.0 if c.distance is None else c.distance)


def candidate_rows(recognition: Recognition) -> list[CandidatePayload]:
    """The metadata candidates of a recognition."""
    return [
        CandidatePayload(id=c.id, provider=c.provider, provider_id=c.provider_id,
                         media_type=c.media_type.value if c.media_type else None, title=c.title,
                         year=c.year, original_title=c.original_title, url=c.url, poster_url=c.poster_url,
                         overview=(c.overview or "")[:600] or None, distance=c.distance, chosen=c.chosen,
                         **_described(c.details))
        for c in recognition.candidates
    ]


def reason_rows(recognition: Recognition | Film) -> list[ReasonPayload]:
    """The reasons a recognition (or one film of a pack) is not automatic."""
    return [ReasonPayload(code=r.code, message=r.message, weight=r.weight, blocking=is_blocking(r),
                          meaning=meaning(r) if r.code in PENALTIES else None)
            for r in recognition.reasons]


def film_rows(recognition: Recognition) -> list[FilmPayload]:
    """A movie pack's films, each with its own match, confidence and reasons."""
    return [FilmPayload(key=f.key, title=f.title, year=f.year, sources=list(f.sources), provider=f.provider,
                        provider_id=f.provider_id, match_title=f.match_title, match_year=f.match_year,
                        confidence=f.confidence, recommendation=f.recommendation.value, confirmed=f.confirmed,
                        reasons=reason_rows(f))
            for f in recognition.plan.films]


def review_payload(download: Download, recognition: Recognition | None, hints: list[str],
                   requested_at: str | None = None) -> ReviewPayload:
    """The retained `reviews/<id>` payload."""
    base: dict[str, Any] = {"id": download.id, "name": download.display_name, "context": download.context,
                            "hints": hints, "defer_until": download.defer_until, "requested_at": requested_at,
                            "progress": download.progress if download.awaiting_files else None}
    if recognition is None:
        return ReviewPayload(**base)
    plan = plan_rows(recognition)
    return ReviewPayload(
        **base,
        media_type=recognition.media_type.value if recognition.media_type else None,
        title=recognition.title, year=recognition.year, confidence=recognition.confidence,
        recommendation=recognition.recommendation.value, reasons=reason_rows(recognition),
        candidates=candidate_rows(recognition), plan=plan, films=film_rows(recognition),
        recommended=(pick.id if (pick := recommended(recognition)) else None),
        collisions=[row.target or row.source for row in plan if row.status == "collision"],
        upgrades=[UpgradePayload(source=row.source, target=row.target, message=row.note or "")
                  for row in plan if row.status == "held" and row.role is Role.VIDEO],
    )


def transition_row(transition: Transition) -> dict[str, Any]:
    """One timeline entry."""
    return {"id": transition.id, "at": transition.created_at,
            "from": transition.from_state.value if transition.from_state else None,
            "to": transition.to_state.value, "reason": transition.reason, "actor": transition.actor.value}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in dataclasses.asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def detail_payload(detail: DownloadDetail) -> dict[str, Any]:
    """`get` as JSON-ready data (the protocol's `DownloadDetail`): the download, its timeline, recognition
    (with candidates and plan), hints, overrides and links."""
    recognition = detail.recognition
    links = [
        {"id": str(link.id), "batch": link.apply_batch_id, "source": link.src_path, "target": link.dst_path,
         "kind": link.kind, "status": str(link.status), "size": link.size, "message": link.message}
        for link in detail.links
    ]
    warnings = [link["message"] for link in links if link["status"] == "copied" and link["message"]]
    data: dict[str, Any] = {
        "download": download_row(detail.download, recognition, warnings),
        "timeline": [transition_row(t) for t in detail.transitions],
        "hints": [h.text for h in detail.hints],
        "overrides": _plain(detail.overrides),
        "links": links,
        "recognition": None,
    }
    if recognition is not None:
        data["recognition"] = {
            "id": recognition.id, "attempt_no": recognition.attempt_no,
            "media_type": recognition.media_type.value if recognition.media_type else None,
            "title": recognition.title, "original_title": recognition.original_title,
            "year": recognition.year, "provider": recognition.provider,
            "provider_id": recognition.provider_id, "confidence": recognition.confidence,
            "recommendation": recognition.recommendation.value,
            "reasons": [r.model_dump(mode="json") for r in reason_rows(recognition)],
            "candidates": [c.model_dump(mode="json") for c in candidate_rows(recognition)],
            "films": [f.model_dump(mode="json") for f in film_rows(recognition)],
            "recommended": pick.id if (pick := recommended(recognition)) else None,
            "plan": plan_data(recognition),
            "folder": recognition.plan.folder, "created_at": recognition.created_at,
        }
    return data


def panel_link(panel_url: str | None, download_id: str) -> str | None:
    """The download's page on the panel, when the panel's public URL is configured."""
    return f"{panel_url.rstrip('/')}/download/{download_id}" if panel_url else None


def _titled(download: Download, recognition: Recognition | None) -> str:
    title = (recognition.title if recognition and recognition.title else download.display_name) or ""
    return title_line(title, recognition.year if recognition else None)


def headline_reason(recognition: Recognition | None, limit: int = 240) -> str:
    """The heaviest blocking reason's own sentence (else the heaviest note's), capitalized and bounded."""
    if recognition is None or not recognition.reasons:
        return ""
    pool = [r for r in recognition.reasons if is_blocking(r)] or list(recognition.reasons)
    text = sentence(max(pool, key=lambda r: r.weight).message)
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def summary_payload(summary: Summary, last_completed: tuple[Download, Recognition | None] | None,
                    waiting: list[tuple[Download, Recognition | None]] | None = None,
                    panel_url: str | None = None) -> SummaryPayload:
    """The retained `summary` payload."""
    last = None
    if last_completed is not None:
        download, recognition = last_completed
        last = LastCompleted(id=download.id, title=_titled(download, recognition)[:255],
                             at=download.settled_at)
    reviews = [QueueItem(id=d.id, name=d.display_name[:300], title=r.title if r else None,
                         year=r.year if r else None, reason=headline_reason(r),
                         url=panel_link(panel_url, d.id)) for d, r in waiting or []]
    return SummaryPayload(states=summary.states, active=summary.active, downloading=summary.downloading,
                          in_review=summary.in_review, failed=summary.failed, last_completed=last,
                          review_queue=summary.review_queue, reviews=reviews)


def event_payload(event: Event, recognition: Recognition | None = None,
                  panel_url: str | None = None) -> EventPayload:
    """One `events` message, with the recognized work and the panel link a notification shows."""
    review = event.event_type.value == "review_requested"
    jellyfin = event.event_type.value == "jellyfin"      # `url` opens the item in Jellyfin, `message` why not
    pick = recommended(recognition) if review else None
    held = next((i.note for i in recognition.plan.items if i.status == "held" and i.role is Role.VIDEO
                 and i.note), None) if review and recognition is not None else None
    # A storage fault names its code, and its words are the message too (`reason` says the same).
    code = event.data.get("code") if event.event_type.value == "fault" else None
    return EventPayload(
        code=code if isinstance(code, str) else None,
        event_type=event.event_type.value, id=event.download_id, name=event.name,
        to=event.to_state.value if event.to_state else None,
        reason=event.reason or None, actor=event.actor.value if event.actor else None, at=event.at,
        title=recognition.title if recognition else None, year=recognition.year if recognition else None,
        poster_url=poster_of(recognition),
        url=(jellyfin and event.data.get("url")) or panel_link(panel_url, event.download_id),
        message=(headline_reason(recognition) if review else (event.data.get("note") if jellyfin else None)
                 if not code else (event.reason or None)),
        candidate_id=pick.id if pick else None, candidate=label(pick).replace("'", "") if pick else None,
        upgrade=held[:500] if held else None, actions=list(actions(event.to_state)) if event.to_state else [],
        progress=_progress(event.data.get("progress")) if review else None,
        **{"from": event.from_state.value if event.from_state else None},
    )


def _progress(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def plain(value: Any) -> Any:
    """Dataclasses (title groups, a deleted title) as JSON-ready data (`TitleGroup`, `DeleteTitleResult`)."""
    return _plain(value)


def add_result(result: AddOutcome, view: DownloadView | None) -> dict[str, Any]:
    """`add` as JSON-ready data (the protocol's `AddResult`)."""
    return {"id": result.download.id, "created": result.created, "joined": not result.created,
            "settled_before": list(result.settled_before), "added_hashes": list(result.added_hashes),
            "download": download_row(result.download, view.recognition if view else None)}


def undo_result(outcome: UndoOutcome, view: DownloadView | None) -> dict[str, Any]:
    """`undo` as JSON-ready data (the protocol's `UndoResult`)."""
    return {"download": download_row(outcome.download, view.recognition if view else None),
            "removed": list(outcome.removed), "refused": [{"path": p, "why": w} for p, w in outcome.refused],
            "complete": outcome.complete}


def list_row(row: DownloadRow) -> dict[str, Any]:
    """A list page's `DownloadPayload` straight from the store's plain row: what `download_row` gives for
    the same download and headline (a test checks it over a real store), with no object per row."""
    error_code = row["error_code"]
    return {
        "id": row["id"], "name": row["display_name"] or row["source_ref"][:200], "state": row["state"],
        "context": row["context"], "source_type": row["source_type"], "progress": row["progress"],
        "dl_speed": row["dl_speed"], "eta": row["eta"], "size": row["total_size"],
        "torrent_state": row["torrent_state"], "seeds": row["num_seeds"], "peers": row["num_peers"],
        "error": {"code": error_code, "message": row["error_msg"]} if error_code else None,
        "media_type": row["media_type"] or None, "title": row["title"],
        "original_title": row["original_title"], "year": row["year"], "poster_url": row["poster_url"],
        "provider": row["provider"], "provider_id": row["provider_id"], "target_folder": row["folder"],
        "warnings": [], "infohashes": row["infohashes"], "defer_until": row["defer_until"],
        "created_at": row["created_at"], "updated_at": row["updated_at"], "settled_at": row["settled_at"],
        "jellyfin": jellyfin_row(row["jellyfin_status"], row["jellyfin_item_id"], row["jellyfin_url"],
                                 row["jellyfin_note"], row["jellyfin_checked_at"]),
        "awaiting_files": bool(row["awaiting_files"]), "files_in_library": row["files_in_library"],
    }


def list_page(page: RowPage, limit: int, offset: int) -> dict[str, Any]:
    """`list` as JSON-ready data (the protocol's `ListPage`), each item straight from its plain row."""
    return {"items": [list_row(row) for row in page.rows], "total": page.total, "limit": limit,
            "offset": offset}
