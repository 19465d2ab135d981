"""The panel in a real headless Chromium against a real worker, qBittorrent, mosquitto and fake TMDB.

One stack and one browser for the module (Playwright's sync API in module-scoped fixtures, as
testing.md §4 advises). The tests run in file order and share the worker: the first one drives a
torrent from upload to review, choice, apply, done and undo. Screenshots of every page, at desktop
size and at 390 px, go to artifacts/screenshots/.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from tests.support.fake_catalogue import FakeTitle
from tests.support.fake_http import running
from tests.support.fake_jellyfin import FakeJellyfin
from tests.support.fake_metadata import FakeTmdb, FakeTvdb, FakeTvmaze, default_catalogue
from tests.support.ha_screens import SHOTS_ENV
from tests.support.mosquitto import Broker
from tests.support.qbittorrent import QbittorrentProcess, seeded_torrent, wait_for
from tests.support.services import require_binary
from tests.ui.contrast import low_contrast
from tests.ui.stack import ROOT, PosterServer, Stack

# scripts/screenshots sets JELLYBIT_SCREENSHOTS; otherwise they go to artifacts/ (git-ignored).
SHOTS = Path(os.environ.get(SHOTS_ENV) or ROOT / "artifacts" / "screenshots")
# The dead proxy keeps everything but loopback (which Chromium never proxies) off the network,
# without intercepting each request in Python (that doubled page load times).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                 "--disable-dev-shm-usage", "--proxy-server=http://127.0.0.1:9"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
TIMEOUT = 30_000  # ms; recognition and layout run in the real worker
expect.set_options(timeout=TIMEOUT)

# Every button a user can see, without a name a screen reader could say.
UNLABELLED_BUTTONS = """() => Array.from(document.querySelectorAll('button, [role=button], a.q-btn'))
  .filter(b => b.offsetParent !== null)
  .filter(b => !((b.getAttribute('aria-label') || '').trim() || (b.innerText || '').trim()
                 || (b.getAttribute('title') || '').trim()))
  .map(b => b.outerHTML.slice(0, 160))"""


@pytest.fixture(scope="module")
def stack(mosquitto: Broker, qbittorrent_server: QbittorrentProcess) -> Iterator[Stack]:
    """The worker and the panel as processes, over a temp media tree; stopped after the module."""
    qbittorrent_server.start()
    root = Path(tempfile.mkdtemp(prefix="jellybit-ui-"))
    data = Path(tempfile.mkdtemp(prefix="ui-", dir=qbittorrent_server.data_root))
    posters = PosterServer()
    posters.start()
    catalogue = default_catalogue()
    with running(FakeTmdb(catalogue)) as tmdb, running(FakeTvdb(catalogue)) as tvdb, \
            running(FakeTvmaze(catalogue)) as tvmaze, running(FakeJellyfin()) as jellyfin:
        tvdb.image_host = tvmaze.image_host = posters.base_url     # posters from loopback only
        stack = Stack(root, broker_url=mosquitto.url, base_topic=f"jbui-{secrets.token_hex(4)}",
                      qbittorrent=qbittorrent_server, data_dir=data, tmdb=tmdb, tvdb=tvdb, tvmaze=tvmaze,
                      posters=posters, jellyfin=jellyfin)
        try:
            stack.start()
            yield stack
        finally:
            stack.stop()
            posters.stop()
            qbittorrent_server.reset()
            shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless (never `playwright install`)."""
    chromium = require_binary("chromium")
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        yield instance
        instance.close()


OUTSIDE: list[str] = []   # every request a page tried beyond loopback (must stay empty)


def _watch(url: str) -> None:
    if urlsplit(url).hostname not in ("127.0.0.1", "localhost"):
        OUTSIDE.append(url)


