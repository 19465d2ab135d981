"""The confirmations of the download page's destructive actions: reject, undo, cancel.

`Confirmations` is told what it needs (the download, where a dialog goes, the library files, what to
do after), so it knows nothing of the page that opens it and the two never import each other.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from nicegui import ui

from jellybit.protocol import Command, LinkRow
from ui.actions import call, confirm_dialog, notify
from ui.frame import WRAP
from ui.live import Live
from ui.pages import detail_sections as sections


class Confirmations:
    """The reject, undo and cancel dialogs of one download page."""

    def __init__(self, live: Live, download_id: str, *, host: Callable[[], ui.element],
                 links: Callable[[], Sequence[LinkRow]], after: Callable[[Any], Awaitable[None]]) -> None:
        self.live = live
        self.id = download_id
        self._dialog_host = host          # an emptied element outside the refreshed body
        self._links = links               # the library files as the page last fetched them
        self._after = after               # reload on an answer, else refresh the actions

    def ask_reject(self) -> None:
        """Confirm a reject (nothing laid out; the download becomes cancelled)."""
        with self._dialog_host():
            dialog, body, button = confirm_dialog("Reject this download?", confirm_label="Reject",
                                                  danger=True)
        form = {"reason": ""}
        with body:
            ui.label("Nothing will be laid out and the download becomes cancelled. The torrent and its "
                     "data stay in qBittorrent.").classes("text-sm")
            ui.input("Reason (optional)").bind_value(form, "reason").classes("w-full").props("outlined dense")

        async def go() -> None:
            payload: dict[str, Any] = {"id": self.id}
            if form["reason"].strip():
                payload["reason"] = form["reason"].strip()
            data = await call(self.live, Command.REJECT, payload, button=button, success="Rejected.")
            dialog.close()
            await self._after(data)

        button.on_click(go)
        dialog.open()

    def ask_undo(self) -> None:
        """Confirm an undo, listing the library files it removes."""
        targets = sections.live_link_targets(list(self._links()))
        with self._dialog_host():
            dialog, body, button = confirm_dialog("Undo this download?", confirm_label="Undo", danger=True)
        with body:
            if targets:
                ui.label(f"These {len(targets)} file(s) will be removed from the library:").classes("text-sm")
                with ui.column().classes("gap-0 w-full max-h-64 overflow-auto").props(
                        "data-testid=undo-list"):
                    for target in targets:
                        ui.label(target).classes("text-xs font-mono").style(WRAP)
            else:
                ui.label("No library files are recorded for this download.").classes("text-sm")
            ui.label("Only Jellybit's hardlinks go; the downloaded data in qBittorrent is not touched, and a "
                     "file that is the last copy is kept.").classes("text-sm text-muted")

        async def go() -> None:
            data = await call(self.live, Command.UNDO, {"id": self.id}, button=button)
            dialog.close()
            if data is not None:
                removed, refused = data.removed, data.refused
                text = f"Undone: {len(removed)} file(s) removed from the library."
                if refused:
                    text += f" {len(refused)} kept: " + "; ".join(f"{r.path} ({r.why})" for r in refused)
                notify(text, kind="positive" if not refused else "warning")
            await self._after(data)

        button.on_click(go)
        dialog.open()

    def ask_cancel(self) -> None:
        """Confirm a cancel; deleting the data is a separate, red, explicit choice."""
        with self._dialog_host():
            dialog, body, button = confirm_dialog("Cancel this download?", confirm_label="Cancel download",
                                                  danger=True)
        form = {"delete": False}
        with body:
            ui.label("Jellybit stops handling it; nothing more is laid out.").classes("text-sm")
            ui.checkbox("Also remove the torrent and delete its downloaded files").bind_value(form, "delete")
            warning = ui.label("The torrent is removed from qBittorrent and its downloaded files are deleted "
                               "from disk. This cannot be undone.").classes(
                "text-negative text-sm font-bold").props("role=alert")
            warning.bind_visibility_from(form, "delete")

        async def go() -> None:
            payload: dict[str, Any] = {"id": self.id}
            if form["delete"]:
                payload.update(delete_data=True, confirm=True)
            data = await call(self.live, Command.CANCEL, payload, button=button, success="Cancelled.")
            dialog.close()
            await self._after(data)

        button.on_click(go)
        dialog.open()
