"""The read-only parts of the download page: recognition, candidates, plan, links, timeline."""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui

from jellybit.protocol import (
    DownloadDetail,
    DownloadPayload,
    JellyfinPayload,
    LinkRow,
    LinkStatus,
    MediaType,
    TransitionRow,
    page_url,
    provider_name,
)
from ui import format as fmt
from ui.cards import state_badge
from ui.frame import WRAP

LIVE_LINKS = (LinkStatus.LINKED, LinkStatus.COPIED, LinkStatus.EXISTS)


def section(title: str) -> ui.card:
    """A titled card."""
    card = ui.card().classes("w-full gap-2 p-4").props(f"flat bordered data-section='{title}'")
    with card:
        ui.label(title).classes("text-h6")
    return card


def provider_link(provider: str | None, provider_id: str | None, url: str | None = None,
                  media_type: str | None = None) -> None:
    """'TMDB 603' as a link to the provider's page."""
    if not provider:
        return
    text = f"{provider_name(provider)} {provider_id or ''}".strip()
    target = url or (page_url(provider, provider_id, MediaType(media_type) if media_type else None)
                      if provider_id else None)
    if target:
        ui.link(text, target, new_tab=True).classes("text-sm").props(
            f"aria-label='Open {text} in a new tab' rel=noopener")
    else:
        ui.label(text).classes("text-sm")


def links(rows: list[LinkRow]) -> None:
    """The library files this download laid (what undo removes)."""
    with section("Library files"):
        if not rows:
            ui.label("Nothing was laid out.").classes("text-sm text-muted")
            return
        for row in rows:
            with ui.row().classes("w-full items-start gap-2 no-wrap py-1"):
                mark = fmt.MARKS.get(row.status, (row.status, "grey-7"))
                ui.badge(mark[0], color=mark[1])
                with ui.column().classes("gap-0").style("min-width:0"):
                    ui.label(row.target).classes("text-sm font-mono").style(WRAP)
                    if row.message:
                        ui.label(row.message).classes("text-xs text-warning-strong").style(WRAP)


def live_link_targets(rows: list[LinkRow]) -> list[str]:
    """The targets that are still in the library (undo would remove these)."""
    return [r.target for r in rows if r.status in LIVE_LINKS]


def timeline(rows: list[TransitionRow]) -> None:
    """State transitions, newest first."""
    with section("Timeline"):
        if not rows:
            ui.label("No history yet.").classes("text-sm text-muted")
            return
        with ui.timeline(side="right").classes("w-full"):
            for row in reversed(rows):
                came = f"{fmt.state_name(row.from_)} → " if row.from_ else ""
                ui.timeline_entry(row.reason or "", title=f"{came}{fmt.state_name(row.to)}",
                                  subtitle=f"{fmt.stamp(row.at)} · by {row.actor}",
                                  color=fmt.state_color(row.to))


def details(data: DownloadDetail) -> None:
    """The raw answer, for the curious, folded away."""
    with ui.expansion("Details (raw data)", icon="data_object").classes("w-full").props(
            "dense aria-label='Details (raw data)'"):
        ui.code(data.model_dump_json(indent=2, by_alias=True, exclude_unset=True), language="json").classes(
            "w-full text-xs")


def header(download: DownloadPayload, torrent: Callable[[], None] | None = None) -> None:
    """Poster, the recognized title as the headline and the release name under it, state, context."""
    title = fmt.title_line(download.title, download.year)
    name = download.name or download.id
    with ui.row().classes("w-full items-start no-wrap gap-3"):
        if download.poster_url:
            ui.image(download.poster_url).classes("w-16 shrink-0 rounded").style("aspect-ratio:2/3").props(
                f"alt='Poster of {title or name}' fit=cover no-transition")
        with ui.column().classes("gap-1 grow").style("min-width:0"):
            with ui.row().classes("w-full items-start justify-between no-wrap gap-2"):
                ui.label(title or name).classes("text-h6").style(WRAP).props("data-testid=headline")
                state_badge(download.state)
            if title:
                ui.label(name).classes("text-sm font-mono text-muted").style(WRAP).props(
                    "data-testid=release-name")
            kind = {MediaType.MOVIE: "Film", MediaType.SERIES: "Series"}.get(download.media_type)
            links = [kind] if kind else []
            with ui.row().classes("items-center gap-2"):
                for part in links:
                    ui.label(part).classes("text-sm")
                provider_link(download.provider, download.provider_id, None, download.media_type)
            if torrent is not None:
                torrent()
    if download.context:
        ui.label(f"Context: {download.context}").classes("text-sm italic").style(WRAP)
    if download.target_folder:
        ui.label(f"Folder: {download.target_folder}").classes("text-sm text-muted").style(WRAP)
    error = download.error
    if error:
        ui.label(f"Failed: {error.message or error.code}").classes("text-negative text-sm").style(WRAP)
    for warning in download.warnings:
        ui.label(warning).classes("text-warning-strong text-sm").style(WRAP)
    jellyfin(download.jellyfin)
    if download.defer_until:
        ui.label(f"Deferred until {fmt.stamp(download.defer_until)}").classes("text-sm")
    ui.label(f"Added {fmt.stamp(download.created_at)} · id {download.id}").classes(
        "text-xs text-muted").style(WRAP)


def jellyfin(state: JellyfinPayload | None) -> None:
    """Whether Jellyfin lists the download: a link to its item, the wait, or what to check (a note,
    never a failure: the download is done either way)."""
    if state is None:
        return
    with ui.row().classes("items-center gap-2 no-wrap").props("data-testid=jellyfin"):
        if state.status == "found" and state.url:
            ui.icon("check_circle", color="positive").props("aria-hidden=true")
            ui.link("In Jellyfin", state.url, new_tab=True).classes("text-sm").props(
                "aria-label='In Jellyfin: open the item in a new tab' rel=noopener")
        elif state.status == "pending":
            ui.icon("hourglass_empty").classes("text-muted").props("aria-hidden=true")
            ui.label("Laid out; waiting for Jellyfin to list it").classes("text-sm text-muted")
        else:
            ui.icon("warning", color="warning").props("aria-hidden=true")
            ui.label(f"Not in Jellyfin yet: {state.note or 'no reason recorded'}").classes(
                "text-warning-strong text-sm").style(WRAP)