def new_page(browser: Browser, viewport: dict[str, int], scheme: str = "light") -> Page:
    """A fresh context and page at this size and colour scheme."""
    context = browser.new_context(viewport=viewport, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    page.on("request", lambda request: _watch(request.url))
    page.set_default_timeout(TIMEOUT)
    return page


@pytest.fixture(scope="module")
def page(browser: Browser) -> Iterator[Page]:
    """A desktop-sized page, kept for the module (warm caches)."""
    page = new_page(browser, DESKTOP)
    yield page
    page.context.close()
    assert OUTSIDE == [], "the panel made the browser fetch something beyond loopback"


@pytest.fixture(scope="module")
def phone(browser: Browser) -> Iterator[Page]:
    """A 390 px wide page (a phone), kept for the module."""
    page = new_page(browser, PHONE)
    yield page
    page.context.close()


def shoot(page: Page, name: str, settle: int = 250) -> None:
    """Save a full-page screenshot for a human to look at."""
    page.wait_for_timeout(settle)  # let Quasar finish its transitions
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def check_page(page: Page) -> None:
    """Accessibility basics: every visible button has a name; nothing is wider than the viewport; every
    text and icon is at WCAG AA contrast."""
    assert page.evaluate(UNLABELLED_BUTTONS) == []
    width = page.viewport_size["width"] if page.viewport_size else 0
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert low_contrast(page) == [], page.url


def download_id(page: Page) -> str:
    """The id in the current /download/<id> URL."""
    match = re.search(r"/download/([0-9a-z]{26})", page.url)
    assert match, page.url
    return match.group(1)


def upload_and_add(page: Page, stack: Stack, torrent: bytes, name: str, context: str) -> str:
    """Use the add page: choose the .torrent file, write the context, submit; return the new id."""
    path = stack.root / f"{name}.torrent"
    path.write_bytes(torrent)
    page.goto(f"{stack.url}/add")
    page.locator("input[type=file]").set_input_files(str(path))
    expect(page.get_by_text(f"Selected: {name}.torrent")).to_be_visible()
    page.get_by_label("Context (optional)").fill(context)
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_url(re.compile(r"/download/[0-9a-z]{26}\?added=new"))
    return download_id(page)


def action_bar(page: Page) -> list[str]:
    """The action buttons a user sees, in order."""
    bar = page.get_by_role("toolbar", name="Actions")
    return [t.strip().split("\n")[-1] for t in bar.locator("button:visible").all_inner_texts()]   # no icon


def test_upload_review_choose_apply_done_undo(stack: Stack, page: Page, phone: Page) -> None:
    page.goto(stack.url)    # a new user's first look: how to add the first torrent
    expect(page.get_by_test_id("first-run")).to_contain_text("No downloads yet")
    shoot(page, "downloads-first-run-desktop")
    subtitle = "The.Matrix.1080p.BluRay.x264.srt"
    seeded = seeded_torrent(stack.data_dir, "The.Matrix.1080p.BluRay.x264",
                            {"The.Matrix.1080p.BluRay.x264.mkv": 200_000,
                             subtitle: b"1\n00:00:01,000 --> 00:00:02,000\n...\n"})
    wait_for(lambda: stack.worker.proc and stack.worker.proc.poll() is None)
    ident = upload_and_add(page, stack, seeded.torrent, "matrix", "Матрица — вторая часть, не первая")
    expect(page.get_by_test_id("added-notice")).to_have_text("Added: a new download was created.")
    badge = page.locator("[data-section=Download] [data-state]")
    expect(badge).to_have_text("Needs review")
    decision = page.locator("[data-section=Decision]")
    expect(decision.get_by_test_id("verdict")).to_have_text("Needs your decision")
    # no LLM: the name alone is The Matrix; the context says otherwise in words nothing read
    unread = "These words of your context were not used: “вторая”, “часть”, “первая”"
    expect(decision.get_by_text(unread).first).to_be_visible()
    expect(page.get_by_role("img", name="Poster of The Matrix Reloaded (2003)")).to_be_visible()
    # Only what review allows, the primary first and the destructive ones last.
    assert action_bar(page) == ["Apply", "Defer", "Reject…", "Cancel download…"]
    shoot(page, "detail-review-desktop")
    phone.goto(f"{stack.url}/download/{ident}")
    expect(phone.get_by_text("Needs review").first).to_be_visible()
    check_page(phone)
    shoot(phone, "detail-review-phone")

    page.get_by_role("button", name="Choose The Matrix Reloaded (2003)").click()
    expect(page.get_by_role("button", name="Choose The Matrix Reloaded (2003)")).to_have_attribute(
        "aria-pressed", "true")
    # The subtitle's language, corrected in the file table before applying.
    page.get_by_label(f"Language of {subtitle}").fill("ru")
    expect(page.locator(f"[data-edited='The.Matrix.1080p.BluRay.x264/{subtitle}']")).to_have_text("Changed")
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(badge).to_have_text("Done")
    expect(page.get_by_test_id("verdict")).to_have_text("Laid out as you decided")
    folder = "The Matrix Reloaded (2003) [tmdbid-604]"
    target = stack.movies / folder / f"{folder}.mkv"
    wait_for(target.exists)
    assert target.stat().st_ino == (seeded.content / "The.Matrix.1080p.BluRay.x264.mkv").stat().st_ino
    pinned = stack.movies / folder / f"{folder}.ru.srt"
    wait_for(pinned.exists)
    assert pinned.stat().st_ino == (seeded.content / subtitle).stat().st_ino
    expect(page.get_by_text(str(target)).first).to_be_visible()
    assert action_bar(page) == ["Undo…"]
    # Done means in Jellyfin: the rescan found it, the page links to the item (live, no reload).
    in_jellyfin = page.get_by_role("link", name="In Jellyfin: open the item in a new tab")
    expect(in_jellyfin).to_be_visible()
    assert stack.jellyfin is not None
    item = stack.jellyfin.items[f"/media/movies/{folder}/{folder}.mkv"]
    expect(in_jellyfin).to_have_attribute("href", f"{stack.jellyfin.origin}/web/#/details?id={item.id}")
    expect(page.get_by_test_id("jellyfin")).not_to_contain_text("waiting")
    shoot(page, "detail-done-desktop")

    page.get_by_role("button", name="Undo").click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog.get_by_text("These 2 file(s) will be removed from the library:")).to_be_visible()
    expect(dialog.get_by_text(str(target))).to_be_visible()
    shoot(page, "undo-confirm-desktop")
    dialog.get_by_role("button", name="Undo").click()
    expect(badge).to_have_text("Undone")
    wait_for(lambda: not target.exists())
    assert (seeded.content / "The.Matrix.1080p.BluRay.x264.mkv").exists()  # the source is untouched
    page.goto(stack.url)
    expect(page.locator(f"[data-download='{ident}']")).to_contain_text("Undone")


