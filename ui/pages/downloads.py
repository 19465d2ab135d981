"""The downloads page: one list (the live retained downloads joined with the worker's history through
`list`), state filters, sections, and a first-run page for a new user."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from nicegui import ui

from jellybit.protocol import Command, DownloadPayload, State
from ui.actions import call
from ui.cards import download_card
from ui.frame import frame
from ui.live import Live

PAGE_SIZE = 30
# filter key -> (label, states; None = every state)
GROUPS: dict[str, tuple[str, tuple[State, ...] | None]] = {
    "all": ("All", None),
    "review": ("Needs review", (State.REVIEW,)),
    "active": ("Active", (State.QUEUED, State.DOWNLOADING, State.RECOGNIZING, State.APPLYING)),
    "problems": ("Needs attention", (State.FAILED, State.TARGET_MISSING, State.ORPHANED, State.DELETED)),
    "finished": ("Finished", (State.DONE, State.CANCELLED, State.REVERTED)),
}
SECTIONS = ("review", "active", "problems", "finished")
EMPTY = {"review": "Nothing waits for a decision.", "active": "Nothing is downloading or being processed.",
         "problems": "Nothing failed or went missing.", "finished": "Nothing finished yet."}


def group_of(state: str) -> str:
    """The section a state belongs to."""
    return next((key for key in SECTIONS if state in (GROUPS[key][1] or ())), "finished")


def matches(d: DownloadPayload, states: Iterable[str] | None, text: str) -> bool:
    """Tell whether a download passes the state filter and the text search (case-insensitive)."""
    wanted = list(states or [])
    if wanted and d.state not in wanted:
        return False
    needle = text.strip().casefold()
    if not needle:
        return True
    haystack = " ".join(filter(None, (d.name, d.title, d.original_title, d.context, d.id, str(d.year or ""))))
    return needle in haystack.casefold()


def ordered(group: str, items: Iterable[DownloadPayload]) -> list[DownloadPayload]:
    """The review queue oldest first; active newest first; the rest by when they settled or moved."""
    if group == "review":
        return sorted(items, key=lambda d: d.updated_at)
    if group == "active":
        return sorted(items, key=lambda d: d.created_at, reverse=True)
    return sorted(items, key=lambda d: d.settled_at or d.updated_at, reverse=True)


def split(downloads: Iterable[DownloadPayload]) -> dict[str, list[DownloadPayload]]:
    """Every section's downloads, in its order."""
    found: dict[str, list[DownloadPayload]] = {key: [] for key in SECTIONS}
    for d in downloads:
        found[group_of(d.state)].append(d)
    return {key: ordered(key, items) for key, items in found.items()}


