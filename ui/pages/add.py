"""The add page: a magnet, URL or infohash, or a `.torrent` upload, with the context in words."""

from __future__ import annotations

import base64
from typing import Any

from nicegui import events, ui

from jellybit.protocol import MAX_CONTEXT_CHARS, Command
from ui.actions import call, show_error
from ui.frame import WRAP, frame
from ui.live import Live


def add_payload(form: dict[str, Any]) -> dict[str, Any] | str:
    """The `add` request from the form, or a sentence saying what is missing."""
    source = (form.get("source") or "").strip()
    torrent = form.get("torrent")
    if source and torrent:
        return "Give a magnet, URL or infohash, or a .torrent file — not both."
    if not source and not torrent:
        return "Paste a magnet link, URL or infohash, or choose a .torrent file."
    payload: dict[str, Any] = {"context": (form.get("context") or "").strip()}
    if torrent:
        payload["torrent"] = torrent
    else:
        payload["source"] = source
    return payload


def register(live: Live, *, login: bool, max_torrent_bytes: int) -> None:
    """Add the `/add` page."""

    @ui.page("/add")
    def add_page() -> None:
        form: dict[str, Any] = {"source": "", "context": "", "torrent": None, "filename": ""}
        with frame(live, "Add", current="/add", login=login):
            ui.label("Add a torrent").classes("text-h5")
            with ui.card().classes("w-full gap-3 p-4").props("flat bordered"):
                ui.textarea("Magnet link, URL or infohash",
                            placeholder="magnet:?xt=urn:btih:…  or  https://…/file.torrent  or  a hash",
                            ).bind_value(form, "source").classes("w-full").props(
                    "outlined autogrow input-style='font-family:monospace' spellcheck=false")
                ui.label("or").classes("text-sm text-muted self-center")

                async def uploaded(e: events.UploadEventArguments) -> None:
                    data = await e.file.read()
                    form["torrent"] = base64.b64encode(data).decode("ascii")
                    form["filename"] = e.file.name
                    chosen.set_text(f"Selected: {e.file.name} ({len(data)} bytes)")
                    clear.set_visibility(True)

                def rejected() -> None:
                    show_error(f"That file is too big for a .torrent (the limit is {max_torrent_bytes} "
                               "bytes).")

                upload = ui.upload(label="Upload a .torrent file", auto_upload=True, on_upload=uploaded,
                                   on_rejected=rejected, max_file_size=max_torrent_bytes).props(
                    "accept=.torrent flat bordered aria-label='Upload a .torrent file'").classes("w-full")
                with ui.row().classes("items-center gap-2"):
                    chosen = ui.label("").classes("text-sm").style(WRAP)

                    def forget() -> None:
                        form.update(torrent=None, filename="")
                        chosen.set_text("")
                        clear.set_visibility(False)
                        upload.reset()

                    clear = ui.button("Remove file", icon="close", on_click=forget).props("flat dense")
                    clear.set_visibility(False)
                ui.textarea("Context (optional)",
                            placeholder="What is it? e.g. “second season of the Danish version, Russian dub”",
                            ).bind_value(form, "context").classes("w-full").props(
                    f"outlined autogrow maxlength={MAX_CONTEXT_CHARS} counter")

                async def submit(e: events.ClickEventArguments) -> None:
                    payload = add_payload(form)
                    if isinstance(payload, str):
                        show_error(payload)
                        return
                    data = await call(live, Command.ADD, payload, button=e.sender)
                    if data is None:
                        return
                    how = "new" if data.created else "joined"
                    ui.navigate.to(f"/download/{data.id}?added={how}")

                ui.button("Add", icon="add", on_click=submit).props("color=primary").mark("add").classes(
                    "self-end")
            ui.label("Jellybit never fetches a URL itself: qBittorrent does.").classes("text-xs text-muted")