def test_a_better_copy_offers_keep_both_replace_skip_and_replace_is_undone(
        stack: Stack, page: Page, phone: Page) -> None:
    old_name, new_name = "The.Matrix.1999.1080p.WEB-DL-NTb", "The.Matrix.1999.2160p.BluRay.REMUX-FGT"
    old = seeded_torrent(stack.data_dir, old_name, {f"{old_name}.mkv": 210_000})
    upload_and_add(page, stack, old.torrent, "matrix-1080p", "")
    badge = page.locator("[data-section=Download] [data-state]")
    expect(badge).to_have_text("Done")
    folder = "The Matrix (1999) [tmdbid-603]"
    target = stack.movies / folder / f"{folder}.mkv"
    wait_for(target.exists)
    new = seeded_torrent(stack.data_dir, new_name, {f"{new_name}.mkv": 220_000}, seed=5)
    ident = upload_and_add(page, stack, new.torrent, "matrix-2160p", "")
    expect(badge).to_have_text("Needs review")
    upgrade = page.locator("[data-section=Upgrade]")
    expect(upgrade.get_by_test_id("upgrade-message")).to_contain_text(
        f"already in your library as 1080p WEB-DL by NTb from {old_name}")
    expect(upgrade.get_by_test_id("upgrade-message")).to_contain_text(
        "this copy is 2160p Remux by FGT: better")
    for name in ("Keep both", "Replace", "Skip"):
        expect(upgrade.get_by_role("button", name=name, exact=True)).to_be_visible()
    assert action_bar(page) == ["Defer", "Reject…", "Cancel download…"]     # the card answers, not Apply
    check_page(page)
    shoot(page, "detail-upgrade-desktop")
    phone.goto(f"{stack.url}/download/{ident}")
    expect(phone.locator("[data-section=Upgrade]").get_by_role("button", name="Replace", exact=True)) \
        .to_be_visible()
    check_page(phone)
    shoot(phone, "detail-upgrade-phone")

    upgrade.get_by_role("button", name="Replace", exact=True).click()
    expect(badge).to_have_text("Done")
    wait_for(lambda: target.stat().st_ino == (new.content / f"{new_name}.mkv").stat().st_ino)
    assert (old.content / f"{old_name}.mkv").exists()          # the old download is never touched

    page.get_by_role("button", name="Undo").click()
    dialog = page.get_by_role("alertdialog")
    dialog.get_by_role("button", name="Undo").click()
    expect(badge).to_have_text("Undone")
    wait_for(lambda: target.stat().st_ino == (old.content / f"{old_name}.mkv").stat().st_ino)


