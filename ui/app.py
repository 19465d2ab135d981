"""The panel process: register the pages over one live MQTT view and run NiceGUI.

`jellybit panel --config FILE` calls `run_panel`. Run as a file (`python ui/app.py`, or NiceGUI's
test `user` fixture through its main-file marker), it loads the config from `$JELLYBIT_CONFIG`.
"""

from __future__ import annotations

import logging
import secrets

from nicegui import app, ui

from jellybit.config import Config, load_config
from ui import auth
from ui.live import Live
from ui.pages import add, detail, downloads, status, titles

log = logging.getLogger(__name__)


# Muted text is a colour, not an opacity (opacity made dark-mode text unreadable); text in brand colours
# gets lighter shades on the dark background, so every text stays at WCAG AA (checked in the browser test).
CSS = """
.q-timeline__title { font-size: 1rem; line-height: 1.4; margin-bottom: 0; }
.q-timeline__subtitle { margin-bottom: 2px; opacity: 1; }
.q-timeline__content { padding-bottom: 14px; }
.q-timeline--dense--right .q-timeline__entry { padding-left: 32px; }
.text-muted { color: #4b5563; }
.text-warning-strong { color: #9a3412; }
.clamp-3 { display: -webkit-box; -webkit-line-clamp: 3; -webkit-box-orient: vertical; overflow: hidden; }
.q-uploader__subtitle { display: none; }
.body--dark .text-muted, .body--dark .q-timeline__subtitle { color: #b6bcc6; }
.body--dark .text-warning-strong { color: #fdba74; }
/* Quasar's `.text-*` are !important in a later layer: only an earlier layer beats them. */
@layer overrides {
  .body--dark .text-negative { color: #fca5a5 !important; }
  .body--dark .text-positive { color: #86efac !important; }
  .body--dark .text-primary { color: #a5b4fc !important; }
}
a.nicegui-link:not(.text-white):not(.q-btn) { color: #1d4ed8; }
.body--dark a.nicegui-link:not(.text-white):not(.q-btn) { color: #a5b4fc; }
.body--dark .q-field__label, .body--dark .q-field__native::placeholder { color: #c2c7d0; }
"""


def build(config: Config) -> Live:
    """Register every page and the login, and start/stop the MQTT view with NiceGUI."""
    live = Live(config)
    ui.add_css(CSS, shared=True)
    ui.button.default_props("no-caps")
    login = auth.register(config.panel)
    downloads.register(live, login=login)
    detail.register(live, login=login)
    add.register(live, login=login, max_torrent_bytes=config.worker.max_torrent_bytes)
    titles.register(live, login=login)
    status.register(live, login=login)
    app.on_startup(live.start)
    app.on_shutdown(live.stop)
    return live


def storage_secret(config: Config) -> str:
    """The session cookie secret; a random one per process when none is configured."""
    if config.panel.storage_secret is not None and config.panel.storage_secret.get_secret_value():
        return config.panel.storage_secret.get_secret_value()
    if config.panel.username:
        log.warning("panel.storage_secret is not set: logins last only until the panel restarts")
    return secrets.token_urlsafe(32)


def run_panel(config: Config) -> None:
    """Run the panel until it is stopped (blocks)."""
    build(config)
    ui.run(host=config.panel.host, port=config.panel.port, reload=False, show=False,
           storage_secret=storage_secret(config), dark=None, title="Jellybit", favicon="🎞️",
           show_welcome_message=False, reconnect_timeout=10.0)


if __name__ in {"__main__", "__mp_main__"}:
    run_panel(load_config())
