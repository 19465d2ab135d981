"""The downloads page against the real broker and the scripted responder (NiceGUI's user fixture)."""

from __future__ import annotations

import asyncio

import pytest
from nicegui import ui
from nicegui.testing import User

from jellybit.protocol import State
from tests.ui.responder import FakeWorker, download, review
from tests.ui.support import eventually

pytestmark = pytest.mark.nicegui_main_file("ui/app.py")


def section_text(user: User, title: str) -> str:
    """Every label's text inside one section of the page, joined."""
    sections = [e for e in user.find(ui.column).elements if e.props.get("data-section") == title]
    assert sections, f"no section {title}"
    return " | ".join(label.text for label in sections[0].descendants() if isinstance(label, ui.label))


def sections(user: User) -> list[str]:
    """The sections on the page, top to bottom."""
    found = [e for e in user.client.elements.values()
             if e.props.get("data-section") and isinstance(e, ui.column)]
    return [e.props["data-section"] for e in sorted(found, key=lambda e: e.id)]


async def test_one_list_review_first_titles_as_headlines(worker: FakeWorker, user: User) -> None:
    waiting = download(name="Matrix.1999.1080p", state="review")
    worker.put(waiting, review(waiting))
    worker.put(download(name="Fargo.S02.WEB", state="downloading", progress=0.42, dl_speed=5_200_000, eta=310,
                        size=21_000_000_000, seeds=3, peers=12, torrent_state="downloading"))
    worker.put(download(name="Метод.S01.WEB-DL", state="done", title="Метод", year=2015, media_type="series",
                        settled_at="2026-01-02T03:04:05Z", poster_url="http://127.0.0.1:9/metod.jpg"))
    await user.open("/")
    await user.should_see("Метод (2015) · series", retries=50)
    assert sections(user) == ["Needs review", "Active", "Finished"]
    assert "Needs your decision: Two candidates are close to each other" in section_text(user, "Needs review")
    active = section_text(user, "Active")
    assert "42 % · 5.2 MB/s · 5 min left · 21.0 GB · 3 seeds · 12 peers" in active
    finished = section_text(user, "Finished")
    assert finished.index("Метод (2015) · series") < finished.index("Метод.S01.WEB-DL")   # title first
    posters = [e for e in user.find(ui.image).elements if e.source == "http://127.0.0.1:9/metod.jpg"]
    assert len(posters) == 1
    # Nothing twice: every download is on the page once, history included.
    await eventually(lambda: any(c == "list" for c, _ in worker.requests))
    await user.should_see("Showing 3 of 3", retries=50)
    assert [c.props.get("data-download") for c in user.find(ui.card).elements
            if c.props.get("data-download")].count(waiting.id) == 1


async def test_a_pack_with_episodes_in_the_library_while_the_rest_downloads(worker: FakeWorker,
                                                                           user: User) -> None:
    worker.put(download(name="Long.Saga.S01.1080p", state="applying", awaiting_files=True, progress=0.3,
                        title="Long Saga", year=2010, media_type="series", files_in_library=3,
                        size=12_000_000_000, dl_speed=5_200_000, eta=310, seeds=3, peers=1))
    worker.put(download(name="Other.S01", state="applying", awaiting_files=True, progress=0.01))
    await user.open("/")
    await user.should_see("3 files in the library already, the rest still downloading", retries=50)
    active = section_text(user, "Active")
    assert "30 % · 5.2 MB/s · 5 min left · 12.0 GB · 3 seeds · 1 peer" in active
    assert active.count("in the library already") == 1       # none laid out yet: nothing said


async def test_a_stalled_download_says_so_with_qbittorrents_state(worker: FakeWorker, user: User) -> None:
    worker.put(download(name="Rare.Show.S01", state="downloading", progress=0.5, dl_speed=0, eta=None,
                        seeds=0, peers=0, torrent_state="stalledDL"))
    await user.open("/")
    await user.should_see("Stalled: no peer is sending data (qBittorrent: stalledDL)", retries=50)
    assert "50 % · 0 B/s · — left · 0 seeds · 0 peers" in section_text(user, "Active")


async def test_live_update_moves_a_download_between_sections(worker: FakeWorker, user: User) -> None:
    d = worker.put(download(name="Live.Movie.2020", state="downloading", progress=0.1))
    await user.open("/")
    await user.should_see("Live.Movie.2020", retries=50)
    assert "Live.Movie.2020" in section_text(user, "Active")
    worker.put(d.model_copy(update={"state": State.DONE, "settled_at": "2026-01-02T03:04:05Z"}))
    await eventually(lambda: "Finished" in sections(user)
                     and "Live.Movie.2020" in section_text(user, "Finished"))
    assert "Active" not in sections(user)


async def test_filters_by_text_and_state(worker: FakeWorker, user: User) -> None:
    worker.put(download(name="Alpha.Release", state="downloading"))
    worker.put(download(name="Beta.Release", state="failed", error={"code": "stalled", "message": "stalled"}))
    await user.open("/")
    await user.should_see("Beta.Release", retries=50)
    user.find("Search").type("alpha")
    await user.should_see("Alpha.Release")
    await user.should_not_see("Beta.Release", retries=20)
    user.find("Search").clear()
    user.find(marker="filter-problems").click()
    await user.should_see("Beta.Release", retries=20)
    await user.should_not_see("Alpha.Release", retries=20)
    wanted = ["failed", "target_missing", "orphaned", "deleted"]     # the history follows the filter
    for _ in range(200):                                               # its `list` is sent after the click
        if wanted in [body.get("states") for command, body in worker.requests if command == "list"]:
            break
        await asyncio.sleep(0.05)
    assert wanted in [body.get("states") for command, body in worker.requests if command == "list"]
    assert sections(user) == ["Needs attention"]


async def test_older_downloads_load_into_the_same_list(worker: FakeWorker, user: User) -> None:
    worker.history = [download(name=f"Old.Release.{i:02d}", state="done",
                               settled_at=f"2025-01-01T00:00:{i:02d}Z") for i in range(40)]
    await user.open("/")
    await user.should_see("Showing 30 of 40", retries=50)
    await user.should_see("Old.Release.00")
    await user.should_not_see("Old.Release.39")
    user.find(marker="load-more").click()
    await user.should_see("Showing 40 of 40", retries=50)
    await user.should_see("Old.Release.39")
    assert [body.get("offset") for command, body in worker.requests if command == "list"] == [0, 30]
    await user.should_not_see(marker="load-more")


async def test_history_error_is_shown(worker: FakeWorker, user: User) -> None:
    worker.errors["list"] = ("internal_error", "the worker failed to run this command; see its log")
    await user.open("/")
    await user.should_see("Could not load the older downloads", retries=50)
    assert user.notify.contains("the worker failed to run this command; see its log")


async def test_a_new_user_is_told_how_to_add_the_first_torrent(worker: FakeWorker, user: User) -> None:
    await user.open("/")
    await user.should_see("No downloads yet", retries=50)
    (first,) = [e for e in user.client.elements.values() if e.props.get("data-testid") == "first-run"]
    words = " ".join(e.text for e in first.descendants() if isinstance(e, ui.label))
    assert "Add your first torrent: paste a magnet link" in words
    assert "jellybit add 'magnet:?xt=urn:btih:…'" in words
    assert [e.text for e in first.descendants() if isinstance(e, ui.button)] == ["Add a torrent"]
