"""Engine records -> protocol payloads (the one place that knows both shapes)."""

from __future__ import annotations

import dataclasses
from typing import Any

from jellybit.core.models import Download, Transition
from jellybit.core.plan import Recognition
from jellybit.engine.events import Event
from jellybit.engine.results import DownloadDetail, Summary
from jellybit.protocol import (
    CandidatePayload,
    DownloadPayload,
    ErrorInfo,
    EventPayload,
    LastCompleted,
    PlanItemPayload,
    ReasonPayload,
    ReviewPayload,
    SummaryPayload,
)


def download_payload(download: Download, recognition: Recognition | None = None,
                     warnings: list[str] | None = None) -> DownloadPayload:
    """The retained `downloads/<id>` payload."""
    error = ErrorInfo(code=download.error_code, message=download.error_msg) if download.error_code else None
    return DownloadPayload(
        id=download.id, name=download.display_name or download.source_ref[:200], state=download.state.value,
        context=download.context, source_type=download.source_type, progress=download.progress,
        dl_speed=download.dl_speed, eta=download.eta, size=download.total_size,
        torrent_state=download.torrent_state, error=error,
        media_type=recognition.media_type.value if recognition and recognition.media_type else None,
        title=recognition.title if recognition else None,
        year=recognition.year if recognition else None,
        provider=recognition.provider if recognition else None,
        provider_id=recognition.provider_id if recognition else None,
        target_folder=recognition.plan.folder if recognition else None,
        warnings=warnings or [], infohashes=sorted(download.hashes()),
        defer_until=download.defer_until, created_at=download.created_at,
        updated_at=download.updated_at, settled_at=download.settled_at,
    )


def plan_rows(recognition: Recognition) -> list[PlanItemPayload]:
    """The plan as source -> target rows."""
    return [
        PlanItemPayload(source=i.source, size=i.size, role=i.role.value, season=i.season,
                        episodes=list(i.episodes), language=i.language, library=i.library,
                        target=i.target, status=i.status, note=i.note)
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
    return found


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


def reason_rows(recognition: Recognition) -> list[ReasonPayload]:
    """The reasons a recognition is not automatic."""
    return [ReasonPayload(code=r.code, message=r.message, weight=r.weight, blocking=r.blocking)
            for r in recognition.reasons]


def review_payload(download: Download, recognition: Recognition | None, hints: list[str],
                   requested_at: str | None = None) -> ReviewPayload:
    """The retained `reviews/<id>` payload."""
    base: dict[str, Any] = {"id": download.id, "name": download.display_name, "context": download.context,
                            "hints": hints, "defer_until": download.defer_until, "requested_at": requested_at}
    if recognition is None:
        return ReviewPayload(**base)
    plan = plan_rows(recognition)
    return ReviewPayload(
        **base,
        media_type=recognition.media_type.value if recognition.media_type else None,
        title=recognition.title, year=recognition.year, confidence=recognition.confidence,
        recommendation=recognition.recommendation.value, reasons=reason_rows(recognition),
        candidates=candidate_rows(recognition), plan=plan,
        collisions=[row.target or row.source for row in plan if row.status == "collision"],
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
    """`get`: the download, its timeline, recognition (with candidates and plan), hints and links."""
    recognition = detail.recognition
    links = [
        {"id": link.id, "batch": link.apply_batch_id, "source": link.src_path, "target": link.dst_path,
         "kind": link.kind, "status": str(link.status), "size": link.size, "message": link.message}
        for link in detail.links
    ]
    warnings = [link["message"] for link in links if link["status"] == "copied" and link["message"]]
    data: dict[str, Any] = {
        "download": download_payload(detail.download, recognition, warnings).model_dump(mode="json"),
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
            "reasons": [r.model_dump() for r in reason_rows(recognition)],
            "candidates": [c.model_dump() for c in candidate_rows(recognition)],
            "plan": [p.model_dump() for p in plan_rows(recognition)],
            "folder": recognition.plan.folder, "created_at": recognition.created_at,
        }
    return data


def summary_payload(summary: Summary, last_completed: tuple[Download, Recognition | None] | None
                    ) -> SummaryPayload:
    """The retained `summary` payload."""
    last = None
    if last_completed is not None:
        download, recognition = last_completed
        title = (recognition.title if recognition and recognition.title else download.display_name) or ""
        if recognition and recognition.year:
            title = f"{title} ({recognition.year})"
        last = LastCompleted(id=download.id, title=title[:255], at=download.settled_at)
    return SummaryPayload(states=summary.states, active=summary.active, downloading=summary.downloading,
                          in_review=summary.in_review, failed=summary.failed, last_completed=last)


def event_payload(event: Event) -> EventPayload:
    """One `events` message."""
    return EventPayload(
        event_type=event.event_type.value, id=event.download_id, name=event.name,
        to=event.to_state.value if event.to_state else None,
        reason=event.reason or None, actor=event.actor.value if event.actor else None, at=event.at,
        **{"from": event.from_state.value if event.from_state else None},
    )


def plain(value: Any) -> Any:
    """Dataclasses (e.g. title groups) as JSON-ready dicts."""
    return _plain(value)