def test_a_series_review_decides_in_one_look_and_takes_a_corrected_episode(
        stack: Stack, browser: Browser, page: Page, phone: Page) -> None:
    name = "Shameless.S05.720p.HDTV"
    files = {f"Shameless.S05E0{n}.720p.HDTV.mkv": 60_000 + n for n in (1, 2, 3)}
    seeded = seeded_torrent(stack.data_dir, name, files)
    ident = upload_and_add(page, stack, seeded.torrent, "shameless", "")
    expect(page.get_by_test_id("verdict")).to_have_text("Needs your decision")
    us, uk = page.locator("[data-candidate]").filter(has_text="Showtime"), \
        page.locator("[data-candidate]").filter(has_text="Channel 4")
    # One card per work, every provider's page on it, and what agrees or not in words.
    for card in (us, uk):
        for provider in ("TMDB", "TVDB", "TVMaze", "IMDb"):
            expect(card.get_by_role("link", name=f"Open it on {provider} in a new tab")).to_be_visible()
    expect(us).to_contain_text("2011–2021 · US · Showtime · 11 seasons")
    expect(us).to_contain_text("season 5 has 12 episodes; the torrent has 3")
    expect(uk).to_contain_text("season 5 has 10 episodes; the torrent has 3")
    expect(us).to_contain_text("A Chicago father and his six children.")
    for view, size in ((page, "desktop"), (phone, "phone")):
        view.goto(f"{stack.url}/download/{ident}")
        expect(view.get_by_test_id("verdict")).to_have_text("Needs your decision")
        check_page(view)
        shoot(view, f"review-series-{size}")
    for size, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        dark = new_page(browser, viewport, "dark")
        try:
            dark.goto(f"{stack.url}/download/{ident}")
            expect(dark.locator("body.body--dark")).to_have_count(1)
            expect(dark.get_by_test_id("verdict")).to_have_text("Needs your decision")
            check_page(dark)
            shoot(dark, f"review-series-{size}-dark")
        finally:
            dark.context.close()

    # On a phone: choose, correct one file, and Apply right there on the chosen card.
    phone.get_by_role("button", name="Choose Shameless (US) (2011)").click()
    chosen = phone.locator("[data-candidate]").filter(has_text="Showtime")
    apply = chosen.get_by_role("button", name="Apply: Shameless (US) (2011)")    # on the chosen card itself
    expect(apply).to_be_visible()
    # Typed once, right after Choose: the file table is not rebuilt under the input (a choice or a
    # refetch that leaves the plan alone keeps it), so the correction sticks.
    episodes = phone.get_by_label("Episodes of Shameless.S05E03.720p.HDTV.mkv")
    episodes.fill("4")
    edited = phone.locator("[data-edited='Shameless.S05.720p.HDTV/Shameless.S05E03.720p.HDTV.mkv']")
    expect(edited).to_have_text("Changed")          # the panel has the correction: Apply pins it
    expect(episodes).to_have_value("4")
    apply.click()
    expect(phone.get_by_test_id("verdict")).to_have_text("Laid out as you decided")
    wait_for(lambda: bool(list(stack.series.rglob("*S05E04.mkv"))))
    corrected = list(stack.series.rglob("*S05E04.mkv"))
    assert [p.parent.name for p in corrected] == ["Season 05"]
    assert corrected[0].stat().st_ino == (seeded.content / "Shameless.S05E03.720p.HDTV.mkv").stat().st_ino
    assert "[tvdbid-161511]" in corrected[0].parent.parent.name
    assert not list(stack.series.rglob("*S05E03.mkv"))


