"""Small display pieces shared by the pages: state badges and download cards."""

from __future__ import annotations

from nicegui import ui

from jellybit.protocol import DownloadPayload, ReviewPayload
from ui import format as fmt
from ui.frame import WRAP


def state_badge(state: str) -> ui.badge:
    """A coloured badge with the state in words."""
    return ui.badge(fmt.state_label(state), color=fmt.state_color(state)).classes(
        "text-sm px-2 py-1").props(f"data-state={state}")


def progress_line(d: DownloadPayload) -> None:
    """Progress bar plus percent, speed, ETA and size."""
    ui.linear_progress(value=round(d.progress, 4), show_value=False, size="8px").props(
        f"rounded aria-label='download progress' aria-valuenow={round(d.progress * 100)}")
    parts = [fmt.percent(d.progress)]
    if d.state == "downloading":
        parts.append(fmt.speed(d.dl_speed))
        parts.append(f"{fmt.duration(d.eta)} left")
    if d.size:
        parts.append(fmt.size(d.size))
    ui.label(" · ".join(parts)).classes("text-xs opacity-80")


def download_card(d: DownloadPayload, review: ReviewPayload | None = None) -> None:
    """One download as a clickable card: name, state, what it was recognized as, progress."""
    with ui.link(target=f"/download/{d.id}").classes("w-full no-underline").style("color:inherit"), \
            ui.card().classes("w-full gap-1 p-3 cursor-pointer hover:shadow-lg").props(
                f"flat bordered data-download={d.id}"):
        with ui.row().classes("w-full items-start justify-between no-wrap gap-2"):
            ui.label(d.name).classes("font-medium").style(WRAP)
            state_badge(d.state)
        line = fmt.title_line(d.title, d.year, d.media_type)
        if line:
            ui.label(line).classes("text-sm").style(WRAP)
        elif d.context:
            ui.label(d.context).classes("text-sm italic opacity-80").style(WRAP)
        if d.state in ("queued", "downloading"):
            progress_line(d)
        if review is not None:
            reasons = [r.message for r in review.reasons]
            confidence = fmt.percent(review.confidence) if review.confidence is not None else None
            summary = f"Confidence {confidence}" if confidence else "Needs a decision"
            if reasons:
                summary += f" — {reasons[0]}"
            ui.label(summary).classes("text-sm text-orange-9").style(WRAP)
        if d.error is not None:
            ui.label(d.error.message or d.error.code).classes("text-sm text-negative").style(WRAP)
        stamp = d.settled_at if d.settled_at else d.updated_at
        verb = "Finished" if d.settled_at else "Updated"
        ui.label(f"{verb} {fmt.ago(stamp)}").classes("text-xs opacity-60")
