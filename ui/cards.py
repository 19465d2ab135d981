"""Small display pieces shared by the pages: state badges, torrent progress and download cards."""

from __future__ import annotations

from nicegui import ui

from jellybit.present import ordered_reasons
from jellybit.protocol import DownloadPayload, ReviewPayload
from ui import format as fmt
from ui.frame import WRAP


def state_badge(state: str) -> ui.badge:
    """A coloured badge with the state in words."""
    return ui.badge(fmt.state_name(state), color=fmt.state_color(state)).classes(
        "text-sm px-2 py-1 shrink-0").props(f"data-state={state}")


def progress_line(d: DownloadPayload) -> None:
    """Progress bar; percent, speed, ETA, size, the swarm; and qBittorrent's state when it matters."""
    words = fmt.torrent_words(d.torrent_state) if d.state == "downloading" else None
    trouble = bool(words and words[1])
    ui.linear_progress(value=round(d.progress, 4), show_value=False, size="8px",
                       color="negative" if trouble else "primary").props(
        f"rounded aria-label='download progress' aria-valuenow={round(d.progress * 100)}")
    parts = [fmt.percent(d.progress)]
    if d.state == "downloading":
        parts.append(fmt.speed(d.dl_speed))
        parts.append(f"{fmt.duration(d.eta)} left")
    if d.size:
        parts.append(fmt.size(d.size))
    if d.state == "downloading" and fmt.swarm(d.seeds, d.peers):
        parts.append(fmt.swarm(d.seeds, d.peers))
    ui.label(" · ".join(parts)).classes("text-xs text-muted").props("data-testid=progress")
    if words:
        with ui.row().classes("items-center gap-1 no-wrap").props(
                f"data-torrent-state={d.torrent_state} {'role=alert' if trouble else ''}"):
            ui.icon("warning" if trouble else "info", size="xs",
                    color="negative" if trouble else "grey-7").props("aria-hidden=true")
            ui.label(f"{words[0]} (qBittorrent: {d.torrent_state})").classes(
                "text-xs " + ("text-negative font-medium" if trouble else "text-muted")).style(WRAP)


def thumbnail(url: str | None, name: str) -> None:
    """A small poster, or a neutral placeholder of the same size."""
    if url:
        ui.image(url).classes("w-12 shrink-0 rounded").style("aspect-ratio:2/3").props(
            f"alt='Poster of {name.replace(chr(39), '’')}' fit=cover no-transition")
    else:
        with ui.element("div").classes("w-12 shrink-0 rounded bg-grey-5 flex items-center justify-center"
                                       ).style("aspect-ratio:2/3"):
            ui.icon("movie", size="sm", color="grey-9").props("aria-hidden=true")


def review_line(review: ReviewPayload) -> str:
    """'Needs your decision: <the weightiest blocking reason>'."""
    first = next(iter(ordered_reasons(review.reasons)), None)      # every face's order of reasons
    return "Needs your decision" + (f": {fmt.sentence(first.message)}" if first else "")


def download_card(d: DownloadPayload, review: ReviewPayload | None = None) -> None:
    """One download as a clickable card: poster, title (release name second), state, progress."""
    title = fmt.title_line(d.title, d.year, {"movie": "film"}.get(d.media_type or "", d.media_type))
    with ui.link(target=f"/download/{d.id}").classes("w-full no-underline").style("color:inherit"), \
            ui.card().classes("w-full p-3 cursor-pointer hover:shadow-lg").props(
                f"flat bordered data-download={d.id}"), ui.row().classes("w-full no-wrap gap-3 items-start"):
        thumbnail(d.poster_url, d.title or d.name)
        with ui.column().classes("gap-1 grow").style("min-width:0"):
            with ui.row().classes("w-full items-start justify-between no-wrap gap-2"):
                ui.label(title or d.name).classes("font-medium").style(WRAP).props("data-testid=headline")
                state_badge(d.state)
            if title:
                ui.label(d.name).classes("text-xs font-mono text-muted").style(WRAP)
            elif d.context:
                ui.label(d.context).classes("text-sm italic text-muted").style(WRAP)
            if d.state in ("queued", "downloading"):
                progress_line(d)
            if review is not None:
                ui.label(review_line(review)).classes("text-sm text-warning-strong").style(WRAP)
            if d.error is not None:
                ui.label(d.error.message or d.error.code).classes("text-sm text-negative").style(WRAP)
            stamp = d.settled_at if d.settled_at else d.updated_at
            verb = "Finished" if d.settled_at else "Updated"
            ui.label(f"{verb} {fmt.ago(stamp)}").classes("text-xs text-muted")