def test_a_duology_review_decides_only_its_unsure_film(stack: Stack, page: Page, phone: Page) -> None:
    for title, year, tmdb in (("Stalker", 1979, 1398), ("Solaris", 1972, 593), ("Solaris", 2002, 2103)):
        stack.catalogue.add(FakeTitle("movie", title, year, tmdb_id=tmdb, slug=f"{title.lower()}-{year}",
                                      overview=f"{title}, a film by its director."))
    name = "Tarkovsky.Duology.1972-1979.1080p.BluRay"
    files = {"Solaris.1080p.BluRay.mkv": 80_000, "Stalker.1979.1080p.BluRay.mkv": 81_000}
    seeded = seeded_torrent(stack.data_dir, name, files)
    ident = upload_and_add(page, stack, seeded.torrent, "duology", "")
    expect(page.get_by_test_id("verdict")).to_have_text("Needs your decision")
    films = page.locator("[data-section^=Films]")
    expect(films).to_contain_text("Films (2; 1 to decide)")
    sure = page.locator("[data-film][data-confirmed=true]")
    unsure = page.locator("[data-film][data-confirmed=false]")
    expect(sure).to_contain_text("Stalker (1979) → Stalker (1979)")
    expect(sure.get_by_test_id("film-state")).to_have_text("Matched")
    expect(sure.get_by_role("button", name=re.compile("^Choose"))).to_have_count(0)   # nothing to decide
    expect(unsure.get_by_test_id("film-state")).to_have_text("Needs you")
    for view, size in ((page, "desktop"), (phone, "phone")):
        view.goto(f"{stack.url}/download/{ident}")
        expect(view.get_by_test_id("verdict")).to_have_text("Needs your decision")
        check_page(view)
        shoot(view, f"review-duology-{size}")
    choose = unsure.get_by_role("button", name="Choose Solaris (1972)")
    choose.click()
    expect(choose).to_have_attribute("aria-pressed", "true")
    page.get_by_role("button", name="Apply", exact=True).click()
    expect(page.get_by_test_id("verdict")).to_have_text("Laid out as you decided")
    solaris, stalker = "Solaris (1972) [tmdbid-593]", "Stalker (1979) [tmdbid-1398]"
    for folder, source in ((solaris, "Solaris.1080p.BluRay.mkv"), (stalker, "Stalker.1979.1080p.BluRay.mkv")):
        target = stack.movies / folder / f"{folder}.mkv"
        wait_for(target.exists)
        assert target.stat().st_ino == (seeded.content / source).stat().st_ino
    assert not list(stack.movies.glob("Solaris (2002)*"))


def test_a_torrent_without_peers_shows_qbittorrents_state_and_can_be_cancelled(
        stack: Stack, page: Page, phone: Page) -> None:
    page.goto(f"{stack.url}/add")
    page.get_by_label("Magnet link, URL or infohash").fill(
        f"magnet:?xt=urn:btih:{secrets.token_hex(20)}&dn=Nobody.Seeds.This.S01")
    page.get_by_role("button", name="Add", exact=True).click()
    page.wait_for_url(re.compile(r"/download/[0-9a-z]{26}"))
    ident = download_id(page)
    assert action_bar(page) == ["Cancel download…"]
    page.goto(stack.url)
    card = page.locator(f"[data-download='{ident}']")
    expect(card.locator("[data-torrent-state]")).to_contain_text("(qBittorrent: metaDL)")
    expect(card.get_by_test_id("progress")).to_contain_text("0 seeds · 0 peers")
    phone.goto(stack.url)
    expect(phone.locator(f"[data-download='{ident}']")).to_be_visible()
    check_page(phone)
    shoot(phone, "downloads-phone")
    page.goto(f"{stack.url}/download/{ident}")
    page.get_by_role("button", name="Cancel download").click()
    page.get_by_role("alertdialog").get_by_role("button", name="Cancel download").click()
    expect(page.locator("[data-section=Download] [data-state]")).to_have_text("Cancelled")


