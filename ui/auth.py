"""The login: every page needs a session (NiceGUI storage + middleware) unless `panel.open` is set."""

from __future__ import annotations

import asyncio
import hmac
import logging
from urllib.parse import quote

from fastapi import Request
from fastapi.responses import RedirectResponse
from nicegui import app, ui
from starlette.middleware.base import BaseHTTPMiddleware

from jellybit.config import PanelConfig
from jellybit.errors import ConfigError

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/login"})
FAILED_LOGIN_DELAY = 0.5


def safe_target(path: str | None) -> str:
    """Only a local path may be a redirect target (no `//host` or `https://…` open redirects)."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path


class AuthMiddleware(BaseHTTPMiddleware):
    """Send every page request without an authenticated session to the login page."""

    async def dispatch(self, request: Request, call_next):  # type: ignore[no-untyped-def]
        """Let NiceGUI's own assets and the login page through; redirect the rest."""
        path = request.url.path
        if not app.storage.user.get("authenticated", False) and not path.startswith("/_nicegui") \
                and path not in OPEN_PATHS:
            return RedirectResponse(f"/login?redirect_to={quote(path)}")
        return await call_next(request)


OPEN_WARNING = ("the panel is open: it serves without a login (panel.open = true), so anyone who can "
                "reach it can add, apply, undo and delete")


def register(config: PanelConfig) -> bool:
    """Add the login and logout pages and the middleware; tell whether they were added.

    A login is required unless the panel is explicitly opened (`panel.open = true`, logged as a warning).
    """
    if not config.username:
        if not config.open:
            raise ConfigError("the panel needs a login: set panel.username and panel.password (or "
                              "JELLYBIT_PANEL_PASSWORD), or panel.open = true to serve it without one on "
                              "a trusted network")
        log.warning(OPEN_WARNING)
        return False
    if config.password is None or not config.password.get_secret_value():
        raise ConfigError("panel.username is set, so panel.password (or JELLYBIT_PANEL_PASSWORD) is required")
    username = config.username
    password = config.password.get_secret_value()
    app.add_middleware(AuthMiddleware)

    @ui.page("/login")
    def login_page(redirect_to: str = "/") -> RedirectResponse | None:
        target = safe_target(redirect_to)
        if app.storage.user.get("authenticated", False):
            return RedirectResponse(target)
        ui.page_title("Log in · Jellybit")

        async def attempt() -> None:
            name_ok = hmac.compare_digest(user.value.encode(), username.encode())
            pass_ok = hmac.compare_digest(secret.value.encode(), password.encode())
            if name_ok and pass_ok:
                app.storage.user.update(authenticated=True, username=username)
                ui.navigate.to(target)
                return
            log.warning("failed panel login", extra={"user": user.value[:64]})
            await asyncio.sleep(FAILED_LOGIN_DELAY)  # slows down guessing a little
            ui.notify("Wrong user name or password.", type="negative", position="bottom")

        with ui.card().classes("absolute-center w-80 max-w-full gap-3 p-6"):
            ui.label("Jellybit").classes("text-h5")
            user = ui.input("User name").props("outlined autocomplete=username").classes("w-full").on(
                "keydown.enter", attempt)
            secret = ui.input("Password", password=True, password_toggle_button=True).props(
                "outlined autocomplete=current-password").classes("w-full").on("keydown.enter", attempt)
            ui.button("Log in", on_click=attempt).classes("w-full")
        return None

    @ui.page("/logout")
    def logout_page() -> RedirectResponse:
        app.storage.user.clear()
        return RedirectResponse("/login")

    return True
