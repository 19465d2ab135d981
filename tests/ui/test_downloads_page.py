"""The downloads page against the real broker and the scripted responder (NiceGUI's user fixture)."""

from __future__ import annotations

import pytest
from nicegui import ui
from nicegui.testing import User

from tests.ui.responder import FakeWorker, download, review
from tests.ui.support import eventually

pytestmark = pytest.mark.nicegui_main_file("ui/app.py")


def section_text(user: User, title: str) -> str:
    """Every label's text inside one section of the page, joined."""
    sections = [e for e in user.find(ui.column).elements if e.props.get("data-section") == title]
    assert sections, f"no section {title}"
    return " | ".join(label.text for label in sections[0].descendants() if isinstance(label, ui.label))


async def test_review_first_then_active_with_progress_then_recent(worker: FakeWorker, user: User) -> None:
    waiting = download(name="Matrix.1999.1080p", state="review")
    worker.put(waiting, review(waiting))
    worker.put(download(name="Fargo.S02.WEB", state="downloading", progress=0.42, dl_speed=5_200_000, eta=310,
                        size=21_000_000_000))
    worker.put(download(name="Метод.S01.WEB-DL", state="done", title="Метод", year=2015, media_type="series",
                        settled_at="2026-01-02T03:04:05Z"))
    await user.open("/")
    await user.should_see("Matrix.1999.1080p", retries=50)
    await user.should_see("Fargo.S02.WEB", retries=50)
    await user.should_see("Метод (2015) · series", retries=50)
    assert "Matrix.1999.1080p" in section_text(user, "Needs review")
    assert "Confidence 62 % — Two candidates are close to each other." in section_text(user, "Needs review")
    active = section_text(user, "Active")
    assert "Fargo.S02.WEB" in active
    assert "42 % · 5.2 MB/s · 5 min left · 21.0 GB" in active
    assert "Метод.S01.WEB-DL" in section_text(user, "Recent")
    bars = user.find(ui.linear_progress).elements
    assert [round(bar.value, 2) for bar in bars] == [0.42]


async def test_live_update_moves_a_download_between_sections(worker: FakeWorker, user: User) -> None:
    d = worker.put(download(name="Live.Movie.2020", state="downloading", progress=0.1))
    await user.open("/")
    await user.should_see("Live.Movie.2020", retries=50)
    assert "Live.Movie.2020" in section_text(user, "Active")
    worker.put(d.model_copy(update={"state": "done", "settled_at": "2026-01-02T03:04:05Z"}))
    await eventually(lambda: "Live.Movie.2020" in section_text(user, "Recent"))
    assert "Live.Movie.2020" not in section_text(user, "Active")


async def test_filters_by_text_and_state(worker: FakeWorker, user: User) -> None:
    worker.put(download(name="Alpha.Release", state="downloading"))
    worker.put(download(name="Beta.Release", state="failed", error={"code": "stalled", "message": "stalled"}))
    await user.open("/")
    await user.should_see("Beta.Release", retries=50)
    user.find("Search").type("alpha")
    await user.should_see("Alpha.Release")
    await user.should_not_see("Beta.Release", retries=20)
    user.find("Search").clear()
    user.find(ui.select).elements.pop().value = ["failed"]
    await user.should_see("Beta.Release", retries=20)
    await user.should_not_see("Alpha.Release", retries=20)
    states = [body.get("states") for command, body in worker.requests if command == "list"]
    assert ["failed"] in states  # the history follows the filters too


async def test_history_pages_through_list(worker: FakeWorker, user: User) -> None:
    worker.history = [download(name=f"Old.Release.{i:02d}", state="done", settled_at="2025-01-01T00:00:00Z")
                      for i in range(25)]
    await user.open("/")
    await user.should_see("1–20 of 25", retries=50)
    await user.should_see("Old.Release.00")
    await user.should_not_see("Old.Release.24")
    user.find("Next").click()
    await user.should_see("21–25 of 25", retries=50)
    await user.should_see("Old.Release.24")
    assert [body.get("offset") for command, body in worker.requests if command == "list"] == [0, 20]


async def test_history_error_is_shown(worker: FakeWorker, user: User) -> None:
    worker.errors["list"] = ("internal_error", "the worker failed to run this command; see its log")
    await user.open("/")
    await user.should_see("Could not load the history.", retries=50)
    assert user.notify.contains("the worker failed to run this command; see its log")
