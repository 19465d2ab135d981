"""Sending commands from the panel: a spinner while waiting, the error shown when it fails."""

from __future__ import annotations

import logging
from typing import Any

from nicegui import ui

from jellybit.present import allowed
from jellybit.protocol import COMMAND_STATES, Command
from ui.live import Live, RequestFailed

log = logging.getLogger(__name__)
__all__ = ["DESTRUCTIVE", "ORDER", "PRIMARY", "allowed", "bar_actions", "call", "confirm_dialog", "notify",
           "offered", "show_error"]

# Which action a state allows is the engine's table (`jellybit.present.allowed`).
# Actions with a place of their own on the download page: the better-copy card, the hint box.
ELSEWHERE = ("upgrade", "refine")
# The action bar, primary first, destructive last; a command the table gains later gets a plain button
# at its end, so a new command needs no change here to be offered in the states that allow it.
ORDER = ("apply", "retry", "relink", "defer", "reject", "undo", "cancel")
DESTRUCTIVE = frozenset({"reject", "undo", "cancel"})
PRIMARY = frozenset({"apply", "retry", "relink"})


def bar_actions() -> tuple[str, ...]:
    """The action bar's buttons in order: the ones above, then every other command of the table."""
    return (*ORDER, *(a for a in COMMAND_STATES if a not in ORDER and a not in ELSEWHERE))


# Toasts sit at the bottom: never over the navigation (on a phone the top is the whole header).
TOAST_POSITION = "bottom"


def offered(state: str | None, *, asks_upgrade: bool = False) -> tuple[str, ...]:
    """What the download page offers in this state (a better-copy question takes Apply's place)."""
    return tuple(a for a in (*bar_actions(), *ELSEWHERE)
                 if allowed(a, state) and not (a == "apply" and asks_upgrade))


def notify(message: str, *, kind: str = "info", **options: object) -> None:
    """A toast at the bottom of the screen (never over the navigation)."""
    ui.notify(message, type=kind, position=TOAST_POSITION, multi_line=True, **options)  # type: ignore[arg-type]


def show_error(message: str) -> None:
    """Show a failed command's message to the user."""
    notify(message, kind="negative", close_button="Dismiss", timeout=10000)


async def call(live: Live, command: Command, payload: dict[str, Any] | None = None, *,
               button: ui.element | None = None, success: str | None = None) -> Any | None:
    """Send a command with the button spinning; return its data, or None after showing the error."""
    was_enabled = bool(getattr(button, "enabled", True))
    if button is not None:
        button.props("loading")
        if hasattr(button, "disable"):
            button.disable()
    try:
        data = await live.request(command, payload or {})
    except RequestFailed as exc:
        log.info("command failed", extra={"command": str(command), "code": exc.code})
        show_error(exc.message)
        return None
    finally:
        if button is not None and not button.is_deleted:
            button.props(remove="loading")
            if was_enabled and hasattr(button, "enable"):
                button.enable()
    if success:
        notify(success, kind="positive")
    return data


def confirm_dialog(title: str, *, confirm_label: str, danger: bool = False) -> tuple[ui.dialog, ui.column,
                                                                                     ui.button]:
    """A dialog with a title, a body column the caller fills, Cancel, and a confirm button."""
    with ui.dialog() as dialog, ui.card().classes("w-full max-w-lg").props("role=alertdialog"):
        ui.label(title).classes("text-h6")
        body = ui.column().classes("w-full gap-2")
        with ui.row().classes("w-full justify-end gap-2"):
            ui.button("Go back", on_click=dialog.close).props("flat no-caps")
            colour = "negative" if danger else "primary"
            button = ui.button(confirm_label).props(f"unelevated color={colour} no-caps").mark("confirm")
    return dialog, body, button
