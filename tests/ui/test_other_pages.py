"""Add, titles and status pages, and the offline banner (user fixture, real broker, responder)."""

from __future__ import annotations

import base64

import pytest
from nicegui import ui
from nicegui.testing import User

from tests.ui.responder import FakeWorker, download
from tests.ui.support import eventually

pytestmark = pytest.mark.nicegui_main_file("ui/app.py")
HASH = "0123456789abcdef0123456789abcdef01234567"


def banner_text(user: User) -> str | None:
    """The offline banner's sentence while it is visible, else None."""
    (box,) = [e for e in user.client.elements.values() if e.props.get("data-testid") == "offline-banner"]
    if not box.visible:
        return None
    return " ".join(label.text for label in box.descendants() if isinstance(label, ui.label))


async def test_add_a_magnet_navigates_to_the_new_download(worker: FakeWorker, user: User) -> None:
    await user.open("/add")
    await eventually(lambda: banner_text(user) is None)   # connected and the worker online
    user.find("Magnet link, URL or infohash").type(f"magnet:?xt=urn:btih:{HASH}&dn=Фарго")
    user.find("Context (optional)").type("второй сезон")
    user.find(marker="add").click()
    await eventually(lambda: len(user.back_history) > 1 and user.back_history[-1].startswith("/download/"))
    (body,) = [b for c, b in worker.requests if c == "add"]
    assert body == {"source": f"magnet:?xt=urn:btih:{HASH}&dn=Фарго", "context": "второй сезон"}
    new_id = next(iter(worker.downloads))
    assert user.back_history[-1] == f"/download/{new_id}?added=new"
    await user.should_see("Added: a new download was created.", retries=50)


async def test_add_joins_an_active_download_and_says_so(worker: FakeWorker, user: User) -> None:
    existing = worker.put(download(name="Known", state="downloading", infohashes=[HASH]))
    await user.open("/add")
    await eventually(lambda: banner_text(user) is None)   # connected and the worker online
    user.find("Magnet link, URL or infohash").type(HASH)
    user.find(marker="add").click()
    await eventually(lambda: user.back_history[-1] == f"/download/{existing.id}?added=joined")
    await user.should_see("This torrent was already being handled: your request joined this download.",
                          retries=50)


async def test_torrent_upload_is_sent_as_base64(worker: FakeWorker, user: User) -> None:
    await user.open("/add")
    await eventually(lambda: banner_text(user) is None)   # connected and the worker online
    torrent = b"d4:infod4:name4:testee"
    upload = user.find(ui.upload).elements.pop()
    await upload.handle_uploads([ui.upload.SmallFileUpload("film.torrent", "application/x-bittorrent",
                                                           torrent)])
    await user.should_see("Selected: film.torrent (22 bytes)", retries=20)
    user.find(marker="add").click()
    await eventually(lambda: any(c == "add" for c, _ in worker.requests))
    (body,) = [b for c, b in worker.requests if c == "add"]
    assert body == {"torrent": base64.b64encode(torrent).decode(), "context": ""}


async def test_add_without_a_source_says_what_is_missing(worker: FakeWorker, user: User) -> None:
    await user.open("/add")
    user.find(marker="add").click()
    await eventually(lambda: user.notify.contains("Paste a magnet link, URL or infohash, or choose"))
    assert not any(c == "add" for c, _ in worker.requests)


async def test_titles_show_coverage_and_delete_needs_confirmation(worker: FakeWorker, user: User) -> None:
    worker.titles = [{
        "provider": "tvdb", "provider_id": "269613", "media_type": "series", "title": "Fargo", "year": 2014,
        "members": [{"download_id": "01jf0000000000000000000000", "display_name": "Fargo.S01",
                     "state": "done", "live_links": 10}],
        "folders": ["/lib/series/Fargo (2014) [tvdbid-269613]"],
        "seasons": {"1": list(range(1, 11)), "2": [1, 3]},
        "live_folders": ["/lib/series/Fargo (2014) [tvdbid-269613]"],
    }]
    await user.open("/titles")
    await user.should_see("Fargo (2014) · series", retries=50)
    await user.should_see("Season 1: episodes 1–10 (10)")
    await user.should_see("Season 2: episodes 1, 3 (2)")
    user.find(marker="title-menu").click()
    user.find(marker="delete-title").click()
    await user.should_see("Every download of this title (1) is undone: its hardlinks leave the library and "
                          "emptied folders are removed:")
    assert not any(c == "delete_title" for c, _ in worker.requests)
    user.find(marker="confirm").click()
    await eventually(lambda: any(c == "delete_title" for c, _ in worker.requests))
    assert [b for c, b in worker.requests if c == "delete_title"] == [
        {"provider": "tvdb", "provider_id": "269613", "delete_torrents": False, "confirm": False}]
    await user.should_see("No titles yet: a title appears once a download is laid out.", retries=50)


