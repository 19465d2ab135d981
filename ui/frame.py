"""The frame every page shares: header with navigation, the offline banner, the content column."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from nicegui import app, ui

from ui.live import Live

# Brand colours that carry white text at WCAG AA (4.5:1) in both modes; text in these colours on the
# dark background has its own lighter shades in ui/app.py's CSS.
COLOURS = {"primary": "#4f46e5", "positive": "#15803d", "negative": "#b91c1c", "info": "#0e7490",
           "warning": "#f2c037"}
NAV = (("/", "Downloads"), ("/add", "Add"), ("/titles", "Titles"), ("/status", "Status"))
BANNER_BASE = "w-full items-center gap-2 px-4 py-2 no-wrap"
BANNER_STYLES = {
    "broker_down": "bg-red-10 text-white",
    "worker_offline": "bg-deep-orange-10 text-white",
    "connecting": "bg-blue-grey-8 text-white",
}
# Long release names have no spaces: let them wrap anywhere instead of widening the page.
WRAP = "overflow-wrap:anywhere; word-break:break-word; min-width:0"


def banner(live: Live) -> None:
    """A banner that shows while the broker or the worker is unreachable and hides when it is back."""
    box = ui.row().classes(BANNER_BASE).props(
        'role=alert aria-live=polite data-testid=offline-banner')
    with box:
        icon = ui.icon("cloud_off", size="sm").props("aria-hidden=true")
        text = ui.label().classes("text-sm").style(WRAP)
    shown: dict[str, str] = {}

    def update() -> None:
        health = live.health()
        box.set_visibility(not health.ok)
        if shown.get("level") != health.level or shown.get("message") != health.message:
            shown.update(level=health.level, message=health.message)
            box.classes(remove=" ".join(BANNER_STYLES.values()), add=BANNER_STYLES.get(health.level, ""))
            icon.name = "hourglass_empty" if health.level == "connecting" else "cloud_off"
            text.set_text(health.message)

    update()
    ui.timer(0.5, update)


@contextmanager
def frame(live: Live, title: str, *, current: str, login: bool = False) -> Iterator[ui.column]:
    """Render the header and banner, then yield the page's content column."""
    ui.page_title(f"{title} · Jellybit")
    ui.colors(**COLOURS)
    with ui.header().classes("items-center gap-x-4 gap-y-0 px-4 py-2 flex-wrap"):
        ui.link("Jellybit", "/").classes("text-lg font-bold text-white no-underline mr-2").props(
            "aria-label='Jellybit home'")
        with ui.row().classes("items-center gap-x-4 gap-y-1 flex-wrap").props("role=navigation"):
            for path, label in NAV:
                link = ui.link(label, path).classes("text-white no-underline text-sm")
                if path == current:
                    link.classes("font-bold underline").props("aria-current=page")
            review = ui.badge("", color="deep-orange-10").props("aria-label='downloads in review'")

            def count() -> None:
                n = live.summary.in_review if live.summary else len(live.reviews)
                review.set_text(f"{n} to review")
                review.set_visibility(n > 0)

            count()
            ui.timer(1.0, count)
        if login and app.storage.user.get("authenticated"):
            ui.space()
            ui.link("Log out", "/logout").classes("text-white no-underline text-sm")
    banner(live)
    with ui.column().classes("w-full max-w-5xl mx-auto px-3 py-4 gap-4") as content:
        yield content


def not_found(message: str) -> None:
    """The body of a 404 page (the caller sets the status code)."""
    with ui.column().classes("items-center w-full gap-2 py-10"):
        ui.icon("search_off", size="xl").props("aria-hidden=true")
        ui.label("404 — not found").classes("text-h5")
        ui.label(message).classes("text-center").style(WRAP)
        ui.link("Back to the downloads", "/")
