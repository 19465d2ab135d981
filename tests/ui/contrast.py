"""WCAG 2.1 AA contrast of every visible text and icon on a page, measured in the browser.

Text needs 4.5:1 against what is behind it (3:1 when large: 24 px, or 18.66 px bold); icons and
other graphics that carry meaning need 3:1 (WCAG 1.4.11). The colour behind an element is found by
compositing the background colours of it and its ancestors; opacity on the way is applied to the text.
Disabled controls are exempt, as WCAG exempts inactive components.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Page

# contrast.js is one arrow function; its leading `//` lines are comments for the reader.
CONTRAST = "\n".join(line for line in Path(__file__).with_name("contrast.js").read_text(
    encoding="utf-8").splitlines() if not line.startswith("//"))


def low_contrast(page: Page) -> list[dict[str, Any]]:
    """Every visible text or icon below WCAG AA on the page as it is now (empty = all readable)."""
    return page.evaluate(CONTRAST)