def test_an_error_response_is_shown_below_the_navigation(stack: Stack, page: Page, phone: Page) -> None:
    for view, size in ((page, "desktop"), (phone, "phone")):
        view.goto(f"{stack.url}/add")
        view.get_by_label("Magnet link, URL or infohash").fill("magnet:?xt=urn:btih:not-a-hash")
        view.get_by_role("button", name="Add", exact=True).click()
        alert = view.locator(".q-notification").filter(has_text="magnet")
        expect(alert).to_be_visible()
        assert "/add" in view.url
        view.wait_for_timeout(700)  # the notification slides in
        toast, header = alert.bounding_box(), view.locator("header").bounding_box()
        assert toast is not None
        assert header is not None
        assert toast["y"] >= header["y"] + header["height"], (toast, header)
        shoot(view, f"add-error-{size}", settle=0)


def test_every_page_at_desktop_and_phone_width(stack: Stack, browser: Browser, page: Page,
                                               phone: Page) -> None:
    seeded = seeded_torrent(stack.data_dir, "Метод.2015.S01E01.1080p.WEB-DL",
                            {"Метод.2015.S01E01.1080p.WEB-DL.mkv": 150_000})
    ident = upload_and_add(page, stack, seeded.torrent, "metod", "Метод, первая серия")
    expect(page.locator("[data-section=Download] [data-state]")).to_have_text(re.compile("Done|Needs review"))
    for path, name in (("/", "downloads"), ("/add", "add"), ("/titles", "titles"), ("/status", "status"),
                       (f"/download/{ident}", "detail"), ("/download/nope", "not-found")):
        for view, size in ((page, "desktop"), (phone, "phone")):
            response = view.goto(f"{stack.url}{path}")
            assert response is not None
            assert response.status == (404 if name == "not-found" else 200)
            expect(view.locator("header")).to_be_visible()
            if name == "status":
                expect(view.get_by_text("Worker: Online")).to_be_visible()
            if name == "add":   # no stray "0.0B / 0.00%" in the upload box
                expect(view.get_by_text("Upload a .torrent file")).to_be_visible()
                expect(view.locator(".q-uploader__subtitle")).to_be_hidden()
            if name == "titles":
                expect(view.get_by_role("button", name="Reload")).to_be_enabled()
            shoot(view, f"{name}-{size}")
            check_page(view)
    dark = new_page(browser, DESKTOP, "dark")  # dark mode follows the system
    try:
        for path, name in (("/", "downloads"), ("/add", "add"), ("/titles", "titles"), ("/status", "status"),
                           (f"/download/{ident}", "detail")):
            dark.goto(f"{stack.url}{path}")
            expect(dark.locator("body.body--dark")).to_have_count(1)
            expect(dark.locator("header")).to_be_visible()
            if name == "titles":
                expect(dark.get_by_role("button", name="Reload")).to_be_enabled()
            shoot(dark, f"{name}-dark")
            check_page(dark)
    finally:
        dark.context.close()


def test_the_worker_going_offline_is_shown(stack: Stack, page: Page) -> None:
    page.goto(stack.url)
    banner = page.get_by_test_id("offline-banner")
    expect(banner).to_be_hidden()
    stack.worker.stop(kill=True)  # no clean goodbye: the broker sends its Last Will
    expect(banner).to_be_visible()
    expect(banner).to_contain_text("The Jellybit worker is offline")
    shoot(page, "worker-offline-desktop")
    stack.worker.start()
    expect(banner).to_be_hidden()