class Listing:
    """The downloads of the current filter: live ones plus the worker's history, a page at a time."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.group = "all"
        self.text = ""
        self.loaded: dict[str, DownloadPayload] = {}     # from `list`, by id
        self.total: int | None = None
        self.offset = 0
        self.loading = False
        self.failed = ""

    @property
    def states(self) -> tuple[State, ...] | None:
        """The states of the chosen filter (None = all)."""
        return GROUPS[self.group][1]

    def shown(self) -> list[DownloadPayload]:
        """The union of the live downloads and the loaded history (live wins), filtered."""
        merged = dict(self.loaded)
        merged.update(self.live.downloads)
        return [d for d in merged.values() if matches(d, self.states, self.text)]

    def reset(self) -> None:
        """Forget the loaded history (the filter changed)."""
        self.loaded.clear()
        self.total = None
        self.offset = 0

    async def load_more(self) -> None:
        """Ask the worker for the next page of history under the current filter."""
        payload: dict[str, Any] = {"limit": PAGE_SIZE, "offset": self.offset}
        if self.states:
            payload["states"] = [s.value for s in self.states]
        if self.text.strip():
            payload["text"] = self.text.strip()
        self.loading = True
        try:
            data = await call(self.live, Command.LIST, payload)
        finally:
            self.loading = False
        if data is None:
            self.failed = "Could not load the older downloads; they load again when the worker answers."
            return
        self.failed = ""
        for item in data.items:
            self.loaded[item.id] = item
        self.total = data.total
        self.offset = data.offset + len(data.items)

    @property
    def more(self) -> bool:
        """Tell whether the worker has more than is loaded."""
        return self.total is not None and self.offset < self.total


def first_run() -> None:
    """What a new user sees before the first download: how to add one."""
    with ui.card().classes("w-full gap-3 p-6 items-start").props("flat bordered data-testid=first-run"):
        ui.icon("movie_filter", size="xl", color="primary").props("aria-hidden=true")
        ui.label("No downloads yet").classes("text-h6")
        ui.label("Add your first torrent: paste a magnet link, a URL or an infohash, or upload a .torrent "
                 "file, and say in a sentence what it is (“season 2 of the Danish version”). Jellybit "
                 "follows it in qBittorrent and lays the files out for Jellyfin when it is "
                 "complete.").classes("text-body1")
        ui.button("Add a torrent", icon="add", on_click=lambda: ui.navigate.to("/add")).props(
            "unelevated color=primary no-caps")
        ui.label("From a terminal: jellybit add 'magnet:?xt=urn:btih:…' --context '…'. Torrents you add in "
                 "qBittorrent under Jellybit's category are picked up too.").classes("text-sm text-muted")


def register(live: Live, *, login: bool) -> None:
    """Add the `/` page."""

    @ui.page("/")
    async def downloads_page() -> None:
        listing = Listing(live)
        with frame(live, "Downloads", current="/", login=login):
            with ui.row().classes("w-full items-center justify-between"):
                ui.label("Downloads").classes("text-h5")
                ui.button("Add a torrent", icon="add", on_click=lambda: ui.navigate.to("/add")).props(
                    "unelevated color=primary no-caps")

            @ui.refreshable
            def chips() -> None:
                states = live.summary.states if live.summary else {}
                with ui.row().classes("w-full gap-2 items-center").props(
                        "role=group aria-label='Show downloads'"):
                    for key, (label, wanted) in GROUPS.items():
                        n = sum(states.get(s, 0) for s in wanted) if wanted else sum(states.values())
                        chosen = key == listing.group
                        ui.button(f"{label} ({n})" if states else label,
                                  on_click=lambda _e, k=key: choose(k)).props(
                            f"{'unelevated color=primary' if chosen else 'outline'} rounded dense no-caps "
                            f"aria-pressed={'true' if chosen else 'false'}").classes("px-3").mark(
                            f"filter-{key}")

            chips()
            search = ui.input("Search", placeholder="title, release name, context or id").props(
                "clearable outlined dense type=search aria-label=Search").classes("w-full")

            @ui.refreshable
            def body() -> None:
                shown = listing.shown()
                nothing_at_all = not live.downloads and listing.total == 0 and listing.group == "all" \
                    and not listing.text.strip()
                if nothing_at_all:
                    first_run()
                    return
                sections = split(shown)
                keys = SECTIONS if listing.group == "all" else (listing.group,)
                for key in keys:
                    items = sections[key]
                    if listing.group == "all" and not items and key != "review":
                        continue
                    with ui.column().classes("w-full gap-2").props(f"data-section='{GROUPS[key][0]}'"):
                        ui.label(f"{GROUPS[key][0]} ({len(items)})").classes("text-h6")
                        if not items:
                            ui.label(EMPTY[key]).classes("text-sm text-muted")
                        for d in items:
                            download_card(d, live.reviews.get(d.id) if d.state == "review" else None)
                with ui.row().classes("w-full items-center justify-between"):
                    if listing.failed:
                        ui.label(listing.failed).classes("text-sm text-negative")
                    elif listing.total is not None:
                        ui.label(f"Showing {len(shown)} of {max(listing.total, len(shown))}").classes(
                            "text-sm text-muted").props("data-testid=showing")
                    if listing.more:
                        ui.button("Show older downloads", icon="expand_more", on_click=more).props(
                            "flat no-caps").mark("load-more")

            async def more() -> None:
                await listing.load_more()
                body.refresh()

            async def choose(key: str) -> None:
                listing.group = key
                listing.reset()
                chips.refresh()
                body.refresh()
                await listing.load_more()
                body.refresh()

            body()
            seen = {"revision": live.revision, "at": time.monotonic()}

            async def tick() -> None:
                # Re-render on any change, and every half minute so "5 min ago" stays true.
                if listing.total is None and not listing.loading and live.health().ok:
                    await listing.load_more()   # the worker is (back) online: its history can be asked for
                    seen["revision"] = -1
                if live.revision != seen["revision"] or time.monotonic() - seen["at"] > 30:
                    seen.update(revision=live.revision, at=time.monotonic())
                    chips.refresh()
                    body.refresh()

            ui.timer(0.5, tick)
            pending: dict[str, ui.timer | None] = {"timer": None}

            def typed() -> None:
                # Reload the history shortly after the search text stops changing.
                listing.text = search.value or ""
                body.refresh()
                if pending["timer"] is not None:
                    pending["timer"].cancel()

                async def reload() -> None:
                    listing.reset()
                    await listing.load_more()
                    body.refresh()

                pending["timer"] = ui.timer(0.4, reload, once=True)

            search.on_value_change(typed)
