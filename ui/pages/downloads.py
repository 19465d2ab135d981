"""The downloads page: review queue, active downloads, recent ones, and the history through `list`."""

from __future__ import annotations

import time
from typing import Any

from nicegui import ui

from jellybit.protocol import Command, DownloadPayload
from ui import format as fmt
from ui.actions import call
from ui.cards import download_card, state_badge
from ui.frame import WRAP, frame
from ui.live import Live

PAGE_SIZE = 20
STATE_OPTIONS = {state: label for state, (label, _colour) in fmt.STATES.items()}


def matches(d: DownloadPayload, states: list[str], text: str) -> bool:
    """Tell whether a download passes the state filter and the text search (case-insensitive)."""
    if states and d.state not in states:
        return False
    needle = text.strip().casefold()
    if not needle:
        return True
    haystack = " ".join(filter(None, (d.name, d.title, d.context, d.id, str(d.year or ""))))
    return needle in haystack.casefold()


def split(downloads: list[DownloadPayload]) -> tuple[list[DownloadPayload], list[DownloadPayload],
                                                    list[DownloadPayload]]:
    """(review queue oldest first, other active newest first, settled most recent first)."""
    review = sorted((d for d in downloads if d.state == "review"), key=lambda d: d.updated_at)
    active = sorted((d for d in downloads if d.state in fmt.ACTIVE and d.state != "review"),
                    key=lambda d: d.created_at, reverse=True)
    recent = sorted((d for d in downloads if d.state not in fmt.ACTIVE),
                    key=lambda d: d.settled_at or d.updated_at, reverse=True)
    return review, active, recent


def register(live: Live, *, login: bool) -> None:
    """Add the `/` page."""

    @ui.page("/")
    async def downloads_page() -> None:
        filters: dict[str, Any] = {"states": [], "text": ""}
        with frame(live, "Downloads", current="/", login=login):
            with ui.row().classes("w-full items-center justify-between"):
                ui.label("Downloads").classes("text-h5")
                ui.button("Add a torrent", icon="add", on_click=lambda: ui.navigate.to("/add"))
            with ui.row().classes("w-full gap-2 items-end no-wrap"):
                search = ui.input("Search", placeholder="name, title, context or id").props(
                    "clearable outlined dense type=search aria-label=Search").classes("grow")
                chosen = ui.select(STATE_OPTIONS, multiple=True, label="States").props(
                    "outlined dense use-chips clearable aria-label='Filter by state'").classes("w-48 grow-0")

            @ui.refreshable
            def sections() -> None:
                shown = [d for d in live.downloads.values() if matches(d, filters["states"], filters["text"])]
                review, active, recent = split(shown)
                if not live.downloads:
                    ui.label("Nothing here yet. Add a torrent to get started.").classes("opacity-70")
                for title, items, empty in (
                    ("Needs review", review, "Nothing waits for a decision."),
                    ("Active", active, "Nothing is downloading or being processed."),
                    ("Recent", recent, "Nothing finished recently."),
                ):
                    with ui.column().classes("w-full gap-2").props(f"data-section='{title}'"):
                        ui.label(f"{title} ({len(items)})").classes("text-h6")
                        if not items:
                            ui.label(empty).classes("text-sm opacity-60")
                        for d in items:
                            download_card(d, live.reviews.get(d.id) if d.state == "review" else None)

            seen = {"revision": live.revision, "at": time.monotonic()}
            sections()

            async def tick() -> None:
                # Re-render on any change, and every half minute so "5 min ago" stays true.
                if live.revision != seen["revision"] or time.monotonic() - seen["at"] > 30:
                    seen.update(revision=live.revision, at=time.monotonic())
                    sections.refresh()
                if not history.loaded and not history.loading and live.health().ok:
                    await history.load(0)  # the worker is (back) online: the history can be asked for

            history = History(live, filters)
            history.render()
            ui.timer(0.5, tick)

        def changed() -> None:
            filters["states"] = list(chosen.value or [])
            filters["text"] = search.value or ""
            sections.refresh()
            history.schedule()

        search.on_value_change(changed)
        chosen.on_value_change(changed)
        if not live.health().ok:
            history.waiting()


class History:
    """Everything the worker knows (beyond the retained window), a page at a time through `list`."""

    def __init__(self, live: Live, filters: dict[str, Any]) -> None:
        self.live = live
        self.filters = filters
        self.offset = 0
        self.total = 0
        self.items: list[DownloadPayload] = []
        self.message = ""
        self.loaded = False
        self.loading = False
        self._timer: ui.timer | None = None

    def render(self) -> None:
        """Build the section (once); `rows` is refreshed by `load`."""
        with ui.column().classes("w-full gap-2").props("data-section=History"):
            with ui.row().classes("w-full items-center justify-between"):
                ui.label("History").classes("text-h6")
                self.spinner = ui.spinner(size="sm").props("aria-label=Loading")
                self.spinner.set_visibility(False)
            self.rows = ui.column().classes("w-full gap-1")
            with ui.row().classes("w-full items-center justify-between"):
                self.prev = ui.button("Previous", icon="chevron_left", on_click=lambda: self.load(
                    max(0, self.offset - PAGE_SIZE))).props("flat")
                self.where = ui.label("").classes("text-sm opacity-70")
                self.next = ui.button("Next", icon="chevron_right",
                                      on_click=lambda: self.load(self.offset + PAGE_SIZE)).props("flat")
        self._draw()

    def waiting(self) -> None:
        """Say that history needs the worker."""
        self.message = "The history is loaded from the worker once it is online."
        self._draw()

    def schedule(self) -> None:
        """Reload page one shortly after the filters stop changing."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = ui.timer(0.4, lambda: self.load(0), once=True)

    async def load(self, offset: int) -> None:
        """Ask the worker for one page of history."""
        payload: dict[str, Any] = {"limit": PAGE_SIZE, "offset": offset}
        if self.filters["states"]:
            payload["states"] = self.filters["states"]
        if self.filters["text"].strip():
            payload["text"] = self.filters["text"].strip()
        self.spinner.set_visibility(True)
        self.loading = True
        try:
            data = await call(self.live, Command.LIST, payload, button=None)
        finally:
            self.spinner.set_visibility(False)
            self.loading = False
            self.loaded = True
        if data is None:
            self.message = "Could not load the history."
        else:
            self.items = [DownloadPayload.model_validate(item) for item in data.get("items", [])]
            self.total = int(data.get("total", 0))
            self.offset = int(data.get("offset", offset))
            self.message = "" if self.items else "No downloads match."
        self._draw()

    def _draw(self) -> None:
        self.rows.clear()
        with self.rows:
            if self.message:
                ui.label(self.message).classes("text-sm opacity-60")
            for d in self.items:
                with ui.link(target=f"/download/{d.id}").classes("w-full no-underline").style(
                        "color:inherit"), ui.row().classes(
                        "w-full items-center gap-2 py-1 px-2 no-wrap rounded hover:bg-gray-500/10").props(
                        f"data-history={d.id}"):
                    state_badge(d.state)
                    with ui.column().classes("gap-0 grow").style("min-width:0"):
                        ui.label(fmt.title_line(d.title, d.year) or d.name).classes("text-sm").style(WRAP)
                        ui.label(f"{fmt.stamp(d.created_at)} · {d.name}").classes(
                            "text-xs opacity-60").style(WRAP)
        last = min(self.offset + len(self.items), self.total)
        self.where.set_text(f"{self.offset + 1}–{last} of {self.total}" if self.items else "")
        self.prev.set_enabled(self.offset > 0)
        self.next.set_enabled(self.offset + PAGE_SIZE < self.total)
