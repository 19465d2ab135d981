"""Screenshots of the real Home Assistant for docs/home-assistant.md (scripts/screenshots).

Taken only when `JELLYBIT_SCREENSHOTS` names a folder: the HA frontend is heavy, and the checks of
the tests do not need it. Chromium runs headless with every request beyond loopback refused.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from playwright.async_api import async_playwright

from tests.support.homeassistant import HomeAssistant
from tests.support.services import require_binary

SHOTS_ENV = "JELLYBIT_SCREENSHOTS"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-quic", "--disable-dev-shm-usage", "--proxy-server=http://127.0.0.1:9"]


def shots_folder() -> Path | None:
    """Where screenshots go (created), when they are wanted."""
    folder = os.environ.get(SHOTS_ENV)
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    return Path(folder)


async def home_assistant_screens(ha: HomeAssistant, device_id: str, folder: Path) -> list[Path]:
    """The Jellybit device page and the notification drawer, at desktop size, light theme."""
    made: list[Path] = []
    async with ha.client() as rest:
        # The test HA's own notices (a probe's 401, discovered devices) are not what the picture is about.
        for notice in ("http-login", "config_entry_discovery"):
            await rest.post("/api/services/persistent_notification/dismiss", json={"notification_id": notice})
    async with async_playwright() as pw:
        chromium = require_binary("chromium")
        browser = await pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
        context = await browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="light")
        await context.add_init_script(
            f"localStorage.setItem('hassTokens', {json.dumps(json.dumps(ha.tokens()))});")
        page = await context.new_page()
        page.set_default_timeout(60_000)
        await page.goto(f"{ha.url}/config/devices/device/{device_id}")
        await page.get_by_text("Jellybit").first.wait_for()
        await page.get_by_text("Review queue").first.wait_for()
        await page.wait_for_timeout(1500)
        made.append(folder / "ha-device.png")
        await page.screenshot(path=str(made[-1]))
        await page.get_by_text("Notifications", exact=True).first.click()
        await page.get_by_text("Jellybit:").first.wait_for()
        await page.wait_for_timeout(1000)
        made.append(folder / "ha-notification.png")
        await page.screenshot(path=str(made[-1]))
        await browser.close()
    return made