async def test_status_shows_every_system(worker: FakeWorker, user: User) -> None:
    await user.open("/status")
    await user.should_see("Worker: Online", retries=50)
    await user.should_see("MQTT broker: Connected")
    await user.should_see("qBittorrent: OK")
    await user.should_see("LLM: Not configured")
    await user.should_see("TMDB (metadata): OK")
    await user.should_see("Jellyfin: Unreachable")
    await user.should_see("connection refused")
    await user.should_see("Telegram: Refused")
    await user.should_see("What to do: check JELLYBIT_TELEGRAM_TOKEN")


async def test_status_warns_when_jellyfin_answers_but_a_root_is_in_no_library(worker: FakeWorker,
                                                                             user: User) -> None:
    from jellybit.protocol import SystemStatus
    from jellybit.transports.mqtt import Message, encode

    problem = "/srv/media/series (series root): no Jellyfin library has it among its folders"
    worker.info = worker.info.model_copy(update={"jellyfin": SystemStatus(
        connected=True, state="misconfigured", detail=f"Jellyfin 10.10.3; {problem}",
        hint="add each library root to a Jellyfin library of its type")})
    worker._queue.put_nowait([Message(worker.topics.info, encode(worker.info))])
    await user.open("/status")
    await user.should_see("Jellyfin: Misconfigured", retries=50)
    await user.should_see(problem)
    await user.should_see("What to do: add each library root to a Jellyfin library of its type")
    marks = [e.props.get("name") for e in user.client.elements.values()
             if isinstance(e, ui.icon) and e.props.get("aria-label") == "Misconfigured"]
    assert marks == ["warning"]                              # not the green check of a healthy service


async def test_status_tells_why_qbittorrent_files_wait_for_their_torrent(worker: FakeWorker,
                                                                        user: User) -> None:
    from jellybit.transports.mqtt import Message, encode
    from jellybit.transports.service_health import qbittorrent_health

    why = "its folder for incomplete torrents is on another filesystem"
    worker.info = worker.info.model_copy(update={"qbittorrent": qbittorrent_health(
        "http://127.0.0.1:8080", True, None, "v5.0.4", early_layout=why)})
    worker._queue.put_nowait([Message(worker.topics.info, encode(worker.info))])
    await user.open("/status")
    await user.should_see(why, retries=50)
    await user.should_see("qBittorrent: OK")
    await user.should_see("version v5.0.4 — reachable at http://127.0.0.1:8080")
    await user.should_see("What to do: to lay out each file as it completes, keep qBittorrent's folder")


async def test_status_shows_a_worker_loop_that_failed(worker: FakeWorker, user: User) -> None:
    from jellybit.protocol import ComponentStatus
    from jellybit.transports.mqtt import Message, encode

    worker.info = worker.info.model_copy(update={"components": {
        "poll": ComponentStatus(error="OperationalError: database is locked",
                                failed_at="2026-01-02T03:04:05Z"),
        "mqtt": ComponentStatus(restarts=2, failed_at="2026-01-02T03:00:00Z"),
        "mqtt-updates": ComponentStatus(),
    }})
    worker._queue.put_nowait([Message(worker.topics.info, encode(worker.info))])
    await user.open("/status")
    await user.should_see("Worker poll loop: Failing", retries=50)
    await user.should_see("database is locked")
    await user.should_see("Worker mqtt loop: Recovered")
    await user.should_not_see("Worker mqtt-updates loop")           # a loop that never failed is quiet


async def test_status_shows_the_storage_and_its_faults(worker: FakeWorker, user: User) -> None:
    from jellybit.protocol import ComponentStatus
    from jellybit.transports.mqtt import Message, encode

    full = "the database disk is full (/srv/db/jellybit.db); free space on /srv/db"
    worker.info = worker.info.model_copy(update={"components": {
        "database": ComponentStatus(error=full, code="storage_full", failed_at="2026-01-02T03:04:05Z"),
        "library.movies": ComponentStatus(),
        "library.series": ComponentStatus(error="the series library is not mounted (/srv/series)",
                                          code="library_unmounted"),
    }})
    worker._queue.put_nowait([Message(worker.topics.info, encode(worker.info))])
    await user.open("/status")
    await user.should_see("Database: Disk full", retries=50)
    await user.should_see(full)
    await user.should_see("Movies library: Writable")
    await user.should_see("Series library: Not mounted")
    await user.should_not_see("Worker database loop")               # storage is not one of the loops


async def test_worker_offline_banner_comes_and_goes(worker: FakeWorker, user: User) -> None:
    await user.open("/")
    await eventually(lambda: banner_text(user) is None, within=15)
    worker.availability(online=False)
    await eventually(lambda: "The Jellybit worker is offline" in (banner_text(user) or ""))
    worker.availability(online=True)
    await eventually(lambda: banner_text(user) is None)


async def test_no_worker_at_all_is_shown_and_commands_fail_clearly(user: User) -> None:
    await user.open("/titles")
    await eventually(lambda: "has never connected to the broker" in (banner_text(user) or ""), within=15)
    user.find("Reload").click()
    await eventually(lambda: user.notify.contains("no answer from the Jellybit worker"), within=15)
