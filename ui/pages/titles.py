"""The titles page: downloads grouped by matched title, their folders and episode coverage."""

from __future__ import annotations

from typing import Any

from nicegui import ui

from jellybit.protocol import Command, TitleGroup
from ui import format as fmt
from ui.actions import call, confirm_dialog
from ui.cards import state_badge
from ui.frame import WRAP, frame
from ui.live import Live
from ui.pages.detail_sections import provider_link


def coverage(seasons: dict[int, list[int]] | None) -> list[str]:
    """'Season 1: episodes 1–10 (10)' per season, in season order."""
    lines = []
    for key, episodes in sorted((seasons or {}).items(), key=lambda kv: int(kv[0])):
        season = int(key)
        name = "Specials" if season == 0 else f"Season {season}"
        count = len(set(episodes))
        lines.append(f"{name}: episode{'s' if count != 1 else ''} {fmt.ranges(episodes)} ({count})"
                     if episodes else f"{name}: no episodes")
    return lines


def title_order(group: TitleGroup) -> tuple[str, int]:
    """Titles alphabetically (case and accents as written), then by year."""
    return ((group.title or "").casefold(), group.year or 0)


def register(live: Live, *, login: bool) -> None:
    """Add the `/titles` page."""

    @ui.page("/titles")
    async def titles_page() -> None:
        state: dict[str, Any] = {"groups": None, "loading": False}
        with frame(live, "Titles", current="/titles", login=login):
            with ui.row().classes("w-full items-center justify-between"):
                ui.label("Titles").classes("text-h5")
                reload = ui.button("Reload", icon="refresh", on_click=lambda: load()).props("flat")
            spinner = ui.spinner(size="lg").props("aria-label=Loading")
            spinner.set_visibility(False)
            dialogs = ui.element("div")

            @ui.refreshable
            def groups() -> None:
                items = state["groups"]
                if items is None:
                    ui.label("The titles are loaded from the worker.").classes("text-muted")
                    return
                if not items:
                    ui.label("No titles yet: a title appears once a download is laid out.").classes(
                        "text-muted")
                for group in items:
                    title_card(group)

            def title_card(group: TitleGroup) -> None:
                with ui.card().classes("w-full gap-2 p-4").props(
                        f"flat bordered data-title='{group.provider}:{group.provider_id}'"):
                    with ui.row().classes("w-full items-start justify-between no-wrap gap-2"):
                        name = fmt.title_line(group.title or "Untitled", group.year, group.media_type)
                        ui.label(name).classes("text-h6").style(WRAP)
                        # Deleting is rare and cannot be undone: a menu, not a red button on every card.
                        with ui.button(icon="more_vert").props(
                                f"flat round dense aria-label='More for {name.replace(chr(39), '’')}'").mark(
                                "title-menu"), ui.menu():
                            ui.menu_item("Delete title…", on_click=lambda _e, g=group: ask_delete(g)).classes(
                                "text-negative").mark("delete-title")
                    provider_link(group.provider, group.provider_id, None, group.media_type)
                    live_folders = set(group.live_folders)
                    for folder in group.folders:
                        with ui.row().classes("items-center gap-2 no-wrap"):
                            present = folder in live_folders
                            ui.icon("folder" if present else "folder_off",
                                    color="positive" if present else "grey-7").props(
                                f"aria-label={'Present' if present else 'Missing'}")
                            ui.label(folder).classes("text-sm font-mono").style(WRAP)
                    for line in coverage(group.seasons):
                        ui.label(line).classes("text-sm")
                    ui.label("Downloads").classes("text-sm font-medium")
                    for member in group.members:
                        with ui.link(target=f"/download/{member.download_id}").classes(
                                "no-underline w-full").style("color:inherit"), \
                                ui.row().classes("items-center gap-2 no-wrap"):
                            state_badge(member.state)
                            ui.label(member.display_name or member.download_id).classes(
                                "text-sm").style(WRAP)
                            ui.label(fmt.count(member.live_links, "file")).classes(
                                "text-xs text-muted")

            def ask_delete(group: TitleGroup) -> None:
                dialogs.clear()
                name = fmt.title_line(group.title or "this title", group.year)
                with dialogs:
                    dialog, body, button = confirm_dialog(f"Delete {name}?", confirm_label="Delete title",
                                                          danger=True)
                form = {"torrents": False}
                members = group.members
                with body:
                    ui.label(f"Every download of this title ({len(members)}) is undone: its hardlinks leave "
                             "the library and emptied folders are removed:").classes("text-sm")
                    for folder in group.folders:
                        ui.label(folder).classes("text-xs font-mono").style(WRAP)
                    ui.checkbox("Also remove the torrents and delete their downloaded files").bind_value(
                        form, "torrents")
                    ui.label("The torrents are removed from qBittorrent and their downloaded files are "
                             "deleted from disk. This cannot be undone.").classes(
                        "text-negative text-sm font-bold").props("role=alert").bind_visibility_from(
                        form, "torrents")

                async def go() -> None:
                    payload: dict[str, Any] = {"provider": group.provider.value,
                                               "provider_id": group.provider_id}
                    if form["torrents"]:
                        payload.update(delete_torrents=True, confirm=True)
                    data = await call(live, Command.DELETE_TITLE, payload, button=button,
                                      success=f"Deleted {name}.")
                    dialog.close()
                    if data is not None:
                        await load()

                button.on_click(go)
                dialog.open()

            async def load() -> None:
                spinner.set_visibility(True)
                reload.disable()
                state["loading"] = True
                try:
                    data = await call(live, Command.TITLES, {})
                finally:
                    spinner.set_visibility(False)
                    reload.enable()
                if data is not None:
                    state["groups"] = sorted(data, key=title_order)
                state["loading"] = False  # after a failure the next tick asks again, once it is online
                groups.refresh()

            groups()

            async def first_load() -> None:
                # Once the worker is known to be online (at once, or when it comes back).
                if state["groups"] is None and not state["loading"] and live.health().ok:
                    await load()

            ui.timer(0.5, first_load)
